"""Full-history continuation for Anthropic Messages, and thread continuation (beta message
threads, where the server holds the conversation: ``build_thread_continuation`` at the end).

The next request replays, in order: the caller's validated ``history``; the turn's complete
assistant content (text around tools, thinking with signatures, redacted thinking, server
tool blocks, every ``tool_use``); then one user message that starts with one ``tool_result``
per executable call and per recovery call, in block order, before any caller content.
Thinking blocks "must be passed back unmodified and in their original order" (anthropic SDK
2.14.0 ``types/thinking_block_param.py``; https://platform.claude.com/docs/en/build-with-claude/extended-thinking),
so blocks are copied, never rebuilt. Nothing is inherited: every control is passed explicitly.

The history must be a conversation the API accepts (``_history.check_history``).

Errors: :class:`UsageError` for an argument of the wrong type or shape (not a Turn, a
message, tool or control that is not of the documented shape, caller data that is not
JSON); :class:`~callgate.ContinuationError` for a precondition of the conversation (mutated
or incomplete turn, history that breaks the rules above, an undeclared tool, a protected
or foreign control, another container, nothing to send); :class:`~callgate.BindingError`
for results that do not match the calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._digest import canonical_bytes
from .._errors import ContinuationError, UsageError
from .._json import json_copy
from .._limits import DEFAULT_LIMITS, Limits
from .._results import ToolResult, bind_results
from .._turncheck import check_parsed_turn
from .._visible import checked_outputs, refuse_request_total
from . import _events as ev
from ._history import SystemMessageCapability, blocks_of, check_history
from ._hosted import check_declared, check_search_results
from ._media import API, REQUEST_MAX, REQUEST_RULE, render_content
from ._turn import (
    REASON_INVALID_JSON,
    REASON_LIMIT,
    REASON_NON_OBJECT,
    RECOVERY_ERROR_TEXT,
    Turn,
    turn_digest,
)

__all__ = [
    "CARRY_CONTAINER",
    "INVALID_INPUT_KEY",
    "build_continuation",
]

# Invalid input is replayed wrapped in an object, as the fine-grained tool streaming docs
# advise (https://platform.claude.com/docs/en/agents-and-tools/tool-use/fine-grained-tool-streaming).
INVALID_INPUT_KEY = "INVALID_JSON"
_PARSE_FAILURES = frozenset({REASON_INVALID_JSON, REASON_LIMIT, REASON_NON_OBJECT})
# Top-level request fields the builder owns.
_PROTECTED = frozenset({"model", "max_tokens", "messages", "tools", "system", "container"})
_TOOL_RESULT_CONTENT = frozenset({"text", "image", "document", "search_result", "tool_reference"})


class _Carry:
    """The ``container`` default: send the turn's own container id, if it has one."""

    def __repr__(self) -> str:
        return "CARRY_CONTAINER"


CARRY_CONTAINER: Any = _Carry()


def _copy(value: Any, what: str) -> Any:
    """A deep copy that also proves ``value`` is plain JSON (UsageError otherwise)."""
    return json_copy(value, what=what)


def _copy_list(items: Any, what: str) -> Any:
    return _copy([dict(m) if isinstance(m, Mapping) else m for m in items], what)


# -- request parts --------------------------------------------------------------


def _check_tools(tools: Any) -> list[dict[str, Any]]:
    if isinstance(tools, str | bytes) or not isinstance(tools, Sequence):
        raise UsageError("tools must be a sequence of tool definitions")
    copied: list[dict[str, Any]] = _copy_list(tools, "tools")
    seen: set[str] = set()
    for position, tool in enumerate(copied):
        where = f"tools[{position}]"
        if type(tool) is not dict:
            raise UsageError(f"{where}: not an object")
        kind = tool.get("type", "custom")
        if kind == "custom":
            schema = tool.get("input_schema")
            if type(schema) is not dict or schema.get("type") != "object":
                raise UsageError(f"{where}: input_schema must be an object schema")
            if type(tool.get("description", "")) is not str:
                raise UsageError(f"{where}: description must be a string")
            if type(tool.get("name")) is not str or not tool["name"]:
                raise UsageError(f"{where}: a custom tool needs a name")
        elif type(kind) is not str:
            raise UsageError(f"{where}: type must be a string")
        name = tool.get("name")
        if name is not None:
            if name in seen:
                raise UsageError(f"{where}: tool name {name!r} is declared twice")
            seen.add(name)
    return copied


def _declared(tools: list[dict[str, Any]], block: dict[str, Any]) -> bool:
    if any(t.get("name") == block["name"] for t in tools):
        return True
    # Toolset members (browser/computer) are tool_use blocks naming their toolset; the
    # toolset definition has a type like "browser_toolset_20260801" and no name [SDK 2.14.0].
    toolset = block.get("toolset_name")
    return type(toolset) is str and any(
        str(t.get("type", "")).startswith(f"{toolset}_toolset_") for t in tools
    )


def _render_result(
    call_id: str, output: Any, is_error: bool, media: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id}
    if media is not None:
        block["content"] = media
    elif type(output) is str:
        block["content"] = output
    elif (
        type(output) is list
        and output
        and all(type(b) is dict and b.get("type") in _TOOL_RESULT_CONTENT for b in output)
    ):
        block["content"] = _copy(output, "tool result")
        check_search_results(block["content"], f"result for {call_id!r}")
    else:
        # Any other JSON value goes as its canonical JSON text: the field takes only a
        # string or content blocks.
        block["content"] = canonical_bytes(output).decode("utf-8")
    if is_error:
        block["is_error"] = True
    return block


def _check_controls(controls: Mapping[str, Any] | None) -> dict[str, Any]:
    if controls is None:
        return {}
    if not isinstance(controls, Mapping):
        raise UsageError("request_controls must be a mapping")
    copied: dict[str, Any] = _copy(dict(controls), "request_controls")
    clash = sorted(_PROTECTED & copied.keys())
    if clash:
        raise ContinuationError(
            f"request_controls cannot override protected fields {clash}"
            + (" (pass container= to build_continuation)" if "container" in clash else "")
        )
    if "response_format" in copied:
        raise ContinuationError(
            "response_format is not a Messages field; pass output_config.format explicitly"
        )
    config = copied.get("output_config")
    if config is not None:
        if type(config) is not dict:
            raise UsageError("output_config must be an object")
        fmt = config.get("format")
        if fmt is not None and (
            type(fmt) is not dict
            or fmt.get("type") != "json_schema"
            or type(fmt.get("schema")) is not dict
        ):
            raise UsageError("output_config.format must be {type: json_schema, schema}")
    return copied


def _check_container(turn: Turn, container: Any) -> Any:
    """The request's ``container`` value (``None``: no field). A container the turn ran in
    is never dropped or swapped silently: calls made by code in it need it back."""
    own = turn.container_id
    if container is CARRY_CONTAINER:
        return own
    if container is None:
        if own is not None and any(c.programmatic for c in turn.calls):
            raise ContinuationError(
                f"container=None, but code in container {own!r} made calls of this turn and "
                "waits for their results there"
            )
        return None
    if type(container) is str:
        given = container
    elif isinstance(container, Mapping):
        container = _copy(dict(container), "container")
        given = container.get("id")
    else:
        raise UsageError("container must be a str, a mapping, None or CARRY_CONTAINER")
    if type(given) is not str or not given:
        if own is not None:
            raise ContinuationError(f"container must name the turn's container {own!r}")
        if type(container) is str:
            raise UsageError("container must be a non-empty str")
    elif own is not None and given != own:
        raise ContinuationError(f"container {given!r} is not the turn's container {own!r}")
    return container


def _check_system(system: Any) -> Any:
    if system is None or type(system) is str:
        return system
    copied = _copy(list(system) if isinstance(system, Sequence) else system, "system")
    if type(copied) is not list or any(
        type(b) is not dict or b.get("type") != "text" or type(b.get("text")) is not str
        for b in copied
    ):
        raise UsageError("system must be a string or a list of text blocks")
    return copied


def _check_turn(turn: Any) -> None:
    check_parsed_turn(turn, Turn, "anthropic_messages", turn_digest)
    if not turn.complete:
        raise ContinuationError("the turn did not reach message_stop")


def _check_arguments(model: Any, max_tokens: Any, capability: Any, history: Any) -> None:
    if type(model) is not str or not model:
        raise UsageError("model must be a non-empty str")
    if type(max_tokens) is not int or max_tokens < 1:
        raise UsageError("max_tokens must be a positive int")
    if capability is not None and not isinstance(capability, SystemMessageCapability):
        raise UsageError("system_message_capability must be a SystemMessageCapability")
    if isinstance(history, str | bytes) or not isinstance(history, Sequence):
        raise UsageError("history must be a sequence of messages")


def _assistant_content(
    turn: Turn, uses: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The turn's content as the next request's assistant message; invalid tool input is
    wrapped. ``uses`` (the history's tool_use blocks) gains the turn's."""
    earlier_ids = {block["id"] for block in uses}
    reused = sorted(b["id"] for b in turn.content if b.get("id") in earlier_ids)
    if reused:
        raise ContinuationError(f"tool_use ids of the turn already appear in history: {reused}")
    assistant: list[dict[str, Any]] = _copy(list(turn.content), "turn content")
    recovery = {r.index: r for r in turn.recovery_calls}
    for index, block in enumerate(assistant):
        if block["type"] != ev.CLIENT_TOOL_BLOCK:
            continue
        uses.append(block)
        rec = recovery.get(index)
        if rec is not None and rec.reason in _PARSE_FAILURES:
            block["input"] = {INVALID_INPUT_KEY: rec.partial_input}
    undeclared = sorted({b["name"] for b in uses if not _declared(tools, b)})
    if undeclared:
        raise ContinuationError(f"tool_use names not declared in tools: {undeclared}")
    return assistant


def _answers(turn: Turn, bound: Sequence[ToolResult], limits: Limits) -> list[dict[str, Any]]:
    """One tool_result per call and per recovery call, in block order."""
    checked_outputs(bound, api=API, provider=ev.PROVIDER, limits=limits, measure="base64")
    refuse_request_total(
        bound,
        api=API,
        provider=ev.PROVIDER,
        bound=REQUEST_MAX,
        measure="base64",
        rule=REQUEST_RULE,
    )
    answers: list[tuple[int, dict[str, Any]]] = []
    by_id = {result.call_id: result for result in bound}
    for call in turn.calls:
        result = by_id[call.call_id]
        media = render_content(result, turn.baseline) if type(result.output) is tuple else None
        block = _render_result(call.call_id, result.output, result.is_error, media)
        answers.append((call.index, block))
    for rec in turn.recovery_calls:
        text = RECOVERY_ERROR_TEXT[rec.reason]
        answers.append((rec.index, _render_result(rec.call_id, text, True)))
    answers.sort(key=lambda pair: pair[0])
    return [block for _, block in answers]


def _user_content(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if type(content) is str:
        copied: Any = content
    elif isinstance(content, Sequence):
        copied = _copy_list(content, "user_content")
    else:
        raise UsageError("user_content must be a str or a sequence of content blocks")
    extra = blocks_of({"content": copied}, "user_content")
    if any(b["type"] == "tool_result" for b in extra):
        raise ContinuationError("user_content may not carry tool_result blocks")
    return extra


def _closing(turn: Turn, assistant: list[Any], user_blocks: list[Any]) -> list[dict[str, Any]]:
    """The assistant message, then the user message (none after ``pause_turn``)."""
    closing = [{"role": "assistant", "content": assistant}]
    if turn.send_back_unchanged:
        if user_blocks:
            raise ContinuationError("a pause_turn turn is sent back unchanged, with nothing added")
    elif not user_blocks:
        raise ContinuationError(
            f"nothing to send after a {turn.stop_reason!r} turn without calls: pass user_content"
        )
    else:
        closing.append({"role": "user", "content": user_blocks})
    return closing


def build_continuation(
    turn: Turn,
    results: Iterable[ToolResult],
    *,
    history: Sequence[Mapping[str, Any]],
    model: str,
    max_tokens: int,
    tools: Sequence[Mapping[str, Any]],
    system: str | Sequence[Mapping[str, Any]] | None = None,
    request_controls: Mapping[str, Any] | None = None,
    system_message_capability: SystemMessageCapability | None = None,
    user_content: str | Sequence[Mapping[str, Any]] | None = None,
    container: str | Mapping[str, Any] | None = CARRY_CONTAINER,
    limits: Limits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """Build the next Messages request body after ``turn``.

    ``results`` must answer ``turn.calls`` exactly (:class:`~callgate.BindingError`
    otherwise; consumed at most one past the count). Recovery calls are answered by the
    builder with ``is_error: true`` and :data:`RECOVERY_ERROR_TEXT`. ``user_content``
    (optional) follows the tool results in the same user message. A ``pause_turn`` turn is
    sent back unchanged (no user message). ``container`` is the request's ``container``: by
    default the turn's ``container.id`` is carried (code execution and programmatic tool
    calling keep their files and waiting code there); an explicit id or ``{"id", "skills"}``
    must name the same container; ``None`` omits it, which is refused when code in the
    container made calls of this turn. Raises :class:`~callgate.ContinuationError` for a
    mutated or incomplete turn, invalid history, an undeclared tool, a protected or foreign
    control, or a turn with nothing to answer; :class:`UsageError` for arguments of the
    wrong type or shape, including caller data that is not JSON. Caller data is
    deep-copied; the returned dict is new and the inputs stay usable.

    A result whose output is a tuple of parts becomes ``text`` / ``image`` / ``document``
    blocks (see ``_media``: file sources only under the 2026-11 baseline); a part the API
    cannot take, an Internal or audit value in an output raise
    :class:`~callgate.ContinuationError`; the media bounds of ``limits`` (counted in base64
    characters, as Anthropic counts) :class:`~callgate.LimitExceededError`.
    """
    _check_turn(turn)
    _check_arguments(model, max_tokens, system_message_capability, history)
    bound = bind_results([call.call_id for call in turn.calls], results)
    messages: list[Any] = _copy_list(history, "history")
    uses = check_history(messages, model, system_message_capability)
    tool_defs = _check_tools(tools)
    if check_declared(turn.content, tool_defs):
        raise ContinuationError(f"not declared in tools: {check_declared(turn.content, tool_defs)}")
    controls = _check_controls(request_controls)
    system_value = _check_system(system)
    container_value = _check_container(turn, container)
    assistant = _assistant_content(turn, uses, tool_defs)
    user_blocks = _answers(turn, bound, limits) + _user_content(user_content)
    messages.extend(_closing(turn, assistant, user_blocks))
    request: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": messages,
        "tools": tool_defs,
    }
    if system_value is not None:
        request["system"] = system_value
    if container_value is not None:
        request["container"] = container_value
    request.update(controls)
    return request
