"""The strict-JSON corpus: each case is named for what it proves."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callgate import (
    CallgateError,
    JSONError,
    LimitExceededError,
    Limits,
    UsageError,
    loads_strict,
)

ACCEPT = [
    ("empty_object", "{}", {}),
    ("empty_array", "[]", []),
    ("nested_containers", '{"a":[1,{"b":null}]}', {"a": [1, {"b": None}]}),
    ("top_level_string", '"x"', "x"),
    ("top_level_int", "42", 42),
    ("top_level_negative_zero_float", "-0.0", -0.0),
    ("top_level_true", "true", True),
    ("top_level_null", "null", None),
    ("surrounding_whitespace_allowed", ' \t\r\n{"a":1}\n ', {"a": 1}),
    ("exponent_float", "1.5e3", 1500.0),
    ("large_but_finite_float", "1e308", 1e308),
    ("tiny_float_underflows_to_zero_is_finite", "1e-400", 0.0),
    ("valid_surrogate_pair_escape", '"\\ud83d\\ude00"', "\U0001f600"),
    ("escaped_backslash_before_u_is_not_a_surrogate", '"\\\\ud800"', "\\ud800"),
    ("non_ascii_utf8_text", '{"é":"日本"}', {"é": "日本"}),
    ("same_key_in_sibling_objects", '[{"a":1},{"a":2}]', [{"a": 1}, {"a": 2}]),
    ("keys_differing_by_case_are_distinct", '{"a":1,"A":2}', {"a": 1, "A": 2}),
    ("int_at_digit_limit", "9" * 1000, int("9" * 1000)),
    ("depth_exactly_at_limit", "[" * 64 + "]" * 64, None),
    ("brackets_inside_strings_do_not_count_as_depth", json.dumps("[" * 500), "[" * 500),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in ACCEPT], ids=[c[0] for c in ACCEPT])
def test_accepts(text: str, expected: object) -> None:
    result = loads_strict(text)
    if expected is not None:
        assert result == expected
        assert type(result) is type(expected)
    assert loads_strict(text.encode("utf-8")) == result


REJECT: list[tuple[str, str | bytes, type[CallgateError]]] = [
    ("duplicate_key_top_level", '{"a":1,"a":2}', JSONError),
    ("duplicate_key_same_value", '{"a":1,"a":1}', JSONError),
    ("duplicate_key_nested_deep", '{"x":[{"y":{"k":1,"k":2}}]}', JSONError),
    ("duplicate_key_via_escape_spelling", '{"a":1,"\\u0061":2}', JSONError),
    ("nan_literal", "NaN", JSONError),
    ("infinity_literal", "[Infinity]", JSONError),
    ("negative_infinity_literal", '{"a":-Infinity}', JSONError),
    ("float_overflows_to_infinity", "1e400", JSONError),
    ("negative_float_overflows", "[-1.7976931348623159e309]", JSONError),
    ("lone_high_surrogate_escape", '"\\ud800"', JSONError),
    ("lone_low_surrogate_escape", '"\\udc00"', JSONError),
    ("high_surrogate_followed_by_non_low", '"\\ud800\\u0041"', JSONError),
    ("reversed_surrogate_pair", '"\\ude00\\ud83d"', JSONError),
    ("lone_surrogate_in_key", '{"\\udbff":1}', JSONError),
    ("raw_lone_surrogate_in_str_input", '"\ud800"', JSONError),
    ("utf8_bom_bytes", b'\xef\xbb\xbf{"a":1}', JSONError),
    ("bom_in_str_input", '\ufeff{"a":1}', JSONError),
    ("invalid_utf8_byte", b'{"a":"\xff"}', JSONError),
    ("overlong_utf8_slash", b'"\xc0\xaf"', JSONError),
    ("utf8_encoded_surrogate", b'"\xed\xa0\x80"', JSONError),
    ("truncated_utf8_sequence", b'"\xe6\x97"', JSONError),
    ("trailing_data", '{"a":1} {"b":2}', JSONError),
    ("trailing_garbage_char", "[1]x", JSONError),
    ("empty_input", "", JSONError),
    ("whitespace_only", " \n\t ", JSONError),
    ("empty_bytes", b"", JSONError),
    ("truncated_object", '{"a":', JSONError),
    ("truncated_string", '{"a":"unterminated', JSONError),
    ("trailing_comma_object", '{"a":1,}', JSONError),
    ("trailing_comma_array", "[1,2,]", JSONError),
    ("single_quotes", "{'a':1}", JSONError),
    ("unquoted_key", "{a:1}", JSONError),
    ("raw_control_char_in_string", '"a\x01b"', JSONError),
    ("leading_zero_number", "012", JSONError),
    ("plus_sign_number", "+1", JSONError),
    ("hex_number", "0x10", JSONError),
    ("comment", '{"a":1 /* c */}', JSONError),
    ("depth_one_past_limit", "[" * 65 + "]" * 65, LimitExceededError),
    ("array_bomb_200000_deep", "[" * 200_000, LimitExceededError),
    ("object_bomb_200000_deep", '{"a":' * 200_000, LimitExceededError),
    ("int_with_too_many_digits", "1" * 1001, LimitExceededError),
    ("negative_int_with_too_many_digits", "-" + "1" * 1001, LimitExceededError),
    ("int_past_python_conversion_limit", "7" * 5000, LimitExceededError),
    ("float_literal_absurdly_long", "0." + "1" * 5000, LimitExceededError),
]


@pytest.mark.parametrize(("data", "error"), [c[1:] for c in REJECT], ids=[c[0] for c in REJECT])
def test_rejects(data: str | bytes, error: type[CallgateError]) -> None:
    with pytest.raises(error):
        loads_strict(data)


def test_document_over_size_limit_is_a_limit_error_for_bytes_and_str() -> None:
    limits = Limits(max_json_bytes=10)
    for data in ('"0123456789"', b'"0123456789"', '"ééééé"'):
        with pytest.raises(LimitExceededError) as info:
            loads_strict(data, limits=limits)
        assert info.value.limit == "max_json_bytes"
        assert info.value.bound == 10


def test_string_over_length_limit_counts_decoded_characters() -> None:
    limits = Limits(max_json_string_chars=4)
    # Six escapes that decode to four characters are within the bound ...
    assert loads_strict('["\\u0041\\u0042CD"]', limits=limits) == ["ABCD"]
    # ... five decoded characters are not, wherever the string sits.
    with pytest.raises(LimitExceededError) as info:
        loads_strict('{"k":["ABCDE"]}', limits=limits)
    assert info.value.limit == "max_json_string_chars"
    assert info.value.observed == 5


def test_depth_limit_is_configurable_and_reports_observed_depth() -> None:
    with pytest.raises(LimitExceededError) as info:
        loads_strict('{"a":{"b":[1]}}', limits=Limits(max_json_depth=2))
    assert info.value.limit == "max_json_depth"
    assert info.value.observed == 3
    assert loads_strict('{"a":{"b":[1]}}', limits=Limits(max_json_depth=3)) == {"a": {"b": [1]}}


def test_error_offsets_are_byte_offsets_for_bytes_input() -> None:
    with pytest.raises(JSONError) as info:
        loads_strict('{"é":1,}'.encode())
    assert info.value.byte_offset == len('{"é":1,'.encode())


def test_wrong_input_type_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        loads_strict(123)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bytes or str"):
        loads_strict(None)  # type: ignore[arg-type]


def test_bytes_like_inputs_are_accepted() -> None:
    assert loads_strict(bytearray(b"[1]")) == [1]
    assert loads_strict(memoryview(b'{"a":true}')) == {"a": True}


def test_returns_plain_builtin_types_only() -> None:
    value = loads_strict('{"a":[1,2.5,"s",true,null,{}]}')
    assert type(value) is dict
    assert [type(v) for v in value["a"]] == [int, float, str, bool, type(None), dict]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_agrees_with_json_loads_on_valid_documents(value: object) -> None:
    text = json.dumps(value, ensure_ascii=False)
    has_lone_surrogate = any(0xD800 <= ord(c) <= 0xDFFF for c in text)
    if has_lone_surrogate:
        # text() may generate lone surrogates: json.loads passes them, strict JSON must not.
        with pytest.raises(JSONError):
            loads_strict(text)
        return
    assert loads_strict(text) == json.loads(text)
    assert loads_strict(text.encode("utf-8")) == json.loads(text)
    escaped = json.dumps(value, ensure_ascii=True)
    assert loads_strict(escaped) == json.loads(escaped)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_callgate_errors(data: bytes) -> None:
    with contextlib.suppress(CallgateError):
        loads_strict(data, limits=Limits(max_json_depth=8, max_json_string_chars=50))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='[]{}",:\\u0123456789dDabefnrtlsNIy -.+eE\ud800', max_size=60))
def test_arbitrary_json_like_text_raises_only_callgate_errors(text: str) -> None:
    with contextlib.suppress(CallgateError):
        loads_strict(text, limits=Limits(max_json_depth=4, max_json_int_digits=5))
