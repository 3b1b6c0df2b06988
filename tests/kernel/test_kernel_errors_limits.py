"""The error tree and the Limits dataclass."""

from __future__ import annotations

import dataclasses

import pytest

import callgate
from callgate import (
    DEFAULT_LIMITS,
    BindingError,
    CallgateError,
    ContinuationError,
    ContractError,
    FramingError,
    JSONError,
    LimitExceededError,
    Limits,
    ProtocolError,
    ProvenanceError,
    ProviderError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
    UsageError,
)


@pytest.mark.parametrize(
    ("child", "parent"),
    [
        (ProtocolError, CallgateError),
        (FramingError, ProtocolError),
        (JSONError, ProtocolError),
        (LimitExceededError, ProtocolError),
        (SchemaError, ProtocolError),
        (SequenceError, ProtocolError),
        (TruncatedStreamError, ProtocolError),
        (ProviderError, ProtocolError),
        (UnsupportedProviderState, ProtocolError),
        (UsageError, CallgateError),
        (UsageError, ValueError),
        (ContractError, CallgateError),
        (ProvenanceError, ContractError),
        (BindingError, CallgateError),
        (ContinuationError, CallgateError),
    ],
)
def test_error_tree(child: type[Exception], parent: type[Exception]) -> None:
    assert issubclass(child, parent)


def test_protocol_errors_are_not_value_errors() -> None:
    # A caller's `except ValueError` must not swallow a protocol failure by accident.
    assert not issubclass(ProtocolError, ValueError)


def test_errors_carry_structured_context() -> None:
    err = LimitExceededError(
        "too big",
        limit="max_event_bytes",
        bound=10,
        observed=11,
        provider="openai",
        event_index=3,
        byte_offset=99,
        wire_type="response.output_text.delta",
    )
    assert err.context() == {
        "provider": "openai",
        "event_index": 3,
        "byte_offset": 99,
        "wire_type": "response.output_text.delta",
        "limit": "max_event_bytes",
        "bound": 10,
        "observed": 11,
    }
    assert "max_event_bytes" in str(err)
    perr = ProviderError("boom", error_type="overloaded_error", provider_message="Overloaded")
    assert perr.error_type == "overloaded_error"
    assert perr.provider_message == "Overloaded"


def test_every_public_error_is_exported() -> None:
    for name in callgate._errors.__all__:
        assert getattr(callgate, name) is getattr(callgate._errors, name)


def test_limits_are_frozen_and_named_max_thing_unit() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_LIMITS.max_json_depth = 3  # type: ignore[misc]
    for field in dataclasses.fields(Limits):
        assert field.name.startswith("max_")
        assert field.name.count("_") >= 2


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10"])
def test_limits_reject_non_positive_or_non_int(bad: object) -> None:
    with pytest.raises(UsageError):
        Limits(max_json_depth=bad)  # type: ignore[arg-type]


def test_limits_replace_validates() -> None:
    assert DEFAULT_LIMITS.replace(max_json_depth=5).max_json_depth == 5
    with pytest.raises(UsageError):
        DEFAULT_LIMITS.replace(max_json_depth=0)
    with pytest.raises(UsageError):
        DEFAULT_LIMITS.replace(no_such_limit=1)
    with pytest.raises(UsageError):
        Limits(max_json_int_digits=5000)


def test_public_all_is_complete() -> None:
    for name in callgate.__all__:
        assert hasattr(callgate, name)
