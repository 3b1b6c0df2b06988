"""Hosted tools through the official openai SDK over a real socket, strict validation on.

Runs under both SDK generations (3.57.0, and 2.46.0 from the baseline venv); the installed
generation picks the script's and the parser's contract baseline. For every path --
``responses.create`` streamed and not, ``responses.stream()``, the plain client on the
Azure v1 route -- the SDK decodes every event, and callgate's projections (from the bytes
that crossed the socket, and from the SDK's own event objects) equal what the SDK exposes.
Under 3.57.0 the SDK's own tool runner completes a turn that mixes a hosted search with a
function call against the mock (stateless replay of the hosted item included), and it
refuses, as callgate does, a turn whose hosted item failed.
"""

from __future__ import annotations

import importlib.metadata
import itertools
from typing import Any

import openai
import pytest

from callgate import SequenceError
from callgate import openai_responses as oai
from callgate.contracts import REVISIONS, get_baseline
from callgate.mock import MockServer, Script

from ...conftest import RecordingApp, recording_mock_server

SDK_MAJOR = importlib.metadata.version("openai").split(".")[0]
BASELINE = next(
    r
    for r in REVISIONS
    if get_baseline("openai_responses", r).sdk_version.split(".")[0] == SDK_MAJOR
)
_IDS = itertools.count()

HOSTED = [
    {"web_search": {"query": "paris weather", "results": [
        {"marker": "w1", "url": "https://example.com/w", "title": "Weather"}]}},
    {"web_search": {"action": "open_page", "url": "https://example.com/w"}},
    {"web_search": {"action": "find_in_page", "url": "https://example.com/w", "pattern": "sun"}},
    {"file_search": {"queries": ["policy"], "results": [
        {"marker": "f1", "file_id": "file-1", "filename": "p.md", "score": 0.8, "text": "policy",
         "attributes": {"team": "a", "year": 2026, "public": True}}]}},
    {"code_interpreter": {"code": "import math\nprint(math.pi)", "container_id": "cntr_1",
                          "outputs": [{"logs": "3.14"}, {"image": "https://example.com/i.png"}],
                          "files": [{"marker": "c1", "file_id": "cfile_1",
                                     "filename": "plot.png"}]}},
]  # fmt: skip
RESPOND = {
    "hosted": HOSTED,
    "text": "It is [sunny](cite:w1), the [policy](cite:f1) agrees; [see the plot](cite:c1).",
    "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
    "chunking": {"fixed": 4},
    "billable_web_requests": 1,
}
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"], "additionalProperties": False},
    "strict": True,
}  # fmt: skip
TOOLS = [
    {"type": "web_search"},
    {"type": "file_search", "vector_store_ids": ["vs_1"]},
    {"type": "code_interpreter", "container": "cntr_1"},
    WEATHER,
]
INCLUDE = ["web_search_call.action.sources", "file_search_call.results",
           "code_interpreter_call.outputs"]  # fmt: skip
HOSTED_TYPES = ("web_search_call", "file_search_call", "code_interpreter_call")


def script(turns: list[dict[str, Any]]) -> Script:
    return Script.from_dict({"baseline": BASELINE, "turns": turns})


def client(server: MockServer, *, azure: bool = False) -> tuple[openai.OpenAI, str]:
    test_id = f"sdk{next(_IDS)}"
    base = server.azure_openai_base_url if azure else server.openai_base_url
    made = openai.OpenAI(
        base_url=base, api_key="k", max_retries=0, _strict_response_validation=True,
        default_headers={"x-callgate-test-id": test_id},
    )  # fmt: skip
    return made, test_id


def sent_bytes(recorder: RecordingApp, test_id: str) -> bytes:
    (exchange,) = [e for e in recorder.exchanges if e.headers.get("x-callgate-test-id") == test_id]
    return exchange.response_body


def sdk_projection(response: Any) -> tuple[list[Any], list[Any]]:
    """(type, id, status, item) of the SDK's hosted items, and its annotations as JSON."""
    hosted = [
        (o.type, o.id, o.status, o.to_dict(mode="json"))
        for o in response.output
        if o.type in HOSTED_TYPES
    ]
    annotations = [
        a.to_dict(mode="json")
        for o in response.output
        if o.type == "message"
        for part in o.content
        if part.type == "output_text"
        for a in part.annotations
    ]
    return hosted, annotations


def ours(turn: oai.Turn) -> tuple[list[Any], list[Any]]:
    return [(h.tool, h.id, h.status, h.raw) for h in turn.hosted_calls], [
        c.raw for c in turn.citations
    ]


def check_turn(turn: oai.Turn, response: Any) -> None:
    assert ours(turn) == sdk_projection(response)
    assert len(turn.hosted_calls) == 5
    assert [c.kind for c in turn.citations] == [
        "url_citation", "file_citation", "container_file_citation",
    ]  # fmt: skip
    assert [c.name for c in turn.calls] == ["get_weather"]
    text = response.output_text
    assert text[turn.citations[0].start : turn.citations[0].end] == "sunny"


@pytest.fixture(scope="module")
def served() -> Any:
    with recording_mock_server(script([{"protocol": "openai_responses",
                                        "respond": RESPOND}])) as pair:  # fmt: skip
        yield pair


REQUEST = {"model": "m", "input": "weather?", "tools": TOOLS, "include": INCLUDE}


@pytest.mark.parametrize("azure", [False, True])
def test_create_streamed(served: Any, azure: bool) -> None:
    server, recorder = served
    sdk, test_id = client(server, azure=azure)
    events = list(sdk.responses.create(**REQUEST, stream=True))
    final = events[-1].response
    assert events[-1].type == "response.completed"
    from_bytes = oai.parse_stream(sent_bytes(recorder, test_id), baseline=BASELINE,
                                  request=REQUEST)  # fmt: skip
    parser = oai.Parser(baseline=BASELINE, request=REQUEST)
    for event in events:
        parser.feed_event(event.to_dict(mode="json"))
    from_events = parser.finish()
    check_turn(from_bytes, final)
    assert ours(from_events) == ours(from_bytes)
    added = [e.annotation for e in events if e.type == "response.output_text.annotation.added"]
    streamed = [a if isinstance(a, dict) else a.to_dict(mode="json") for a in added]
    assert streamed == [c.raw for c in from_bytes.citations]


def test_create_not_streamed(served: Any) -> None:
    server, _ = served
    sdk, _ = client(server)
    response = sdk.responses.create(**REQUEST)
    turn = oai.parse_response(response.to_dict(mode="json"), baseline=BASELINE, request=REQUEST)
    check_turn(turn, response)
    usage = getattr(response, "tool_usage", None)
    if SDK_MAJOR == "3":
        assert usage is not None
        assert usage.web_search.num_requests == 1
    else:
        assert usage is None
        assert "tool_usage" not in response.to_dict()


def test_stream_helper(served: Any) -> None:
    server, recorder = served
    sdk, test_id = client(server)
    with sdk.responses.stream(**REQUEST) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert "response.code_interpreter_call_code.delta" in kinds
    turn = oai.parse_stream(sent_bytes(recorder, test_id), baseline=BASELINE, request=REQUEST)
    check_turn(turn, final)


def test_stream_and_body_agree_through_the_sdk(served: Any) -> None:
    server, _ = served
    sdk, _ = client(server)
    body = sdk.responses.create(**REQUEST)
    sdk2, _ = client(server)
    streamed = list(sdk2.responses.create(**REQUEST, stream=True))[-1].response
    assert sdk_projection(body) == sdk_projection(streamed)


def test_an_undeclared_hosted_tool_is_refused_after_the_sdk_decoded_it(served: Any) -> None:
    server, recorder = served
    sdk, test_id = client(server)
    request = {**REQUEST, "tools": [t for t in TOOLS if t["type"] != "file_search"]}
    list(sdk.responses.create(**request, stream=True))  # the SDK itself does not check
    with pytest.raises(SequenceError, match="file_search_call"):
        oai.parse_stream(sent_bytes(recorder, test_id), baseline=BASELINE, request=request)


# -- the 3.57.0 tool runner -------------------------------------------------------------------

runner = pytest.importorskip("openai.lib.responses_tool_runner") if SDK_MAJOR == "3" else None
needs_runner = pytest.mark.skipif(runner is None, reason="openai 2.x has no Responses tool runner")

LOOP = [
    {"protocol": "openai_responses", "respond": {
        "hosted": [{"web_search": {"query": "paris weather", "results": [
            {"marker": "w1", "url": "https://example.com/w", "title": "Weather"}]}}],
        "text": "Checking [the forecast](cite:w1).",
        "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        "chunking": {"fixed": 3}}},
    {"protocol": "openai_responses", "expect": {"function_results": [{"name": "get_weather"}]},
     "respond": {"hosted": [{"web_search": {"query": "paris now", "results": [
         {"marker": "w2", "url": "https://example.com/now", "title": "Now"}]}}],
         "text": "It is [sunny](cite:w2)."}},
]  # fmt: skip


def _registered(calls: list[Any]) -> Any:
    assert runner is not None
    return runner.RegisteredFunction(WEATHER, execute=lambda args: (calls.append(args), "21C")[1])


@needs_runner
@pytest.mark.parametrize("stream", [False, True])
def test_the_sdk_tool_runner_completes_a_mixed_hosted_and_function_turn(stream: bool) -> None:
    assert runner is not None
    with recording_mock_server(script(LOOP)) as (server, recorder):
        sdk, test_id = client(server)
        calls: list[Any] = []
        final = runner.ResponsesToolRunner(functions=[_registered(calls)]).run(
            sdk, {"model": "m", "input": "weather?", "tools": [{"type": "web_search"}],
                  "store": False}, stream=stream,
        )  # fmt: skip
        assert server.mismatches == []
        exchanges = [
            e for e in recorder.exchanges if e.headers.get("x-callgate-test-id") == test_id
        ]
    assert calls == [{"city": "Paris"}]
    assert final.output_text == "It is sunny."
    first = exchanges[0].response_body
    first_turn = (oai.parse_stream(first, baseline=BASELINE) if stream
                  else oai.parse_response(first, baseline=BASELINE))  # fmt: skip
    replayed = exchanges[1].request_json()["input"]
    hosted = [i for i in replayed if i.get("type") == "web_search_call"]
    assert hosted == [first_turn.hosted_calls[0].raw]  # the runner replays it verbatim
    # callgate's own builder produces the same replay of the hosted item and the message.
    ours_ = oai.build_stateless_continuation(
        first_turn, [oai_result(first_turn)], prior_input_items=[], store=False, model="m",
        instructions=None, tools=[WEATHER],
    )["input"]  # fmt: skip
    assert [i for i in ours_ if i.get("type") == "web_search_call"] == hosted


def oai_result(turn: oai.Turn) -> Any:
    from callgate import ToolResult

    return ToolResult(turn.calls[0].call_id, "21C")


@needs_runner
def test_the_sdk_runner_and_callgate_both_stop_on_a_failed_hosted_item() -> None:
    assert runner is not None
    failed = [{"protocol": "openai_responses", "respond": {
        "hosted": [{"web_search": {"query": "q", "status": "failed"}}],
        "text": "Trying.",
        "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}}]  # fmt: skip
    with recording_mock_server(script(failed)) as (server, recorder):
        sdk, test_id = client(server)
        calls: list[Any] = []
        with pytest.raises(Exception, match="did not complete"):
            runner.ResponsesToolRunner(functions=[_registered(calls)]).run(
                sdk, {"model": "m", "input": "q", "tools": [{"type": "web_search"}],
                      "store": False},
            )  # fmt: skip
        body = sent_bytes(recorder, test_id)
    assert calls == []
    with pytest.raises(SequenceError, match="has status 'failed'"):
        oai.parse_response(body, baseline=BASELINE)
