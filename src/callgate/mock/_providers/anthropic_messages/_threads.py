"""Anthropic message threads in the mock (beta ``message-threads-2026-08-12``).

A ``thread: {"type": "create"}`` request is served like any other and its record holds the
conversation; a ``continue`` names the message it continues (``previous_message_id``) and
sends only the new messages. :func:`resolve_thread` refuses what the API refuses, each in
the provider's shape with ``error.details.error_code``:

- ``thread_not_found`` (404): no message with that id, one not made in a thread, or a
  thread that was deleted: threads are deleted within an hour of their last use (the
  documented retention; :data:`THREAD_TTL_SECONDS`), and ``POST
  /_callgate/anthropic/threads/{message_id}/expire`` deletes one at once for a test (the
  API has no delete route: anthropic 2.14.0 has none).
- ``thread_continue_in_flight`` (400): another request continuing from the same message is
  still streaming (a paced stream holds its record in flight until its last byte).
- ``thread_already_continued`` (400): that message was continued before.
- ``thread_fingerprint_mismatch`` (400): the request changes the thread's model, system or
  tools.
- ``thread_unsupported_request`` (400): a field a thread refuses (with ``unsupported``).

A ``thread`` request without the beta in ``anthropic-beta`` is a plain 400
(:func:`require_beta`). A valid ``continue`` is expanded in place into the whole
conversation (stored history, the reply as its client received it, the new messages) with
the thread's model, system and tools, so the native checks and ``expect`` see all of it.
Guarded by the state's lock (the callers hold it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.routing import Route

from ....anthropic_messages import THREADS_BETA
from .._kit import Host, Reply, Stored, list_of

if TYPE_CHECKING:
    from ..._store_state import Record, SessionStore

__all__ = ["THREAD_TTL_SECONDS", "expire_route", "require_beta", "resolve_thread"]

PROTOCOL_NAME = "anthropic_messages"
# Threads are deleted within 1 h of their last use (the API docs' retention statement).
THREAD_TTL_SECONDS = 3600.0
# Request fields a thread refuses (the request-field names of anthropic 2.14.0
# ThreadUnsupportedFeatureName; which values of them are refused is the mock's own reading).
_UNSUPPORTED = ("context_management", "fallbacks", "thinking")
_HELD = ("model", "system", "tools")  # what a continue must not change

ErrorBody = Callable[[int, str], dict[str, Any]]
Emitted = Callable[["Record"], tuple[dict[str, Any], ...]]


def _now() -> float:
    return time.monotonic()


def _error(error_body: ErrorBody, status: int, code: str, message: str, **extra: Any) -> Reply:
    body = error_body(status, message)
    body["error"]["details"] = {"error_code": code, **extra}
    return Reply(status, body)


def require_beta(request: Request, body: dict[str, Any], error_body: ErrorBody) -> Reply | None:
    """A ``thread`` field is only accepted with the threads beta in ``anthropic-beta``."""
    if "thread" not in body:
        return None
    betas = {b.strip() for b in request.headers.get("anthropic-beta", "").split(",")}
    if THREADS_BETA in betas:
        return None
    message = f"thread: requires the anthropic-beta header to include {THREADS_BETA!r}"
    return Reply(400, error_body(400, message))


def _thread(record: Record) -> dict[str, Any] | None:
    thread = record.served.request.get("thread")
    return thread if isinstance(thread, dict) else None


def _members(store: SessionStore, record: Record) -> list[Record]:
    """Every record of ``record``'s thread: its chain back to the create, and on."""
    parents: dict[str, Any] = {}
    for r in store.records.values():
        thread = _thread(r) if r.protocol == PROTOCOL_NAME else None
        if thread is not None:
            parents[r.id] = thread.get("previous_message_id")

    def root(record_id: str) -> str:
        seen: set[str] = set()
        parent = parents.get(record_id)
        while isinstance(parent, str) and record_id not in seen:
            seen.add(record_id)
            record_id, parent = parent, parents.get(parent)
        return record_id

    own = root(record.id)
    return [store.records[rid] for rid in parents if root(rid) == own]


def expire(store: SessionStore, record: Record) -> None:
    """Delete ``record``'s whole thread (what the retention does after an hour unused)."""
    for member in _members(store, record):
        member.deleted = True


def _expired(store: SessionStore, record: Record) -> bool:
    if record.deleted:
        return True
    last_use = max(m.served_at for m in _members(store, record))
    if _now() - last_use > THREAD_TTL_SECONDS:
        expire(store, record)
        return True
    return False


def _continuation_of(store: SessionStore, message_id: str) -> Record | None:
    for r in store.records.values():
        thread = _thread(r) if r.protocol == PROTOCOL_NAME else None
        if thread is not None and thread.get("previous_message_id") == message_id:
            return r
    return None


def _refusal(store: SessionStore, body: dict[str, Any], error_body: ErrorBody) -> Reply | None:
    thread = body["thread"]
    kind = thread.get("type") if isinstance(thread, dict) else None
    if kind not in ("create", "continue"):
        return Reply(400, error_body(400, "thread.type: must be one of 'create', 'continue'"))
    unsupported = [f for f in _UNSUPPORTED if body.get(f) is not None]
    if unsupported:
        message = f"thread does not support: {', '.join(unsupported)}"
        return _error(error_body, 400, "thread_unsupported_request", message,
                      unsupported=unsupported)  # fmt: skip
    if kind == "create":
        return None
    previous_id = thread.get("previous_message_id")
    previous = store.get(PROTOCOL_NAME, previous_id)
    if previous is None or _thread(previous) is None or _expired(store, previous):
        message = f"no thread state found for previous_message_id {previous_id!r}"
        return _error(error_body, 404, "thread_not_found", message)
    other = _continuation_of(store, str(previous_id))
    if other is not None and other.in_flight:
        message = f"another request is still continuing from message {previous_id}"
        return _error(error_body, 400, "thread_continue_in_flight", message)
    if other is not None:
        message = f"message {previous_id} has already been continued"
        return _error(error_body, 400, "thread_already_continued", message)
    changed = [f for f in _HELD if f in body and body[f] != previous.served.request.get(f)]
    if changed:
        message = f"differs from the thread: {', '.join(changed)}"
        return _error(error_body, 400, "thread_fingerprint_mismatch", message)
    return None


def resolve_thread(
    store: SessionStore, body: dict[str, Any], error_body: ErrorBody, emitted: Emitted
) -> Reply | None:
    """Refuse a thread request the API would refuse; expand a ``continue`` in place into the
    whole conversation with the thread's model, system and tools."""
    if body.get("thread") is None:
        return None
    refused = _refusal(store, body, error_body)
    if refused is not None or body["thread"]["type"] == "create":
        return refused
    previous = store.get(PROTOCOL_NAME, body["thread"]["previous_message_id"])
    if previous is None:  # pragma: no cover - _refusal answered it
        return None
    held = previous.served.request
    reply = {"role": "assistant", "content": [dict(b) for b in emitted(previous)]}
    body["messages"] = [*list_of(held.get("messages")), reply, *list_of(body.get("messages"))]
    body.update({f: held[f] for f in _HELD if f in held})
    return None


def expire_route(host: Host, error_body: ErrorBody) -> Route:
    """``POST /_callgate/anthropic/threads/{message_id}/expire``: delete that message's
    thread in the caller's session (by ``x-callgate-test-id``), as the retention would."""

    def answer(call: Stored) -> Reply:
        message_id = call.request.path_params["message_id"]
        found = call.store.get(PROTOCOL_NAME, message_id)
        if found is None or _thread(found) is None:
            return Reply(404, error_body(404, f"no thread holds message {message_id!r}"))
        expire(call.store, found)
        return Reply(200, {"expired": message_id})

    return Route(
        "/_callgate/anthropic/threads/{message_id:str}/expire",
        host.stored(None, None, answer, "control"),
        methods=["POST"],
    )
