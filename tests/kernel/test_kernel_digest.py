"""Canonical JSON bytes: the documented form, byte for byte."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callgate import UsageError, canonical_bytes, canonical_digest, loads_strict


def test_documented_form_sorted_compact_utf8() -> None:
    value = {"b": [1, 2.5, -0.0, 1e16, 1.5e-7, True, None], "a": 'é\n\x01"\\', "Z": 2}
    assert canonical_bytes(value) == (
        b'{"Z":2,"a":"\xc3\xa9\\n\\u0001\\"\\\\","b":[1,2.5,-0.0,1e+16,1.5e-07,true,null]}'
    )


def test_digest_is_sha256_hex_of_canonical_bytes() -> None:
    value = {"x": [1, "y"]}
    assert canonical_digest(value) == hashlib.sha256(b'{"x":[1,"y"]}').hexdigest()


def test_key_order_and_tuple_vs_list_do_not_change_the_digest() -> None:
    assert canonical_digest({"a": 1, "b": (1, 2)}) == canonical_digest({"b": [1, 2], "a": 1})


def test_keys_sort_by_code_point() -> None:
    assert canonical_bytes({"\U0001f600": 1, "\uffff": 2, "a": 3}) == (
        '{"a":3,"\uffff":2,"\U0001f600":1}'.encode()
    )


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("inf"),
        [float("-inf")],
        {1: "int key"},
        {"a": {(1,): 2}},
        {1, 2},
        b"bytes",
        "\ud800",
        {"k": object()},
    ],
    ids=[
        "nan",
        "inf",
        "nested_neg_inf",
        "int_key",
        "tuple_key",
        "set",
        "bytes",
        "lone_surrogate",
        "object",
    ],
)
def test_non_canonical_values_are_refused(value: object) -> None:
    with pytest.raises(UsageError):
        canonical_digest(value)


def test_deep_values_are_refused_without_recursion_error() -> None:
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(UsageError):
        canonical_digest(deep)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",))),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_canonical_bytes_round_trip_through_strict_json(value: object) -> None:
    encoded = canonical_bytes(value)
    assert canonical_bytes(loads_strict(encoded)) == encoded
