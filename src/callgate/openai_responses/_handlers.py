"""Event handlers: one ``_on_<handler>`` per handler name of the table, applied to the
per-stream accumulation they hold.

:class:`Handlers` is composed into :class:`~._parser.Parser` (the parser holds one and
dispatches to its bound methods through ``_state.TRANSITIONS``); it knows nothing of
decoding, sequence numbers or the error boundary. A handler runs after the dispatcher
checked ``sequence_number``, the transition and the spec's required fields; it raises the
typed error it means.
"""

from __future__ import annotations

from typing import Any, NoReturn

from .._errors import (
    LimitExceededError,
    ProviderError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
)
from .._limits import Limits, room_for_one_more
from ._assembly import (
    PART_KINDS,
    OpenItem,
    Part,
    check_done,
    check_final_output,
    check_item,
    check_text_size,
)
from ._events import EventSpec
from ._hosted import (
    PING_ORDER,
    add_annotation,
    check_declared,
    declared_tools,
)
from ._state import State
from ._turn import (
    FunctionCall,
    ProviderErrorInfo,
    Turn,
    completion_problem,
    error_info,
    incomplete_info,
    make_turn,
    provider_error,
    release_calls,
)

__all__ = ["Handlers"]

_OPT_STR = (str, type(None))


class Handlers:
    """The accumulation of one stream and one ``_on_<handler>`` method per handler name."""

    __slots__ = (
        "_baseline",
        "_calls",
        "_declared",
        "_error_info",
        "_final_items",
        "_items",
        "_limits",
        "_n_calls",
        "_open",
        "_response",
        "_response_id",
        "_status",
        "_terminal",
        "_warnings",
    )

    def __init__(
        self, limits: Limits, baseline: str, request: dict[str, Any] | None = None
    ) -> None:
        self._limits = limits
        self._declared = declared_tools(request)
        self._baseline = baseline
        self._items: dict[int, OpenItem] = {}  # every added item, by output_index
        self._open: dict[int, OpenItem] = {}  # added and not yet done
        self._n_calls = 0
        self._response_id: str | None = None
        self._response: dict[str, Any] | None = None
        self._status: str | None = None
        self._terminal: str | None = None
        self._error_info: ProviderErrorInfo | None = None
        self._final_items: tuple[dict[str, Any], ...] | None = None
        self._calls: tuple[FunctionCall, ...] = ()
        self._warnings: list[str] = []  # telemetry the stream got wrong (annotations)

    # -- lifecycle -------------------------------------------------------------------

    def _take_response(self, obj: dict[str, Any]) -> dict[str, Any]:
        response: dict[str, Any] = obj["response"]
        rid = response.get("id")
        if type(rid) is not str:
            raise SchemaError("lifecycle response lacks a string 'id'")
        if self._response_id is None:
            self._response_id = rid
        elif rid != self._response_id:
            raise SequenceError(f"response id changed from {self._response_id!r} to {rid!r}")
        status = response.get("status")
        if type(status) not in _OPT_STR:
            raise SchemaError("lifecycle response 'status' is not a string")
        self._response = response
        self._status = status
        return response

    def _on_created(self, obj: dict[str, Any], spec: EventSpec) -> None:
        self._take_response(obj)

    def _on_update(self, obj: dict[str, Any], spec: EventSpec) -> None:
        self._take_response(obj)

    def _on_terminal(self, obj: dict[str, Any], spec: EventSpec) -> None:
        kind = spec.type
        response = self._take_response(obj)
        self._terminal = kind
        if kind == "response.failed":
            if self._error_info is None:
                error = response.get("error")
                self._error_info = error_info(
                    "response.failed", error if type(error) is dict else {}, None
                )
            return
        if kind == "response.incomplete":
            details = response.get("incomplete_details")
            raw = details if type(details) is dict else {}
            self._error_info = incomplete_info("response.incomplete", raw)
            return
        # response.completed: the gate.
        if self._status != "completed":
            raise SchemaError(f"response.completed carries status {self._status!r}")
        if self._open:
            raise SequenceError(f"response.completed with open output indexes {sorted(self._open)}")
        final_items = check_final_output(self._items, response.get("output"))
        self._error_info = completion_problem(response)  # the gate refuses it, if any
        self._calls = release_calls(response, final_items, limits=self._limits)
        self._final_items = final_items

    def _on_error(self, obj: dict[str, Any], spec: EventSpec) -> None:
        # Flat or nested: the event refuses the turn whatever its details hold. The flat
        # form's ``type`` is the event's own ("error"), not an error type: not reported.
        nested = obj.get("error")
        details = nested if type(nested) is dict else dict(obj, type=None)
        self._error_info = error_info("error_event", details, obj)

    def refuse_error(self, obj: dict[str, Any], spec: EventSpec) -> NoReturn:
        """A non-error event that carries a truthy top-level ``error``: the SDK raises
        ``APIError`` on it, so the turn fails closed (:class:`ProviderError`)."""
        nested = obj["error"]
        details = nested if type(nested) is dict else {}
        self._error_info = info = error_info("error_field", details, obj)
        raise provider_error(info, f"{spec.type} carries an error")

    # -- items -----------------------------------------------------------------------

    def _on_item_added(self, obj: dict[str, Any], spec: EventSpec) -> None:
        index: int = obj["output_index"]
        item: dict[str, Any] = obj["item"]
        if index < 0:
            raise SchemaError(f"negative output_index {index}")
        if index in self._items:
            raise SequenceError(f"output_index {index} was added twice")
        limits = self._limits
        room_for_one_more(len(self._items), limits, "output items")
        kind = check_item(item, f"output item {index}", partial=True)
        check_declared(kind, self._declared, f"output item {index}")
        if kind == "function_call":
            self._n_calls += 1
            if self._n_calls > limits.max_calls_per_turn:
                raise LimitExceededError(
                    "too many function calls",
                    limit="max_calls_per_turn",
                    bound=limits.max_calls_per_turn,
                )
        self._items[index] = self._open[index] = OpenItem(index, item)

    def _on_item_done(self, obj: dict[str, Any], spec: EventSpec) -> None:
        index: int = obj["output_index"]
        item: dict[str, Any] = obj["item"]
        st = self._open.pop(index, None)
        if st is None:
            state = "done twice" if index in self._items else "done before it was added"
            raise SequenceError(f"output_index {index} {state}")
        check_done(st, item, f"output item {index}")
        st.done = item

    def _item_for(self, obj: dict[str, Any], spec: EventSpec) -> OpenItem:
        index = obj["output_index"]
        st = self._open.get(index)
        if st is None:
            state = "already done" if index in self._items else "not added"
            raise SequenceError(f"{spec.type} for output_index {index}, which is {state}")
        item_id = obj["item_id"]
        if st.id != item_id:
            if st.id is not None:
                raise SequenceError(
                    f"{spec.type} names item {item_id!r}, output_index {index} is {st.id!r}"
                )
            st.id = item_id  # the item came without its optional id: bind the first one
        if st.type not in spec.item_types:
            raise SequenceError(f"{spec.type} addresses a {st.type!r} item")
        return st

    def _on_args_delta(self, obj: dict[str, Any], spec: EventSpec) -> None:
        # The hot path: fields are checked here, inline, not by the dispatcher's loop.
        index = obj.get("output_index")
        # Probe the dict only with an int: a list or object index is unhashable.
        st = self._open.get(index) if type(index) is int else None
        delta = obj.get("delta")
        if (
            st is None
            or st.id is None
            or st.id != obj.get("item_id")
            or st.type != "function_call"
            or type(delta) is not str
        ):
            st = self._slow_item(obj, spec)
            if type(delta) is not str:
                raise SchemaError("function_call_arguments.delta lacks a string 'delta'")
        if st.done_text is not None:
            raise SequenceError("function_call_arguments.delta after its .done")
        limits = self._limits
        size = st.frag_bytes + (len(delta) if delta.isascii() else len(delta.encode()))
        if size > limits.max_argument_bytes:
            raise LimitExceededError(
                f"arguments of the function call at output_index {st.index} are too large",
                limit="max_argument_bytes",
                bound=limits.max_argument_bytes,
                observed=size,
            )
        frags = st.frags
        if len(frags) >= limits.max_fragments_per_call:
            raise LimitExceededError(
                f"too many argument fragments for the call at output_index {st.index}",
                limit="max_fragments_per_call",
                bound=limits.max_fragments_per_call,
            )
        st.frag_bytes = size
        frags.append(delta)

    def _slow_item(self, obj: dict[str, Any], spec: EventSpec) -> OpenItem:
        for name in ("item_id", "output_index"):
            kinds = (str,) if name == "item_id" else (int,)
            if type(obj.get(name)) not in kinds:
                raise SchemaError(f"{spec.type} lacks a valid {name!r}")
        return self._item_for(obj, spec)

    def _on_args_done(self, obj: dict[str, Any], spec: EventSpec) -> None:
        st = self._item_for(obj, spec)
        if st.done_text is not None:
            raise SequenceError("function_call_arguments.done twice")
        if "name" in obj:  # optional on both baselines; when sent it must be the item's
            name = obj["name"]
            if type(name) is not str:
                raise SchemaError("function_call_arguments.done 'name' is not a string")
            if name != st.added.get("name"):
                raise SequenceError("function_call_arguments.done names another function")
        arguments = obj["arguments"]
        if arguments != "".join(st.frags):
            raise SequenceError("function_call_arguments.done differs from the deltas")
        st.done_text = arguments
        st.frags = []

    def _on_code_delta(self, obj: dict[str, Any], spec: EventSpec) -> None:
        st = self._item_for(obj, spec)
        if st.phase > 0:  # interpreting or completed: the code was final before that
            raise SequenceError("code delta after the interpreter started")
        if st.done_text is not None:
            raise SequenceError("code delta after the code was done")
        delta: str = obj["delta"]
        st.frag_bytes += len(delta)
        check_text_size(st.frag_bytes, self._limits)
        st.frags.append(delta)

    def _on_code_done(self, obj: dict[str, Any], spec: EventSpec) -> None:
        st = self._item_for(obj, spec)
        if st.done_text is not None:
            raise SequenceError("code done twice")
        if obj["code"] != "".join(st.frags):
            raise SequenceError("code_interpreter_call_code.done differs from the deltas")
        st.done_text = obj["code"]

    def _on_ping(self, obj: dict[str, Any], spec: EventSpec) -> None:
        st = self._item_for(obj, spec)
        if spec.type.endswith(".partial_image"):
            return
        if st.phase == len(PING_ORDER[st.type]) - 1:
            raise SequenceError(f"{spec.type} after the tool completed")
        st.ping(spec.type.rpartition(".")[2])

    def _on_ignore(self, obj: dict[str, Any], spec: EventSpec) -> None:
        pass

    def _on_unsupported(self, obj: dict[str, Any], spec: EventSpec) -> None:
        raise UnsupportedProviderState(f"{spec.type} is not supported by callgate")

    # -- parts and their text: fragments per part, joined once at their ``.done`` ----

    def _part_for(self, obj: dict[str, Any], spec: EventSpec) -> Part:
        st = self._item_for(obj, spec)
        key = (spec.index_field, obj[spec.index_field])
        part = st.parts.get(key)
        if part is None or part.closed:
            state = "closed" if part is not None else "not added"
            raise SequenceError(f"{spec.type} for {key[0]} {key[1]}, which is {state}")
        if spec.part and part.kind != spec.part:
            raise SequenceError(f"{spec.type} addresses a {part.kind!r} part")
        return part

    def _on_part_added(self, obj: dict[str, Any], spec: EventSpec) -> None:
        st = self._item_for(obj, spec)
        key = (spec.index_field, obj[spec.index_field])
        kind = obj["part"].get("type")
        if type(kind) is not str:  # checked first: the kinds are a set of str
            raise SchemaError(f"{spec.type} adds a part without a string 'type'")
        if kind not in PART_KINDS.get((st.type, spec.index_field), ()):
            raise SequenceError(f"{spec.type} adds a {kind!r} part to a {st.type!r} item")
        if key in st.parts:
            raise SequenceError(f"{spec.type}: {key[0]} {key[1]} was added twice")
        st.parts[key] = Part(kind)

    def _on_part_done(self, obj: dict[str, Any], spec: EventSpec) -> None:
        self._part_for(obj, spec).close(obj["part"], spec.type, self._warnings)

    def _on_text_delta(self, obj: dict[str, Any], spec: EventSpec) -> None:
        self._part_for(obj, spec).add_delta(obj["delta"], self._limits, spec.type)

    def _on_text_done(self, obj: dict[str, Any], spec: EventSpec) -> None:
        self._part_for(obj, spec).finish_text(obj[spec.text_field], spec.type)

    def _on_annotation(self, obj: dict[str, Any], spec: EventSpec) -> None:
        try:
            part = self._part_for(obj, spec)
        except SequenceError as exc:  # citation bookkeeping never refuses the turn
            self._warnings.append(f"{spec.type} ignored: {exc.message}")
            return
        add_annotation(part.annotations, obj, self._limits, self._warnings)

    # -- the turn --------------------------------------------------------------------

    def partial_turn(self) -> Turn | None:
        """The turn so far, with no calls (best effort: ``None`` if it cannot be built)."""
        try:
            return make_turn(
                response_id=self._response_id,
                status=self._status,
                items=tuple(
                    st.done for _, st in sorted(self._items.items()) if st.done is not None
                ),
                calls=(),
                response=self._response,
                error=self._error_info,
                baseline=self._baseline,
                warnings=tuple(self._warnings),
            )
        except Exception:  # the partial turn is best effort; the real error matters
            return None

    def final_turn(self, state: State) -> Turn:
        """The turn at the end of the stream in ``state``: the released calls of a
        completed response; :class:`ProviderError` after an ``error`` event or another
        terminal; :class:`TruncatedStreamError` without a terminal."""
        if state is State.ERRORED or (
            state is State.DONE and self._terminal != "response.completed"
        ):
            info = self._error_info
            what = info.source if info is not None else "response.failed"
            raise ProviderError(
                f"the provider ended the turn with {what}: "
                f"{info.message if info is not None else 'no details'}",
                error_type=info.type if info is not None else None,
                error_code=info.code if info is not None else None,
                provider_message=info.message if info is not None else None,
            )
        if state is not State.DONE or self._final_items is None:
            raise TruncatedStreamError("the stream ended before its terminal event")
        return make_turn(
            response_id=self._response_id,
            status=self._status,
            items=self._final_items,
            calls=self._calls,
            response=self._response,
            error=None,
            baseline=self._baseline,
            warnings=tuple(self._warnings),
        )
