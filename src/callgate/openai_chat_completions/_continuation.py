"""The continuation builder: (turn, results, explicit config) -> the next request body.

Pure: returns a new JSON-ready dict and never mutates its inputs. Chat Completions is
stateless, so the request is a full replay (``docs/contracts/openai-chat-completions.md``
§4): the caller's prior ``messages``; the assistant message with every ``tool_calls``
entry exactly as received (``Turn.message()``); then one ``role: "tool"`` message per
call, in call order, with its ``tool_call_id``. Nothing is inherited: ``tools`` (each
function's ``strict`` stated), ``tool_choice``, ``parallel_tool_calls``,
``response_format`` and ``max_completion_tokens`` are re-sent from the caller's explicit
arguments (each must be passed; ``None`` omits it).

A tool message is text only in both SDK generations' types. Chat Completions has no error
flag for a tool result, so the builder renders a result this way: a ``str`` output as it
is; a ``dict``/``list`` output as its canonical JSON text; an error result
(``is_error=True``) always as the JSON text ``{"error": <output>}``, so the model reads it
as a failure and it never looks like success text (the ledger keeps ``is_error`` itself).
A tuple of parts goes as a list of ``text`` content parts (an error result as
``{"error": [text, ...]}``); a media part is refused with a
:class:`~callgate.ContinuationError`, never dropped and never moved to a user message.

Errors, the rule of every room's builders: an argument of the wrong type or shape is a
:class:`~callgate.UsageError`; a precondition of the conversation (mutated turn, a turn
that released no calls, a history whose tool messages do not answer its calls, an
undeclared function) is a :class:`~callgate.ContinuationError`; results that do not
match the calls exactly are :class:`~callgate.BindingError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .._digest import canonical_bytes
from .._errors import ContinuationError, UsageError
from .._json import json_copy
from .._limits import DEFAULT_LIMITS, Limits
from .._results import ToolResult, bind_argument
from .._turncheck import check_parsed_turn
from .._visible import checked_outputs
from ._events import PROVIDER
from ._media import API, render_parts, text_content
from ._turn import Turn, turn_digest

__all__ = ["build_continuation"]


_ROLES = ("developer", "system", "user", "assistant", "tool")


def _check_turn(value: Any) -> Turn:
    turn = check_parsed_turn(value, Turn, "openai_chat_completions", turn_digest, baseline=True)
    if not turn.calls:
        raise ContinuationError(
            f"only a turn whose calls were released can be continued "
            f"(finish_reason {turn.finish_reason!r}, no call released)"
        )
    for call in turn.calls:
        entry = turn.tool_calls[call.index] if 0 <= call.index < len(turn.tool_calls) else None
        if entry is not call.raw or entry.get("id") != call.call_id:
            raise ContinuationError(f"call {call.call_id!r} is not bound to its turn's tool_calls")
    return turn


def _history(messages: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """The copied history and every function name its assistant messages called."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise UsageError("messages must be a list of message objects")
    copied: list[dict[str, Any]] = json_copy(list(messages), what="messages")
    if not copied:
        raise ContinuationError("messages must hold at least the request the turn answered")
    called: list[str] = []
    waiting: set[str] = set()
    for position, message in enumerate(copied):
        role = message.get("role") if type(message) is dict else None
        if role not in _ROLES:
            raise UsageError(f"messages[{position}] must be a message with a known role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in waiting:
                raise ContinuationError(
                    f"messages[{position}] (role tool) answers no call of the preceding "
                    f"assistant message: tool_call_id {call_id!r}"
                )
            waiting.discard(call_id)
            continue
        if waiting:
            raise ContinuationError(
                f"messages[{position}]: the assistant's call(s) {sorted(waiting)} have no "
                "tool message"
            )
        if role == "assistant":
            if message.get("function_call") is not None:
                raise ContinuationError(f"messages[{position}] holds a legacy function_call")
            entries = message.get("tool_calls")
            if entries is not None and type(entries) is not list:
                raise UsageError(f"messages[{position}] 'tool_calls' must be a list")
            for entry in entries or ():
                function = entry.get("function") if type(entry) is dict else None
                name = function.get("name") if type(function) is dict else None
                if type(name) is not str or type(entry.get("id")) is not str:
                    raise UsageError(f"messages[{position}] holds a malformed tool_calls entry")
                called.append(name)
                waiting.add(entry["id"])
    if waiting:
        raise ContinuationError("the history ends with unanswered tool calls")
    if copied[-1]["role"] == "assistant":
        raise ContinuationError("the history must end with the message the turn answered")
    return copied, called


def _declared(tools: Any) -> tuple[list[Any], set[str]]:
    if isinstance(tools, str | bytes) or not isinstance(tools, Sequence):
        raise UsageError("tools must be a list of tool objects")
    copied: list[Any] = json_copy(list(tools), what="tools")
    names: set[str] = set()
    for tool in copied:
        function = tool.get("function") if type(tool) is dict else None
        if type(tool) is not dict or tool.get("type") != "function" or type(function) is not dict:
            raise UsageError('every tool must be {"type": "function", "function": {...}}')
        name = function.get("name")
        if type(name) is not str or not name:
            raise UsageError("a function tool needs a non-empty 'name'")
        if type(function.get("strict")) is not bool:
            raise UsageError(f"tool {name!r}: state 'strict' (true or false) explicitly")
        if name in names:
            raise UsageError(f"function {name!r} is declared twice")
        names.add(name)
    return copied, names


def _render(result: ToolResult) -> str | list[dict[str, Any]]:
    output = result.output
    if type(output) is tuple:
        texts = render_parts(result)
        if not result.is_error:
            return text_content(texts)
        output = texts
    if result.is_error:
        output = {"error": output}
    if type(output) is str:
        return output
    return canonical_bytes(output).decode("utf-8")


def _tool_messages(
    turn: Turn, results: Iterable[ToolResult], limits: Limits
) -> list[dict[str, Any]]:
    bound = bind_argument([call.call_id for call in turn.calls], results)
    checked_outputs(bound, api=API, provider=PROVIDER, limits=limits, measure="raw")
    return [
        {"role": "tool", "tool_call_id": call.call_id, "content": _render(result)}
        for call, result in zip(turn.calls, bound, strict=True)
    ]


def _control(value: Any, what: str, kinds: tuple[type, ...]) -> Any:
    if value is None:
        return None
    if type(value) not in kinds:
        names = " or ".join(k.__name__ for k in kinds)
        raise UsageError(f"{what} must be a {names} or None, not {type(value).__name__}")
    return json_copy(value, what=what)


def build_continuation(
    turn: Turn,
    results: Iterable[ToolResult],
    *,
    messages: Sequence[dict[str, Any]],
    model: str,
    tools: Sequence[dict[str, Any]],
    tool_choice: str | dict[str, Any] | None,
    parallel_tool_calls: bool | None,
    response_format: dict[str, Any] | None,
    max_completion_tokens: int | None,
    limits: Limits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """The next ``POST /chat/completions`` body after ``turn``'s calls ran (add
    ``stream`` and the request's other options yourself).

    ``messages`` is the history the turn answered (ending with the user or tool message
    before it). Every function called in the history or the turn must be declared in
    ``tools``, and a ``tool_choice`` that names a function must name a declared one.
    Raises as the module docstring says.
    """
    turn = _check_turn(turn)
    if type(model) is not str or not model:
        raise UsageError("model must be a non-empty str")
    history, called = _history(messages)
    copied_tools, declared = _declared(tools)
    called += [call.name for call in turn.calls]
    missing = sorted({name for name in called if name not in declared})
    if missing:
        raise ContinuationError(f"function(s) {missing} were called but are not declared in tools")
    choice = _control(tool_choice, "tool_choice", (str, dict))
    if type(choice) is dict and choice.get("type") == "function":
        named = (choice.get("function") or {}).get("name")
        if named not in declared:
            raise ContinuationError(f"tool_choice names {named!r}, which tools do not declare")
    elif type(choice) is str and choice not in ("auto", "required", "none"):
        raise UsageError(f"tool_choice {choice!r} is not auto, required or none")
    tokens = _control(max_completion_tokens, "max_completion_tokens", (int,))
    if tokens is not None and tokens < 1:
        raise UsageError("max_completion_tokens must be >= 1")
    body: dict[str, Any] = {
        "model": model,
        "messages": [
            *history,
            json_copy(turn.message(), what="the turn's message"),
            *_tool_messages(turn, results, limits),
        ],
        "tools": copied_tools,
    }
    for key, value in (
        ("tool_choice", choice),
        ("parallel_tool_calls", _control(parallel_tool_calls, "parallel_tool_calls", (bool,))),
        ("response_format", _control(response_format, "response_format", (dict,))),
        ("max_completion_tokens", tokens),
    ):
        if value is not None:
            body[key] = value
    return body
