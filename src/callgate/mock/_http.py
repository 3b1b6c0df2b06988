"""What every route sends and journals: replies, rendered turns, SSE headers, sessions.

The leaf the app, the stored-state routes, the fault layer and the providers share, so
none of them imports another for these (no import cycle).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ._journal import JournalEntry

if TYPE_CHECKING:
    from ._state import MockState, Session

__all__ = [
    "CONVERSATION_HEADER",
    "SSE_HEADERS",
    "TEST_ID_HEADER",
    "Rendered",
    "Reply",
    "WholeStream",
    "bearer",
    "begin_entry",
    "own_error",
    "reply_response",
    "session_of",
    "sse_response",
]

TEST_ID_HEADER = "x-callgate-test-id"
CONVERSATION_HEADER = "x-callgate-conversation"
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


@dataclasses.dataclass(frozen=True, slots=True)
class Reply:
    """A complete non-success answer: status, JSON body and extra headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class Rendered:
    """What the server sent for one turn: its id, its calls, and the wire payload."""

    response_id: str
    calls: tuple[tuple[str, str], ...]  # (call id, function name)
    events: tuple[dict[str, Any], ...]  # stream events (empty for a JSON body)
    body: dict[str, Any] | None  # non-streaming body
    sse: bytes  # the encoded stream (b"" for a JSON body)
    frames: tuple[bytes, ...]  # one SSE frame per event, in order


class WholeStream(Response):
    """A finished event stream sent as one body, its headers built once as raw bytes
    (what ``Response(body, media_type="text/event-stream", headers=...)`` sends, minus
    Starlette's per-request header normalisation)."""

    media_type = "text/event-stream"

    def __init__(self, body: bytes, request_id: str) -> None:
        self.status_code = 200
        self.body = body
        self.background = None
        self.raw_headers = [
            *_SSE_RAW,
            (b"request-id", request_id.encode("latin-1")),
            (b"content-length", b"%d" % len(body)),
            (b"content-type", b"text/event-stream; charset=utf-8"),
        ]


_SSE_RAW = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in SSE_HEADERS.items()]


def bearer(request: Request) -> bool:
    """Whether the request carries ``Authorization: Bearer <something>``."""
    value = request.headers.get("authorization", "")
    return value.startswith("Bearer ") and len(value) > len("Bearer ")


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
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
    return state.journal.begin(
        test_id=test_id if test_id is not None else headers.get(TEST_ID_HEADER, "default"),
        conversation=headers.get(CONVERSATION_HEADER, "default"),
        protocol=protocol,
        method=scope["method"],
        path=scope["path"],
        query=scope["query_string"].decode("latin-1"),
        headers=headers,
        body=None,
    )


def session_of(request: Request) -> tuple[MockState, Session]:
    """The state and the caller's session (by ``x-callgate-test-id``)."""
    state: MockState = request.app.state.callgate
    return state, state.session(request.headers.get(TEST_ID_HEADER, "default"))
