"""The Anthropic Messages wire vocabulary the parser understands, as registries.

Every stream event, content block and delta type the parser accepts is declared here once;
anything not declared fails closed. The parser works on the decoded JSON objects directly
(one ``loads_strict`` per event, a few dict reads, an append): building an event object per
``input_json_delta`` would cost more than the rest of the hot path together, so the frozen
specs below describe the wire types instead of wrapping each event.

Facts come from the ``anthropic`` SDK sources (2.14.0 ``types/raw_message_stream_event.py``,
``types/content_block.py``, ``types/raw_content_block_delta.py``, ``types/stop_reason.py``;
0.117.0 for the 2026-07-21 baseline) and the streaming docs
(https://platform.claude.com/docs/en/build-with-claude/streaming).
"""

from __future__ import annotations

import dataclasses

__all__ = [
    "BLOCKS",
    "CALLERS",
    "CLIENT_TOOL_BLOCK",
    "EVENT_TYPES",
    "KNOWN_UNSUPPORTED_BLOCKS",
    "KNOWN_UNSUPPORTED_DELTAS",
    "PROVIDER",
    "SERVER_TOOL_RESULT_BLOCKS",
    "STOP_REASONS",
    "BlockSpec",
    "DeltaSpec",
]

PROVIDER = "anthropic"  # the provider tag every error of this room carries

# Kinds of content block, by how their content arrives.
TEXT = "text"  # text_delta appends, citations_delta appends to `citations`
THINKING = "thinking"  # thinking_delta appends, signature_delta replaces
TOOL_INPUT = "tool_input"  # input_json_delta fragments, parsed once at content_block_stop
WHOLE = "whole"  # complete in content_block_start, no deltas


@dataclasses.dataclass(frozen=True, slots=True)
class DeltaSpec:
    """One ``content_block_delta`` delta type: its payload field and the JSON type it has."""

    name: str
    field: str
    value_type: type


@dataclasses.dataclass(frozen=True, slots=True)
class BlockSpec:
    """One content block type: how it streams and which fields it must carry.

    ``required`` maps each field the gate needs (docs/required-fields.md) to the Python
    type its JSON value must have; ``typed`` the fields the parser reads that may be
    absent (checked when present and non-null); ``deltas`` are the delta types legal while
    the block is open.
    """

    name: str
    kind: str
    required: tuple[tuple[str, type], ...]
    deltas: tuple[DeltaSpec, ...]
    typed: tuple[tuple[str, type], ...] = ()


TEXT_DELTA = DeltaSpec("text_delta", "text", str)
CITATIONS_DELTA = DeltaSpec("citations_delta", "citation", dict)
INPUT_JSON_DELTA = DeltaSpec("input_json_delta", "partial_json", str)
THINKING_DELTA = DeltaSpec("thinking_delta", "thinking", str)
SIGNATURE_DELTA = DeltaSpec("signature_delta", "signature", str)

CLIENT_TOOL_BLOCK = "tool_use"
SERVER_TOOL_RESULT_BLOCKS = frozenset(
    {
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
    }
)


# The `caller` of a tool_use block (`types/tool_use_block.py` `Caller`, the same union in
# 0.117.0 and 2.14.0): the model itself, or code running in the code-execution tool
# (programmatic tool calling). Value: whether the caller must name its `tool_id`. Any other
# caller type fails closed: callgate would not know who waits for the result.
CALLER_DIRECT = "direct"
CALLERS: dict[str, bool] = {
    CALLER_DIRECT: False,
    "code_execution_20250825": True,
    "code_execution_20260120": True,
}


def _whole(
    type_: str, *required: tuple[str, type], typed: tuple[tuple[str, type], ...] = ()
) -> BlockSpec:
    return BlockSpec(type_, WHOLE, required, (), typed)


_TOOL_FIELDS: tuple[tuple[str, type], ...] = (("id", str), ("name", str), ("input", dict))

# The stable response union is the same in both baselines (0.117.0 and 2.14.0). Required:
# a call's identity and input (release, binding; a server call's input is replayed as an
# object), a result's tool_use_id (it must answer no client call), and what replays a
# thinking block (`signature`, checked at content_block_stop, and redacted `data`). A
# text block's `text` and a thinking block's `thinking` are the base deltas append to:
# absent, that is "".
BLOCKS: dict[str, BlockSpec] = {
    "text": BlockSpec("text", TEXT, (), (TEXT_DELTA, CITATIONS_DELTA), (("text", str),)),
    # `signature` is required on the finished block; the start may omit it (it arrives as a
    # signature_delta just before content_block_stop), the stop checks it.
    "thinking": BlockSpec(
        "thinking",
        THINKING,
        (),
        (THINKING_DELTA, SIGNATURE_DELTA),
        (("thinking", str), ("signature", str)),
    ),
    "redacted_thinking": _whole("redacted_thinking", ("data", str)),
    "tool_use": BlockSpec("tool_use", TOOL_INPUT, _TOOL_FIELDS, (INPUT_JSON_DELTA,)),
    "server_tool_use": BlockSpec("server_tool_use", TOOL_INPUT, _TOOL_FIELDS, (INPUT_JSON_DELTA,)),
    "container_upload": _whole("container_upload", typed=(("file_id", str),)),
}
for _name in sorted(SERVER_TOOL_RESULT_BLOCKS):
    BLOCKS[_name] = _whole(_name, ("tool_use_id", str))
del _name

# Known to exist (beta surface) but not implemented: each could change what executes or
# how the turn must be replayed, so they fail closed with UnsupportedProviderState.
KNOWN_UNSUPPORTED_BLOCKS: dict[str, str] = {
    "fallback": "server-side-fallback beta: earlier blocks may have to be dropped on replay",
    "mcp_tool_use": "MCP connector beta: tool runs on the provider side",
    "mcp_tool_result": "MCP connector beta",
    "mcp_tool_listing": "MCP connector beta",
    "compaction": "compaction beta: replaces earlier context",
    "advisor_tool_result": "advisor tool beta",
}
KNOWN_UNSUPPORTED_DELTAS: frozenset[str] = frozenset({"compaction_delta"})
ALL_DELTAS: frozenset[str] = (
    frozenset(d.name for spec in BLOCKS.values() for d in spec.deltas) | KNOWN_UNSUPPORTED_DELTAS
)

MESSAGE_START = "message_start"
BLOCK_START = "content_block_start"
BLOCK_DELTA = "content_block_delta"
BLOCK_STOP = "content_block_stop"
MESSAGE_DELTA = "message_delta"
MESSAGE_STOP = "message_stop"
PING = "ping"
ERROR = "error"
#: Not a wire type of its own: the table's key for a ``message_start`` whose message
#: already holds the complete ``content`` or a ``stop_reason`` (the follow-up responses of a
#: programmatic tool-calling loop), classified by :func:`table_key` before the lookup.
COMPLETE_MESSAGE_START = "message_start/complete"

# ping and error are not in the SDK's RawMessageStreamEvent union; they are routed by SSE
# event name in `_streaming.py`, but both carry their type in the data too.
EVENT_TYPES: frozenset[str] = frozenset(
    {
        MESSAGE_START,
        BLOCK_START,
        BLOCK_DELTA,
        BLOCK_STOP,
        MESSAGE_DELTA,
        MESSAGE_STOP,
        PING,
        ERROR,
    }
)

_STABLE_STOP_REASONS = (
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
)
# Unknown stop reasons are not errors (they release nothing and keep their raw value);
# the baseline only decides which ones a Turn reports as known.
STOP_REASONS: dict[str, frozenset[str]] = {
    "2026-07-21": frozenset(_STABLE_STOP_REASONS),
    "2026-11": frozenset((*_STABLE_STOP_REASONS, "model_context_window_exceeded")),
}


def table_key(event_type: str, obj: dict[str, object]) -> str:
    """The key of ``TRANSITIONS`` for an event of ``event_type``: the type itself, but
    :data:`COMPLETE_MESSAGE_START` for a ``message_start`` carrying the finished message
    (content blocks or a stop reason; the handler then checks it all)."""
    if event_type == MESSAGE_START:
        message = obj.get("message")
        if type(message) is dict and (
            message.get("content") or message.get("stop_reason") is not None
        ):
            return COMPLETE_MESSAGE_START
    return event_type
