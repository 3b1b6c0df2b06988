"""The mock provider as a small ASGI app (Starlette), composed from plain functions.

Routes speak each provider's real wire protocol; every request consumes the next turn
of its conversation (chosen by the ``x-callgate-conversation`` header, default
``"default"``). A request that does not match its turn gets HTTP 400 in the provider's
own error shape naming each mismatch, and the mismatch is recorded on the state.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .._errors import CallgateError
from .._json import loads_strict
from ._match import mismatches
from ._requests import view_request
from ._respond import Rendered, error_body, render
from ._script import Script

__all__ = ["Mismatch", "MockState", "create_app"]

CONVERSATION_HEADER = "x-callgate-conversation"


@dataclasses.dataclass(frozen=True, slots=True)
class Mismatch:
    """A request that matched no turn: where, and every problem found."""

    conversation: str
    protocol: str
    location: str | None
    problems: tuple[str, ...]


@dataclasses.dataclass(slots=True)
class _Conversation:
    cursor: int = 0
    previous: Rendered | None = None


class MockState:
    """Cursors, what was sent, and recorded mismatches. Thread-safe."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.mismatches: list[Mismatch] = []
        self.served: list[tuple[str, int, Rendered]] = []
        self._conversations = {name: _Conversation() for name in script.conversations}
        self._lock = threading.Lock()

    def remaining(self) -> dict[str, int]:
        """Turns not yet consumed, per conversation."""
        with self._lock:
            return {
                name: len(self.script.conversations[name]) - conv.cursor
                for name, conv in self._conversations.items()
            }

    def _take(self, conversation: str, protocol: str, body: dict[str, Any]) -> Rendered | Mismatch:
        with self._lock:
            conv = self._conversations.get(conversation)
            if conv is None:
                return self._record(conversation, protocol, None, "unknown conversation")
            turns = self.script.conversations[conversation]
            if conv.cursor >= len(turns):
                return self._record(conversation, protocol, None, "the script has no turn left")
            turn = turns[conv.cursor]
            if turn.protocol != protocol:
                return self._record(
                    conversation, protocol, turn.location,
                    f"next turn is {turn.protocol}, request came on the {protocol} route",
                )  # fmt: skip
            problems = mismatches(
                turn.expect,
                view_request(protocol, body),
                previous_response_id=conv.previous.response_id if conv.previous else None,
                previous_calls=conv.previous.calls if conv.previous else (),
            )
            if problems:
                return self._record(conversation, protocol, turn.location, *problems)
            rendered = render(
                turn,
                seed=self.script.seed,
                conversation=conversation,
                turn_number=conv.cursor,
                stream=body.get("stream") is True,
                baseline=self.script.baseline,
                model=body.get("model") if isinstance(body.get("model"), str) else None,
            )
            conv.cursor += 1
            conv.previous = rendered
            self.served.append((conversation, conv.cursor - 1, rendered))
            return rendered

    def _record(
        self, conversation: str, protocol: str, location: str | None, *problems: str
    ) -> Mismatch:
        mismatch = Mismatch(conversation, protocol, location, problems)
        self.mismatches.append(mismatch)
        return mismatch


# -- authentication, per provider -----------------------------------------------------------


def _bearer(request: Request) -> bool:
    value = request.headers.get("authorization", "")
    return value.startswith("Bearer ") and len(value) > len("Bearer ")


def _auth_openai(request: Request) -> str | None:
    if _bearer(request):
        return None
    return "You didn't provide an API key. Send it as 'Authorization: Bearer <key>'."


def _auth_azure(request: Request) -> str | None:
    if request.headers.get("api-key") or _bearer(request):
        return None
    return "Access denied due to missing subscription key or Bearer token."


def _auth_anthropic(request: Request) -> str | None:
    if not (request.headers.get("x-api-key") or _bearer(request)):
        return "x-api-key header is required"
    if not request.headers.get("anthropic-version"):
        return "anthropic-version header is required"
    return None


def _auth_gemini(request: Request) -> str | None:
    if request.headers.get("x-goog-api-key") or request.query_params.get("key"):
        return None
    return "Method doesn't allow unregistered callers. Please use an API key."


_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def _endpoint(protocol: str, auth: Callable[[Request], str | None]) -> Any:
    async def endpoint(request: Request) -> Response:
        problem = auth(request)
        if problem is not None:
            status = 400 if "anthropic-version" in problem else 401
            return JSONResponse(error_body(protocol, status, problem), status_code=status)
        try:
            body = loads_strict(await request.body())
        except CallgateError as exc:
            return JSONResponse(
                error_body(protocol, 400, f"request body is not valid JSON: {exc}"), status_code=400
            )
        if not isinstance(body, dict):
            return JSONResponse(error_body(protocol, 400, "body must be a JSON object"), 400)
        state: MockState = request.app.state.callgate
        conversation = request.headers.get(CONVERSATION_HEADER, "default")
        outcome = state._take(conversation, protocol, body)
        if isinstance(outcome, Mismatch):
            where = f" at {outcome.location}" if outcome.location else ""
            message = f"callgate mock: request does not match the script{where}: " + "; ".join(
                outcome.problems
            )
            return JSONResponse(error_body(protocol, 400, message), status_code=400)
        if outcome.body is not None:
            return JSONResponse(outcome.body, headers={"request-id": outcome.response_id})

        async def frames() -> AsyncIterator[bytes]:
            for frame in outcome.frames:
                yield frame

        return StreamingResponse(
            frames(),
            media_type="text/event-stream",
            headers={**_SSE_HEADERS, "request-id": outcome.response_id},
        )

    return endpoint


def create_app(script: Script, *, state: MockState | None = None) -> Starlette:
    """A plain ASGI app serving ``script``. ``app.state.callgate`` is its :class:`MockState`."""
    routes = [
        Route(
            "/openai/v1/responses", _endpoint("openai_responses", _auth_openai), methods=["POST"]
        ),
        Route(
            "/azure-openai/openai/v1/responses",
            _endpoint("openai_responses", _auth_azure),
            methods=["POST"],
        ),
        Route(
            "/anthropic/v1/messages",
            _endpoint("anthropic_messages", _auth_anthropic),
            methods=["POST"],
        ),
        Route(
            "/gemini/{version:str}/interactions",
            _gemini_versioned(_endpoint("gemini_interactions", _auth_gemini)),
            methods=["POST"],
        ),
    ]
    app = Starlette(routes=routes)
    app.state.callgate = state if state is not None else MockState(script)
    return app


def _gemini_versioned(endpoint: Any) -> Any:
    async def versioned(request: Request) -> Response:
        if request.path_params["version"] not in ("v1", "v1beta"):
            body = error_body("gemini_interactions", 404, "unknown API version")
            return JSONResponse(body, status_code=404)
        response: Response = await endpoint(request)
        return response

    return versioned
