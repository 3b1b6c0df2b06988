"""Message threads (beta ``message-threads-2026-08-12``): the server holds the conversation.

:func:`build_thread_continuation` is the stateful counterpart of
:func:`~._continuation.build_continuation`: only the new user message is sent, with
``thread: {type: continue, previous_message_id}``, and the checks the server would make
(the fingerprint: model, system and tools held by the thread; every other control re-sent)
run before anything is sent, so a caller gets a ContinuationError instead of the
provider's 400. It shares the full-history builder's result binding, control and container
checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._errors import ContinuationError, UsageError
from .._limits import DEFAULT_LIMITS, Limits
from .._results import ToolResult, bind_results
from ..contracts import get_baseline
from ._continuation import (
    CARRY_CONTAINER,
    _answers,
    _assistant_content,
    _check_arguments,
    _check_container,
    _check_controls,
    _check_system,
    _check_tools,
    _check_turn,
    _closing,
    _copy,
    _user_content,
)
from ._turn import Turn

__all__ = ["THREADS_BETA", "build_thread_continuation"]

THREADS_BETA = "message-threads-2026-08-12"
# A ``continue`` leaves these out: the server takes them from the thread, and a turn that
# changes one is refused (anthropic 2.14.0 lib/threads/_thread_state.py CREATE_ONLY_FIELDS).
_THREAD_HELD = ("system", "tools")
_NOT_CONTROLS = frozenset({"messages", "thread", "stream", "model", "max_tokens", "container"})


def _thread_of(request: Any, turn: Turn) -> dict[str, Any]:
    """The ``thread`` field of the request that produced ``turn``: the proof the server holds it."""
    if not isinstance(request, Mapping):
        raise UsageError("thread_request must be the request body that produced the turn")
    if (
        "thread:" + THREADS_BETA
        not in get_baseline("anthropic_messages", turn.baseline).stateful_continuation
    ):
        raise ContinuationError(f"the {turn.baseline} baseline has no message threads")
    thread = request.get("thread")
    if not isinstance(thread, Mapping) or thread.get("type") not in ("create", "continue"):
        raise ContinuationError(
            "the turn was not created or continued in a thread (thread_request has no "
            "thread {type: create|continue}); use build_continuation"
        )
    return dict(thread)


def _check_fingerprint(
    request: Mapping[str, Any],
    thread: dict[str, Any],
    model: str,
    held: dict[str, Any],
    controls: dict[str, Any],
) -> None:
    """What must stay equal between thread turns, checked before anything is sent."""
    if request.get("model") != model:
        raise ContinuationError(
            f"model {model!r} differs from the thread's {request.get('model')!r}"
        )
    if thread["type"] == "create":
        changed = [f for f in _THREAD_HELD if _copy(request.get(f), f) != held[f]]
        if changed:
            raise ContinuationError(f"{changed} differ from the values the thread was created with")
    elif any(f in request for f in _THREAD_HELD):
        raise ContinuationError("a thread continue request does not send system or tools")
    missing = sorted(set(request) - _NOT_CONTROLS - set(_THREAD_HELD) - set(controls))
    if missing:
        raise ContinuationError(f"request_controls must re-send the thread's controls {missing}")


def build_thread_continuation(
    turn: Turn,
    results: Iterable[ToolResult],
    *,
    previous_message_id: str,
    thread_request: Mapping[str, Any],
    model: str,
    max_tokens: int,
    tools: Sequence[Mapping[str, Any]],
    system: str | Sequence[Mapping[str, Any]] | None = None,
    request_controls: Mapping[str, Any] | None = None,
    user_content: str | Sequence[Mapping[str, Any]] | None = None,
    container: str | Mapping[str, Any] | None = CARRY_CONTAINER,
    limits: Limits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """The next request of a message thread (beta ``message-threads-2026-08-12``): only the
    new user message is sent, with ``thread: {type: continue, previous_message_id}``.

    ``thread_request`` is the body that produced ``turn``; it must carry ``thread`` (create
    or continue): that is the proof the server holds the conversation. ``previous_message_id``
    must be ``turn.message_id``. ``tools`` and ``system`` are the thread's (not sent; used to
    check declared tools and, against a ``create`` request, the fingerprint). ``model`` must
    equal the request's, and every other control the request sent must be re-sent in
    ``request_controls``. Results, recovery calls, ``user_content`` and ``container`` work as
    in :func:`build_continuation`; a ``pause_turn`` turn continues with no messages. Raises
    :class:`~callgate.ContinuationError` for a turn not in a thread, a baseline without
    threads, another message id, a fingerprint change or a missing control;
    :class:`UsageError` for arguments of the wrong type or shape.
    """
    _check_turn(turn)
    _check_arguments(model, max_tokens, None, ())
    if type(previous_message_id) is not str or not previous_message_id:
        raise UsageError("previous_message_id must be a non-empty str")
    thread = _thread_of(thread_request, turn)
    if previous_message_id != turn.message_id:
        raise ContinuationError(
            f"previous_message_id {previous_message_id!r} is not the turn's id {turn.message_id!r}"
        )
    bound = bind_results([call.call_id for call in turn.calls], results)
    held = {"tools": _check_tools(tools), "system": _check_system(system)}
    controls = _check_controls(request_controls)
    if "thread" in controls or "stream" in controls:
        raise ContinuationError("request_controls cannot set thread or stream")
    _check_fingerprint(thread_request, thread, model, held, controls)
    container_value = _check_container(turn, container)
    _assistant_content(turn, [], held["tools"])
    user_blocks = _answers(turn, bound, limits) + _user_content(user_content)
    closing = _closing(turn, [], user_blocks)[1:]
    request: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": closing}
    request["thread"] = {"type": "continue", "previous_message_id": previous_message_id}
    if container_value is not None:
        request["container"] = container_value
    request.update(controls)
    return request
