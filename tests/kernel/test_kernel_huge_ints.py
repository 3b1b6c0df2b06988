"""Integers past Python's 4,300-digit int-to-str bound: typed errors on every path.

Before the fix ``canonical_bytes`` let ``int.__repr__`` raise a bare ``ValueError``, and
every caller that copies a caller-supplied dict through it (SDK event dicts, response
bodies, tool results) leaked it.
"""

from __future__ import annotations

import sys

import pytest

import callgate.anthropic_messages as anthropic_messages
import callgate.gemini_interactions as gemini_interactions
from callgate import (
    CallgateError,
    JSONError,
    LimitExceededError,
    ToolResult,
    UsageError,
    canonical_bytes,
    canonical_digest,
    loads_strict,
)

HUGE = 10**5000  # 5,001 digits


@pytest.mark.parametrize("value", [HUGE, -HUGE, 10**4300], ids=["huge", "negative", "4301_digits"])
def test_canonical_bytes_refuses_int_past_4300_digits_with_usage_error(value: int) -> None:
    with pytest.raises(UsageError, match="4300 digits"):
        canonical_bytes({"n": [value]})
    with pytest.raises(UsageError):
        canonical_digest([value])


def test_canonical_bytes_writes_int_of_exactly_4300_digits() -> None:
    value = 10**4300 - 1
    assert canonical_bytes([value]) == b"[" + b"9" * 4300 + b"]"


def test_canonical_bytes_bound_does_not_follow_a_lower_interpreter_setting() -> None:
    # A host may lower Python's own bound; the failure must still be typed.
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(1000)
    try:
        with pytest.raises(UsageError):
            canonical_bytes([10**2000])
    finally:
        sys.set_int_max_str_digits(old)


def test_tool_result_with_huge_int_output_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        ToolResult("call_1", {"n": HUGE})
    with pytest.raises(UsageError):
        ToolResult("call_1", [1, [HUGE]])


@pytest.mark.parametrize(
    "text",
    [
        "7" * 5000,
        "-" + "7" * 5000,
        '{"a":[' + "1" * 4301 + "]}",
        "1" * 5000 + ".5",
        "1e" + "9" * 5000,
    ],
    ids=["int", "negative_int", "nested_int", "float_mantissa", "float_exponent"],
)
def test_loads_strict_huge_numbers_raise_only_limit_errors(text: str) -> None:
    with pytest.raises(LimitExceededError):
        loads_strict(text)
    with pytest.raises(LimitExceededError):
        loads_strict(text.encode())


def _message_start(usage_tokens: int) -> dict[str, object]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": usage_tokens, "output_tokens": 1},
        },
    }


def test_anthropic_feed_event_with_huge_int_is_a_json_error() -> None:
    parser = anthropic_messages.Parser()
    with pytest.raises(JSONError, match="not a JSON value"):
        parser.feed_event(_message_start(HUGE))


def test_anthropic_feed_event_huge_int_in_a_delta_raises_a_callgate_error() -> None:
    parser = anthropic_messages.Parser()
    parser.feed_event(_message_start(1))
    with pytest.raises(CallgateError):
        parser.feed_event(
            {
                "type": "content_block_delta",
                "index": HUGE,
                "delta": {"type": "text_delta", "text": "a"},
            }
        )


def test_anthropic_parse_response_dict_with_huge_int_is_a_json_error() -> None:
    body = dict(_message_start(HUGE)["message"])  # type: ignore[call-overload]
    body["stop_reason"] = "end_turn"
    with pytest.raises(JSONError):
        anthropic_messages.parse_response(body)


def test_gemini_parse_response_dict_with_huge_int_is_a_json_error() -> None:
    body = {"id": "int_1", "status": "completed", "usage": {"total_tokens": HUGE}}
    with pytest.raises(JSONError, match="not a JSON value"):
        gemini_interactions.parse_response(body)


def test_gemini_feed_event_with_huge_int_is_a_json_error() -> None:
    with pytest.raises(JSONError):
        gemini_interactions.Parser().feed_event({"event_type": "interaction.start", "n": HUGE})
