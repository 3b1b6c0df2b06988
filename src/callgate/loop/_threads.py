"""Anthropic message threads in the host loop (``HostLoop(..., threads=True)``).

The first request creates a thread (``thread: {type: create}``) and each continuation
sends only the new user message (:func:`callgate.anthropic_messages.build_thread_continuation`),
with ``message-threads-2026-08-12`` in ``anthropic-beta``.

A thread can be lost under the loop: it expires an hour after its last use, and a
request re-sent after a crash (R5: an Anthropic turn cannot be fetched back) finds its
message already continued, or its first attempt still in flight. The API answers those
with ``thread_not_found``, ``thread_already_continued`` or ``thread_continue_in_flight``;
the loop then does what the SDK's threaded tool runner does: it replays the whole
conversation, rebuilt from the ledger (the requests and the turns it recorded), in a new
thread. No tool runs again: the replay carries the results the ledger already holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._protocols import room
from ..ledger import RequestRecord, RequestState
from ._model import ProviderHTTPError
from ._wire import reparse

__all__ = ["BETA_HEADER", "lost_thread", "replay_in_new_thread", "with_threads_beta"]

_LOST = frozenset({"thread_not_found", "thread_already_continued", "thread_continue_in_flight"})
BETA_HEADER = "anthropic-beta"


def with_threads_beta(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` with the threads beta added to any ``anthropic-beta`` the caller set."""
    out = {k: v for k, v in headers.items() if k.lower() != BETA_HEADER}
    given = [v for k, v in headers.items() if k.lower() == BETA_HEADER]
    betas = [b.strip() for v in given for b in v.split(",") if b.strip()]
    wanted = str(room("anthropic_messages").THREADS_BETA)
    out[BETA_HEADER] = ",".join(betas if wanted in betas else [*betas, wanted])
    return out


def lost_thread(exc: ProviderHTTPError, body: Any) -> bool:
    """Whether ``exc`` refused a thread ``continue`` whose thread a replay recovers."""
    thread = body.get("thread") if isinstance(body, Mapping) else None
    if not isinstance(thread, Mapping) or thread.get("type") != "continue":
        return False
    try:
        answer = json.loads(exc.body)
        code = answer["error"]["details"]["error_code"]
    except (ValueError, KeyError, TypeError):
        return False
    return code in _LOST


def replay_in_new_thread(
    requests: Sequence[RequestRecord], snapshot: Callable[[int], Any], failed: RequestRecord
) -> dict[str, Any]:
    """The ``create`` request that replays the whole conversation of ``failed``.

    ``requests`` are the run's requests in order and ``snapshot(seq)`` the turn recorded
    for the ``seq``-th persisted one (from 1). The history starts at the last request that
    carried it whole (the ``create``), adds each later persisted turn's content and the
    next request's new messages, and ends with ``failed``'s new messages.
    """
    persisted = [r for r in requests if r.state is RequestState.TURN_PERSISTED]
    start = max(i for i, r in enumerate(persisted) if _creates(r.body))
    create = persisted[start].body
    am = room("anthropic_messages")
    messages = list(create["messages"])
    for i in range(start, len(persisted)):
        turn = reparse(am, snapshot(i + 1))
        messages.append({"role": "assistant", "content": [dict(b) for b in turn.content]})
        nxt = persisted[i + 1].body if i + 1 < len(persisted) else failed.body
        messages.extend(nxt.get("messages", ()))
    body = {k: v for k, v in failed.body.items() if k not in ("thread", "messages")}
    body.update({k: create[k] for k in ("system", "tools") if k in create})
    body["messages"] = messages
    body["thread"] = {"type": "create"}
    return body


def _creates(body: Any) -> bool:
    thread = body.get("thread") if isinstance(body, Mapping) else None
    return not isinstance(thread, Mapping) or thread.get("type") == "create"
