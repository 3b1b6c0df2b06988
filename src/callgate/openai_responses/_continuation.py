"""Continuation builders: (turn, results, explicit configuration) -> the next request body.

Both builders are pure: they return a new ``dict`` for ``POST /v1/responses`` and never
touch I/O. Nothing is inherited implicitly: ``instructions`` and ``tools`` do not carry over
through ``previous_response_id`` (API reference, ``instructions``), so both are re-sent;
``store`` is always explicit. Caller-owned controls (``tool_choice``,
``parallel_tool_calls``, ``max_output_tokens``, ``text``, ...) go in ``request_controls``
and cannot override a protected field. A structured final answer is requested with
``text.format``; Chat Completions' ``response_format`` is refused. Tool ``strict`` schemas
constrain call arguments only and are left exactly as the caller wrote them.

Every caller-supplied value is validated as JSON within the default limits and deep-copied
(``callgate._json.json_copy``: tuples become lists), and the turn's items are deep-copied
too, so later mutation on either side cannot reach the request. Errors follow one rule:
:class:`~callgate.UsageError` for an argument of the wrong type or shape,
:class:`~callgate.ContinuationError` for a precondition of the conversation.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._digest import canonical_bytes
from .._errors import ContinuationError, UsageError
from .._json import json_copy
from .._limits import DEFAULT_LIMITS, Limits
from .._results import ToolResult, bind_argument
from .._turncheck import check_parsed_turn
from .._visible import checked_outputs
from ._connection import ConnectionToken, check_token
from ._events import PROVIDER
from ._media import API, render_parts
from ._turn import Turn, turn_digest

__all__ = ["build_stateful_continuation", "build_stateless_continuation"]

PROTECTED_FIELDS = frozenset(
    {"model", "input", "previous_response_id", "store", "instructions", "tools"}
)
# ResponseCreateParams (openai 3.57.0) minus the protected fields; `conversation` is another
# continuation mechanism and is refused by both builders.
CONTROL_FIELDS = frozenset(
    {
        "access_programs",
        "background",
        "background_options",
        "context_management",
        "image",
        "include",
        "max_output_tokens",
        "max_tool_calls",
        "metadata",
        "moderation",
        "parallel_tool_calls",
        "prompt",
        "prompt_cache_key",
        "prompt_cache_options",
        "prompt_cache_retention",
        "reasoning",
        "safety_identifier",
        "service_tier",
        "stream",
        "stream_options",
        "temperature",
        "text",
        "tool_choice",
        "top_logprobs",
        "top_p",
        "truncation",
        "user",
    }
)
_TEXT_FORMATS = frozenset({"text", "json_schema", "json_object"})


def build_stateful_continuation(
    turn: Turn,
    results: Iterable[ToolResult],
    *,
    previous_response_was_stored: bool,
    store: bool,
    model: str,
    instructions: str | None,
    tools: Sequence[Mapping[str, Any]],
    request_controls: Mapping[str, Any] | None = None,
    limits: Limits = DEFAULT_LIMITS,
    connection: ConnectionToken | None = None,
) -> dict[str, Any]:
    """The next request via ``previous_response_id``: only the results are sent as input.

    ``previous_response_was_stored=True``: the caller asserts the prior Response was
    created with storage on and is retrievable (it is not sent). An unstored prior
    Response (``False``) can be named only on the WebSocket connection that produced it,
    while it is that connection's most recent response (its connection-local cache):
    ``connection`` must then be :meth:`Connection.token` of that live connection (a
    :class:`ConnectionToken`, checked against the turn whenever given). ``store`` is the
    new request's own choice. ``instructions=None`` omits the field.

    Raises :class:`~callgate.ContinuationError` for a precondition of the conversation: the
    turn was mutated after parsing or has no calls, the prior response was not stored and
    no valid token proves the live connection (closed, another connection's, or no longer
    its most recent response), a called function is not declared in ``tools``,
    ``request_controls`` overrides a protected field; :class:`~callgate.BindingError` if
    ``results`` do not answer the calls exactly; :class:`~callgate.UsageError` for an
    argument of the wrong type or shape (not a Turn of this room, non-JSON value, unknown
    control, ``response_format``, a ``connection`` that is not a token).

    A result whose output is a tuple of parts is sent as a list of ``input_text`` /
    ``input_image`` / ``input_file`` parts (see ``_media``); audio and video parts, an
    Internal value or an audit value in an output raise
    :class:`~callgate.ContinuationError`, the media bounds of ``limits``
    :class:`~callgate.LimitExceededError`.
    """
    if type(previous_response_was_stored) is not bool:
        raise UsageError("previous_response_was_stored must be a bool")
    if connection is None and previous_response_was_stored is not True:
        raise ContinuationError(
            "previous_response_id needs a stored prior response (or, on a WebSocket, a "
            "token of the live connection that holds it); use "
            "build_stateless_continuation for store=false or zero-retention"
        )
    outputs = _checked(turn, results, limits)
    if connection is not None:
        check_token(connection, turn)
    if type(turn.response_id) is not str:
        raise ContinuationError("the turn has no response id")
    body = _head(model, instructions, tools, turn)
    body["previous_response_id"] = turn.response_id
    body["store"] = _store(store)
    body["input"] = outputs
    body.update(_controls(request_controls))
    return body


def build_stateless_continuation(
    turn: Turn,
    results: Iterable[ToolResult],
    *,
    prior_input_items: Sequence[Mapping[str, Any]],
    store: bool,
    model: str,
    instructions: str | None,
    tools: Sequence[Mapping[str, Any]],
    request_controls: Mapping[str, Any] | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """The next request with the full history as input (``store=false``, zero retention).

    ``input`` is ``prior_input_items`` (the caller's canonical prior input items, as sent),
    then every output item of the turn in order (reasoning items with their
    ``encrypted_content``; a ``function_call`` whose optional ``id`` is null is sent
    without it), then one ``function_call_output`` per call. With ``store=False`` every
    reasoning item must carry ``encrypted_content`` (request it with ``include:
    ["reasoning.encrypted_content"]``), since the server cannot look it up.

    Raises like :func:`build_stateful_continuation`, and
    :class:`~callgate.ContinuationError` for a reasoning item that cannot be replayed.
    """
    outputs = _checked(turn, results, limits)
    if isinstance(prior_input_items, str | bytes) or not isinstance(  # type: ignore[unreachable]
        prior_input_items, Sequence
    ):
        raise UsageError("prior_input_items must be a sequence of item objects")
    prior = [json_copy(item, what="prior_input_items item") for item in prior_input_items]
    if any(type(item) is not dict for item in prior):
        raise UsageError("every prior input item must be an object")
    store = _store(store)
    replay = []
    for index, item in enumerate(turn.items):
        item = copy.deepcopy(item)
        if item.get("type") == "function_call" and item.get("id", "") is None:
            del item["id"]  # optional but not nullable in an input item
        if item.get("type") == "reasoning" and not store:
            encrypted = item.get("encrypted_content")
            if type(encrypted) is not str or not encrypted:
                raise ContinuationError(
                    f"reasoning item {index} has no encrypted_content; it cannot be replayed "
                    "with store=false (request include=['reasoning.encrypted_content'])"
                )
        replay.append(item)
    body = _head(model, instructions, tools, turn)
    body["store"] = store
    body["input"] = [*prior, *replay, *outputs]
    body.update(_controls(request_controls))
    return body


# -- shared checks --------------------------------------------------------------------


def _checked(turn: Turn, results: Iterable[ToolResult], limits: Limits) -> list[dict[str, Any]]:
    """Verify the turn, bind the results; return the ``function_call_output`` items."""
    check_parsed_turn(turn, Turn, "openai_responses", turn_digest)
    if turn.status != "completed" or not turn.calls:
        raise ContinuationError("the turn released no calls: there is nothing to continue")
    bound = bind_argument([call.call_id for call in turn.calls], results)
    checked_outputs(bound, api=API, provider=PROVIDER, limits=limits, measure="raw")
    return [
        {"type": "function_call_output", "call_id": result.call_id, "output": _output(result)}
        for result in bound
    ]


def _output(result: ToolResult) -> str | list[dict[str, Any]]:
    if type(result.output) is tuple:
        return render_parts(result)
    if type(result.output) is str:
        return result.output
    return canonical_bytes(result.output).decode("utf-8")


def _head(
    model: str, instructions: str | None, tools: Sequence[Mapping[str, Any]], turn: Turn
) -> dict[str, Any]:
    if type(model) is not str or not model:
        raise UsageError("model must be a non-empty str")
    if instructions is not None and type(instructions) is not str:
        raise UsageError("instructions must be a str or None")
    if isinstance(tools, str | bytes | Mapping) or not isinstance(tools, Sequence):
        raise UsageError("tools must be a sequence of tool objects")
    copied = [json_copy(tool, what="tool") for tool in tools]
    declared: set[str] = set()
    for tool in copied:
        if type(tool) is not dict or type(tool.get("type")) is not str:
            raise UsageError("every tool must be an object with a string 'type'")
        if tool["type"] == "function":
            name = tool.get("name")
            if type(name) is not str or not name:
                raise UsageError("a function tool needs a non-empty string 'name'")
            if name in declared:
                raise UsageError(f"function tool {name!r} is declared twice")
            declared.add(name)
    for call in turn.calls:
        if call.name not in declared:
            raise ContinuationError(
                f"the model called {call.name!r}, which is not declared among tools"
            )
    body: dict[str, Any] = {"model": model}
    if instructions is not None:
        body["instructions"] = instructions
    body["tools"] = copied
    return body


def _store(store: bool) -> bool:
    if type(store) is not bool:
        raise UsageError("store must be an explicit bool")
    return store


def _controls(controls: Mapping[str, Any] | None) -> dict[str, Any]:
    if controls is None:
        return {}
    if not isinstance(controls, Mapping):
        raise UsageError("request_controls must be a mapping")
    out: dict[str, Any] = json_copy(dict(controls), what="request_controls")
    for key in out:
        if key in PROTECTED_FIELDS:
            raise ContinuationError(f"request_controls cannot set the protected field {key!r}")
        if key == "response_format":
            raise UsageError(
                "response_format is Chat Completions; the Responses API takes "
                "text={'format': {...}} for a structured final answer"
            )
        if key not in CONTROL_FIELDS:
            raise UsageError(f"request_controls has an unknown field {key!r}")
    if "text" in out:
        _check_text(out["text"])
    return out


def _check_text(text: Any) -> None:
    if type(text) is not dict:
        raise UsageError("request_controls['text'] must be an object")
    if "format" not in text:
        return
    fmt = text["format"]
    if (
        type(fmt) is not dict
        or type(fmt.get("type")) is not str
        or fmt["type"] not in _TEXT_FORMATS
    ):
        raise UsageError(f"text.format must be an object with type in {sorted(_TEXT_FORMATS)}")
    if fmt["type"] == "json_schema" and (
        type(fmt.get("name")) is not str or type(fmt.get("schema")) is not dict
    ):
        raise UsageError("a json_schema text.format needs a string 'name' and an object 'schema'")
