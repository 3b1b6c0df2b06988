"""Per-part accumulation and shape checks: the candidate's parts across chunks, in order.

Plain text deltas (a part with ``text`` and at most ``thought``) are joined in O(n): the
pieces of one run go into a list that is joined once, when another part or the end closes
the run. Every other part is kept as received and on its own, so a ``thoughtSignature``
stays on the exact part it arrived on (a trailing ``{"text": "", "thoughtSignature": ...}``
is never folded into the text before it: pydantic-ai#3481's trap).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from .._errors import LimitExceededError, SchemaError, SequenceError, UnsupportedProviderState
from .._fields import need_str, opt_str
from .._limits import Limits, room_for_one_more
from ._events import CALL_PART, DATA_KEYS, HOSTED_PARTS, MODIFIER_KEYS, SNAKE_ALIASES
from ._turn import FunctionCall, local_call_id

__all__ = ["Assembly", "check_part", "decode_signature"]

_VERTEX_ONLY = ("partialArgs", "willContinue", "partial_args", "will_continue")
_URLSAFE = bytes.maketrans(b"-_", b"+/")


def decode_signature(value: Any) -> bytes:
    """The bytes of a base64 ``thoughtSignature`` in either alphabet, padded or not, the
    way the SDK decodes it. Raises :class:`SchemaError` if it is not such a string."""
    if type(value) is not str or not value or not value.isascii():
        raise SchemaError("'thoughtSignature' must be a non-empty base64 string")
    raw = value.encode("ascii").translate(_URLSAFE)
    raw += b"=" * (-len(raw) % 4)
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise SchemaError("'thoughtSignature' is not valid base64") from None


def check_call(call: Any) -> None:
    """A ``functionCall`` the Developer API sends: whole, ``name`` and object ``args``."""
    if type(call) is not dict:
        raise SchemaError("'functionCall' must be an object")
    for key in _VERTEX_ONLY:
        if key in call:
            # Vertex streams arguments as RFC 9535 jsonPath pieces; neither Developer API
            # baseline sends them, so callgate does not assemble them: fail closed.
            raise UnsupportedProviderState(
                f"functionCall.{key} (Vertex streamed arguments) is not part of the "
                "Gemini Developer API contract"
            )
    need_str(call, "name", "functionCall", empty=False)
    call_id = opt_str(call, "id", "functionCall")
    if call_id == "":
        raise SchemaError("functionCall 'id' must not be empty")
    args = call.get("args")
    if args is not None and type(args) is not dict:
        raise SchemaError("functionCall 'args' must be a JSON object")


def check_part(part: Any, modifiers: frozenset[str]) -> str | None:
    """Check one non-plain-text part; return its data key (``None``: signature only)."""
    if type(part) is not dict:
        raise SchemaError("a part must be an object")
    data = None
    unknown = []
    for key in part:
        if key in DATA_KEYS:
            if data is not None:
                raise SchemaError(f"a part holds two data fields ({data!r} and {key!r})")
            data = key
        elif key in modifiers:
            continue
        elif key in SNAKE_ALIASES:
            raise SchemaError(f"part key {key!r} is snake_case; the wire spells it camelCase")
        else:
            unknown.append(key)
    if data is None:
        if unknown:
            raise UnsupportedProviderState(f"a part with unknown field(s) {sorted(unknown)}")
        if "thoughtSignature" not in part:
            raise SchemaError("a part holds no data field")
    if "thoughtSignature" in part:
        decode_signature(part["thoughtSignature"])
    thought = part.get("thought")
    if thought is not None and type(thought) is not bool:
        raise SchemaError("part 'thought' must be a bool")
    if data == "text":
        if type(part["text"]) is not str:
            raise SchemaError("part 'text' must be a string")
    elif data == CALL_PART:
        check_call(part[CALL_PART])
    elif data == "functionResponse":
        # The server answered a call itself (a remote MCP server's tool run by Gemini):
        # the functionCall it answers is no client call, and no unpaired call of this
        # turn can be told apart from one whose answer is still to come.
        raise UnsupportedProviderState(
            "a model turn holds a functionResponse part: a function call the server "
            "executed itself (e.g. an mcpServers tool), which this room does not gate; "
            "nothing of the turn is released"
        )
    elif data is not None and type(part[data]) is not dict:
        kind = "hosted-tool" if data in HOSTED_PARTS else "data"
        raise SchemaError(f"{kind} part {data!r} must be an object")
    return data


class Assembly:
    """The candidate's parts and function calls, as they arrive."""

    __slots__ = (
        "_call_ids",
        "_calls",
        "_limits",
        "_modifiers",
        "_run",
        "_run_chars",
        "_run_first",
        "_run_thought",
        "parts",
    )

    def __init__(self, limits: Limits, baseline: str) -> None:
        self._limits = limits
        self._modifiers = MODIFIER_KEYS[baseline]
        self.parts: list[dict[str, Any]] = []
        self._run: list[str] | None = None
        self._run_first: dict[str, Any] = {}
        self._run_thought: Any = None
        self._run_chars = 0
        self._calls: list[int] = []
        self._call_ids: set[str] = set()

    def add(self, parts: Any) -> None:
        if type(parts) is not list:
            raise SchemaError("content 'parts' must be a list")
        for part in parts:
            # The hot path: a plain text delta joins the open run with one list append.
            if type(part) is dict:
                text = part.get("text")
                if type(text) is str:
                    size = len(part)
                    thought = part.get("thought") if size == 2 else None
                    if size == 1 or type(thought) is bool:
                        run = self._run
                        if run is not None and thought is self._run_thought:
                            self._run_chars += len(text)
                            if self._run_chars > self._limits.max_text_chars:
                                raise self._text_limit()
                            run.append(text)
                        else:
                            self._start_run(part, text, thought)
                        continue
            self._add_part(part)

    def _start_run(self, part: dict[str, Any], text: str, thought: bool | None) -> None:
        self.close()
        self._check_room()
        self._run = [text]
        self._run_first = part
        self._run_thought = thought
        self._run_chars = len(text)
        if self._run_chars > self._limits.max_text_chars:
            raise self._text_limit()

    def _text_limit(self) -> LimitExceededError:
        return LimitExceededError(
            "text part is too long",
            limit="max_text_chars",
            bound=self._limits.max_text_chars,
            observed=self._run_chars,
        )

    def _add_part(self, part: Any) -> None:
        data = check_part(part, self._modifiers)
        self.close()
        self._check_room()
        if data == CALL_PART:
            limits = self._limits
            if len(self._calls) >= limits.max_calls_per_turn:
                raise LimitExceededError(
                    "too many function calls in one turn",
                    limit="max_calls_per_turn",
                    bound=limits.max_calls_per_turn,
                    observed=len(self._calls) + 1,
                )
            call_id = part[CALL_PART].get("id")
            if call_id is not None:
                if call_id in self._call_ids:
                    raise SequenceError(f"duplicate functionCall id {call_id!r} in one turn")
                self._call_ids.add(call_id)
            self._calls.append(len(self.parts))
        self.parts.append(part)

    def _check_room(self) -> None:
        room_for_one_more(len(self.parts), self._limits, "parts in one turn")

    def close(self) -> None:
        """Close the open text run (idempotent)."""
        run = self._run
        if run is None:
            return
        self._run = None
        first = self._run_first
        self.parts.append(first if len(run) == 1 else {**first, "text": "".join(run)})

    def snapshot(self) -> tuple[dict[str, Any], ...]:
        """The parts so far, the open text run included (does not close it)."""
        if self._run is None:
            return tuple(self.parts)
        first = self._run_first
        return (*self.parts, {**first, "text": "".join(self._run)})

    def pending(self, response_id: str | None) -> tuple[FunctionCall, ...]:
        """Every functionCall part, with its identity (provider id or local id)."""
        calls = []
        for ordinal, index in enumerate(self._calls):
            part = self.parts[index]
            call = part[CALL_PART]
            name, args = call["name"], call.get("args")
            if args is None:
                args = {}  # no arguments sent: the empty object, not absence of a call
            provider_id = call.get("id")
            call_id = provider_id or local_call_id(response_id, ordinal, name, args)
            calls.append(
                FunctionCall(
                    call_id=call_id,
                    name=name,
                    arguments=args,
                    provider_id=provider_id,
                    index=index,
                    part=part,
                )
            )
        return tuple(calls)
