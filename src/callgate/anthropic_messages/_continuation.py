"""Full-history continuation for Anthropic Messages, and thread continuation (beta message
threads, where the server holds the conversation: ``build_thread_continuation`` at the end).

The next request replays, in order: the caller's validated ``history``; the turn's complete
assistant content (text around tools, thinking with signatures, redacted thinking, server
tool blocks, every ``tool_use``); then one user message that starts with one ``tool_result``
per executable call and per recovery call, in block order, before any caller content.
Thinking blocks "must be passed back unmodified and in their original order" (anthropic SDK
2.14.0 ``types/thinking_block_param.py``; https://platform.claude.com/docs/en/build-with-claude/extended-thinking),
so blocks are copied, never rebuilt. Nothing is inherited: every control is passed explicitly.

The history must be a conversation the API accepts: roles alternate (``_RULES``, a
``(previous role, role) -> rule`` table), ``system`` messages only where the model is
declared to take them, every client ``tool_use`` answered exactly by the next user message,
consecutive assistant messages only after a paused server-tool loop (``pause_turn``).

Errors: :class:`UsageError` for an argument of the wrong type or shape (not a Turn, a
message, tool or control that is not of the documented shape, caller data that is not
JSON); :class:`~callgate.ContinuationError` for a precondition of the conversation (mutated
or incomplete turn, history that breaks the rules above, an undeclared tool, a protected
or foreign control, another container, nothing to send); :class:`~callgate.BindingError`
for results that do not match the calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .._digest import canonical_bytes
from .._errors import ContinuationError, UsageError
from .._json import json_copy
from .._limits import DEFAULT_LIMITS, Limits
from .._results import ToolResult, bind_results
from .._turncheck import check_parsed_turn
from .._visible import checked_outputs, refuse_request_total
from . import _events as ev
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
    "SystemMessageCapability",
    "build_continuation",
    "check_history",
]

# Invalid input is replayed wrapped in an object, as the fine-grained tool streaming docs
# advise (https://platform.claude.com/docs/en/agents-and-tools/tool-use/fine-grained-tool-streaming).
INVALID_INPUT_KEY = "INVALID_JSON"
_PARSE_FAILURES = frozenset({REASON_INVALID_JSON, REASON_LIMIT, REASON_NON_OBJECT})
# Top-level request fields the builder owns.
_PROTECTED = frozenset({"model", "max_tokens", "messages", "tools", "system", "container"})
_TOOL_RESULT_CONTENT = frozenset({"text", "image", "document", "search_result", "tool_reference"})
_ROLES = frozenset({"user", "assistant", "system"})
_SERVER_BLOCKS = ev.SERVER_TOOL_RESULT_BLOCKS | {"server_tool_use"}
Blocks = list[dict[str, Any]]


class _Carry:
    """The ``container`` default: send the turn's own container id, if it has one."""

    def __repr__(self) -> str:
        return "CARRY_CONTAINER"


CARRY_CONTAINER: Any = _Carry()


@dataclasses.dataclass(frozen=True, slots=True)
class SystemMessageCapability:
    """The caller's explicit statement that ``model`` accepts ``role: "system"`` messages
    inside ``messages`` (documented for some models only). Raises :class:`UsageError` for
    an empty model name."""

    model: str

    def __post_init__(self) -> None:
        if type(self.model) is not str or not self.model:
            raise UsageError("SystemMessageCapability.model must be a non-empty str")


def _copy(value: Any, what: str) -> Any:
    """A deep copy that also proves ``value`` is plain JSON (UsageError otherwise)."""
    return json_copy(value, what=what)


def _copy_list(items: Any, what: str) -> Any:
    return _copy([dict(m) if isinstance(m, Mapping) else m for m in items], what)


# -- history ------------------------------------------------------------------------------


def blocks_of(message: dict[str, Any], where: str) -> Blocks:
    content = message.get("content")
    if type(content) is str:
        return [{"type": "text", "text": content}]
    if type(content) is not list or any(
        type(b) is not dict or type(b.get("type")) is not str for b in content
    ):
        raise UsageError(f"{where}: content must be a string or a list of typed blocks")
    return content


def _paused(blocks: Blocks) -> bool:
    """Whether an assistant message ends inside a server-tool loop (how pause_turn ends)."""
    return bool(blocks) and blocks[-1]["type"] in _SERVER_BLOCKS


class _History:
    """The walk over the caller's history; each method is one check a rule may name."""

    __slots__ = ("capability", "model", "pending", "prev", "prev_blocks", "uses")

    def __init__(self, model: str, capability: SystemMessageCapability | None) -> None:
        self.model, self.capability = model, capability
        self.uses: Blocks = []  # every client tool_use of the history
        self.pending: list[str] = []  # tool_use ids of the last assistant message, unanswered
        self.prev: str | None = None
        self.prev_blocks: Blocks = []

    def refuse_start(self, blocks: Blocks, where: str) -> None:
        raise ContinuationError("history must start with a user message")

    def refuse_user(self, blocks: Blocks, where: str) -> None:
        raise ContinuationError(f"{where}: a user message cannot follow a {self.prev} message")

    def answers(self, blocks: Blocks, where: str) -> None:
        """tool_result blocks come first and answer the pending tool_use ids exactly."""
        answered = [b.get("tool_use_id") for b in blocks if b["type"] == "tool_result"]
        leading = [b["type"] == "tool_result" for b in blocks]
        if leading != sorted(leading, reverse=True):
            raise ContinuationError(f"{where}: tool_result blocks must come first")
        if sorted(answered, key=repr) != sorted(self.pending, key=repr):
            raise ContinuationError(
                f"{where}: tool_result ids {answered!r} do not answer the tool_use ids "
                f"{self.pending!r} of the previous assistant message exactly"
            )
        self.pending = []

    def no_pending(self, blocks: Blocks, where: str) -> None:
        if self.pending:
            raise ContinuationError(
                f"{where}: an assistant message cannot follow a {self.prev} message "
                "with unanswered tool_use"
            )

    def after_pause(self, blocks: Blocks, where: str) -> None:
        # pause_turn: the API merges consecutive assistant messages.
        if not _paused(self.prev_blocks):
            raise ContinuationError(
                f"{where}: an assistant message can follow another only after a "
                "paused server-tool loop"
            )

    def calls(self, blocks: Blocks, where: str) -> None:
        """The assistant message's client tool_use blocks become the pending ones."""
        self.pending = []
        for block in blocks:
            if block["type"] == ev.CLIENT_TOOL_BLOCK:
                if type(block.get("id")) is not str or type(block.get("name")) is not str:
                    raise UsageError(f"{where}: tool_use without id/name")
                self.pending.append(block["id"])
                self.uses.append(block)

    def system_allowed(self, blocks: Blocks, where: str) -> None:
        if self.capability is None or self.capability.model != self.model:
            raise ContinuationError(
                f"{where}: a system message needs SystemMessageCapability for {self.model!r}"
            )

    def after_server_result(self, blocks: Blocks, where: str) -> None:
        prev = self.prev_blocks
        if not prev or prev[-1]["type"] not in ev.SERVER_TOOL_RESULT_BLOCKS:
            raise ContinuationError(
                f"{where}: a system message must follow a user turn or an assistant turn "
                "that ends in a server tool result"
            )

    def text_only(self, blocks: Blocks, where: str) -> None:
        if any(b["type"] != "text" for b in blocks):
            raise UsageError(f"{where}: system content must be text")


_H = _History
# (previous role, role) -> the checks, in order; None is the start of the history.
_RULES: dict[tuple[str | None, str], tuple[Callable[[_History, Blocks, str], None], ...]] = {
    (None, "user"): (_H.answers,),
    (None, "assistant"): (_H.refuse_start,),
    (None, "system"): (_H.refuse_start,),
    ("user", "user"): (_H.refuse_user,),
    ("user", "assistant"): (_H.calls,),
    ("user", "system"): (_H.system_allowed, _H.text_only),
    ("assistant", "user"): (_H.answers,),
    ("assistant", "assistant"): (_H.no_pending, _H.after_pause, _H.calls),
    ("assistant", "system"): (_H.system_allowed, _H.after_server_result, _H.text_only),
    ("system", "user"): (_H.refuse_user,),
    ("system", "assistant"): (_H.no_pending, _H.calls),
    ("system", "system"): (_H.system_allowed, _H.text_only),
}


def check_history(
    history: list[Any], model: str, capability: SystemMessageCapability | None
) -> Blocks:
    """Validate roles, alternation, system placement and tool_use answers; return the
    history's client tool_use blocks."""
    if not history:
        raise ContinuationError("history must start with a user message; it is empty")
    walk = _History(model, capability)
    for position, message in enumerate(history):
        where = f"history[{position}]"
        if type(message) is not dict or message.get("role") not in _ROLES:
            raise UsageError(f"{where}: not a message with role user/assistant/system")
        blocks = blocks_of(message, where)
        for check in _RULES[walk.prev, message["role"]]:
            check(walk, blocks, where)
        walk.prev, walk.prev_blocks = message["role"], blocks
    if walk.prev == "assistant" and not _paused(walk.prev_blocks):
        raise ContinuationError(
            "history must end with a user or system message, or a paused server-tool loop"
        )
    if walk.pending:
        raise ContinuationError("history ends with unanswered tool_use blocks")
    return walk.uses


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
