"""The callgate error hierarchy.

Every error callgate raises on purpose is a :class:`CallgateError`. Hostile or broken
input never escapes as a bare ``KeyError``, ``ValueError`` or ``RecursionError``::

    CallgateError
    ├── ProtocolError                 the wire broke a protocol rule (nothing is released)
    │   ├── FramingError              SSE framing / byte-level encoding is broken
    │   ├── JSONError                 a JSON document is not strict JSON
    │   ├── LimitExceededError        a declared bound in ``Limits`` was hit
    │   ├── SchemaError               a known wire object lacks a required field or has a bad type
    │   ├── SequenceError             a legal event arrived in an illegal order or state
    │   ├── TruncatedStreamError      the stream ended before its terminal
    │   ├── ProviderError             the provider reported an error or a failed terminal
    │   └── UnsupportedProviderState  a known-unknown: semantics callgate does not implement
    ├── UsageError (also ValueError)  the caller misused an API
    ├── ContractError                 a baseline, fixture or contract file is invalid
    │   └── ProvenanceError           a source URL failed the provenance allowlist
    ├── BindingError                  tool results do not match the calls exactly
    └── ContinuationError             a continuation builder's precondition failed

Errors carry structured context where it is known: ``provider``, ``event_index``,
``byte_offset``, ``wire_type``; :class:`LimitExceededError` adds ``limit``, ``bound`` and
``observed``; :class:`ProviderError` adds ``error_type``, ``error_code`` and
``provider_message``. A parser that fails attaches the partial turn it had assembled as
``turn`` (or ``None``) so a caller can inspect what was seen without it being released.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

# The public error tree; STRAY_ERRORS and at_boundary are the rooms' internal seam.
__all__ = [
    "BindingError",
    "CallgateError",
    "ContinuationError",
    "ContractError",
    "FramingError",
    "JSONError",
    "LimitExceededError",
    "ProtocolError",
    "ProvenanceError",
    "ProviderError",
    "SchemaError",
    "SequenceError",
    "TruncatedStreamError",
    "UnsupportedProviderState",
    "UsageError",
]


class CallgateError(Exception):
    """Root of every error callgate raises deliberately.

    ``message`` is the human-readable reason; the keyword context is kept as attributes and
    appended to ``str(err)`` so logs show where the failure happened.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        event_index: int | None = None,
        byte_offset: int | None = None,
        wire_type: str | None = None,
        turn: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.event_index = event_index
        self.byte_offset = byte_offset
        self.wire_type = wire_type
        self.turn = turn

    def context(self) -> dict[str, Any]:
        """The structured context that is known, as a plain dict (``None`` values omitted)."""
        ctx = {
            "provider": self.provider,
            "event_index": self.event_index,
            "byte_offset": self.byte_offset,
            "wire_type": self.wire_type,
        }
        return {k: v for k, v in ctx.items() if v is not None}

    def __str__(self) -> str:
        ctx = self.context()
        if not ctx:
            return self.message
        details = ", ".join(f"{k}={v!r}" for k, v in ctx.items())
        return f"{self.message} ({details})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


class ProtocolError(CallgateError):
    """The input broke a rule of its wire protocol; nothing from it may be executed."""


class FramingError(ProtocolError):
    """SSE framing or byte-level encoding (e.g. invalid UTF-8) is broken."""


class JSONError(ProtocolError):
    """A JSON document is not strict JSON (syntax, duplicate key, non-finite number, ...)."""


class LimitExceededError(ProtocolError):
    """A bound declared in :class:`callgate.Limits` was exceeded.

    ``limit`` is the field name (``max_json_depth``), ``bound`` its configured value and
    ``observed`` the value that crossed it (possibly only a lower bound of the true size,
    since checks stop as soon as the bound is crossed).
    """

    def __init__(
        self,
        message: str,
        *,
        limit: str,
        bound: int,
        observed: int | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message, **context)
        self.limit = limit
        self.bound = bound
        self.observed = observed

    def context(self) -> dict[str, Any]:
        ctx = super().context()
        ctx["limit"] = self.limit
        ctx["bound"] = self.bound
        if self.observed is not None:
            ctx["observed"] = self.observed
        return ctx


class SchemaError(ProtocolError):
    """A known wire object lacks a required field, or a field has the wrong type."""


class SequenceError(ProtocolError):
    """An event is known but illegal in the current state (order, identity, duplication)."""


class TruncatedStreamError(ProtocolError):
    """The stream ended (EOF, ``[DONE]``, mid-event) before its terminal event."""


class ProviderError(ProtocolError):
    """The provider reported an error in-stream, or the turn ended in a failed terminal.

    ``error_type`` / ``error_code`` / ``provider_message`` hold what the provider said.
    """

    def __init__(
        self,
        message: str,
        *,
        error_type: str | None = None,
        error_code: str | None = None,
        provider_message: str | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message, **context)
        self.error_type = error_type
        self.error_code = error_code
        self.provider_message = provider_message

    def context(self) -> dict[str, Any]:
        ctx = super().context()
        for key in ("error_type", "error_code"):
            value = getattr(self, key)
            if value is not None:
                ctx[key] = value
        return ctx


class UnsupportedProviderState(ProtocolError):  # noqa: N818 - name fixed by the design
    """The provider sent something callgate knows of but does not implement, or does not
    know at all, and that could change what executes. It fails closed."""


class UsageError(CallgateError, ValueError):
    """The caller used an API wrongly (bad argument type, finished parser fed again, ...)."""


class ContractError(CallgateError):
    """A baseline, fixture or contract metadata file is invalid."""


class ProvenanceError(ContractError):
    """A source URL is not on the provider's allowlist. ``reason`` says which rule failed."""

    def __init__(self, message: str, *, url: str | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.reason = reason


class BindingError(CallgateError):
    """Tool results do not match the turn's calls exactly (missing, extra, duplicate, unknown)."""


class ContinuationError(CallgateError):
    """A continuation builder's precondition failed (mutated turn, undeclared tool, ...)."""


# What a handler's own bug or an unforeseen input shape can raise. A boundary catches these
# together with CallgateError and converts them once, with :func:`at_boundary`.
STRAY_ERRORS: Final = (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError)


def at_boundary(
    exc: BaseException,
    *,
    provider: str,
    event_index: int | None = None,
    wire_type: str | None = None,
    byte_offset: int | None = None,
    partial_turn: Callable[[], Any] | None = None,
) -> CallgateError:
    """The error a parser boundary raises for ``exc``, with the context filled in.

    A :class:`CallgateError` is kept (only context it lacks is added); a stray
    ``KeyError``/``TypeError``/``ValueError``/... becomes a :class:`SchemaError` naming it,
    with the original as ``__cause__``. ``partial_turn`` is called only when the error has
    no ``turn`` yet. Any other exception is a bug and is not converted (``TypeError``).
    Every room's parser funnels its failures through here, so the post-failure rule and
    the context are the same everywhere.
    """
    if isinstance(exc, CallgateError):
        err = exc
    elif isinstance(exc, STRAY_ERRORS):
        err = SchemaError(f"malformed input ({type(exc).__name__}: {str(exc)[:200]})")
        err.__cause__ = exc
    else:
        raise TypeError(f"at_boundary() cannot convert {type(exc).__name__}") from exc
    if err.provider is None:
        err.provider = provider
    if err.event_index is None and event_index is not None and event_index >= 0:
        err.event_index = event_index
    if err.wire_type is None:
        err.wire_type = wire_type
    if err.byte_offset is None:
        err.byte_offset = byte_offset
    if err.turn is None and partial_turn is not None:
        err.turn = partial_turn()
    return err
