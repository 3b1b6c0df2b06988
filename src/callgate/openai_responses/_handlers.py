"""Event handlers: the accumulation and consistency rules of ``_state``, applied.

:class:`Handlers` holds the per-stream state; :class:`~._parser.Parser` adds decoding and
the error boundary. A handler runs after the dispatcher checked ``sequence_number``, the
transition and the spec's required fields; it raises the typed error it means.
"""

from __future__ import annotations

from typing import Any

from .._errors import (
    LimitExceededError,
    ProviderError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
)
from .._limits import Limits
from ._events import EventSpec
from ._items import check_item, release_calls, same_item
from ._state import OpenItem, State
from ._text import TextHandlers, check_parts
from ._turn import FunctionCall, ProviderErrorInfo, Turn, make_turn

__all__ = ["Handlers"]

_OPT_STR = (str, type(None))


class Handlers(TextHandlers):
    """Per-stream state and one ``_on_<handler>`` method per registry handler name."""

    __slots__ = (
        "_baseline",
        "_calls",
        "_done_marker",
        "_error_info",
        "_final_items",
        "_items",
        "_last_seq",
        "_limits",
        "_n_calls",
        "_open",
        "_response",
        "_response_id",
        "_state",
        "_status",
        "_terminal",
        "_turn",
    )

    def __init__(self, limits: Limits, baseline: str) -> None:
        self._limits = limits
        self._baseline = baseline
        self._state = State.START
        self._last_seq = -1
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
        self._done_marker = False
        self._turn: Turn | None = None

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
        if self._state is State.ERRORED and kind != "response.failed":
            raise SequenceError(f"{kind} after an error event")
        response = self._take_response(obj)
        self._terminal = kind
        if kind == "response.failed":
            if self._error_info is None:
                error = response.get("error")
                raw = error if type(error) is dict else {}
                self._error_info = _error_info("response.failed", raw, None)
            return
        if kind == "response.incomplete":
            details = response.get("incomplete_details")
            raw = details if type(details) is dict else {}
            reason = raw.get("reason")
            self._error_info = ProviderErrorInfo(
                "response.incomplete",
                "incomplete",
                reason if type(reason) is str else None,
                "the response is incomplete",
                None,
                raw,
            )
            return
        # response.completed: the gate.
        if self._status != "completed":
            raise SchemaError(f"response.completed carries status {self._status!r}")
        if self._open:
            raise SequenceError(f"response.completed with open output indexes {sorted(self._open)}")
        output = response.get("output")
        if type(output) is not list:
            raise SchemaError("terminal response has no 'output' list")
        if len(output) != len(self._items):
            raise SequenceError(
                f"terminal output has {len(output)} items, the stream had {len(self._items)}"
            )
        for index, final in enumerate(output):
            item = self._items.get(index)
            if item is None or item.done is None:
                raise SequenceError(f"terminal output[{index}] was never streamed")
            if (
                type(final) is not dict
                or not same_item(item.done, final)
                or final.get("id") not in (None, item.id)
            ):
                raise SequenceError(
                    f"terminal output[{index}] differs from its output_item.done item"
                )
        final_items = tuple(output)
        self._calls = release_calls(final_items, self._limits)
        self._final_items = final_items

    def _on_error(self, obj: dict[str, Any], spec: EventSpec) -> None:
        nested = obj.get("error")
        if nested is not None:
            if type(nested) is not dict:
                raise SchemaError("error event 'error' is not an object")
            self._error_info = _error_info("error_event", nested, obj)
        else:
            self._error_info = _error_info("error_event", obj, obj)

    # -- items -----------------------------------------------------------------------

    def _on_item_added(self, obj: dict[str, Any], spec: EventSpec) -> None:
        index: int = obj["output_index"]
        item: dict[str, Any] = obj["item"]
        if index < 0:
            raise SchemaError(f"negative output_index {index}")
        if index in self._items:
            raise SequenceError(f"output_index {index} was added twice")
        limits = self._limits
        if len(self._items) >= limits.max_items_per_turn:
            raise LimitExceededError(
                "too many output items",
                limit="max_items_per_turn",
                bound=limits.max_items_per_turn,
            )
        if check_item(item, f"output item {index}") == "function_call":
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
        where = f"output item {index}"
        if check_item(item, where) != st.type:
            raise SequenceError(f"{where} changed type from {st.type!r} to {item['type']!r}")
        item_id = item.get("id")
        # An item that came without its optional id may stay without it; any id it shows
        # must be the one the stream bound to its index.
        if item_id != st.id and (item_id is not None or st.added.get("id") is not None):
            raise SequenceError(f"{where} changed id from {st.id!r} to {item_id!r}")
        if st.type == "function_call":
            for key in ("call_id", "name"):
                if item[key] != st.added.get(key):
                    raise SequenceError(f"{where} changed {key} on output_item.done")
            if st.done_text is None:
                raise SequenceError(f"{where} is done before function_call_arguments.done")
            if item["arguments"] != st.done_text:
                raise SequenceError(f"{where} arguments differ from the streamed arguments")
        elif st.type == "code_interpreter_call":
            if st.done_text is None and st.frags:
                raise SequenceError(f"{where} is done before its code was done")
            if st.done_text is not None and item.get("code") != st.done_text:
                raise SequenceError(f"{where} code differs from the streamed code")
        elif st.type in ("message", "reasoning"):
            check_parts(st, item, where)
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

    def _on_ping(self, obj: dict[str, Any], spec: EventSpec) -> None:
        self._item_for(obj, spec)

    def _on_ignore(self, obj: dict[str, Any], spec: EventSpec) -> None:
        pass

    def _on_unsupported(self, obj: dict[str, Any], spec: EventSpec) -> None:
        raise UnsupportedProviderState(f"{spec.type} is not supported by callgate")

    # -- the turn --------------------------------------------------------------------

    def _done_items(self) -> tuple[dict[str, Any], ...]:
        return tuple(st.done for _, st in sorted(self._items.items()) if st.done is not None)

    def _partial_turn(self) -> Turn | None:
        try:
            return make_turn(
                response_id=self._response_id,
                status=self._status,
                items=self._done_items(),
                calls=(),
                response=self._response,
                error=self._error_info,
                baseline=self._baseline,
            )
        except Exception:  # the partial turn is best effort; the real error matters
            return None

    def _final_turn(self) -> Turn:
        if self._state is State.ERRORED or (
            self._state is State.TERMINATED and self._terminal != "response.completed"
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
        if self._state is not State.TERMINATED or self._final_items is None:
            raise TruncatedStreamError("the stream ended before its terminal event")
        return make_turn(
            response_id=self._response_id,
            status=self._status,
            items=self._final_items,
            calls=self._calls,
            response=self._response,
            error=None,
            baseline=self._baseline,
        )


def _error_info(
    source: str, raw: dict[str, Any], event: dict[str, Any] | None
) -> ProviderErrorInfo:
    fields = {}
    for key in ("type", "code", "message", "param"):
        value = raw.get(key)
        if type(value) not in _OPT_STR:
            raise SchemaError(f"{source} field {key!r} is not a string")
        fields[key] = value
    if source == "error_event" and fields["message"] is None:
        raise SchemaError("error event lacks a string 'message'")
    return ProviderErrorInfo(
        source,
        fields["type"],
        fields["code"],
        fields["message"],
        fields["param"],
        event if event is not None else raw,
    )
