"""Per-index tool-call accumulation and the message's text, in O(n).

``tool_calls`` deltas are keyed by their ``index`` (the position in the final
``message.tool_calls``), never by a "current call": interleaved parallel calls assemble
correctly. The first delta of an index gives its ``id``, ``type`` and ``function.name``;
later deltas carry ``function.arguments`` fragments, which are appended to a list and
joined once. A later delta that sends a different ``id``, ``type`` or name is a
:class:`~callgate.SequenceError` (the SDK would concatenate them, §3 of the contract);
indices must start at 0 and grow without gaps. A profile may relax
``missing_tool_index`` and ``empty_identity`` (``_profiles``).
"""

from __future__ import annotations

from typing import Any

from .._errors import LimitExceededError, SchemaError, SequenceError, UnsupportedProviderState
from .._limits import Limits
from ._profiles import Profile

__all__ = ["Assembly", "inert_delta", "keyed_entry", "merge_extra", "pick_choice"]


def merge_extra(store: dict[str, Any], key: str, value: Any) -> None:
    """Keep an extra field the way the SDK's accumulator does: strings joined, lists
    extended, any other value replaced by the last one."""
    if value is None:
        return
    held = store.get(key)
    if type(value) is str and type(held) is str:
        store[key] = held + value
    elif type(value) is list and type(held) is list:
        held.extend(value)
    else:
        store[key] = list(value) if type(value) is list else value


class _Call:
    __slots__ = ("fragments", "id", "name", "pieces", "size", "type")

    def __init__(self) -> None:
        self.id: str | None = None
        self.type: str | None = None
        self.name: str | None = None
        self.pieces: list[str] = []
        self.size = 0
        self.fragments = 0


def _identity(call: _Call, attr: str, value: Any, index: int, what: str, profile: Profile) -> None:
    """Set or re-check one identity field (``id``, ``type``, ``name``) of a call."""
    if value is None:
        return
    if type(value) is not str:
        raise SchemaError(f"tool call {what} must be a string")
    held = getattr(call, attr)
    if value == held:
        return
    if value == "" and profile.allows("empty_identity"):
        return
    if held is None and (attr != "type" or value == "function"):
        setattr(call, attr, value)
        return
    if attr == "type" and held is None:
        raise UnsupportedProviderState(f"tool call type {value!r} is not a function call")
    raise SequenceError(f"tool call index {index} changed its {what} from {held!r} to {value!r}")


class Assembly:
    """The selected choice's message as it arrives."""

    __slots__ = ("_calls", "_content", "_limits", "_profile", "_refusal", "_text_chars")

    def __init__(self, limits: Limits, profile: Profile) -> None:
        self._limits = limits
        self._profile = profile
        self._calls: list[_Call] = []
        self._content: list[str] | None = None
        self._refusal: list[str] | None = None
        self._text_chars = 0

    # -- text ---------------------------------------------------------------------------

    def add_text(self, value: Any, refusal: bool = False) -> None:
        if value is None:
            return
        if type(value) is not str:
            raise SchemaError(f"'{'refusal' if refusal else 'content'}' must be a string")
        self._text_chars += len(value)
        if self._text_chars > self._limits.max_text_chars:
            raise LimitExceededError(
                "message text is too long",
                limit="max_text_chars",
                bound=self._limits.max_text_chars,
                observed=self._text_chars,
            )
        if refusal:
            if self._refusal is None:
                self._refusal = []
            self._refusal.append(value)
        else:
            if self._content is None:
                self._content = []
            self._content.append(value)

    @property
    def content(self) -> str | None:
        return None if self._content is None else "".join(self._content)

    @property
    def refusal(self) -> str | None:
        return None if self._refusal is None else "".join(self._refusal)

    # -- tool calls -----------------------------------------------------------------------

    def add_tool_calls(self, deltas: Any) -> None:
        if type(deltas) is not list:
            raise SchemaError("delta 'tool_calls' must be a list")
        calls = self._calls
        limits = self._limits
        for delta in deltas:
            # The hot path: {"index": i, "function": {"arguments": "..."}} for a known i.
            if type(delta) is dict and len(delta) == 2:
                index = delta.get("index")
                function = delta.get("function")
                if (
                    type(index) is int
                    and 0 <= index < len(calls)
                    and type(function) is dict
                    and len(function) == 1
                ):
                    arguments = function.get("arguments")
                    if type(arguments) is str:
                        call = calls[index]
                        call.pieces.append(arguments)
                        call.size += len(arguments)
                        call.fragments += 1
                        if (
                            call.size > limits.max_argument_bytes
                            or call.fragments > limits.max_fragments_per_call
                        ):
                            self._append(call, "")  # raises the limit crossed
                        continue
            self._add(delta)

    def _append(self, call: _Call, arguments: str) -> None:
        """Add one fragment (``""`` after the hot path counted it: only check)."""
        if arguments:
            call.pieces.append(arguments)
            call.size += len(arguments)
            call.fragments += 1
        limits = self._limits
        if call.size > limits.max_argument_bytes:
            raise LimitExceededError(
                "tool call arguments are too large",
                limit="max_argument_bytes",
                bound=limits.max_argument_bytes,
                observed=call.size,
            )
        if call.fragments > limits.max_fragments_per_call:
            raise LimitExceededError(
                "too many argument fragments for one tool call",
                limit="max_fragments_per_call",
                bound=limits.max_fragments_per_call,
                observed=call.fragments,
            )

    def _add(self, delta: Any) -> None:
        if type(delta) is not dict:
            raise SchemaError("a tool-call delta must be an object")
        function = delta.get("function")
        if function is not None and type(function) is not dict:
            raise SchemaError("tool-call delta 'function' must be an object")
        function = function or {}
        arguments = function.get("arguments")
        if arguments is not None and type(arguments) is not str:
            raise SchemaError("tool-call 'function.arguments' must be a string of JSON text")
        index = delta.get("index")
        calls = self._calls
        if index is None:
            whole = (
                type(delta.get("id")) is str
                and delta["id"]
                and type(function.get("name")) is str
                and function["name"]
                and type(arguments) is str
            )
            if not (whole and self._profile.allows("missing_tool_index")):
                raise SchemaError("a tool-call delta lacks 'index' (deltas are keyed by it)")
            index = len(calls)
        if type(index) is not int or index < 0:
            raise SchemaError("tool-call delta 'index' must be an integer >= 0")
        if index > len(calls):
            raise SequenceError(
                f"tool-call index {index} skips index {len(calls)} (indices start at 0, no gaps)"
            )
        if index == len(calls):
            if len(calls) >= self._limits.max_calls_per_turn:
                raise LimitExceededError(
                    "too many tool calls in one turn",
                    limit="max_calls_per_turn",
                    bound=self._limits.max_calls_per_turn,
                    observed=len(calls) + 1,
                )
            calls.append(_Call())
        call = calls[index]
        profile = self._profile
        _identity(call, "id", delta.get("id"), index, "id", profile)
        _identity(call, "type", delta.get("type"), index, "type", profile)
        _identity(call, "name", function.get("name"), index, "name", profile)
        if arguments is not None:
            self._append(call, arguments)

    def entries(self) -> tuple[dict[str, Any], ...]:
        """Every call as a ``message.tool_calls`` entry, in index order."""
        return tuple(
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": "".join(call.pieces)},
            }
            for call in self._calls
        )


def inert_delta(delta: Any) -> bool:
    """Whether a delta adds nothing to the message (no text, no call, no refusal)."""
    if delta is None:
        return True
    if type(delta) is not dict:
        return False
    return all(
        value is None or value == "" or value == [] or key == "role" for key, value in delta.items()
    )


def keyed_entry(entry: Any, index: int) -> Any:
    """A body's ``tool_calls`` entry as the delta that carries it whole."""
    if type(entry) is not dict:
        return entry
    kind = entry.get("type")
    if kind is not None and kind != "function":
        raise UnsupportedProviderState(f"tool call type {kind!r} is not a function call")
    return {**entry, "index": index}


# -- which choice ---------------------------------------------------------------------


def pick_choice(choices: Any, select: int | None) -> dict[str, Any] | None:
    """The choice a chunk (or body) carries for the selected ``choice_index``: with none
    selected, the only choice, which must be index 0 (``n > 1`` is refused); ``None`` if the
    chunk has no choices (or not the selected one)."""
    if choices is None:
        return None
    if type(choices) is not list:
        raise SchemaError("'choices' must be a list")
    if select is None and len(choices) == 1:
        choice = choices[0]  # the common case: one choice, index 0
        if type(choice) is not dict:
            raise SchemaError("a choice must be an object")
        index = choice.get("index")
        if index != 0 or type(index) is not int:
            _check_index(index)
            raise UnsupportedProviderState(
                f"choice index {index} (n > 1): select a choice with choice_index="
            )
        return choice
    if select is None:
        if choices:
            raise UnsupportedProviderState(
                f"{len(choices)} choices in one chunk (n > 1): select one with choice_index="
            )
        return None
    found = None
    seen: set[int] = set()
    for choice in choices:
        if type(choice) is not dict:
            raise SchemaError("a choice must be an object")
        index = _check_index(choice.get("index"))
        if index in seen:
            raise SequenceError(f"choice index {index} twice in one chunk")
        seen.add(index)
        if index == select:
            found = choice
    return found


def _check_index(index: Any) -> int:
    if type(index) is not int or index < 0:
        raise SchemaError("a choice needs an integer 'index' >= 0")
    return index
