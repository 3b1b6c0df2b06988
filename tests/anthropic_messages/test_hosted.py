"""Server tools in the Anthropic gate and builder: the hosted projection, citations,
result blocks, server usage, container, pause_turn and replay (contract section 12)."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import pytest

from callgate import (
    BindingError,
    ContinuationError,
    SchemaError,
    SequenceError,
    ToolResult,
    UnsupportedProviderState,
    UsageError,
)
from callgate.anthropic_messages import Parser, Turn, build_continuation, parse_response

from .wire import (
    MESSAGE_STOP,
    block_start,
    block_stop,
    delta,
    json_delta,
    message_start,
    sse,
    text_delta,
    tool_block,
)

TOOLS: list[dict[str, Any]] = [
    {"type": "web_search_20250305", "name": "web_search"},
    {"type": "code_execution_20250825", "name": "code_execution"},
    {"name": "get_weather", "input_schema": {"type": "object"}},
]
HISTORY = [{"role": "user", "content": "Tides?"}]
# Opaque values with the characters a careless re-encoding would touch.
ENCRYPTED = "RW5jcnlwdGVk+/==Zürich\u2028\U0001f30a"
INDEX = "aW5kZXg=/+\u00e9"
RESULT = {"type": "web_search_result", "url": "https://t.example/a", "title": "A",
          "encrypted_content": ENCRYPTED, "page_age": None}  # fmt: skip
CITATION = {"type": "web_search_result_location", "url": "https://t.example/a", "title": "A",
            "encrypted_index": INDEX, "cited_text": "14:02"}  # fmt: skip
CHAR = {"type": "char_location", "document_index": 0, "document_title": None,
        "start_char_index": 3, "end_char_index": 8, "cited_text": "14:02"}  # fmt: skip
CONTAINER = {"id": "container_1", "expires_at": "2099-01-01T00:00:00Z"}


def server_call(index: int, call_id: str, name: str, fragments: list[str]) -> list[Any]:
    block = {"type": "server_tool_use", "id": call_id, "name": name, "input": {}}
    return [
        block_start(index, block),
        *(json_delta(index, f) for f in fragments),
        block_stop(index),
    ]


def whole(index: int, block: dict[str, Any]) -> list[Any]:
    return [block_start(index, block), block_stop(index)]


def search_result(index: int, call_id: str, content: Any = None) -> list[Any]:
    content = [RESULT] if content is None else content
    return whole(index, {"type": "web_search_tool_result", "tool_use_id": call_id,
                         "content": content})  # fmt: skip


def cited_text(index: int, *items: Any) -> list[Any]:
    """A text block; ``items`` are text strings and citation dicts, in stream order."""
    events: list[Any] = [block_start(index, {"type": "text", "text": ""})]
    for item in items:
        if isinstance(item, str):
            events.append(text_delta(index, item))
        else:
            events.append(delta(index, {"type": "citations_delta", "citation": item}))
    return [*events, block_stop(index)]


def finish(reason: str, searches: int = 1, **extra: Any) -> list[Any]:
    usage = {
        "output_tokens": 20,
        "server_tool_use": {"web_search_requests": searches, "web_fetch_requests": 0},
    }
    d = {"stop_reason": reason, "stop_sequence": None, **extra}
    return [{"type": "message_delta", "delta": d, "usage": usage}, MESSAGE_STOP]  # fmt: skip


def start() -> dict[str, Any]:
    event = message_start()
    event["message"]["usage"]["server_tool_use"] = {"web_search_requests": 0,
                                                    "web_fetch_requests": 0}  # fmt: skip
    return event


def parse(events: list[Any]) -> Turn:
    parser = Parser()
    parser.feed_bytes(sse(*events))
    return parser.finish()


def as_body(events: list[Any]) -> dict[str, Any]:
    """The non-streamed Message the events describe (folded here, independently)."""
    message = copy.deepcopy(events[0]["message"])
    blocks: list[dict[str, Any]] = []
    partial = ""
    for event in events[1:]:
        kind = event["type"]
        if kind == "content_block_start":
            blocks.append(copy.deepcopy(event["content_block"]))
            partial = ""
        elif kind == "content_block_delta":
            d, block = event["delta"], blocks[-1]
            if d["type"] == "text_delta":
                block["text"] += d["text"]
            elif d["type"] == "citations_delta":
                block.setdefault("citations", []).append(d["citation"])
            else:
                partial += d["partial_json"]
        elif kind == "content_block_stop" and partial:
            blocks[-1]["input"] = json.loads(partial)
        elif kind == "message_delta":
            message.update({k: v for k, v in event["delta"].items() if v is not None})
            message["usage"].update(event["usage"])
    message["content"] = blocks
    return message


MIXED = [
    start(),
    *server_call(0, "srvtoolu_1", "web_search", ["", '{"query": ', '"tides"}']),
    *search_result(1, "srvtoolu_1"),
    *server_call(2, "srvtoolu_2", "bash_code_execution", ['{"command": "ls"}']),
    *whole(3, {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_2",
               "content": {"type": "bash_code_execution_tool_result_error",
                           "error_code": "execution_time_exceeded"}}),
    *server_call(4, "srvtoolu_3", "web_search", ['{"query": "more"}']),
    *cited_text(5, CITATION, "High tide ", "is at 14:02."),
    *tool_block(6, "toolu_1", "get_weather", ['{"city": "Brest"}']),
    *finish("tool_use", container=CONTAINER),
]  # fmt: skip


def test_mixed_turn_releases_only_client_calls_and_projects_server_calls() -> None:
    turn = parse(MIXED)
    assert [c.call_id for c in turn.calls] == ["toolu_1"]
    assert turn.recovery_calls == ()
    assert [(h.tool, h.id, h.status) for h in turn.hosted_calls] == [
        ("web_search", "srvtoolu_1", "completed"),
        ("bash_code_execution", "srvtoolu_2", "error:execution_time_exceeded"),
        ("web_search", "srvtoolu_3", None),  # completes in a later response
    ]
    call, result = turn.hosted_calls[0].raw
    assert call is turn.content[0]
    assert result is turn.content[1]
    assert call["input"] == {"query": "tides"}
    assert [(c.kind, c.source, c.start, c.end) for c in turn.citations] == [
        ("web_search_result_location", "https://t.example/a", None, None)
    ]
    assert turn.citations[0].raw == CITATION
    assert turn.usage["server_tool_use"] == {"web_search_requests": 1, "web_fetch_requests": 0}
    assert turn.message["container"] == CONTAINER
    assert turn.container_id == "container_1"


def test_stream_and_body_give_equal_turns_and_projections() -> None:
    streamed = parse(MIXED)
    body = parse_response(as_body(MIXED))
    assert body.content == streamed.content
    assert body.hosted_calls == streamed.hosted_calls
    assert body.citations == streamed.citations
    assert body.usage == streamed.usage
    assert body.calls == streamed.calls


@pytest.mark.parametrize("order", list(itertools.permutations([CITATION, CHAR, "High ", "tide."])))
def test_citations_delta_in_any_interleaving_with_text(order: tuple[Any, ...]) -> None:
    events = [start(), *cited_text(0, *order), *finish("end_turn", searches=0)]
    turn = parse(events)
    assert turn.text == "".join(p for p in order if isinstance(p, str))
    expected = [c for c in order if isinstance(c, dict)]
    assert [c.raw for c in turn.citations] == expected
    assert turn.content[0]["citations"] == expected
    assert parse_response(as_body(events)).citations == turn.citations
    char = next(c for c in turn.citations if c.kind == "char_location")
    assert (char.source, char.start, char.end) == ("document:0", 3, 8)


@pytest.mark.parametrize("d", [
    {"type": "text_delta", "text": "x"},
    {"type": "input_json_delta", "partial_json": "{}"},
    {"type": "citations_delta", "citation": CITATION},
])  # fmt: skip
def test_a_delta_onto_a_result_block_is_a_sequence_error(d: dict[str, Any]) -> None:
    events = [start(), *server_call(0, "srvtoolu_1", "web_search", ['{"query": "q"}'])]
    events += [search_result(1, "srvtoolu_1")[0], delta(1, d)]
    with pytest.raises(SequenceError) as caught:
        parse(events)
    assert caught.value.turn is not None
    assert caught.value.turn.calls == ()


def _bad(*blocks: list[Any]) -> list[Any]:
    return [start(), *[e for b in blocks for e in b], *finish("end_turn")]


@pytest.mark.parametrize(
    ("events", "error"),
    [
        (_bad(server_call(0, "srvtoolu_1", "web_browse", ["{}"])), UnsupportedProviderState),
        (_bad(tool_block(0, "toolu_1", "get_weather", ["{}"]), search_result(1, "toolu_1")),
         SequenceError),
        (_bad(server_call(0, "s1", "web_search", ["[1]"])), SchemaError),
        (_bad([block_start(0, {"type": "server_tool_use", "id": "s1", "name": "web_search",
                               "input": {}, "caller": {"type": "code_execution_20260521",
                                                       "tool_id": "s0"}}), block_stop(0)]),
         UnsupportedProviderState),
        (_bad(whole(0, {"type": "web_search_tool_result", "tool_use_id": "s1", "content": [],
                        "caller": {"type": "code_execution_20250825"}})), SchemaError),
        (_bad(whole(0, {"type": "web_search_tool_result", "content": []})), SchemaError),
    ],
)  # fmt: skip
def test_server_blocks_that_break_a_call_or_its_binding_fail_closed(
    events: list[Any], error: type
) -> None:
    with pytest.raises(error):
        parse(events)


def _with_a_call(*blocks: list[Any]) -> list[Any]:
    """``blocks`` then a client call, ending in tool_use: what the gate must still release."""
    events = [e for b in blocks for e in b]
    index = sum(1 for e in events if e["type"] == "content_block_start")
    call = tool_block(index, "toolu_1", "get_weather", ['{"city": "Oslo"}'])
    return [start(), *events, *call, *finish("tool_use")]


# Hosted-tool details and citations are telemetry (docs/required-fields.md): each variant
# parses, keeps the blocks raw, releases the call beside it and says what it saw.
TELEMETRY: list[tuple[list[Any], list[str], list[Any]]] = [
    (_with_a_call(server_call(0, "s1", "web_search", ["{}"]), search_result(1, "s1"),
                  search_result(2, "s1")),
     ["a second result block for server call 's1'"], ["completed"]),
    (_with_a_call(server_call(0, "s1", "web_fetch", ["{}"]), search_result(1, "s1")),
     ["web_search_tool_result answers a web_fetch call"], ["completed"]),
    (_with_a_call(search_result(0, "s1", {"type": "web_search_tool_result_error"})),
     [], ["error"]),
    (_with_a_call(search_result(0, "s1", {"type": "code_execution_result"})), [], ["completed"]),
    (_with_a_call(search_result(0, "s1", {"type": ["web_search_tool_result_error"]})), [],
     ["completed"]),
    (_with_a_call(search_result(0, "s1", [{"type": "web_search_result", "url": "u"}])), [],
     ["completed"]),
    (_with_a_call(whole(0, {"type": "web_search_tool_result", "tool_use_id": "s1"})), [],
     ["completed"]),
    (_with_a_call(cited_text(0, {"type": "url_citation", "url": "u"}, "x")), [], []),
    (_with_a_call(cited_text(0, {**CITATION, "encrypted_index": None}, "x")),
     ["citations_delta: web_search_result_location lacks a str `encrypted_index`"], []),
    (_with_a_call(cited_text(0, "x", ["not", "an", "object"])),
     ["citations_delta: a citation is not an object with a string `type`"], []),
]  # fmt: skip


@pytest.mark.parametrize(("events", "warnings", "statuses"), TELEMETRY)
def test_hosted_details_and_citations_never_refuse_a_turn(
    events: list[Any], warnings: list[str], statuses: list[Any]
) -> None:
    turn = parse(events)
    assert [c.call_id for c in turn.calls] == ["toolu_1"]
    assert list(turn.warnings) == warnings
    assert [h.status for h in turn.hosted_calls] == statuses
    body = parse_response(as_body(events))
    assert (body.calls, body.hosted_calls, body.citations) == (
        turn.calls,
        turn.hosted_calls,
        turn.citations,
    )


def test_an_unknown_citation_type_is_a_citation_without_source_or_offsets() -> None:
    odd = {"type": "url_citation", "url": "u"}
    turn = parse(_with_a_call(cited_text(0, odd, "x")))
    assert [(c.kind, c.source, c.start, c.end, c.raw) for c in turn.citations] == [
        ("url_citation", None, None, None, odd)
    ]


def test_an_error_result_names_its_code_when_it_has_one() -> None:
    error = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}
    turn = parse(_with_a_call(search_result(0, "s1", error)))
    assert [h.status for h in turn.hosted_calls] == ["error:max_uses_exceeded"]


def test_a_result_for_an_earlier_responses_call_is_its_own_hosted_call() -> None:
    turn = parse([start(), *search_result(0, "srvtoolu_9"), *finish("end_turn")])
    assert [(h.tool, h.id, h.status) for h in turn.hosted_calls] == [
        ("web_search_tool_result", "srvtoolu_9", "completed")
    ]
    assert turn.hosted_calls[0].raw == (None, turn.content[0])


def _usage_events(*counts: Any) -> list[Any]:
    events: list[Any] = [start(), *search_result(0, "s1")]
    for n, count in enumerate(counts):
        usage = {"output_tokens": 5 + n, "server_tool_use": count}
        events.append({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                       "usage": usage})  # fmt: skip
    return [*events, MESSAGE_STOP]


def test_server_usage_is_telemetry_that_never_refuses_a_turn() -> None:
    full = {"web_search_requests": 2, "web_fetch_requests": 1}
    assert parse(_usage_events(full, full)).usage["server_tool_use"] == full
    # null counters (programmatic tool calling and tool search send them), a missing
    # counter, counters of another type: all kept raw, the turn parses.
    for count in (
        {"web_search_requests": 0, "web_fetch_requests": None},
        {"web_search_requests": 2},
        {"web_search_requests": "2", "web_fetch_requests": 0},
    ):
        turn = parse(_usage_events(count))
        assert turn.usage["server_tool_use"] == count
        assert turn.warnings == ()
    # A null never erases what message_start reported.
    kept = parse(_usage_events(None)).usage["server_tool_use"]
    assert kept == start()["message"]["usage"]["server_tool_use"]
    # A counter that goes down is a warning, not a refusal.
    down = parse(_usage_events(full, {"web_search_requests": 1, "web_fetch_requests": 1}))
    assert down.warnings == ("usage.server_tool_use.web_search_requests went down from 2 to 1",)


def build(turn: Turn, results: Any = (), **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("history", HISTORY)
    return build_continuation(turn, results, model="m", max_tokens=256, tools=TOOLS, **kwargs)


PAUSED = [
    start(),
    *server_call(0, "srvtoolu_1", "web_search", ['{"query": "tides"}']),
    *search_result(1, "srvtoolu_1"),
    *cited_text(2, "Searching", CITATION),
    *server_call(3, "srvtoolu_2", "code_execution", ['{"code": "1"}']),
    *whole(4, {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_2",
               "content": {"type": "encrypted_code_execution_result", "encrypted_stdout":
                           ENCRYPTED, "stderr": "", "return_code": 0, "content": []}}),
    *finish("pause_turn", container=CONTAINER),
]  # fmt: skip


def test_pause_turn_is_a_distinct_outcome_sent_back_unchanged_last() -> None:
    turn = parse(PAUSED)
    assert turn.send_back_unchanged
    assert turn.calls == ()
    assert turn.recovery_calls == ()
    request = build(turn)
    assert request["messages"] == [*HISTORY, {"role": "assistant", "content": list(turn.content)}]
    assert request["tools"] == TOOLS
    assert request["container"] == "container_1"
    # Encrypted content goes back byte-exact, in block order.
    replayed = json.dumps(request["messages"][-1]["content"], ensure_ascii=False, sort_keys=True)
    assert replayed == json.dumps(list(turn.content), ensure_ascii=False, sort_keys=True)
    for opaque in (ENCRYPTED, INDEX):
        assert json.dumps(opaque, ensure_ascii=False)[1:-1] in replayed
    with pytest.raises(BindingError):
        build(turn, [ToolResult("srvtoolu_1", "no results for a server call")])
    with pytest.raises(ContinuationError):
        build(turn, user_content="and more")
    # The paused history continues: the next request may hold the paused turn as-is.
    again = build(parse(MIXED), [ToolResult("toolu_1", "rain")], history=request["messages"])
    assert again["messages"][-3] == request["messages"][-1]


def test_mixed_turn_answers_only_the_client_call() -> None:
    turn = parse(MIXED)
    request = build(turn, [ToolResult("toolu_1", "rain")])
    user = request["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in user] == ["toolu_1"]
    assert request["messages"][-2]["content"] == list(turn.content)
    with pytest.raises(BindingError):
        build(turn, [ToolResult("toolu_1", "rain"), ToolResult("srvtoolu_3", "x")])


def test_undeclared_server_tool_is_refused() -> None:
    turn = parse(MIXED)
    tools = [t for t in TOOLS if t.get("type") != "code_execution_20250825"]
    with pytest.raises(ContinuationError, match="bash_code_execution"):
        build_continuation(turn, [ToolResult("toolu_1", "x")], history=HISTORY, model="m",
                           max_tokens=9, tools=tools)  # fmt: skip


SEARCH_RESULT = {"type": "search_result", "source": "kb://tides/brest", "title": "Brest",
                 "content": [{"type": "text", "text": "High tide 14:02."}],
                 "citations": {"enabled": True}}  # fmt: skip


def test_search_result_blocks_go_inside_a_client_tool_result() -> None:
    turn = parse(MIXED)
    request = build(turn, [ToolResult("toolu_1", [SEARCH_RESULT])])
    assert request["messages"][-1]["content"][0]["content"] == [SEARCH_RESULT]


@pytest.mark.parametrize("broken", [
    {"source": None}, {"title": 3}, {"content": []}, {"content": [{"type": "image"}]},
    {"content": "text"}, {"citations": {"enabled": "yes"}}, {"citations": True},
])  # fmt: skip
def test_malformed_search_result_blocks_are_refused(broken: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        build(parse(MIXED), [ToolResult("toolu_1", [{**SEARCH_RESULT, **broken}])])


def test_history_answering_a_server_call_with_a_tool_result_is_refused() -> None:
    paused = parse(PAUSED)
    history = [
        *HISTORY,
        {"role": "assistant", "content": list(paused.content)},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "srvtoolu_1",
                                      "content": "not for a server call"}]},
    ]  # fmt: skip
    with pytest.raises(ContinuationError, match="do not answer"):
        build(parse(MIXED), [ToolResult("toolu_1", "rain")], history=history)


def test_tool_search_and_web_fetch_results_are_projected() -> None:
    reference = {"type": "tool_reference", "tool_name": "get_weather"}
    fetched = {
        "type": "web_fetch_result",
        "url": "https://t.example/d",
        "content": {
            "type": "document",
            "title": "D",
            "source": {"type": "text", "media_type": "text/plain", "data": "x"},
        },
    }
    turn = parse([
        start(),
        *server_call(0, "s1", "tool_search_tool_regex", ['{"query": "weather"}']),
        *whole(1, {"type": "tool_search_tool_result", "tool_use_id": "s1", "content":
                   {"type": "tool_search_tool_search_result", "tool_references": [reference]}}),
        *server_call(2, "s2", "web_fetch", ['{"url": "https://t.example/d"}']),
        *whole(3, {"type": "web_fetch_tool_result", "tool_use_id": "s2", "content": fetched}),
        *server_call(4, "s3", "web_fetch", ['{"url": "https://t.example/e"}']),
        *whole(5, {"type": "web_fetch_tool_result", "tool_use_id": "s3", "content":
                   {"type": "web_fetch_tool_result_error", "error_code": "url_not_allowed"}}),
        *finish("end_turn"),
    ])  # fmt: skip
    assert [(h.tool, h.status) for h in turn.hosted_calls] == [
        ("tool_search_tool_regex", "completed"),
        ("web_fetch", "completed"),
        ("web_fetch", "error:url_not_allowed"),
    ]
