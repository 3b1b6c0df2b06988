"""``send`` functions over the official SDK clients, for :class:`HostLoop` (``send=``).

Each wraps the client with ``max_retries=0``: the loop's own ``max_retries`` is then the
whole retry budget (an SDK retry under it would multiply it and could re-send a request
the provider already started). HTTP errors come back as :class:`ProviderHTTPError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._model import ProviderHTTPError, Send, retry_after_of

__all__ = ["anthropic_send", "openai_async_send", "openai_send"]

_RETRYABLE = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def _http_error(exc: Exception) -> ProviderHTTPError | None:
    status = getattr(exc, "status_code", None)
    if type(status) is not int:
        return None
    response = getattr(exc, "response", None)
    text = getattr(response, "text", None)  # the body as sent
    return ProviderHTTPError(
        f"HTTP {status} from the provider (SDK {type(exc).__name__})",
        status=status,
        body=(text if isinstance(text, str) else str(exc))[:2000],
        retryable=status in _RETRYABLE,
        retry_after=retry_after_of(getattr(response, "headers", None), text),
    )


def _events(stream: Any) -> Iterator[Any]:
    with stream:
        yield from stream


def openai_send(client: Any) -> Send:
    """A send over ``openai.OpenAI`` (``client.responses.create(..., stream=True)``)."""
    quiet = client.with_options(max_retries=0)

    def send(body: dict[str, Any], headers: dict[str, str]) -> Iterator[Any]:
        try:
            stream = quiet.responses.create(**body, extra_headers=headers or None)
        except Exception as exc:
            mapped = _http_error(exc)
            if mapped is None:
                raise
            raise mapped from exc
        return _events(stream)

    return send


def anthropic_send(client: Any) -> Send:
    """A send over ``anthropic.Anthropic`` (``client.messages.create(..., stream=True)``;
    ``client.beta.messages.create`` for a message-thread request)."""
    quiet = client.with_options(max_retries=0)

    def send(body: dict[str, Any], headers: dict[str, str]) -> Iterator[Any]:
        messages = quiet.beta.messages if "thread" in body else quiet.messages
        try:
            stream = messages.create(**body, extra_headers=headers or None)
        except Exception as exc:
            mapped = _http_error(exc)
            if mapped is None:
                raise
            raise mapped from exc
        return _events(stream)

    return send


def openai_async_send(client: Any) -> Any:
    """An :data:`~callgate.loop.AsyncSend` over ``openai.AsyncOpenAI``."""
    quiet = client.with_options(max_retries=0)

    async def send(body: dict[str, Any], headers: dict[str, str]) -> Any:
        try:
            return await quiet.responses.create(**body, extra_headers=headers or None)
        except Exception as exc:
            mapped = _http_error(exc)
            if mapped is None:
                raise
            raise mapped from exc

    return send
