"""Helpers for the mock-server tests: drive the ASGI app directly with a recording send."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from callgate.mock import MockServer, Script, create_app

AUTH = {
    "openai_responses": {"authorization": "Bearer test"},
    "anthropic_messages": {"x-api-key": "test", "anthropic-version": "2023-06-01"},
    "gemini_interactions": {"x-goog-api-key": "test"},
    "gemini_generate_content": {"x-goog-api-key": "test"},
    "openai_chat_completions": {"authorization": "Bearer test"},
}
PATHS = {
    "openai_responses": "/openai/v1/responses",
    "anthropic_messages": "/anthropic/v1/messages",
    "gemini_interactions": "/gemini/v1/interactions",
    "gemini_generate_content": "/gemini/v1beta/models/m:generateContent",
    "openai_chat_completions": "/openai/v1/chat/completions",
}
# generateContent streams on its own method (the stream flag is in the path, not the body).
STREAM_PATHS = {"gemini_generate_content": "/gemini/v1beta/models/m:streamGenerateContent?alt=sse"}


def path_of(protocol: str, stream: bool) -> str:
    """The create route of ``protocol`` for a streamed or a JSON answer."""
    return STREAM_PATHS.get(protocol, PATHS[protocol]) if stream else PATHS[protocol]


# What the real APIs require of a create body beyond what a test cares about: the mock
# refuses a body its API would refuse (docs/request-validation.md).
REQUIRED = {
    "openai_responses": {"model": "m"},
    "anthropic_messages": {
        "model": "m",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
    },
    "gemini_interactions": {"model": "m"},
    "gemini_generate_content": {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    "openai_chat_completions": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
}
_PROTOCOL_OF = {path: p for p, path in (*PATHS.items(), *STREAM_PATHS.items())}


def valid_body(protocol: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with the fields ``protocol``'s API requires added where it has none
    (generateContent: without ``model`` and ``stream``, which its path carries)."""
    if protocol == "gemini_generate_content":
        body = {k: v for k, v in body.items() if k not in ("model", "stream")}
    return {**REQUIRED[protocol], **body}


def asgi_call(
    app: Any, path: str, body: Mapping[str, Any] | bytes, headers: Mapping[str, str]
) -> tuple[int, dict[str, str], list[bytes]]:
    """POST to ``app`` in-process; return status, headers and every body message sent.
    A mapping body for a create route gets the fields its API requires (:func:`valid_body`)."""
    protocol = _PROTOCOL_OF.get(path)
    if protocol is not None and isinstance(body, Mapping):
        body = valid_body(protocol, body)
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    path, _, query = path.partition("?")
    messages: list[dict[str, Any]] = []
    request_sent = False

    async def receive() -> dict[str, Any]:
        nonlocal request_sent
        if not request_sent:
            request_sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}  # pragma: no cover

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        + [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1234),
        "server": ("127.0.0.1", 80),
    }
    asyncio.run(app(scope, receive, send))
    start = messages[0]
    head = {k.decode(): v.decode() for k, v in start["headers"]}
    bodies = [m["body"] for m in messages[1:] if m["type"] == "http.response.body" and m["body"]]
    return start["status"], head, bodies


@pytest.fixture
def call_app() -> Any:
    def run(
        script: Script,
        protocol: str,
        body: Mapping[str, Any],
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, dict[str, str], list[bytes], Any]:
        app = create_app(script)
        status, head, bodies = asgi_call(
            app,
            path_of(protocol, body.get("stream") is True),
            body,
            AUTH[protocol] if headers is None else headers,
        )
        return status, head, bodies, app.state.callgate

    return run


# -- recording a real-socket server (official SDK conformance) -------------------------------


@dataclasses.dataclass
class Exchange:
    """One HTTP exchange as the mock app saw it: the request and the response bytes."""

    path: str
    headers: dict[str, str]
    request_chunks: list[bytes] = dataclasses.field(default_factory=list)
    status: int | None = None
    response_chunks: list[bytes] = dataclasses.field(default_factory=list)

    @property
    def conversation(self) -> str:
        return self.headers.get("x-callgate-conversation", "default")

    @property
    def request_body(self) -> bytes:
        return b"".join(self.request_chunks)

    @property
    def response_body(self) -> bytes:
        return b"".join(self.response_chunks)

    def request_json(self) -> Any:
        return json.loads(self.request_body)


class RecordingApp:
    """ASGI middleware around the mock app: keeps every request body it received and every
    response body message it sent, so a test can read what crossed the socket."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()

    def of(self, conversation: str) -> list[Exchange]:
        with self._lock:
            return [e for e in self.exchanges if e.conversation == conversation]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        exchange = Exchange(
            path=scope["path"],
            headers={k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]},
        )
        with self._lock:
            self.exchanges.append(exchange)

        async def recording_receive() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                exchange.request_chunks.append(message.get("body", b""))
            return message

        async def recording_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                exchange.status = message["status"]
            elif message["type"] == "http.response.body":
                exchange.response_chunks.append(message.get("body", b""))
            await send(message)

        await self.app(scope, recording_receive, recording_send)


@contextlib.contextmanager
def recording_mock_server(script: Script) -> Iterator[tuple[MockServer, RecordingApp]]:
    """A running :class:`MockServer` whose app is wrapped in a :class:`RecordingApp`."""
    server = MockServer(script)
    recorder = RecordingApp(server.app)
    server.app = recorder  # read by start(); the server's state stays the app's state
    with server:
        yield server, recorder


_GENAI_CLIENTS: list[Any] = []  # a genai Client closes its transport when collected


def genai_client(server: MockServer, version: str = "v1", **http_options: Any) -> Any:
    """A google-genai client on the mock's Gemini base URL (``http_options`` added), kept
    alive until the servers of :func:`served` stop."""
    from google import genai

    options = {"base_url": server.gemini_base_url, "api_version": version, **http_options}
    client = genai.Client(api_key="conformance", http_options=options)  # type: ignore[arg-type]
    _GENAI_CLIENTS.append(client)
    return client


@pytest.fixture
def served() -> Iterator[Callable[[Script], tuple[MockServer, RecordingApp]]]:
    """``served(script)`` starts a recording mock server; every one started is stopped at
    the end of the test, after the genai clients made on them are dropped."""
    with contextlib.ExitStack() as stack:
        yield lambda script: stack.enter_context(recording_mock_server(script))
        _GENAI_CLIENTS.clear()


def conversation_problems(server: MockServer, conversation: str) -> list[str]:
    """What :meth:`MockServer.assert_script_done` would say about one conversation only."""
    problems = [
        f"mismatch at {m.location}: {'; '.join(m.problems)}"
        for m in server.mismatches
        if m.conversation == conversation
    ]
    left = server.state.remaining().get(conversation)
    if left is None:
        problems.append(f"no conversation {conversation!r} in the script")
    elif left:
        problems.append(f"{left} turn(s) of {conversation!r} left unserved")
    return problems
