"""Tests for callgate.sse.SSEDecoder: WHATWG event stream interpretation, made strict."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callgate import (
    DEFAULT_LIMITS,
    CallgateError,
    FramingError,
    LimitExceededError,
    Limits,
    TruncatedStreamError,
    UsageError,
)
from callgate.sse import ServerSentEvent, SSEDecoder

Outcome = list[ServerSentEvent] | type[CallgateError]
E = ServerSentEvent

# -- helpers -----------------------------------------------------------------------------


def run(chunks: list[bytes], limits: Limits = DEFAULT_LIMITS) -> Outcome:
    """Feed ``chunks`` then finish: the events, or the type of the error raised."""
    dec = SSEDecoder(limits=limits)
    events: list[ServerSentEvent] = []
    try:
        for chunk in chunks:
            events += dec.feed(chunk)
        events += dec.finish()
    except CallgateError as exc:
        return type(exc)
    return events


def feed_all(dec: SSEDecoder, chunks: Iterable[bytes]) -> None:
    for chunk in chunks:
        dec.feed(chunk)


def split_at(stream: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(cuts), len(stream)]
    return [stream[a:b] for a, b in pairwise(bounds)]


def assert_decodes(stream: bytes, expected: Outcome, limits: Limits = DEFAULT_LIMITS) -> None:
    """Fed whole, one byte at a time, and split at random points: the same outcome."""
    assert run([stream], limits) == expected
    assert run([stream[i : i + 1] for i in range(len(stream))], limits) == expected

    @settings(max_examples=25, deadline=None)
    @given(st.lists(st.integers(0, len(stream)), max_size=6))
    def random_splits(cuts: list[int]) -> None:
        assert run(split_at(stream, cuts), limits) == expected

    random_splits()


# -- the WHATWG spec's examples ----------------------------------------------------------


def test_spec_yhoo_example_joins_data_lines_with_lf() -> None:
    assert_decodes(b"data: YHOO\ndata: +2\ndata: 10\n\n", [E(data="YHOO\n+2\n10")])


SPEC_ID_EXAMPLE = (
    b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n"
)


def test_spec_id_example_unterminated_last_block_is_truncated() -> None:
    # WHATWG silently discards the third block; callgate reports the truncation.
    assert_decodes(SPEC_ID_EXAMPLE, TruncatedStreamError)


def test_spec_id_example_bare_id_resets_to_empty_and_only_one_space_is_stripped() -> None:
    assert_decodes(
        SPEC_ID_EXAMPLE + b"\n",
        [
            E(data="first event", id="1"),
            E(data="second event", id=""),
            E(data=" third event", id=""),
        ],
    )


def test_spec_bare_data_fields_yield_empty_string_and_single_lf() -> None:
    stream = b"data\n\ndata\ndata\n\ndata:\n"
    assert_decodes(stream, TruncatedStreamError)  # the last block has no blank line
    assert_decodes(stream + b"\n", [E(data=""), E(data="\n"), E(data="")])


def test_spec_space_after_colon_is_optional() -> None:
    assert_decodes(b"data:test\n\ndata: test\n\n", [E(data="test"), E(data="test")])


# -- line endings ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "stream",
    [
        b"data: a\ndata: b\n\n",
        b"data: a\rdata: b\r\r",
        b"data: a\r\ndata: b\r\n\r\n",
        b"data: a\rdata: b\n\r\n",
        b"data: a\r\ndata: b\r\n\n",
        b"data: a\ndata: b\r\r\n",
    ],
)
def test_cr_lf_and_crlf_mix_freely(stream: bytes) -> None:
    assert_decodes(stream, [E(data="a\nb")])


def test_crlf_split_across_chunks_is_one_line_ending() -> None:
    # Were the LF taken as a second line ending, the blank line would dispatch "a" alone.
    assert run([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]) == [E(data="a\nb")]
    assert run([b"data: a\r", b"", b"\n", b"\n"]) == [E(data="a")]


def test_lone_cr_at_chunk_end_then_other_text() -> None:
    assert run([b"data: a\r", b"data: b\r", b"\r"]) == [E(data="a\nb")]


def test_blank_lines_alone_dispatch_nothing() -> None:
    assert_decodes(b"\n\r\n\r\n\n", [])


# -- BOM ---------------------------------------------------------------------------------


def test_leading_bom_is_stripped() -> None:
    assert_decodes(b"\xef\xbb\xbfdata: x\n\n", [E(data="x")])


def test_bom_split_across_chunks_is_stripped() -> None:
    assert run([b"\xef", b"\xbb", b"\xbfdata: x\n\n"]) == [E(data="x")]
    assert run([b"\xef\xbb", b"\xbf", b"data: x\n\n"]) == [E(data="x")]


def test_second_bom_is_data_not_stripped() -> None:
    # The second BOM becomes part of the field name, so the field is unknown.
    assert_decodes(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n", [])
    assert_decodes(b"\xef\xbb\xbfdata: \xef\xbb\xbfx\n\n", [E(data="\ufeffx")])
    assert_decodes(b"data: x\n\n\xef\xbb\xbfdata: y\n\n", [E(data="x")])


def test_partial_bom_at_eof_is_invalid_utf8() -> None:
    assert_decodes(b"\xef\xbb", FramingError)
    assert_decodes(b"\xef\xbbdata: x\n\n", FramingError)


# -- fields ------------------------------------------------------------------------------


def test_id_persists_across_events_and_is_none_before_any_id() -> None:
    assert_decodes(
        b"data: a\n\nid: 7\ndata: b\n\ndata: c\n\nid: 8\n\ndata: d\n\n",
        [E(data="a"), E(data="b", id="7"), E(data="c", id="7"), E(data="d", id="8")],
    )


def test_id_containing_nul_is_ignored() -> None:
    assert_decodes(
        b"id: 1\ndata: a\n\nid: 2\x00\ndata: b\n\n", [E(data="a", id="1"), E(data="b", id="1")]
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (b"1000", 1000),
        (b"0", 0),
        (b"007", 7),
        (b"10a", None),
        (b"-1", None),
        (b"1.5", None),
        (b"", None),
        (b" 5", None),  # two spaces after the colon: the value keeps one
        ("١٢".encode(), None),  # Arabic-Indic digits are not ASCII digits
        (b"0" * 5000 + b"7", 7),
    ],
)
def test_retry_accepts_ascii_digits_only(value: bytes, expected: int | None) -> None:
    assert_decodes(b"retry: " + value + b"\ndata: a\n\n", [E(data="a", retry=expected)])


def test_retry_belongs_to_its_own_block() -> None:
    assert_decodes(
        b"retry: 5\ndata: a\n\ndata: b\n\nretry: 6\n\ndata: c\n\n",
        [E(data="a", retry=5), E(data="b"), E(data="c")],
    )


def test_retry_with_more_digits_than_int_allows_is_a_framing_error() -> None:
    assert run([b"retry: " + b"9" * 5000 + b"\ndata: a\n\n"]) == FramingError


def test_field_without_colon_has_empty_value() -> None:
    assert_decodes(b"event\ndata\n\n", [E(event="", data="")])


def test_unknown_fields_and_comments_are_ignored() -> None:
    assert_decodes(
        b"foo: bar\n:comment\nData: no\ndata : no\ndata: x\n: another\n\n", [E(data="x")]
    )


def test_last_event_field_wins_and_event_type_resets_per_block() -> None:
    assert_decodes(
        b"event: a\nevent: b\ndata: 1\n\ndata: 2\n\n", [E(event="b", data="1"), E(data="2")]
    )


def test_empty_data_buffer_dispatches_nothing_and_resets_event_type() -> None:
    assert_decodes(b"event: ping\n\ndata: x\n\n", [E(data="x")])


def test_colons_and_spaces_in_values_are_kept() -> None:
    assert_decodes(b"data:  a: b:c \n\n", [E(data=" a: b:c ")])


def test_multibyte_utf8_is_decoded() -> None:
    assert_decodes("data: héllo €𝄞\n\n".encode(), [E(data="héllo €𝄞")])


def test_multibyte_char_split_across_chunks_decodes() -> None:
    assert run([b"data: \xe2", b"\x82", b"\xac\xf0\x9d", b"\x84\x9e\n\n"]) == [E(data="€𝄞")]


def test_large_blocks_decode_like_small_chunks() -> None:
    # A feed bigger than the decoder's internal slice size, CRLF-terminated throughout.
    stream = b"".join(b"id: %d\r\ndata: \xe2\x82\xac%d\r\n\r\n" % (i, i) for i in range(20000))
    expected = [E(data=f"€{i}", id=str(i)) for i in range(20000)]
    assert run([stream]) == expected
    assert run([stream[i : i + 4099] for i in range(0, len(stream), 4099)]) == expected
    bad = stream.replace(b"\xe2\x82\xac19999", b"\xe2\x82\x2019999")
    dec = SSEDecoder()
    with pytest.raises(FramingError) as info:
        dec.feed(bad)
    assert info.value.byte_offset == stream.index(b"\xe2\x82\xac19999")  # sequence start


# -- strict UTF-8 ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        b"\xff",  # never valid
        b"\xc0\xaf",  # overlong "/"
        b"\xed\xa0\x80",  # UTF-8-encoded surrogate U+D800
        b"\xf4\x90\x80\x80",  # beyond U+10FFFF
        b"\x80",  # lone continuation byte
    ],
)
def test_invalid_utf8_is_a_framing_error(bad: bytes) -> None:
    assert_decodes(b"data: ok\n\ndata: " + bad + b"\n\n", FramingError)
    dec = SSEDecoder()
    with pytest.raises(FramingError) as info:
        dec.feed(b"data: ok\n\ndata: " + bad + b"\n\n")
    assert info.value.byte_offset == 16


def test_multibyte_truncated_at_eof_is_a_framing_error() -> None:
    assert_decodes(b"data: \xe2\x82", FramingError)
    dec = SSEDecoder()
    dec.feed(b"data: \xe2\x82")
    with pytest.raises(FramingError) as info:
        dec.finish()
    assert info.value.byte_offset == 6


# -- end of stream -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "stream",
    [
        b"data: x",
        b"data: x\n",
        b"data: x\r",
        b"event: x\n",
        b"id: 1\n",
        b"retry: 5\n",
        b"retry: nope\n",
        b"data: x\n\n: unterminated comment",
        b"data: x\n\nid: 2\x00\n",
    ],
)
def test_stream_ending_mid_event_is_truncated(stream: bytes) -> None:
    assert_decodes(stream, TruncatedStreamError)


@pytest.mark.parametrize(
    ("stream", "expected"),
    [
        (b"", []),
        (b"data: x\n\n", [E(data="x")]),
        (b"data: x\n\n: keep-alive\n", [E(data="x")]),
        (b"data: x\n\r", [E(data="x")]),  # a lone CR at EOF is a complete line ending
        (b"data: x\n\nunknown: field\n", [E(data="x")]),
    ],
)
def test_stream_ending_between_events_is_complete(stream: bytes, expected: Outcome) -> None:
    assert_decodes(stream, expected)


def test_truncation_reports_offsets() -> None:
    dec = SSEDecoder()
    dec.feed(b"data: a\n\ndata: partial")
    with pytest.raises(TruncatedStreamError) as info:
        dec.finish()
    assert info.value.byte_offset == 9


# -- limits ------------------------------------------------------------------------------


def test_line_limit_excludes_line_ending_and_is_inclusive() -> None:
    limits = Limits(max_line_bytes=8)
    assert_decodes(b"data: ab\r\n\r\n", [E(data="ab")], limits)
    assert_decodes(b"data: abc\r\n\r\n", LimitExceededError, limits)
    assert_decodes(b"data: ab\ndata: abc\ndata: ab\n\n", LimitExceededError, limits)


def test_partial_line_is_rejected_as_soon_as_it_passes_the_bound() -> None:
    dec = SSEDecoder(limits=Limits(max_line_bytes=8))
    assert dec.feed(b"data: ab") == []  # exactly the bound: buffered
    with pytest.raises(LimitExceededError) as info:
        dec.feed(b"c")
    assert (info.value.observed, info.value.byte_offset) == (9, 0)


def test_line_limit_error_carries_context() -> None:
    dec = SSEDecoder(limits=Limits(max_line_bytes=8))
    with pytest.raises(LimitExceededError) as info:
        dec.feed(b"data: a\n\ndata: abcdef\n\n")
    err = info.value
    assert (err.limit, err.bound, err.observed, err.byte_offset) == ("max_line_bytes", 8, 12, 9)


def test_huge_unterminated_line_buffers_at_most_the_bound() -> None:
    bound = 3 * 1024 * 1024
    dec = SSEDecoder(limits=Limits(max_line_bytes=bound))
    chunk = b"x" * (1024 * 1024)
    accepted = []

    def one_gib_line() -> Iterator[bytes]:
        for _ in range(1024):
            assert len(dec._pending) <= bound
            yield chunk
            accepted.append(len(chunk))

    with pytest.raises(LimitExceededError) as info:
        feed_all(dec, one_gib_line())
    assert sum(accepted) == bound
    assert info.value.limit == "max_line_bytes"
    assert info.value.byte_offset == 0


def test_huge_single_chunk_without_line_ending_is_never_buffered() -> None:
    dec = SSEDecoder(limits=Limits(max_line_bytes=1024))
    with pytest.raises(LimitExceededError):
        dec.feed(b"data: " + b"y" * (8 * 1024 * 1024))
    assert len(dec._pending) == 0


def test_partial_tail_after_a_line_ending_is_bounded_too() -> None:
    dec = SSEDecoder(limits=Limits(max_line_bytes=16))
    with pytest.raises(LimitExceededError) as info:
        dec.feed(b"data: a\n\n" + b"z" * 100)
    assert info.value.byte_offset == 9
    assert len(dec._pending) == 0


def test_event_limit_counts_utf8_bytes_of_joined_data() -> None:
    limits = Limits(max_event_bytes=10)
    assert_decodes(b"data: 12345\ndata: 1234\n\n", [E(data="12345\n1234")], limits)
    assert_decodes(b"data: 12345\ndata: 12345\n\n", LimitExceededError, limits)
    assert_decodes("data: €€€\n\n".encode(), [E(data="€€€")], limits)
    assert_decodes("data: €€€€\n\n".encode(), LimitExceededError, limits)


def test_event_limit_holds_across_many_feeds() -> None:
    dec = SSEDecoder(limits=Limits(max_event_bytes=1000))
    with pytest.raises(LimitExceededError) as info:
        feed_all(dec, [b"data: " + b"q" * 99 + b"\n"] * 1000)
    err = info.value
    assert (err.limit, err.observed, err.byte_offset) == ("max_event_bytes", 1099, 1060)


def test_events_per_stream_limit_counts_dispatched_events_only() -> None:
    limits = Limits(max_events_per_stream=2)
    assert_decodes(b"data: a\n\nevent: x\n\n\n\ndata: b\n\n", [E(data="a"), E(data="b")], limits)
    assert_decodes(b"data: a\n\ndata: b\n\ndata: c\n\n", LimitExceededError, limits)


def test_stream_bytes_limit_counts_every_byte_fed() -> None:
    limits = Limits(max_stream_bytes=20)
    assert_decodes(b"\xef\xbb\xbfdata: 123456789\n\n", [E(data="123456789")], limits)
    assert_decodes(b"\xef\xbb\xbfdata: 1234567890\n\n", LimitExceededError, limits)
    dec = SSEDecoder(limits=limits)
    dec.feed(b"data: 123456789\n")
    with pytest.raises(LimitExceededError) as info:
        dec.feed(b"\n\n\n\n\n")
    assert (info.value.limit, info.value.observed, info.value.byte_offset) == (
        "max_stream_bytes",
        21,
        20,
    )


# -- usage -------------------------------------------------------------------------------


def test_counters_track_bytes_and_events() -> None:
    dec = SSEDecoder()
    dec.feed(b"\xef\xbb\xbfdata: a\n\ndata: b\n")
    assert (dec.bytes_fed, dec.events_dispatched) == (20, 1)
    dec.feed(b"\n")
    assert (dec.bytes_fed, dec.events_dispatched) == (21, 2)


def test_bytearray_and_memoryview_are_accepted() -> None:
    dec = SSEDecoder()
    assert dec.feed(bytearray(b"data: a\n\n")) == [E(data="a")]
    assert dec.feed(memoryview(b"data: b\n\n")) == [E(data="b")]


def test_str_input_is_a_usage_error_and_fails_the_decoder() -> None:
    dec = SSEDecoder()
    with pytest.raises(UsageError):
        dec.feed("data: a\n\n")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        dec.feed(b"data: a\n\n")


def test_released_memoryview_is_a_usage_error() -> None:
    view = memoryview(b"data: a\n\n")
    view.release()
    with pytest.raises(UsageError):
        SSEDecoder().feed(view)


def test_finished_decoder_rejects_more_calls() -> None:
    dec = SSEDecoder()
    assert dec.feed(b"data: a\n\n") == [E(data="a")]
    assert dec.finish() == []
    with pytest.raises(UsageError):
        dec.feed(b"data: b\n\n")
    with pytest.raises(UsageError):
        dec.finish()


@pytest.mark.parametrize("call", ["feed", "finish"])
def test_failed_decoder_rejects_more_calls(call: str) -> None:
    dec = SSEDecoder()
    with pytest.raises(FramingError):
        dec.feed(b"data: \xff\n\n")
    with pytest.raises(UsageError):
        dec.feed(b"data: b\n\n") if call == "feed" else dec.finish()


def test_truncated_finish_fails_the_decoder() -> None:
    dec = SSEDecoder()
    dec.feed(b"data: x")
    with pytest.raises(TruncatedStreamError):
        dec.finish()
    with pytest.raises(UsageError):
        dec.finish()


def test_limits_must_be_a_limits_instance() -> None:
    with pytest.raises(UsageError):
        SSEDecoder(limits={"max_line_bytes": 1})  # type: ignore[arg-type]


# -- properties --------------------------------------------------------------------------


def reference(text: str) -> list[ServerSentEvent] | type[CallgateError]:
    """A literal transcription of the WHATWG algorithm, plus callgate's truncation rule."""
    text = text.removeprefix("\ufeff")
    *lines, tail = re.split(r"\r\n|\r|\n", text)
    events: list[ServerSentEvent] = []
    data, event_type, last_id, retry, dirty = "", None, None, None, False
    for line in lines:
        if not line:
            if data:
                events.append(E(event=event_type, data=data[:-1], id=last_id, retry=retry))
            data, event_type, retry, dirty = "", None, None, False
            continue
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name in ("data", "event", "id", "retry"):
            dirty = True
        if name == "data":
            data += value + "\n"
        elif name == "event":
            event_type = value
        elif name == "id" and "\0" not in value:
            last_id = value
        elif name == "retry" and value and all(c in "0123456789" for c in value):
            retry = int(value)
    return TruncatedStreamError if tail or dirty else events


FRAGMENTS = ["data", "event", "id", "retry", "x", ":", " ", "7", "é", "𝄞", "\0", "\ufeff"]
EOLS = ["\n", "\r", "\r\n"]
streams = st.lists(
    st.lists(st.sampled_from(FRAGMENTS), max_size=5).map("".join), max_size=12
).flatmap(
    lambda lines: st.tuples(
        st.just(lines), st.lists(st.sampled_from(EOLS), min_size=len(lines), max_size=len(lines))
    )
)


@settings(max_examples=300, deadline=None)
@given(streams, st.booleans(), st.lists(st.integers(0, 400), max_size=8))
def test_matches_reference_algorithm_under_any_chunking(
    lines_and_eols: tuple[list[str], list[str]], terminated: bool, cuts: list[int]
) -> None:
    lines, eols = lines_and_eols
    text = "".join(line + eol for line, eol in zip(lines, eols, strict=True))
    if not terminated and lines:
        text = text[: -len(eols[-1])]
    stream = text.encode()
    expected = reference(text)
    assert run([stream]) == expected
    assert run(split_at(stream, [c for c in cuts if c <= len(stream)])) == expected


SMALL = Limits(max_line_bytes=24, max_event_bytes=40, max_events_per_stream=5)
hostile = st.lists(
    st.one_of(
        st.binary(max_size=12),
        st.sampled_from([b"data:", b"id:", b"retry:", b"\r", b"\n", b"\xef\xbb\xbf", b"\xc3"]),
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(hostile, st.sampled_from([DEFAULT_LIMITS, SMALL]))
def test_arbitrary_bytes_raise_only_callgate_errors(chunks: list[bytes], limits: Limits) -> None:
    outcome = run(chunks, limits)
    if not isinstance(outcome, list):
        assert issubclass(outcome, CallgateError)
