"""loads_strict's per-call prelude: decoders cached per Limits object, hooks that cannot fire
skipped — with the verdicts unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from callgate import LimitExceededError, Limits, loads_strict
from callgate import _json as strict_json


def test_a_warm_call_does_not_hash_its_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    # Hashing the 13-field Limits on every call was a measurable share of a small event.
    limits = Limits(max_json_depth=33)
    loads_strict(b'{"a": 1}', limits=limits)
    hashes = []
    original = Limits.__hash__

    def counting(self: Limits) -> int:
        hashes.append(1)
        return original(self)

    monkeypatch.setattr(Limits, "__hash__", counting)
    for _ in range(3):
        assert loads_strict(b'{"a": [1, 2.5, "x"]}', limits=limits) == {"a": [1, 2.5, "x"]}
    assert hashes == []


def test_equal_limits_objects_share_the_decoders(monkeypatch: pytest.MonkeyPatch) -> None:
    # Empty caches: with 64 entries left by earlier tests of the same worker, the second
    # call would clear them (the bound) and rebuild, which is right but not what this checks.
    monkeypatch.setattr(strict_json, "_BY_ID", {})
    monkeypatch.setattr(strict_json, "_BY_VALUE", {})
    first, second = Limits(max_json_depth=34), Limits(max_json_depth=34)
    loads_strict(b"[1]", limits=first)
    built = []
    make = strict_json._make_decoder
    monkeypatch.setattr(
        strict_json, "_make_decoder", lambda *a, **k: built.append(1) or make(*a, **k)
    )
    assert loads_strict(b"[1]", limits=second) == [1]
    assert built == []


def test_a_limits_object_never_uses_the_decoder_of_another_value() -> None:
    # Many short-lived Limits (ids may be reused after the cache is cleared): each call
    # must apply its own digit bound.
    for digits in [*range(1, 80), *range(1, 10)]:
        limits = Limits(max_json_int_digits=digits)
        assert loads_strict(b"[" + b"9" * digits + b"]", limits=limits) == [int("9" * digits)]
        with pytest.raises(LimitExceededError):
            loads_strict(b"[" + b"9" * (digits + 1) + b"]", limits=limits)


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("12345", True),  # the whole document is the literal: no hook needed, none crossed
        ("-12345", True),
        (" 12345", True),
        ("123456", False),
        ("-123456", False),
        ("[12345]", True),
        ("[123456]", False),
        ("1234.5", True),  # a float: its own bound (max_json_int_digits + 32 characters)
    ],
)
def test_integer_digit_bound_at_the_document_length_edge(text: str, ok: bool) -> None:
    limits = Limits(max_json_int_digits=5)
    for data in (text, text.encode()):
        if ok:
            assert loads_strict(data, limits=limits) == json.loads(text)
        else:
            with pytest.raises(LimitExceededError) as err:
                loads_strict(data, limits=limits)
            assert err.value.limit == "max_json_int_digits"


_INTS = st.integers(min_value=-(10**40), max_value=10**40)
_VALUES: Any = st.recursive(
    _INTS | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


def _longest_int(value: Any) -> int:
    if type(value) is int:
        return len(str(abs(value)))
    if type(value) is list:
        return max(map(_longest_int, value), default=0)
    if type(value) is dict:
        return max(map(_longest_int, value.values()), default=0)
    return 0


@given(_VALUES, st.integers(min_value=1, max_value=45))
def test_integer_verdict_matches_the_digit_count_whatever_the_document_size(
    value: Any, bound: int
) -> None:
    text = json.dumps(value)
    limits = Limits(max_json_int_digits=bound)
    if _longest_int(value) > bound:
        with pytest.raises(LimitExceededError):
            loads_strict(text, limits=limits)
    else:
        assert loads_strict(text, limits=limits) == value
