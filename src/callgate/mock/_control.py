"""The mock's own routes: ``GET /_callgate/journal``, ``GET /_callgate/verdicts``,
``POST /_callgate/reset``, and the
registered sessions and status (``/_callgate/sessions/{test_id}``, ``/_callgate/status``,
defined in ``_sessions``).

(The fault control route, ``/_callgate/faults``, lives with the faults.)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from . import _sessions
from ._guard import error
from ._http import TEST_ID_HEADER, begin_entry
from ._journal import JournalEntry
from ._state import MockState

__all__ = ["routes"]


async def _journal(request: Request) -> Response:
    """``GET /_callgate/journal[?test_id=][&after=<seq>][&limit=<n>]``: a JSON list, oldest
    first; ``x-callgate-journal-dropped`` counts the entries the caps dropped."""
    state: MockState = request.app.state.callgate
    params = request.query_params
    test_id = params.get("test_id")
    after, limit = params.get("after", "-1"), params.get("limit")
    if not _is_int(after) or (limit is not None and not limit.isdigit()):
        message = "'after' must be an integer and 'limit' a non-negative integer"
        return JSONResponse(error(None, 400, message), status_code=400)
    page = state.journal.page(
        test_id=test_id, after=int(after), limit=None if limit is None else int(limit)
    )
    headers = {"x-callgate-journal-dropped": str(state.journal.dropped(test_id))}
    if len(page) <= _JOURNAL_SLICE:
        return JSONResponse([e.wire() for e in page], headers=headers)
    return StreamingResponse(_json_slices(page), media_type="application/json", headers=headers)


_JOURNAL_SLICE = 200


async def _json_slices(entries: list[JournalEntry]) -> AsyncIterator[bytes]:
    """A long journal read as one JSON list, encoded a slice at a time with the event
    loop free in between, so other clients are not stalled while it is sent."""
    yield b"["
    for start in range(0, len(entries), _JOURNAL_SLICE):
        part = [e.wire() for e in entries[start : start + _JOURNAL_SLICE]]
        text = json.dumps(part, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        yield (("," if start else "") + text[1:-1]).encode()
        await asyncio.sleep(0)
    yield b"]"


def _is_int(text: str) -> bool:
    return text.removeprefix("-").isdigit()


async def _reset(request: Request) -> Response:
    """``POST /_callgate/reset``: forget every session, or one test id's (``?test_id=``,
    else the ``x-callgate-test-id`` header): cursors, stored objects, runtime faults,
    mismatches and journal entries."""
    state: MockState = request.app.state.callgate
    test_id = request.query_params.get("test_id") or request.headers.get(TEST_ID_HEADER)
    state.reset(test_id)
    entry = begin_entry(request, state, None)
    answer = {"reset": "all" if test_id is None else test_id}
    entry.close(200, answer, "control")
    return JSONResponse(answer)


async def _verdicts(request: Request) -> Response:
    """``GET /_callgate/verdicts[?test_id=]``: every verdict (or one test id's), oldest
    first, as docs/verdicts.md describes them (not journaled)."""
    state: MockState = request.app.state.callgate
    found = state.verdicts.list(request.query_params.get("test_id"))
    return JSONResponse([v.to_dict() for v in found])


def routes() -> list[Route]:
    return [
        Route("/_callgate/journal", _journal, methods=["GET"]),
        Route("/_callgate/verdicts", _verdicts, methods=["GET"]),
        Route("/_callgate/reset", _reset, methods=["POST"]),
        *_sessions.routes(),
    ]
