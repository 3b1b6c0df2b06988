"""The parsed turn, its tool calls, the digest and the gate.

The gate (invariant 4 of the design): the assistant message's ``tool_calls`` are released
in ``Turn.calls`` only from a choice whose ``finish_reason`` is ``tool_calls`` (a stream:
after ``data: [DONE]``; a body: the complete object), each with an ``id``, a ``name`` and
arguments that parse as a strict JSON object. ``stop`` releases nothing, except the one
call the request forced (``tool_choice`` naming one function: OpenAI itself ends such a
turn with ``stop``, vllm-project/vllm#25054) or, under a profile that relaxes
``stop_with_calls``, the complete calls beside it. ``length`` and ``content_filter`` are
:class:`~callgate.ProviderError` refusals naming the reason; the legacy ``function_call``
fails closed (:class:`~callgate.UnsupportedProviderState`), as does a reason the baseline
does not know. A ``refusal`` is an outcome on the turn (``turn.refusal``), never text.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .._digest import canonical_digest
from .._errors import (
    ProviderError,
    SchemaError,
    SequenceError,
    UnsupportedProviderState,
)
from .._hosted import Citation, HostedCall
from .._json import loads_arguments
from .._limits import Limits
from ._events import FINISH_REASONS, STOP, TOOL_CALLS
from ._profiles import Profile

__all__ = ["ToolCall", "Turn", "error_of", "make_turn", "release_calls", "turn_digest"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One client-executed call: an entry of the assistant message's ``tool_calls``,
    released by the gate.

    ``call_id`` is the entry's ``id`` (what a :class:`~callgate.ToolResult` answers, sent
    back as ``tool_call_id``); ``index`` its position in ``Turn.tool_calls``; ``raw`` that
    entry exactly as assembled (``id``, ``type``, ``function.name``,
    ``function.arguments`` text).
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    index: int
    raw: dict[str, Any]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """One assistant turn of Chat Completions, as parsed. Frozen; its dicts are raw JSON.

    - ``completion_id``: the chunks' (or body's) ``id``; ``model``: its ``model``.
    - ``content``: the assistant text (deltas joined), ``None`` if none was sent;
      ``refusal``: the refusal text, ``None`` if none (a refusal is not text).
    - ``tool_calls``: every assembled ``tool_calls`` entry in index order, as the
      assistant message carries them (``id``, ``type``, ``function`` with the argument
      text); ``calls``: the ones the gate released.
    - ``finish_reason``: the choice's (``None`` only on a partial turn).
    - ``usage``: the last non-null ``usage`` (telemetry), ``None`` if never sent.
    - ``message_extra``: other message / delta fields (``reasoning_content``,
      ``reasoning``, ``reasoning_details``, ``audio``, ``annotations``...): strings
      joined, lists extended, other values the last one; ``choice_extra``: the choice's
      other fields (``logprobs`` lists extended); ``response``: the chunk-level fields
      (``created``, ``system_fingerprint``, ``service_tier``, ``provider``...), the last
      value of each.
    - ``choice_index``: the choice the caller selected (``None``: the only one);
      ``forced_function``: the function the request's ``tool_choice`` named;
      ``profile``: the compatibility profile's name (``None``: strict).
    - ``chunks``, ``origin`` (``"stream"``/``"body"``), ``baseline``; ``digest`` covers
      all of the above.

    ``hosted_calls``/``citations``: derived from ``message_extra["annotations"]``;
    ``warnings``: telemetry the parser could not read (not digested).
    """

    completion_id: str | None
    model: str | None
    content: str | None
    refusal: str | None
    tool_calls: tuple[dict[str, Any], ...]
    calls: tuple[ToolCall, ...]
    finish_reason: str | None
    usage: dict[str, Any] | None
    message_extra: dict[str, Any]
    choice_extra: dict[str, Any]
    response: dict[str, Any]
    choice_index: int | None
    forced_function: str | None
    profile: str | None
    chunks: int
    origin: str
    baseline: str
    digest: str
    hosted_calls: tuple[HostedCall, ...] = ()
    citations: tuple[Citation, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The answer text (``""`` when the turn sent none; a refusal is not text)."""
        return self.content or ""

    @property
    def id(self) -> str | None:
        """The turn's id in every room's name: here ``completion_id``."""
        return self.completion_id

    def message(self) -> dict[str, Any]:
        """The assistant message to replay: ``role``, ``content`` (``None`` when no text
        was sent), every ``tool_calls`` entry as received, ``refusal`` if any."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.refusal is not None:
            message["refusal"] = self.refusal
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": entry["id"],
                    "type": "function",
                    "function": {
                        "name": entry["function"]["name"],
                        "arguments": entry["function"]["arguments"],
                    },
                }
                for entry in self.tool_calls
            ]
        return message


#: Derived from fields the digest covers, or telemetry notes: not digested.
_DERIVED = ("hosted_calls", "citations", "warnings")


def _snapshot(fields: dict[str, Any]) -> dict[str, Any]:
    snap = {k: v for k, v in fields.items() if k not in _DERIVED}
    snap["tool_calls"] = list(fields["tool_calls"])
    snap["calls"] = [[c.call_id, c.name, c.arguments, c.index] for c in fields["calls"]]
    return snap


def make_turn(**fields: Any) -> Turn:
    """Build a :class:`Turn` (every field but ``digest``) and seal it with its digest.
    Raises :class:`~callgate.UsageError` if a value is not JSON."""
    return Turn(digest=canonical_digest(_snapshot(fields)), **fields)


def turn_digest(turn: Turn) -> str:
    """Recompute the digest of ``turn``'s current content (UsageError if not JSON)."""
    fields = {f.name: getattr(turn, f.name) for f in dataclasses.fields(Turn) if f.name != "digest"}
    return canonical_digest(_snapshot(fields))


def _released(entries: tuple[dict[str, Any], ...], limits: Limits) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        call_id, function = entry.get("id"), entry["function"]
        name = function.get("name")
        where = f"tool call #{index} (id={call_id!r}, name={name!r})"
        if type(call_id) is not str or not call_id:
            raise SequenceError(f"{where} has no id: a result could not be bound to it")
        if type(name) is not str or not name:
            raise SchemaError(f"{where} has no function name")
        if call_id in seen:
            raise SequenceError(f"{where} repeats an id of the same turn")
        seen.add(call_id)
        arguments = loads_arguments(function["arguments"], where, limits=limits)
        calls.append(
            ToolCall(call_id=call_id, name=name, arguments=arguments, index=index, raw=entry)
        )
    return tuple(calls)


def release_calls(
    finish_reason: Any,
    entries: tuple[dict[str, Any], ...],
    *,
    baseline: str,
    forced_function: str | None,
    profile: Profile,
    refusal: str | None,
    limits: Limits,
) -> tuple[ToolCall, ...]:
    """The terminal gate: what ``finish_reason`` releases of ``entries`` (see the module
    docstring). ``finish_reason`` is the wire value (already read through the profile)."""
    if finish_reason is None:
        raise SequenceError("the choice ended without a finish_reason: nothing is released")
    if type(finish_reason) is not str:
        raise SchemaError("'finish_reason' must be a string")
    if refusal is not None and entries:
        raise SequenceError("a refusal beside tool calls: nothing is released")
    if finish_reason == TOOL_CALLS:
        if not entries:
            raise SequenceError("finish_reason 'tool_calls' without a tool call")
        return _released(entries, limits)
    if finish_reason == STOP:
        if not entries:
            return ()
        forced = (
            forced_function is not None
            and len(entries) == 1
            and entries[0]["function"].get("name") == forced_function
        )
        if forced or profile.allows("stop_with_calls"):
            return _released(entries, limits)
        raise SequenceError(
            f"finish_reason 'stop' beside {len(entries)} tool call(s) that the request's "
            "tool_choice did not force: nothing is released"
        )
    if finish_reason == "function_call":
        raise UnsupportedProviderState(
            "finish_reason 'function_call': the legacy functions/function_call API is not "
            "gated by callgate; use tools (nothing is released)"
        )
    if finish_reason in FINISH_REASONS[baseline]:  # length, content_filter
        raise ProviderError(
            f"the choice ended with finish_reason {finish_reason!r}: nothing is released",
            error_type="finish_reason",
            error_code=finish_reason,
        )
    raise UnsupportedProviderState(
        f"finish_reason {finish_reason!r} is unknown to contract revision {baseline}"
    )


def error_of(obj: dict[str, Any]) -> ProviderError:
    """The :class:`ProviderError` an error chunk or body reports: ``{"error": {...}}`` (or a
    string), or the ``{"object": "error", "message": ...}`` envelope some servers send."""
    error = obj.get("error")
    if type(error) is not dict:
        error = obj if error is None else {"message": error}
    message, kind, code = error.get("message"), error.get("type"), error.get("code")
    message = message if type(message) is str else None
    kind = kind if type(kind) is str else None
    code = str(code) if type(code) in (str, int) else None
    return ProviderError(
        f"the provider sent an error (type {kind}, code {code}): {message or 'no message'}",
        error_type=kind,
        error_code=code,
        provider_message=message,
    )
