"""The loop's vocabulary: tool declarations, results, refusals and the send seam."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._errors import CallgateError, UsageError
from ..ledger import EffectRecord, Tool

__all__ = [
    "LoopError",
    "LoopResult",
    "ProviderHTTPError",
    "Send",
    "ToolSpec",
    "TurnRefused",
]

# The send seam: (request body, headers) -> the stream as SSE byte chunks or decoded event
# objects (mappings, or SDK events with ``to_dict(mode="json")``). Raise to fail the send.
Send = Callable[[dict[str, Any], dict[str, str]], Iterable[Any]]


class LoopError(CallgateError):
    """The loop cannot go on (bad configuration, a run in an impossible state)."""


class TurnRefused(CallgateError):  # noqa: N818 - a verdict on a turn, like the parsers'
    """The turn ended in a state that releases nothing (e.g. Anthropic ``max_tokens`` with
    calls left for recovery, ``refusal``, ``pause_turn``). Nothing was executed."""


class ProviderHTTPError(CallgateError):
    """The provider answered the request with an HTTP error before any event.

    ``status`` is the HTTP status, ``body`` what it said (text, cut to 2,000 chars),
    ``retryable`` whether the loop's own retry budget may spend a retry on it,
    ``retry_after`` the delay in seconds its ``retry-after-ms`` / ``Retry-After`` header
    asked for (``None`` without one): the loop waits at least that long before a retry."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        body: str,
        retryable: bool,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.retryable = retryable
        self.retry_after = retry_after


MAX_RETRY_AFTER = 60.0  # seconds of a Retry-After the loop waits; a longer one is cut to it


def retry_after_of(headers: Any, body: Any = None) -> float | None:
    """The delay a response's ``retry-after-ms`` or ``Retry-After`` (seconds) header asks
    for, else the ``retryDelay`` of a Google ``RetryInfo`` in its error ``body`` (text), at
    most :data:`MAX_RETRY_AFTER`; ``None`` without one (or with an HTTP date)."""
    found = {} if headers is None else headers
    pairs = [(found.get("retry-after-ms"), 1000.0), (found.get("retry-after"), 1.0)]
    pairs.append((_retry_info(body), 1.0))
    for raw, scale in pairs:
        if isinstance(raw, str):
            try:
                delay = float(raw) / scale
            except ValueError:
                continue
            if delay >= 0 and delay == delay:  # not NaN
                return min(delay, MAX_RETRY_AFTER)
    return None


def _retry_info(body: Any) -> str | None:
    """``"30"`` of a ``{"error": {"details": [{"retryDelay": "30s", ...}]}}`` body."""
    if not isinstance(body, str) or "retryDelay" not in body:
        return None
    try:
        details = json.loads(body)["error"]["details"]
        delays = [d["retryDelay"] for d in details if isinstance(d, dict) and "retryDelay" in d]
    except (ValueError, KeyError, TypeError):
        return None
    delay = delays[0] if delays else None
    return delay[:-1] if isinstance(delay, str) and delay.endswith("s") else None


class SocketDroppedError(ConnectionError):
    """The loop's WebSocket closed, timed out or could not be opened: a connection-level
    failure, reconciled like an HTTP transport error (nothing of a cut response runs)."""


@dataclasses.dataclass(frozen=True, slots=True, init=False)
class ToolSpec:
    """A ledger :class:`~callgate.ledger.Tool` with what the model is told about it.

    ``parameters`` is the JSON Schema of the arguments (an object schema)."""

    tool: Tool
    description: str
    parameters: Mapping[str, Any]

    def __init__(
        self, tool: Tool, *, description: str = "", parameters: Mapping[str, Any] | None = None
    ) -> None:
        if not isinstance(tool, Tool):
            raise UsageError("ToolSpec takes a callgate.ledger.Tool")
        if type(description) is not str:
            raise UsageError("ToolSpec.description must be a str")
        schema = dict(parameters) if parameters is not None else {"type": "object"}
        object.__setattr__(self, "tool", tool)
        object.__setattr__(self, "description", description)
        object.__setattr__(self, "parameters", schema)

    @property
    def name(self) -> str:
        return self.tool.name


def tool_specs(tools: Iterable[Any]) -> list[ToolSpec]:
    """The loop's ``tools=``, checked: a bare ledger ``Tool`` says how to wrap it."""
    specs = list(tools)
    for i, spec in enumerate(specs):
        if not isinstance(spec, ToolSpec):
            raise UsageError(
                f"tools must be ToolSpec values; tools[{i}] is a {type(spec).__name__}: "
                "wrap each ledger Tool as ToolSpec(tool, description=..., parameters=...) "
                "(from callgate.loop; parameters is the JSON Schema of its arguments)"
            )
    return specs


def seconds(name: str, value: Any) -> float:
    """A positive, finite number of seconds (a lease keeper renews every third of it)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"{name} must be a number of seconds")
    if not 0 < value < float("inf"):
        raise UsageError(f"{name} must be > 0 and finite")
    return float(value)


@dataclasses.dataclass(frozen=True, slots=True)
class LoopResult:
    """Where a run stands after :meth:`HostLoop.run` / :meth:`HostLoop.resume`.

    ``status``:

    - ``"final"``: the model gave its answer (``text``).
    - ``"waiting"``: the run cannot go on yet. ``pending`` lists the effects that wait
      (for an approval, a verifier, an operator, or another worker's claim) and
      ``detail`` says, for each, what it waits for and, where a lease or a settle time
      decides, until when (ISO-8601 UTC on the database clock); with ``pending`` empty,
      another worker is advancing the run and ``detail`` names it and its lease expiry.
      ``resume`` after the decision or the time.
    - ``"held"``: a model request is in doubt and declared provider-side effects (R5):
      an operator must decide; ``detail`` says which request.
    - ``"refused"``: the turn released nothing; ``error`` is the typed error (``None``
      when reporting a refusal recorded before a restart; ``detail`` names it).
    - ``"lease_lost"``: another worker took the run while this one advanced it (its
      lease ran out unrenewed, e.g. the database was unreachable for longer than
      ``lease_seconds``); ``error`` is the :class:`~callgate.ledger.LeaseLostError`,
      ``detail`` names the run, the epoch held and the epoch found. Nothing was written
      after the loss; the new holder's ``resume`` completes the run.

    ``turns`` is the number of model turns recorded for the run; ``effects`` its effect
    records, in turn and call order.
    """

    status: str
    text: str
    turns: int
    effects: tuple[EffectRecord, ...]
    pending: tuple[EffectRecord, ...] = ()
    error: CallgateError | None = None
    detail: str = ""
