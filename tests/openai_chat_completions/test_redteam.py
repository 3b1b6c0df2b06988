"""Every failure issue 27 names, and the public bug threads behind them, refused with a typed
error and nothing released; the telemetry that must never refuse, kept."""

from __future__ import annotations

from typing import Any

import pytest

from callgate import (
    CallgateError,
    JSONError,
    LimitExceededError,
    Limits,
    ProviderError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
)
from callgate.openai_chat_completions import parse_response, parse_stream

from .wire import BODY, HEAD, ROLE, USAGE, args, body, chunk, first, sse, two_calls


def _refused(data: bytes, error: type[CallgateError], match: str, **options: Any) -> CallgateError:
    with pytest.raises(error, match=match) as caught:
        parse_stream(data, **options)
    assert caught.value.turn is None or caught.value.turn.calls == ()
    return caught.value


def test_the_two_call_turn_is_released_with_interleaved_arguments_by_index() -> None:
    turn = parse_stream(sse([*two_calls(), {**HEAD, "choices": [], "usage": USAGE}]))
    assert [(c.call_id, c.name, c.arguments, c.index) for c in turn.calls] == [
        ("call_a", "get", {"a": 1}, 0),
        ("call_b", "put", {"b": 2}, 1),
    ]
    assert turn.usage == USAGE
    assert turn.content is None
    assert turn.message()["tool_calls"][0] == {
        "id": "call_a",
        "type": "function",
        "function": {"name": "get", "arguments": '{"a":1}'},
    }


@pytest.mark.parametrize("reason", ["length", "content_filter"])
def test_length_and_content_filter_release_nothing(reason: str) -> None:
    err = _refused(sse(two_calls(reason)), ProviderError, reason)
    assert err.error_code == reason  # type: ignore[attr-defined]
    with pytest.raises(ProviderError, match=reason):
        parse_response(body(BODY["choices"][0]["message"], reason))


def test_done_without_a_finish_reason_is_a_truncation() -> None:
    _refused(sse(two_calls(None)), TruncatedStreamError, r"before the choice's finish_reason")
    # ...and a body without one is refused too (the valid-JSON call is never run as "stop").
    with pytest.raises(SequenceError, match="without a finish_reason"):
        parse_response(body(BODY["choices"][0]["message"], None))
    with pytest.raises(SequenceError):
        parse_response(body(BODY["choices"][0]["message"], None), profile="ollama")


def test_eof_before_done_is_a_truncation_even_after_the_finish_reason() -> None:
    _refused(sse(two_calls(), done=False), TruncatedStreamError, r"without data: \[DONE\]")
    _refused(sse(two_calls(None), done=False), TruncatedStreamError, "without a finish_reason")
    # A premature EOF in the middle of the arguments never becomes a {} call.
    cut = sse([ROLE, first(0, "call_a", "get"), args(0, '{"a":')], done=False)
    _refused(cut, TruncatedStreamError, "without a finish_reason")
    _refused(sse(two_calls())[:-3], TruncatedStreamError, "mid-event|ended")  # inside [DONE]


@pytest.mark.parametrize("profile", [None, "ollama", "mistral", "openrouter", "vllm", "together"])
def test_no_profile_relaxes_the_terminal_requirement(profile: str | None) -> None:
    _refused(sse(two_calls(), done=False), TruncatedStreamError, "DONE", profile=profile)
    _refused(sse(two_calls(None)), TruncatedStreamError, "finish_reason", profile=profile)
    error = {"error": {"message": "boom", "type": "server_error"}}
    _refused(sse([*two_calls(None), error]), ProviderError, "boom", profile=profile)


@pytest.mark.parametrize(
    "error",
    [
        {"error": {"message": "The server had an error", "type": "server_error"}},
        {"error": "boom"},
        {
            **HEAD,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "error"}],
            "error": {"code": 502, "message": "upstream"},
        },
        {"object": "error", "message": "vLLM-style error", "type": "BadRequestError", "code": 400},
    ],
    ids=["openai", "string", "openrouter", "object-error"],
)
@pytest.mark.parametrize("after_finish", [False, True])
def test_an_in_stream_error_is_a_provider_error_wherever_it_comes(
    error: dict[str, Any], after_finish: bool
) -> None:
    chunks = two_calls() if after_finish else two_calls(None)
    err = _refused(sse([*chunks, error]), ProviderError, "the provider sent an error")
    assert err.event_index == len(chunks)
    # vLLM and llama.cpp send [DONE] after the error: still an error.
    _refused(sse([*chunks, error]), ProviderError, "error", profile="vllm")


def test_error_bodies_are_provider_errors() -> None:
    with pytest.raises(ProviderError, match="invalid_api_key") as caught:
        parse_response(
            {
                "error": {
                    "message": "bad key",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            }
        )
    assert caught.value.provider_message == "bad key"
    with pytest.raises(ProviderError):
        parse_response(
            {
                "object": "error",
                "message": "Tool call id was call_search",
                "type": "invalid_request_error",
            }
        )


@pytest.mark.parametrize(
    ("later", "what"),
    [
        ({"index": 0, "id": "call_X", "function": {"arguments": "1}"}}, "id"),
        ({"index": 0, "function": {"name": "other", "arguments": "1}"}}, "name"),
        ({"index": 0, "id": "", "function": {"arguments": "1}"}}, "id"),
    ],
)
def test_an_id_or_name_that_changes_within_an_index_is_refused(
    later: dict[str, Any], what: str
) -> None:
    chunks = [
        ROLE,
        first(0, "call_a", "get"),
        args(0, '{"a":'),
        chunk({"tool_calls": [later]}),
        chunk({}, "tool_calls"),
    ]
    _refused(sse(chunks), SequenceError, f"changed its {what}")


def test_a_repeated_identical_id_and_name_is_not_a_change() -> None:
    same = {
        "index": 0,
        "id": "call_a",
        "type": "function",
        "function": {"name": "get", "arguments": "1}"},
    }
    turn = parse_stream(
        sse(
            [
                ROLE,
                first(0, "call_a", "get"),
                args(0, '{"a":'),
                chunk({"tool_calls": [same]}),
                chunk({}, "tool_calls"),
            ]
        )
    )
    assert turn.calls[0].call_id == "call_a"
    assert turn.calls[0].arguments == {"a": 1}


def test_a_call_without_an_id_is_refused() -> None:
    no_id = chunk(
        {
            "tool_calls": [
                {"index": 0, "type": "function", "function": {"name": "get", "arguments": "{}"}}
            ]
        }
    )
    _refused(sse([ROLE, no_id, chunk({}, "tool_calls")]), SequenceError, "has no id")
    message = {"tool_calls": [{"type": "function", "function": {"name": "get", "arguments": "{}"}}]}
    with pytest.raises(SequenceError, match="has no id"):
        parse_response(body(message))


@pytest.mark.parametrize(
    ("delta", "error", "match"),
    [
        ({"function": {"arguments": "{}"}}, SchemaError, "lacks 'index'"),
        (
            {"index": 1, "id": "c", "function": {"name": "f", "arguments": "{}"}},
            SequenceError,
            "skips index 0",
        ),
        ({"index": -1, "id": "c", "function": {"name": "f"}}, SchemaError, "index"),
        ({"index": "0", "id": "c", "function": {"name": "f"}}, SchemaError, "index"),
        (
            {"index": 0, "id": "c", "type": "custom", "custom": {"name": "f"}},
            UnsupportedProviderState,
            "custom",
        ),
        (
            {"index": 0, "id": "c", "function": {"name": "f", "arguments": {"a": 1}}},
            SchemaError,
            "string of JSON",
        ),
        ({"index": 0, "id": 5, "function": {"name": "f"}}, SchemaError, "id must be a string"),
    ],
)
def test_malformed_tool_call_deltas_are_refused(
    delta: dict[str, Any], error: type[CallgateError], match: str
) -> None:
    _refused(sse([ROLE, chunk({"tool_calls": [delta]}), chunk({}, "tool_calls")]), error, match)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"a":1', JSONError),
        ("[1, 2]", JSONError),
        ('{"a":1,"a":2}', JSONError),
        ('{"a":NaN}', JSONError),
        ("", JSONError),
        ('{"a":"\\ud800"}', JSONError),
    ],
)
def test_arguments_must_be_a_strict_json_object(text: str, error: type[CallgateError]) -> None:
    _refused(
        sse([ROLE, first(0, "call_a", "get"), args(0, text), chunk({}, "tool_calls")]),
        error,
        "call_a",
    )


def test_argument_limits_are_enforced() -> None:
    data = sse(
        [
            ROLE,
            first(0, "call_a", "get"),
            *[args(0, "x") for _ in range(5)],
            chunk({}, "tool_calls"),
        ]
    )
    _refused(data, LimitExceededError, "fragments", limits=Limits(max_fragments_per_call=4))
    _refused(data, LimitExceededError, "too large", limits=Limits(max_argument_bytes=3))
    calls = [first(i, f"c{i}", "f") for i in range(3)]
    _refused(
        sse([ROLE, *calls, chunk({}, "tool_calls")]),
        LimitExceededError,
        "too many tool calls",
        limits=Limits(max_calls_per_turn=2),
    )


def test_n_greater_than_one_fails_closed_unless_a_choice_is_selected() -> None:
    def two(
        delta0: dict[str, Any], delta1: dict[str, Any], finish: str | None = None
    ) -> dict[str, Any]:
        return {
            **HEAD,
            "choices": [
                {"index": 0, "delta": delta0, "finish_reason": finish},
                {"index": 1, "delta": delta1, "finish_reason": finish},
            ],
        }

    call0 = {
        "tool_calls": [
            {
                "index": 0,
                "id": "c0",
                "type": "function",
                "function": {"name": "f", "arguments": '{"n":0}'},
            }
        ]
    }
    call1 = {
        "tool_calls": [
            {
                "index": 0,
                "id": "c1",
                "type": "function",
                "function": {"name": "f", "arguments": '{"n":1}'},
            }
        ]
    }
    data = sse(
        [
            two({"role": "assistant"}, {"role": "assistant"}),
            two(call0, call1),
            two({}, {}, "tool_calls"),
        ]
    )
    _refused(data, UnsupportedProviderState, "choice_index")
    assert [c.call_id for c in parse_stream(data, choice_index=1).calls] == ["c1"]
    assert [c.call_id for c in parse_stream(data, choice_index=0).calls] == ["c0"]
    # vLLM's shape: one choice per chunk; a chunk with only choice 1 fails closed too.
    only_one = {**HEAD, "choices": [{"index": 1, "delta": call1, "finish_reason": None}]}
    _refused(sse([only_one]), UnsupportedProviderState, "n > 1")
    with pytest.raises(TruncatedStreamError):  # choice 5 never streamed: no finish reason
        parse_stream(data, choice_index=5)


def test_legacy_function_call_fails_closed() -> None:
    legacy = chunk({"function_call": {"name": "get", "arguments": "{}"}})
    _refused(
        sse([ROLE, legacy, chunk({}, "function_call")]), UnsupportedProviderState, "function_call"
    )
    _refused(sse([ROLE, chunk({}, "function_call")]), UnsupportedProviderState, "legacy")
    with pytest.raises(UnsupportedProviderState, match="function_call"):
        parse_response(
            body(
                {"content": None, "function_call": {"name": "g", "arguments": "{}"}},
                "function_call",
            )
        )


def test_a_refusal_is_an_outcome_not_text_and_never_beside_calls() -> None:
    turn = parse_stream(sse([ROLE, chunk({"refusal": "No."}), chunk({}, "stop")]))
    assert (turn.refusal, turn.text, turn.calls) == ("No.", "", ())
    assert turn.message()["refusal"] == "No."
    chunks = [
        ROLE,
        chunk({"refusal": "No."}),
        first(0, "call_a", "get"),
        args(0, "{}"),
        chunk({}, "tool_calls"),
    ]
    _refused(sse(chunks), SequenceError, "refusal beside tool calls")


def test_stop_beside_calls_is_refused_unless_forced() -> None:
    _refused(sse(two_calls("stop")), SequenceError, "finish_reason 'stop'")
    # Two calls under a named tool_choice are not "exactly the forced call".
    forced = {"type": "function", "function": {"name": "get"}}
    _refused(sse(two_calls("stop")), SequenceError, "finish_reason 'stop'", tool_choice=forced)


@pytest.mark.parametrize("reason", ["eos", "error", "STOP", ""])
def test_an_unknown_finish_reason_fails_closed(reason: str) -> None:
    _refused(sse(two_calls(reason)), UnsupportedProviderState, "unknown to contract revision")


def test_tool_calls_finish_without_a_call_is_refused() -> None:
    _refused(
        sse([ROLE, chunk({"content": "hi"}), chunk({}, "tool_calls")]),
        SequenceError,
        "without a tool call",
    )


def test_nothing_may_follow_done_or_the_finished_choice() -> None:
    data = sse(two_calls()) + sse([chunk({"content": "late"})], done=False)
    _refused(data, SequenceError, "illegal in state closed")
    _refused(sse([*two_calls(), args(0, "x")]), SequenceError, "illegal in state done")
    _refused(
        sse([*two_calls(), chunk({"content": "more"})]), SequenceError, "illegal in state done"
    )


def test_the_completion_id_may_not_change_mid_stream() -> None:
    chunks = two_calls()
    chunks[3] = {**chunks[3], "id": "chatcmpl-other"}
    _refused(sse(chunks), SequenceError, "id changed")


def test_a_chunk_of_another_object_type_fails_closed_but_azure_filter_chunks_are_skipped() -> None:
    _refused(sse([{**ROLE, "object": "chat.completion"}]), UnsupportedProviderState, "object")
    azure = {
        "id": "",
        "object": "",
        "created": 0,
        "model": "",
        "choices": [{"index": 0, "finish_reason": None, "content_filter_results": {}}],
    }
    turn = parse_stream(sse([azure, *two_calls(), azure]))
    assert [c.call_id for c in turn.calls] == ["call_a", "call_b"]


def test_telemetry_never_refuses() -> None:
    chunks = two_calls()
    chunks[1] = {
        **chunks[1],
        "usage": "lots",
        "choices": [{**chunks[1]["choices"][0], "logprobs": 0.5}],
    }
    chunks[2] = {
        **chunks[2],
        "choices": [
            {
                **chunks[2]["choices"][0],
                "native_finish_reason": None,
                "delta": {
                    **chunks[2]["choices"][0]["delta"],
                    "reasoning": "r",
                    "annotations": "junk",
                },
            }
        ],
    }
    turn = parse_stream(
        sse(
            [
                *chunks,
                {**HEAD, "choices": [], "usage": USAGE},
                {**HEAD, "choices": [], "usage": None},
            ]
        )
    )
    assert [c.call_id for c in turn.calls] == ["call_a", "call_b"]
    assert turn.usage == USAGE  # the last non-null usage
    assert turn.message_extra["reasoning"] == "r"
    assert any("usage" in w for w in turn.warnings)
    assert any("logprobs" in w for w in turn.warnings)
    assert any("annotations" in w for w in turn.warnings)


def test_openrouters_usage_trailer_with_an_empty_delta_is_a_trailer_not_more_content() -> None:
    trailer = {**chunk({"role": "assistant", "content": ""}), "usage": USAGE}
    turn = parse_stream(sse([*two_calls(), trailer]))
    assert turn.usage == USAGE
    assert [c.call_id for c in turn.calls] == ["call_a", "call_b"]


def test_citations_are_projected_from_annotations() -> None:
    annotation = {
        "type": "url_citation",
        "url_citation": {
            "url": "https://example.com/a",
            "title": "A",
            "start_index": 0,
            "end_index": 2,
        },
    }
    turn = parse_response(body({"content": "hi", "annotations": [annotation]}, "stop"))
    assert [(c.kind, c.source, c.start, c.end) for c in turn.citations] == [
        ("url_citation", "https://example.com/a", 0, 2)
    ]
    assert turn.hosted_calls == ()


def test_the_baselines_differ_where_the_sdk_generations_do() -> None:
    # 3.57.0 models delta.audio; 2.46.0 keeps it as an extra key: kept either way, and the
    # old baseline says it is unknown there.
    chunks = [ROLE, chunk({"audio": {"id": "a1", "transcript": "hi"}}), chunk({}, "stop")]
    old = parse_stream(sse(chunks), baseline="2026-07-21")
    new = parse_stream(sse(chunks), baseline="2026-11")
    assert (
        old.message_extra["audio"] == new.message_extra["audio"] == {"id": "a1", "transcript": "hi"}
    )
    assert any("audio" in w and "2026-07-21" in w for w in old.warnings)
    assert not new.warnings
