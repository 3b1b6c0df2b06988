"""The registry of OpenAI Responses stream event types, per contract baseline.

Every member of the SDK's ``ResponseStreamEvent`` union (59 in openai 3.57.0) has one
:class:`EventSpec` here: its required fields and their JSON types, its *kind* (the kind the
transition table in ``_state`` is written in), the output-item types it may address and
the handler that applies it (``_state.TRANSITIONS`` carries that name into its rows). A
type missing from the registry is unknown and fails closed; a known type whose semantics
callgate does not implement (MCP, shell, custom tools, compaction) has
``handler="unsupported"`` and fails closed too, after its fields are checked.

Why specs instead of one dataclass instance per event: a 64k-delta stream would build 64k
short-lived objects only to read four attributes from each. The parser reads the decoded
JSON dict directly and the spec says what that dict must contain; the dicts of lifecycle
events and items are what the turn keeps anyway (raw, unknown fields included).
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Final, TypeAlias

from ..contracts import REVISIONS

__all__ = ["BASELINE_EVENTS", "PROVIDER", "EventSpec", "Kind"]

# The provider tag every error of this room carries (``CallgateError.provider``).
PROVIDER: Final = "openai"

Kinds: TypeAlias = frozenset[type]
Fields: TypeAlias = tuple[tuple[str, Kinds], ...]
INT: Final = frozenset({int})
STR: Final = frozenset({str})
DICT: Final = frozenset({dict})
LIST: Final = frozenset({list})


class Kind:
    """The kinds ``_state`` writes its table in (plain strings: cheap to hash and to print)."""

    CREATED: Final = "created"
    UPDATE: Final = "update"  # response.queued / response.in_progress
    TERMINAL: Final = "terminal"  # response.completed / response.incomplete
    FAILURE: Final = "failure"  # response.failed: the one terminal allowed after an error
    ITEM_ADDED: Final = "item_added"
    ITEM_DONE: Final = "item_done"
    ITEM: Final = "item"  # any event scoped to one open output item
    ERROR: Final = "error"
    GLOBAL: Final = "global"  # response-scoped side channel (audio); no effect on calls


@dataclasses.dataclass(frozen=True, slots=True)
class EventSpec:
    """What one wire event type must carry and how the parser applies it.

    ``fields`` maps each required field (``sequence_number`` and ``type`` excepted; the
    dispatcher checks those) to the exact JSON types it may have: only what the parser
    needs to place the event (item, part) and to assemble what the gate decides on;
    telemetry (``logprobs``, an annotation's index, partial images) is never required.
    ``item_types`` lists the output-item types an item-scoped event may address.
    ``handler`` names the parser method. ``part`` / ``index_field`` / ``text_field``
    describe text channels (which part kind, which index field, which field holds the
    text).
    """

    type: str
    kind: str
    handler: str
    fields: Fields = ()
    item_types: frozenset[str] = frozenset()
    part: str = ""
    index_field: str = ""
    text_field: str = ""


_ITEM_FIELDS = (("item_id", STR), ("output_index", INT))


def _lifecycle(name: str, kind: str, handler: str = "") -> EventSpec:
    return EventSpec(f"response.{name}", kind, handler or kind, (("response", DICT),))


def _item(
    type_: str,
    handler: str,
    item_types: str,
    extra: Fields = (),
    *,
    part: str = "",
    index_field: str = "",
    text_field: str = "",
    item_id: bool = True,
) -> EventSpec:
    fields = (_ITEM_FIELDS if item_id else (("output_index", INT),)) + extra
    return EventSpec(
        type_,
        Kind.ITEM,
        handler,
        fields,
        frozenset(item_types.split()),
        part,
        index_field,
        text_field,
    )


def _status_pings(tool: str, phases: str) -> list[EventSpec]:
    return [_item(f"response.{tool}.{p}", "ping", tool) for p in phases.split()]


def _text(
    prefix: str, item_type: str, part: str, index_field: str, done_field: str
) -> list[EventSpec]:
    idx = ((index_field, INT),)
    return [
        _item(
            f"{prefix}.delta",
            "text_delta",
            item_type,
            (*idx, ("delta", STR)),
            part=part,
            index_field=index_field,
            text_field="delta",
        ),
        _item(
            f"{prefix}.done",
            "text_done",
            item_type,
            (*idx, (done_field, STR)),
            part=part,
            index_field=index_field,
            text_field=done_field,
        ),
    ]


def _unsupported(type_: str, fields: Fields) -> EventSpec:
    return EventSpec(type_, Kind.ITEM, "unsupported", fields)


_CI = (("content_index", INT),)
_CMD = (("command_index", INT),)

_CURRENT: list[EventSpec] = [
    EventSpec("error", Kind.ERROR, "error"),  # flat or nested shape: the handler checks it
    _lifecycle("created", Kind.CREATED),
    _lifecycle("queued", Kind.UPDATE),
    _lifecycle("in_progress", Kind.UPDATE),
    _lifecycle("completed", Kind.TERMINAL),
    _lifecycle("incomplete", Kind.TERMINAL),
    _lifecycle("failed", Kind.FAILURE, "terminal"),
    EventSpec(
        "response.output_item.added",
        Kind.ITEM_ADDED,
        "item_added",
        (("item", DICT), ("output_index", INT)),
    ),
    EventSpec(
        "response.output_item.done",
        Kind.ITEM_DONE,
        "item_done",
        (("item", DICT), ("output_index", INT)),
    ),
    _item(
        "response.content_part.added",
        "part_added",
        "message reasoning",
        (*_CI, ("part", DICT)),
        index_field="content_index",
    ),
    _item(
        "response.content_part.done",
        "part_done",
        "message reasoning",
        (*_CI, ("part", DICT)),
        index_field="content_index",
    ),
    _item(
        "response.output_text.delta",
        "text_delta",
        "message",
        (*_CI, ("delta", STR)),
        part="output_text",
        index_field="content_index",
        text_field="delta",
    ),
    _item(
        "response.output_text.done",
        "text_done",
        "message",
        (*_CI, ("text", STR)),
        part="output_text",
        index_field="content_index",
        text_field="text",
    ),
    _item(
        "response.output_text.annotation.added",
        "annotation",
        "message",
        _CI,
        part="output_text",
        index_field="content_index",
    ),
    *_text("response.refusal", "message", "refusal", "content_index", "refusal"),
    *_text("response.reasoning_text", "reasoning", "reasoning_text", "content_index", "text"),
    _item(
        "response.reasoning_summary_part.added",
        "part_added",
        "reasoning",
        (("summary_index", INT), ("part", DICT)),
        index_field="summary_index",
    ),
    _item(
        "response.reasoning_summary_part.done",
        "part_done",
        "reasoning",
        (("summary_index", INT), ("part", DICT)),
        index_field="summary_index",
    ),
    *_text("response.reasoning_summary_text", "reasoning", "summary_text", "summary_index", "text"),
    _item("response.function_call_arguments.delta", "args_delta", "function_call"),
    _item(
        "response.function_call_arguments.done",
        "args_done",
        "function_call",
        (("arguments", STR),),
    ),
    *_status_pings("web_search_call", "in_progress searching completed"),
    *_status_pings("file_search_call", "in_progress searching completed"),
    *_status_pings("code_interpreter_call", "in_progress interpreting completed"),
    _item(
        "response.code_interpreter_call_code.delta",
        "code_delta",
        "code_interpreter_call",
        (("delta", STR),),
    ),
    _item(
        "response.code_interpreter_call_code.done",
        "code_done",
        "code_interpreter_call",
        (("code", STR),),
    ),
    *_status_pings("image_generation_call", "in_progress generating completed"),
    _item("response.image_generation_call.partial_image", "ping", "image_generation_call"),
    # Known, decoded, and refused: each could change what runs (server-side MCP calls and
    # approvals, shell commands, free-form custom tool input, context compaction).
    _unsupported("response.custom_tool_call_input.delta", (*_ITEM_FIELDS, ("delta", STR))),
    _unsupported("response.custom_tool_call_input.done", (*_ITEM_FIELDS, ("input", STR))),
    _unsupported("response.mcp_call_arguments.delta", (*_ITEM_FIELDS, ("delta", STR))),
    _unsupported("response.mcp_call_arguments.done", (*_ITEM_FIELDS, ("arguments", STR))),
    *(
        _unsupported(f"response.{tool}.{phase}", _ITEM_FIELDS)
        for tool in ("mcp_call", "mcp_list_tools")
        for phase in ("in_progress", "completed", "failed")
    ),
    _unsupported(
        "response.shell_call_command.added",
        (("output_index", INT), *_CMD, ("command", STR)),
    ),
    _unsupported(
        "response.shell_call_command.delta",
        (("output_index", INT), *_CMD, ("delta", STR)),
    ),
    _unsupported(
        "response.shell_call_command.done",
        (("output_index", INT), *_CMD, ("command", STR)),
    ),
    _unsupported(
        "response.shell_call_output_content.delta", (*_ITEM_FIELDS, *_CMD, ("delta", DICT))
    ),
    _unsupported(
        "response.shell_call_output_content.done", (*_ITEM_FIELDS, *_CMD, ("output", LIST))
    ),
    _unsupported("response.compaction.compacting", _ITEM_FIELDS),
    # Response-scoped audio: carries no output_index and cannot address a call.
    EventSpec("response.audio.delta", Kind.GLOBAL, "ignore", (("delta", STR),)),
    EventSpec("response.audio.done", Kind.GLOBAL, "ignore"),
    EventSpec("response.audio.transcript.delta", Kind.GLOBAL, "ignore", (("delta", STR),)),
    EventSpec("response.audio.transcript.done", Kind.GLOBAL, "ignore"),
]


def _registry(specs: list[EventSpec]) -> MappingProxyType[str, EventSpec]:
    table = {spec.type: spec for spec in specs}
    if len(table) != len(specs):  # pragma: no cover - guards the literal above
        raise RuntimeError("duplicate event type in the registry")
    return MappingProxyType(table)


# openai 2.46.0 (revision 2026-07-21) declares a required `name` on
# `function_call_arguments.done`, but the live API never sends it (recordings from
# OpenAI, Azure OpenAI and compatible gateways): it is optional under both baselines, and
# the handler checks it against the item when present. The registries are the same list.
_OLD_REVISION, _CURRENT_REVISION = REVISIONS
BASELINE_EVENTS: Final[MappingProxyType[str, MappingProxyType[str, EventSpec]]] = MappingProxyType(
    {
        _OLD_REVISION: _registry(_CURRENT),
        _CURRENT_REVISION: _registry(_CURRENT),
    }
)
