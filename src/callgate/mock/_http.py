"""What every route sends and journals: replies, rendered turns, SSE headers, sessions.

The leaf the app, the stored-state routes, the fault layer and the providers share, so
none of them imports another for these (no import cycle).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ._journal import JournalEntry, redacted_raw
from ._providers._kit import Rendered, Reply, bearer, header

if TYPE_CHECKING:
    from ._state import MockState, Session

__all__ = [
    "CONNECTION_KEY",
    "CONVERSATION_HEADER",
    "ENTRY_KEY",
    "SSE_HEADERS",
    "TEST_ID_HEADER",
    "Rendered",
    "Reply",
    "WholeStream",
    "bearer",
    "begin_entry",
    "header",
    "own_error",
    "reply_response",
    "session_of",
    "sse_response",
]

TEST_ID_HEADER = "x-callgate-test-id"
# A WebSocket message's scope names its connection (journaled) and receives its entry.
CONNECTION_KEY = "callgate.connection"
ENTRY_KEY = "callgate.entry"
CONVERSATION_HEADER = "x-callgate-conversation"
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


class WholeStream(Response):
    """A finished event stream sent as one body, its headers built once as raw bytes
    (what ``Response(body, media_type="text/event-stream", headers=...)`` sends, minus
    Starlette's per-request header normalisation). ``head_lines`` is the same header block
    as HTTP/1.1 lines, for the mock's own connection; ``None`` if the id could not be sent
    in a header (the generic path then refuses it)."""

    media_type = "text/event-stream"

    def __init__(self, body: bytes, request_id: str) -> None:
        self.status_code = 200
        self.body = body
        self.background = None
        self._id = request_id
        self._raw: list[tuple[bytes, bytes]] | None = None
        key = (request_id, len(body))
        lines = _LINES.get(key, b"")
        if lines == b"":
            if len(_LINES) >= 256:
                _LINES.clear()  # ids come from the script and requests: keep the memo bounded
            rid = request_id.encode("latin-1", "replace")
            lines = _LINES[key] = (
                None if b"\r" in rid or b"\n" in rid else _SSE_LINES % (rid, b"%d" % len(body))
            )
        self.head_lines = lines

    @property
    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        """Built on first use (the ASGI path); the mock's connection sends ``head_lines``."""
        if self._raw is None:
            rid = self._id.encode("latin-1", "replace")
            length = b"%d" % len(self.body)
            self._raw = [*_SSE_RAW, (b"request-id", rid), (b"content-length", length)]
        return self._raw

    @raw_headers.setter
    def raw_headers(self, value: list[tuple[bytes, bytes]]) -> None:
        self._raw = value


_LINES: dict[tuple[str, int], bytes | None] = {}
_SSE_RAW = [
    *((k.encode("latin-1"), v.encode("latin-1")) for k, v in SSE_HEADERS.items()),
    (b"content-type", b"text/event-stream; charset=utf-8"),
]
_SSE_LINES = b"".join(b"%b: %b\r\n" % pair for pair in _SSE_RAW).replace(b"%", b"%%") + (
    b"request-id: %b\r\ncontent-length: %b\r\n"
)


def own_error(status: int, message: str) -> dict[str, Any]:
    """The error body of the mock's own routes (no provider's shape)."""
    return {"error": {"type": "callgate_mock_error", "code": status, "message": message}}


def reply_response(entry: JournalEntry, reply: Reply, outcome: str) -> Response:
    """Journal ``reply`` and turn it into a JSON response."""
    entry.close(reply.status, reply.body, outcome)
    return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers)


def sse_response(entry: JournalEntry, body: bytes, outcome: str) -> Response:
    """Journal a finished event stream and send it as one body."""
    entry.close(200, body.decode("utf-8", "replace"), outcome)
    return Response(body, media_type="text/event-stream", headers=SSE_HEADERS)


def begin_entry(
    request: Request, state: MockState, protocol: str | None, test_id: str | None = None
) -> JournalEntry:
    """Open the journal entry of ``request`` (closed when its answer is complete)."""
    # Read the raw ASGI scope: building Starlette's URL object twice per request showed up
    # as the largest single cost of the journal.
    scope = request.scope
    headers = redacted_raw(scope["headers"])  # the test id and conversation are no secrets
    entry = state.journal.begin(
        test_id=test_id
        if test_id is not None
        else headers.get(TEST_ID_HEADER, state.default_test_id),
        conversation=headers.get(CONVERSATION_HEADER, "default"),
        protocol=protocol,
        method=scope["method"],
        path=scope["path"],
        query=scope["query_string"].decode("latin-1"),
        headers=headers,
        body=None,
        redacted=True,
    )
    connection = scope.get(CONNECTION_KEY)
    if connection is not None:
        entry.connection = connection
        scope[ENTRY_KEY] = entry
    return entry


def session_of(request: Request) -> tuple[MockState, Session]:
    """The state and the caller's session (by ``x-callgate-test-id``)."""
    state: MockState = request.app.state.callgate
    return state, state.session(request.headers.get(TEST_ID_HEADER, state.default_test_id))
