"""Small validators shared by the stream parser and the body parser."""

from __future__ import annotations

from typing import Any

from .._errors import (
    CallgateError,
    SchemaError,
    SequenceError,
    UnsupportedProviderState,
    UsageError,
)
from .._limits import Limits
from ..contracts import REVISIONS
from ._events import INT32_MAX, INT32_MIN

__all__ = ["PROVIDER", "check_lifecycle", "check_limits_and_revision", "index_error"]

PROVIDER = "google"


def check_limits_and_revision(limits: Any, baseline: Any) -> None:
    """Raise :class:`UsageError` unless ``limits`` is a Limits and ``baseline`` a revision."""
    if not isinstance(limits, Limits):
        raise UsageError(f"limits must be a callgate.Limits, got {type(limits).__name__}")
    if type(baseline) is not str or baseline not in REVISIONS:
        raise UsageError(f"baseline must be one of {REVISIONS}, got {baseline!r}")


def index_error(index: Any) -> CallgateError:
    if type(index) is not int:
        return SchemaError("step event 'index' must be an integer")
    if not INT32_MIN <= index <= INT32_MAX:
        return SchemaError(f"step event index {index} is outside int32")
    return SequenceError(f"no open step at index {index}")


def check_lifecycle(obj: dict[str, Any]) -> dict[str, Any]:
    interaction = obj.get("interaction")
    if type(interaction) is not dict:
        raise SchemaError("lifecycle event needs an 'interaction' object")
    interaction_id, status = interaction.get("id"), interaction.get("status")
    # The SSE interaction types 'id' as a required str; it is "" when the request said
    # store: false (the stream's turn then has interaction_id None).
    if type(interaction_id) is not str:
        raise SchemaError("lifecycle interaction needs a string 'id' ('' when unstored)")
    if type(status) is not str:
        raise SchemaError("interaction needs a string 'status'")
    steps = interaction.get("steps")
    if steps is not None:
        if type(steps) is not list:
            raise SchemaError("interaction 'steps' must be a list")
        if steps:
            # The stream's deltas are the source of truth; a second, embedded copy would
            # need reconciling, which callgate does not do: fail closed.
            raise UnsupportedProviderState("a lifecycle event embeds steps in a stream")
    return interaction
