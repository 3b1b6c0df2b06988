"""The loop's HTTP transport on ``httpx`` (the ``http`` extra), behind the ``send`` seam.

A transport turns a request body into the stream's chunks. :class:`HTTPTransport` posts
with ``stream: true`` and yields raw SSE bytes; an HTTP error before the first byte is a
:class:`ProviderHTTPError` (``retryable`` for 408/409/429/5xx, which mean the provider
started no turn). It makes exactly one attempt: the loop owns the retry budget.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from .._errors import UsageError
from ._model import ProviderHTTPError, SocketDroppedError, retry_after_of

__all__ = ["AsyncHTTPTransport", "HTTPTransport", "refusal"]

_RETRYABLE = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_BODY_CUT = 2000


def _httpx() -> Any:
    try:
        import httpx
    except ImportError:  # pragma: no cover - the extra is missing
        raise UsageError(
            "the host loop's HTTP transport needs: pip install 'callgate[http]'"
        ) from None
    return httpx


def refusal(status: int, text: str, headers: Any = None) -> ProviderHTTPError:
    """The error of an HTTP answer that is not 200, with the delay its ``headers`` (or, on
    Gemini, its body's ``RetryInfo``) asked for before a retry."""
    return ProviderHTTPError(
        f"HTTP {status} from the provider",
        status=status,
        body=text[:_BODY_CUT],
        retryable=status in _RETRYABLE,
        retry_after=retry_after_of(headers, text),
    )


class HTTPTransport:
    """POST/GET against ``base_url`` with one ``httpx.Client`` (``client=`` to bring one)."""

    def __init__(self, base_url: str, *, timeout: float = 60.0, client: Any = None) -> None:
        if type(base_url) is not str or not base_url.startswith(("http://", "https://")):
            raise UsageError("base_url must be an http(s) URL")
        httpx = _httpx()
        self.base_url = base_url.rstrip("/")
        self._owned = client is None
        self._client = client if client is not None else httpx.Client(timeout=timeout)

    def close(self) -> None:
        if self._owned:
            self._client.close()

    @contextlib.contextmanager
    def post_stream(
        self, path: str, body: dict[str, Any], headers: dict[str, str]
    ) -> Iterator[Iterator[bytes]]:
        """Open the stream; the context yields the chunk iterator once the status is 200."""
        with self._client.stream("POST", self.base_url + path, json=body, headers=headers) as resp:
            if resp.status_code != 200:
                resp.read()
                raise refusal(resp.status_code, resp.text, resp.headers)
            yield resp.iter_raw()

    def get(self, path: str, headers: dict[str, str]) -> bytes:
        """GET a stored turn back: the JSON body or the replayed SSE stream, whole."""
        resp = self._client.get(self.base_url + path, headers=headers)
        if resp.status_code != 200:
            raise refusal(resp.status_code, resp.text, resp.headers)
        content: bytes = resp.content
        return content


def is_transport_error(exc: BaseException) -> bool:
    """A connection-level failure of httpx (no HTTP answer at all) or of the loop's
    WebSocket (:class:`SocketDroppedError`)."""
    httpx = _httpx()
    return isinstance(exc, httpx.TransportError | SocketDroppedError)


OpenStream = Callable[[dict[str, Any]], Any]


class AsyncHTTPTransport:
    """The same as :class:`HTTPTransport` over one ``httpx.AsyncClient``."""

    def __init__(self, base_url: str, *, timeout: float = 60.0, client: Any = None) -> None:
        if type(base_url) is not str or not base_url.startswith(("http://", "https://")):
            raise UsageError("base_url must be an http(s) URL")
        httpx = _httpx()
        self.base_url = base_url.rstrip("/")
        self._owned = client is None
        self._client = client if client is not None else httpx.AsyncClient(timeout=timeout)

    async def aclose(self) -> None:
        if self._owned:
            await self._client.aclose()

    @contextlib.asynccontextmanager
    async def post_stream(
        self, path: str, body: dict[str, Any], headers: dict[str, str]
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        request = self._client.stream("POST", self.base_url + path, json=body, headers=headers)
        async with request as resp:
            if resp.status_code != 200:
                await resp.aread()
                raise refusal(resp.status_code, resp.text, resp.headers)
            yield resp.aiter_raw()

    async def get(self, path: str, headers: dict[str, str]) -> bytes:
        resp = await self._client.get(self.base_url + path, headers=headers)
        if resp.status_code != 200:
            raise refusal(resp.status_code, resp.text, resp.headers)
        content: bytes = resp.content
        return content
