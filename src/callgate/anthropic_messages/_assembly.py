"""Block accumulation and shape checks: what one Message stream builds up.

:class:`Assembly` holds the message fields, the finished blocks and the single open block
with its fragment list. ``open_block`` checks a block against its ``_events.BLOCKS`` spec;
the ``add_*`` / ``set_signature`` methods are the per-delta hot path (a type check, a bound
check, an append), keyed by the open block's kind in ``open_deltas``; ``close_block`` joins
the fragments once and parses tool input once. It knows nothing of events' order: the
handlers check that and call in here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from .._errors import (
    CallgateError,
    JSONError,
    LimitExceededError,
    SchemaError,
    SequenceError,
    UnsupportedProviderState,
)
from .._feed import copy_event
from .._fields import need_str, opt_str
from .._json import loads_strict
from .._limits import Limits, room_for_one_more
from . import _events as ev
from ._hosted import ServerBlocks, citation_problem
from ._turn import (
    REASON_INVALID_JSON,
    REASON_LIMIT,
    REASON_NON_OBJECT,
    ToolInfo,
    Turn,
    make_turn,
)

__all__ = [
    "DELTA_FIELDS",
    "Assembly",
    "DeltaHandler",
    "check_delta_field",
    "copy_event_value",
]

DeltaHandler = Callable[[dict[str, Any]], None]

# The message fields a message_delta sets, all from `delta` (SDK 2.14.0
# `types/raw_message_delta_event.py` `Delta`), with the JSON type each must have. A
# message_start's message is checked against the same table.
DELTA_FIELDS: dict[str, type] = {
    "stop_reason": str,
    "stop_sequence": str,
    "stop_details": dict,
    "container": dict,
}


def copy_event_value(value: Any, limits: Limits) -> Any:
    """The kernel's event copy (:func:`callgate._feed.copy_event`) of a body or of a value
    inside an event: strict JSON, sharing nothing with ``value``."""
    return copy_event(value, limits)[0]


def check_delta_field(obj: dict[str, Any], key: str, where: str) -> None:
    value: Any = obj.get(key)
    if value is None:
        return
    kind = DELTA_FIELDS[key]
    if type(value) is not kind:
        raise SchemaError(f"{where}.{key} is not a {'string' if kind is str else 'object'}")
    if key == "container":
        container: dict[str, Any] = obj[key]
        need_str(container, "id", f"{where}.container", empty=False)
        opt_str(container, "expires_at", f"{where}.container")


def check_caller(block: dict[str, Any]) -> None:
    """``caller`` is absent or one of the SDK's callers; a code-execution caller names the
    server tool call (``tool_id``) whose running code waits for this call's result."""
    if "caller" not in block:
        return
    caller = block["caller"]
    if type(caller) is not dict or type(caller.get("type")) is not str:
        raise SchemaError(f"{block['type']} block: `caller` is not an object with a string `type`")
    needs_tool_id = ev.CALLERS.get(caller["type"])
    if needs_tool_id is None:
        raise UnsupportedProviderState(
            f"{block['type']} block: unknown caller type {caller['type'][:80]!r}"
        )
    if needs_tool_id:
        need_str(caller, "tool_id", f"{block['type']} block caller", empty=False)


def _unknown_block(btype: str) -> NoReturn:
    reason = ev.KNOWN_UNSUPPORTED_BLOCKS.get(btype)
    if reason is not None:
        raise UnsupportedProviderState(f"content block {btype!r} is not supported ({reason})")
    raise UnsupportedProviderState(f"unknown content block type {btype[:80]!r}")


def _block_spec(block: Any, warnings: list[str]) -> ev.BlockSpec:
    """The spec of a content block whose required fields have their types (and whose
    typed optional fields, when present and non-null, too). A text block's citations are
    telemetry: what they lack goes to ``warnings``."""
    if type(block) is not dict:
        raise SchemaError("content_block_start.content_block is not an object")
    btype = block.get("type")
    if type(btype) is not str:
        raise SchemaError("content block has no string `type`")
    spec = ev.BLOCKS.get(btype)
    if spec is None:
        _unknown_block(btype)
    for field, kind in spec.required:
        if type(block.get(field)) is not kind:
            raise SchemaError(f"{btype} block: `{field}` is missing or not a {kind.__name__}")
    for field, kind in spec.typed:
        value = block.get(field)
        if value is not None and type(value) is not kind:
            raise SchemaError(f"{btype} block: `{field}` is not a {kind.__name__}")
    if spec.kind == ev.TEXT:
        citations = block.get("citations")
        if citations is not None:
            if type(citations) is not list:
                warnings.append("text block: `citations` is not a list")
            else:
                for citation in citations:
                    _note(warnings, citation_problem(citation, "text block"))
    return spec


def _note(warnings: list[str], problem: str | None) -> None:
    if problem is not None:
        warnings.append(problem)


class Assembly:
    """The state of one Message being assembled (see the module docstring). Not public."""

    __slots__ = (
        "_by_kind",
        "_n_calls",
        "_part_size",
        "_parts",
        "_server",
        "_tool_ids",
        "_tool_info",
        "baseline",
        "content",
        "limits",
        "message",
        "open_block",
        "open_deltas",
        "open_index",
        "open_kind",
        "telemetry",
        "warnings",
    )

    def __init__(self, limits: Limits, baseline: str) -> None:
        self.limits = limits
        self.baseline = baseline
        self.message: dict[str, Any] | None = None
        self.content: list[dict[str, Any]] = []
        self.telemetry: dict[str, Any] = {}
        self.warnings: list[str] = []  # telemetry the turn got wrong (citations, usage)
        self.open_index = -1
        self.open_block: dict[str, Any] = {}
        self.open_kind = ""
        self.open_deltas: dict[str, DeltaHandler] = {}
        self._tool_info: ToolInfo = {}
        self._tool_ids: set[str] = set()
        self._server = ServerBlocks()
        self._n_calls = 0
        self._parts: list[str] = []
        self._part_size = 0
        self._by_kind: dict[str, dict[str, DeltaHandler]] = {
            ev.TEXT: {"text_delta": self.add_text, "citations_delta": self.add_citation},
            ev.THINKING: {
                "thinking_delta": self.add_thinking,
                "signature_delta": self.set_signature,
            },
            ev.TOOL_INPUT: {"input_json_delta": self.add_json},
            ev.WHOLE: {},
        }

    # -- the turn ----------------------------------------------------------------------

    def turn(self) -> Turn:
        """The complete turn (the caller has seen message_stop)."""
        if self.message is None:  # pragma: no cover - DONE implies message_start
            raise SequenceError("no message_start")
        return make_turn(
            self.message,
            self.content,
            self._tool_info,
            self.telemetry,
            complete=True,
            baseline=self.baseline,
            warnings=tuple(self.warnings),
        )

    def partial_turn(self, in_block: bool) -> Turn | None:
        """What was assembled so far, releasing nothing (``None`` before message_start);
        ``in_block``: the stream failed inside a block, which the partial turn shows."""
        if self.message is None:
            return None
        content = list(self.content)
        if in_block:
            content.append(self.open_block)
        try:
            return make_turn(
                self.message,
                content,
                {},
                self.telemetry,
                complete=False,
                baseline=self.baseline,
                warnings=tuple(self.warnings),
            )
        except CallgateError:
            return None

    # -- blocks ------------------------------------------------------------------------

    def open_block_at(self, index: Any, block: Any) -> None:
        """Check and open the block of a content_block_start at ``index``."""
        expected = len(self.content)
        if type(index) is not int or index != expected:
            raise SequenceError(f"content_block_start index {index!r}; expected {expected}")
        limits = self.limits
        room_for_one_more(expected, limits, "content blocks")
        spec = _block_spec(block, self.warnings)
        if spec.kind == ev.TOOL_INPUT:
            self._check_tool_block(block, spec.name)
            self._server.on_call(block)
        elif spec.name in ev.SERVER_TOOL_RESULT_BLOCKS:
            check_caller(block)
            self._server.on_result(block, self.warnings)
        self.open_index = index
        self.open_block = block
        self.open_kind = spec.kind
        self.open_deltas = self._by_kind[spec.kind]
        self._parts = []
        text = block.get("text") if spec.kind == ev.TEXT else block.get("thinking")
        self._part_size = len(text) if type(text) is str else 0

    def _check_tool_block(self, block: dict[str, Any], btype: str) -> None:
        if not block["id"] or not block["name"]:
            raise SchemaError(f"{btype} block: `id` and `name` must be non-empty")
        if block["id"] in self._tool_ids:
            raise SequenceError(f"{btype} id {block['id'][:80]!r} is used twice in the turn")
        self._tool_ids.add(block["id"])
        check_caller(block)
        if btype == ev.CLIENT_TOOL_BLOCK:
            bound = self.limits.max_calls_per_turn
            if self._n_calls >= bound:
                raise LimitExceededError(
                    "too many tool_use blocks",
                    limit="max_calls_per_turn",
                    bound=bound,
                    observed=self._n_calls + 1,
                )
            self._n_calls += 1

    def bad_delta(self, dtype: object) -> NoReturn:
        """Raise for a delta type the open block does not take."""
        btype = self.open_block.get("type")
        if type(dtype) is not str:
            raise SchemaError("delta has no string `type`")
        if dtype in ev.KNOWN_UNSUPPORTED_DELTAS:
            raise UnsupportedProviderState(f"delta type {dtype!r} is not supported")
        if dtype in ev.ALL_DELTAS:
            raise SequenceError(f"{dtype} does not fit a {btype} block")
        raise UnsupportedProviderState(f"unknown delta type {dtype[:80]!r}")

    def close_block(self) -> None:
        """Join the open block's fragments, check it is finished, and keep it."""
        block, kind, parts = self.open_block, self.open_kind, self._parts
        if kind == ev.TEXT:
            if parts:
                block["text"] = (block.get("text") or "") + "".join(parts)
        elif kind == ev.THINKING:
            if parts:
                block["thinking"] = (block.get("thinking") or "") + "".join(parts)
            signature = block.get("signature")
            if type(signature) is not str or not signature:
                raise SchemaError("thinking block closed without a signature")
        elif kind == ev.TOOL_INPUT:
            self._finish_tool_input(block, self.open_index)
        self.content.append(block)
        self.open_index = -1
        self.open_block = {}
        self._parts = []

    def _finish_tool_input(self, block: dict[str, Any], index: int) -> None:
        text = "".join(self._parts)
        failure: str | None = None
        detail = ""
        # No fragments, or only empty ones: the start's input (a zero-argument `{}`) stands.
        if text:
            if block["input"]:
                raise SchemaError("tool input given both in content_block_start and as deltas")
            try:
                value = loads_strict(text, limits=self.limits)
            except LimitExceededError as exc:
                failure, detail = REASON_LIMIT, str(exc)
            except JSONError as exc:
                failure, detail = REASON_INVALID_JSON, str(exc)
            else:
                if type(value) is dict:
                    block["input"] = value
                else:
                    failure = REASON_NON_OBJECT
                    detail = f"tool input is a JSON {type(value).__name__}, not an object"
        if block["type"] != ev.CLIENT_TOOL_BLOCK:
            if failure is not None:
                # A provider-side call with broken input cannot be replayed faithfully.
                raise SchemaError(f"{block['type']} input is not a strict JSON object: {detail}")
            return
        self._tool_info[index] = (text, failure, detail)

    # -- deltas of the open block (the hot path) ---------------------------------------

    def add_json(self, delta: dict[str, Any]) -> None:
        fragment = delta.get("partial_json")
        if type(fragment) is not str:
            raise SchemaError("input_json_delta.partial_json is not a string")
        size = self._part_size + (
            len(fragment) if fragment.isascii() else len(fragment.encode("utf-8", "surrogatepass"))
        )
        limits = self.limits
        if size > limits.max_argument_bytes:
            raise LimitExceededError(
                "tool input is larger than max_argument_bytes",
                limit="max_argument_bytes",
                bound=limits.max_argument_bytes,
                observed=size,
            )
        parts = self._parts
        if len(parts) >= limits.max_fragments_per_call:
            raise LimitExceededError(
                "tool input has too many fragments",
                limit="max_fragments_per_call",
                bound=limits.max_fragments_per_call,
                observed=len(parts) + 1,
            )
        self._part_size = size
        parts.append(fragment)

    def _append_text(self, delta: dict[str, Any], field: str) -> None:
        text = delta.get(field)
        if type(text) is not str:
            raise SchemaError(f"{delta.get('type')}.{field} is not a string")
        size = self._part_size + len(text)
        if size > self.limits.max_text_chars:
            raise LimitExceededError(
                f"{field} is longer than max_text_chars",
                limit="max_text_chars",
                bound=self.limits.max_text_chars,
                observed=size,
            )
        self._part_size = size
        self._parts.append(text)

    def add_text(self, delta: dict[str, Any]) -> None:
        self._append_text(delta, "text")

    def add_thinking(self, delta: dict[str, Any]) -> None:
        self._append_text(delta, "thinking")

    def set_signature(self, delta: dict[str, Any]) -> None:
        signature = delta.get("signature")
        if type(signature) is not str:
            raise SchemaError("signature_delta.signature is not a string")
        self.open_block["signature"] = signature  # replaces, per the SDK and docs

    def add_citation(self, delta: dict[str, Any]) -> None:
        # Citations are telemetry: one the projection cannot read is a warning, kept raw.
        citation = delta.get("citation")
        _note(self.warnings, citation_problem(citation, "citations_delta"))
        # Rare; keeps feed_event callers' dicts out of the turn.
        citation = copy_event_value(citation, self.limits)
        citations = self.open_block.get("citations")
        if type(citations) is list:
            citations.append(citation)
        elif citations is None:
            self.open_block["citations"] = [citation]
        else:
            self.warnings.append("citations_delta onto a block whose `citations` is no list")
