"""The linear pre-scan of loads_strict against an obviously correct reference.

The old pre-checks stripped strings with a regex that restarted at every ``\\"`` of an
unterminated string (quadratic: 32 KiB took 1.8 s). The scan now works on the text with
every ``\\\\`` and ``\\"`` pair made inert (``_json._neutral``), split at its quotes. Here a
character-by-character reference reads the same facts from the same text; Hypothesis
checks they agree on random texts built mostly of quotes, backslashes and brackets.
"""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callgate import JSONError, LimitExceededError, Limits, _json, loads_strict


def reference_scan(raw: bytes) -> tuple[int, list[tuple[int, int]]]:
    """(deepest nesting outside strings, [(opening quote offset, written length)]).

    A backslash followed by a backslash or a quote is one inert pair wherever it stands
    (inside a JSON string that is the escape; outside one the text is invalid anyway);
    a string runs to its closing quote or to the end of the text.
    """
    depth = deepest = 0
    strings: list[tuple[int, int]] = []
    start: int | None = None
    i = 0
    while i < len(raw):
        c = raw[i : i + 1]
        if c == b"\\" and raw[i + 1 : i + 2] in (b"\\", b'"'):
            i += 2
            continue
        if start is not None:
            if c == b'"':
                strings.append((start, i - start - 1))
                start = None
        elif c == b'"':
            start = i
        elif c in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        elif c in (b"]", b"}"):
            depth -= 1
        i += 1
    if start is not None:
        strings.append((start, len(raw) - start - 1))
    return deepest, strings


def scan(raw: bytes) -> tuple[int, list[int]]:
    parts = _json._neutral(raw).split(b'"')
    return _json._max_depth(b"".join(parts[::2])), [len(p) for p in parts[1::2]]


TOKENS = ["[", "]", "{", "}", '"', "\\", "\\\\", '\\"', "a", ",", ":", "é", "\\u0041", "\\n"]
texts = st.lists(st.sampled_from(TOKENS), max_size=60).map("".join) | st.text(
    alphabet='[]{}"\\a:,', max_size=60
)


@settings(max_examples=1000, deadline=None)
@given(texts)
def test_prescan_agrees_with_reference_on_random_texts(text: str) -> None:
    raw = text.encode("utf-8")
    depth, strings = reference_scan(raw)
    got_depth, got_lengths = scan(raw)
    assert got_depth == max(depth, 1)  # a depth of 0 reads as 1 (bounds are >= 1)
    assert got_lengths == [length for _, length in strings]


@settings(max_examples=500, deadline=None)
@given(texts, st.integers(min_value=0, max_value=6))
def test_long_string_lookup_agrees_with_reference(text: str, bound: int) -> None:
    raw = text.encode("utf-8")
    expected = None
    for start, length in reference_scan(raw)[1]:
        if length > bound:
            try:
                decoded = json.loads(raw[start : start + length + 2])
            except ValueError:
                continue
            if len(decoded) > bound:
                expected = (start, len(decoded))
                break
    assert _json._long_strings(raw, _json._neutral(raw).split(b'"'), bound) == expected


@settings(max_examples=500, deadline=None)
@given(texts, st.integers(min_value=1, max_value=5))
def test_loads_strict_depth_verdict_matches_reference(text: str, bound: int) -> None:
    raw = text.encode("utf-8")
    limits = Limits(max_json_depth=bound)
    if reference_scan(raw)[0] > bound:
        with pytest.raises(LimitExceededError, match="nesting"):
            loads_strict(raw, limits=limits)
    else:
        with contextlib.suppress(JSONError):  # a random text has other defects
            loads_strict(raw, limits=limits)


# --- the adversarial shape of the issue, at 128 KiB --------------------------------------

KiB = 1024
N_ESCAPES = (128 * KiB - 200) // 2


def test_unterminated_string_of_escaped_quotes_128k_after_65_brackets_is_too_deep() -> None:
    doc = "[" * 65 + '"' + '\\"' * N_ESCAPES
    for data in (doc, doc.encode()):
        with pytest.raises(LimitExceededError) as info:
            loads_strict(data)
        assert info.value.limit == "max_json_depth"


def test_unterminated_string_of_escaped_quotes_128k_within_depth_is_a_json_error() -> None:
    doc = "[" * 64 + '"' + '\\"' * N_ESCAPES
    with pytest.raises(JSONError):
        loads_strict(doc.encode())


def test_terminated_string_of_escaped_quotes_128k_is_accepted() -> None:
    doc = "[" * 64 + '"' + '\\"' * N_ESCAPES + '"' + "]" * 64
    value = loads_strict(doc.encode())
    for _ in range(64):
        (value,) = value
    assert value == '"' * N_ESCAPES


def test_escaped_quotes_count_as_one_character_toward_the_string_bound() -> None:
    doc = '["' + '\\"' * 1000 + '"]'
    assert loads_strict(doc, limits=Limits(max_json_string_chars=1000)) == ['"' * 1000]
    with pytest.raises(LimitExceededError) as info:
        loads_strict(doc, limits=Limits(max_json_string_chars=999))
    assert (info.value.observed, info.value.byte_offset) == (1000, 1)


def test_brackets_inside_escaped_quote_strings_are_not_depth() -> None:
    doc = '["' + '\\"[{' * 5000 + '"]'
    assert loads_strict(doc) == ['"[{' * 5000]


def test_escaped_backslash_ends_the_string_before_the_quote() -> None:
    # `\\"` is an escaped backslash and then the closing quote: the brackets after it are
    # real nesting.
    assert loads_strict('["\\\\",' + "[" * 63 + "]" * 63 + "]") is not None
    with pytest.raises(LimitExceededError):
        loads_strict('["\\\\",' + "[" * 64 + "]" * 64 + "]")


def test_deep_legal_nesting_repeated_is_accepted() -> None:
    unit = "[" * 63 + "]" * 63
    assert len(loads_strict("[" + ",".join([unit] * 500) + "]")) == 500


# --- lone surrogates, found after decoding -------------------------------------------------

ESCAPES = ["\\ud800", "\\uDBFF", "\\udc00", "\\uDFFF", "\\ud83d", "\\ude00", "\\\\", '\\"']
ESCAPES += ["a", "\\u0041", "\\\\ud800", "é"]


def reference_lone_surrogate(raw: bytes) -> tuple[int, str] | None:
    """Offset and kind of the first unpaired surrogate escape, read escape by escape."""
    pending: int | None = None
    i = 0
    while i < len(raw):
        if raw[i : i + 1] != b"\\":
            i += 1
            continue
        unit = int(raw[i + 2 : i + 6], 16) if raw[i + 1 : i + 2] == b"u" else -1
        if pending is not None:
            if i == pending + 6 and 0xDC00 <= unit <= 0xDFFF:
                pending = None
                i += 6
                continue
            return pending, "high"
        if 0xD800 <= unit <= 0xDBFF:
            pending = i
        elif 0xDC00 <= unit <= 0xDFFF:
            return i, "low"
        i += 6 if unit >= 0 else 2
    return None if pending is None else (pending, "high")


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(ESCAPES), max_size=12))
def test_lone_surrogate_verdict_and_offset_match_reference(tokens: list[str]) -> None:
    doc = '{"k":["' + "".join(tokens) + '"]}'
    raw = doc.encode()
    expected = reference_lone_surrogate(raw)
    if expected is None:
        assert loads_strict(raw) == json.loads(raw)
        return
    with pytest.raises(JSONError) as info:
        loads_strict(raw)
    assert info.value.byte_offset == expected[0]
    assert info.value.message == f"lone {expected[1]} surrogate escape"


def test_lone_surrogate_offset_is_in_characters_for_str_input() -> None:
    with pytest.raises(JSONError) as info:
        loads_strict('["éé\\ud800"]')
    assert info.value.byte_offset == 4
    with pytest.raises(JSONError) as info:
        loads_strict('["éé\\ud800"]'.encode())
    assert info.value.byte_offset == 6


def test_many_valid_pairs_then_a_lone_surrogate_is_refused() -> None:
    doc = '["' + "\\ud83d\\ude00" * 10_000 + '\\udc00"]'
    with pytest.raises(JSONError, match="lone low"):
        loads_strict(doc)
    assert loads_strict(doc.replace("\\udc00", "")) == ["\U0001f600" * 10_000]


def test_string_past_default_bound_is_found_through_the_block_test() -> None:
    bound = Limits().max_json_string_chars
    with pytest.raises(LimitExceededError) as info:
        loads_strict(b'[1,"' + b"a" * (bound + 1) + b'"]')
    assert (info.value.observed, info.value.byte_offset) == (bound + 1, 3)
    assert len(loads_strict(b'["' + b"a" * bound + b'"]')[0]) == bound


def test_unterminated_long_string_at_default_bound_is_a_json_error() -> None:
    bound = Limits().max_json_string_chars
    with pytest.raises(JSONError):
        loads_strict(b'["' + b'\\"' * (bound // 2 + 8))
