"""The mock's Gemini Interactions errors, read by google-genai's own Interactions client.

Runs in both SDK generations (3.6.1 here, 2.12.1 in the baseline venv; the Makefile's
``BASELINE_TESTS``). Each generation parses a 4xx/5xx JSON body into its typed error
(``{"error": {"code": str, "message": str}}``, ``_gaos`` ``types/interactions/error.py``)
before raising the status-code class; a body it cannot parse (the ``google.rpc.Status``
the mock sent before, ``code`` an int) reaches the caller only as ``GenAiDefaultError("Error
response body did not match expected schema")``. So the test reads what the SDK parsed:
the status class, the status code, and the typed cause holding the API's documented code
and the mock's message.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from google import genai
from google.genai._gaos.lib.compat_errors import APIError  # both generations

from callgate.mock import MockServer, ScriptBuilder

GENERATION = int(importlib.metadata.version("google-genai").split(".")[0])
MODEL = "gemini-3-flash-preview"
MESSAGE = "scripted failure"
# Statuses every generation raises at once (no SDK retry), with the documented codes.
STATUSES = {
    400: ("BadRequestError", "invalid_request"),
    401: ("AuthenticationError", "authentication"),
    403: ("PermissionDeniedError", "permission_denied"),
    404: ("NotFoundError", "not_found"),
}
if GENERATION >= 3:  # 3.x honours retry_options; 2.12.1 retries these whatever it is told
    STATUSES |= {
        429: ("RateLimitError", "rate_limit_exceeded"),
        500: ("InternalServerError", "api_error"),
        503: ("InternalServerError", "service_unavailable"),
    }


@pytest.fixture
def serve() -> Iterator[Callable[..., MockServer]]:
    servers: list[MockServer] = []

    def start(**turn: Any) -> MockServer:
        builder = ScriptBuilder()
        builder.turn("gemini_interactions", expect={"model": MODEL}, text="hi", **turn)
        servers.append(MockServer(builder.build()).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def _client(server: MockServer) -> Any:
    options: dict[str, Any] = {"base_url": server.gemini_base_url, "api_version": "v1"}
    if GENERATION >= 3:
        options["retry_options"] = {"attempts": 1}
    return genai.Client(api_key="k", http_options=options)


def _create(client: Any, stream: bool) -> None:
    answer = client.interactions.create(model=MODEL, input="hi", stream=stream)
    if stream:
        list(answer)


def _read(err: BaseException, cls: str, status: int, code: str, message: str) -> None:
    assert type(err).__name__ == cls
    assert getattr(err, "status_code", None) == status
    assert message in str(err)
    parsed = err.__cause__  # what the SDK's generated layer read from the body
    assert type(parsed).__name__.endswith("ClientError" if status < 500 else "ServerError")
    assert (parsed.data.error.code, parsed.data.error.message) == (code, message)  # type: ignore[union-attr]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("status", sorted(STATUSES))
def test_a_scripted_http_error_is_read_by_the_sdk(
    serve: Callable[..., MockServer], status: int, stream: bool
) -> None:
    server = serve(fault={"type": "http_error", "status": status, "message": MESSAGE})
    client = _client(server)  # held: a collected client closes its connection pool
    with pytest.raises(APIError) as info:
        _create(client, stream)
    cls, code = STATUSES[status]
    _read(info.value, cls, status, code, MESSAGE)


# 2.12.1 marks interactions.get deprecated (a DeprecationWarning, an error in this suite).
@pytest.mark.filterwarnings("ignore:.*DEPRECATED.*:DeprecationWarning")
def test_the_native_refusals_are_read_by_the_sdk(serve: Callable[..., MockServer]) -> None:
    client = _client(serve())
    gone = f"Interaction {'0' * 32!r} was not found."
    with pytest.raises(APIError) as missing:
        client.interactions.get("0" * 32)
    _read(missing.value, "NotFoundError", 404, "not_found", gone)
    with pytest.raises(APIError) as unknown:
        client.interactions.create(model=MODEL, input="hi", previous_interaction_id="0" * 32)
    _read(unknown.value, "NotFoundError", 404, "not_found", gone)


def test_a_missing_key_is_the_documented_authentication_error(
    serve: Callable[..., MockServer],
) -> None:
    server = serve()
    answer = httpx.post(f"{server.gemini_base_url}/v1/interactions", json={"model": MODEL})
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "authentication"
