"""The mock's hosted tools on OpenAI Responses (and the Azure v1 route), over a real socket.

Script syntax (``respond.hosted``, cited text, ``billable_web_requests``) is checked at
load; rendering emits each tool's status events in order, ``annotation.added`` for every
citation and a terminal Response equal to the stream; ``include`` changes exactly the
result fields it names; every hosted declaration option has an accepted and a refused
request, and unpinned options are refused by name.
"""

from __future__ import annotations

import itertools
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from callgate import openai_responses as oai
from callgate.mock import MockServer, Script, ScriptError
from callgate.sse import SSEDecoder

_IDS = itertools.count()

HOSTED = [
    {"web_search": {"query": "paris weather", "queries": ["paris weather", "paris sun"],
                    "results": [{"marker": "w1", "url": "https://example.com/w", "title": "W"}]}},
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
TEXT = "It is [sunny](cite:w1), the [policy](cite:f1) agrees; [see the plot](cite:c1)."
PLAIN = "It is sunny, the policy agrees; see the plot."
TOOLS = [
    {"type": "web_search"},
    {"type": "file_search", "vector_store_ids": ["vs_1"]},
    {"type": "code_interpreter", "container": "cntr_1"},
    {"type": "function", "name": "get_weather", "parameters": None, "strict": None},
]
ALL_INCLUDES = [
    "web_search_call.action.sources",
    "file_search_call.results",
    "code_interpreter_call.outputs",
]


def script(respond: dict[str, Any], baseline: str = "2026-11") -> Script:
    return Script.from_dict(
        {"baseline": baseline, "turns": [{"protocol": "openai_responses", "respond": respond}]}
    )


RESPOND = {
    "hosted": HOSTED,
    "text": TEXT,
    "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
    "chunking": {"fixed": 3},
    "billable_web_requests": 1,
}


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(script(RESPOND)) as running:
        yield running


def post(server: MockServer, body: dict[str, Any], *, azure: bool = False) -> tuple[int, Any]:
    base = server.azure_openai_base_url if azure else server.openai_base_url
    headers = {"content-type": "application/json", "x-callgate-test-id": f"h{next(_IDS)}"}
    headers |= {"api-key": "k"} if azure else {"authorization": "Bearer k"}
    request = urllib.request.Request(
        base.rstrip("/") + "/responses", json.dumps(body).encode(), headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            raw = reply.read()
            status = reply.status
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
    if body.get("stream"):
        decoder = SSEDecoder()
        events = [json.loads(e.data) for e in [*decoder.feed(raw), *decoder.finish()]]
        return status, (raw, events)
    return status, json.loads(raw)


def request(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "input": "weather?", "tools": TOOLS, **extra}


# -- script syntax ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("respond", "problem"),
    [
        ({"hosted": []}, "list of 1 to"),
        ({"hosted": [{"web_search": {}}]}, "needs a string 'query'"),
        ({"hosted": [{"browse": {}}]}, "one object keyed by"),
        ({"hosted": [{"web_search": {"query": "q", "colour": 1}}]}, "unknown keys"),
        ({"hosted": [{"web_search": {"query": "q", "status": "done"}}]}, "status is one of"),
        (
            {"hosted": [{"web_search": {"action": "open_page", "url": "u", "results": []}}]},
            "only a search action",
        ),
        ({"hosted": [{"file_search": {"queries": "q"}}]}, "list of strings"),
        ({"hosted": [{"file_search": {"queries": [], "results": [{"score": 2}]}}]}, "0 to 1"),
        ({"hosted": [{"code_interpreter": {}}]}, "string 'code'"),
        ({"hosted": [{"code_interpreter": {"code": "", "outputs": [{"video": "x"}]}}]}, "logs"),
        (
            {
                "hosted": [
                    {
                        "web_search": {
                            "query": "q",
                            "results": [
                                {"marker": "a", "url": "u", "title": "t"},
                                {"marker": "a", "url": "v", "title": "t"},
                            ],
                        }
                    }
                ]
            },
            "defined twice",
        ),
        ({"hosted": HOSTED, "text": "[x](cite:nope)"}, "marker 'nope'"),
        ({"billable_web_requests": -1}, "billable_web_requests must be at least 0"),
    ],
)
def test_bad_hosted_steps_are_refused_at_load(respond: dict[str, Any], problem: str) -> None:
    with pytest.raises(ScriptError, match=problem):
        script(respond)


# -- rendering --------------------------------------------------------------------------------


def _types(events: list[dict[str, Any]], index: int) -> list[str]:
    return [e["type"] for e in events if e.get("output_index") == index]


def test_each_tool_streams_its_status_events_in_order(server: MockServer) -> None:
    status, (_, events) = post(server, request(stream=True, include=ALL_INCLUDES))
    assert status == 200
    added, done = "response.output_item.added", "response.output_item.done"
    for index in (0, 1, 2):
        pings = [f"response.web_search_call.{p}" for p in ("in_progress", "searching", "completed")]
        assert _types(events, index) == [added, *pings, done]
    assert _types(events, 3) == [
        added,
        *(f"response.file_search_call.{p}" for p in ("in_progress", "searching", "completed")),
        done,
    ]
    code = _types(events, 4)
    assert code[:2] == [added, "response.code_interpreter_call.in_progress"]
    assert set(code[2:-4]) == {"response.code_interpreter_call_code.delta"}
    assert code[-4:] == [
        "response.code_interpreter_call_code.done",
        "response.code_interpreter_call.interpreting",
        "response.code_interpreter_call.completed",
        done,
    ]


def test_citations_are_computed_from_markers_and_streamed(server: MockServer) -> None:
    _, (_, events) = post(server, request(stream=True, include=ALL_INCLUDES))
    added = [e for e in events if e["type"] == "response.output_text.annotation.added"]
    final = events[-1]["response"]
    message = final["output"][5]
    part = message["content"][0]
    assert part["text"] == PLAIN
    assert [a["annotation"] for a in added] == part["annotations"]
    assert [a["annotation_index"] for a in added] == [0, 1, 2]
    url, file, container = part["annotations"]
    assert PLAIN[url["start_index"] : url["end_index"]] == "sunny"
    assert url["url"] == "https://example.com/w"
    assert file == {"type": "file_citation", "file_id": "file-1", "filename": "p.md",
                    "index": PLAIN.index("policy") + len("policy")}  # fmt: skip
    assert PLAIN[container["start_index"] : container["end_index"]] == "see the plot"
    assert container["container_id"] == "cntr_1"


def test_the_terminal_response_equals_the_stream_and_the_body(server: MockServer) -> None:
    _, (raw, events) = post(server, request(stream=True, include=ALL_INCLUDES))
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert events[-1]["response"]["output"] == done
    _, whole = post(server, request(include=ALL_INCLUDES))
    assert whole["output"] == done
    streamed = oai.parse_stream(raw, request=request())
    body = oai.parse_response(whole, request=request())
    assert streamed.hosted_calls == body.hosted_calls
    assert streamed.citations == body.citations
    assert [c.name for c in streamed.calls] == ["get_weather"]


def _results(output: list[dict[str, Any]]) -> tuple[Any, Any, Any]:
    return (
        output[0]["action"].get("sources"),
        output[3].get("results"),
        output[4].get("outputs"),
    )


def test_without_include_no_results_are_shown(server: MockServer) -> None:
    for stream in (True, False):
        _, got = post(server, request(stream=stream))
        output = got[1][-1]["response"]["output"] if stream else got["output"]
        assert _results(output) == (None, None, None)
        assert "sources" not in output[0]["action"]


@pytest.mark.parametrize("include", ALL_INCLUDES)
def test_each_include_value_shows_exactly_its_results(server: MockServer, include: str) -> None:
    _, body = post(server, request(include=[include, "reasoning.encrypted_content"]))
    sources, results, outputs = _results(body["output"])
    assert (sources is not None) == (include == "web_search_call.action.sources")
    assert (results is not None) == (include == "file_search_call.results")
    assert (outputs is not None) == (include == "code_interpreter_call.outputs")
    if sources is not None:
        assert sources == [{"type": "url", "url": "https://example.com/w"}]
    if results is not None:
        assert results == [{"file_id": "file-1", "filename": "p.md", "score": 0.8,
                            "text": "policy",
                            "attributes": {"team": "a", "year": 2026, "public": True}}]  # fmt: skip
    if outputs is not None:
        assert outputs == [{"type": "logs", "logs": "3.14"},
                           {"type": "image", "url": "https://example.com/i.png"}]  # fmt: skip


def test_the_azure_route_serves_the_same_hosted_turn(server: MockServer) -> None:
    _, plain = post(server, request(include=ALL_INCLUDES))
    status, azure = post(server, request(include=ALL_INCLUDES), azure=True)
    assert status == 200
    assert azure["output"] == plain["output"]


# -- metering ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "baseline", "expected"),
    [
        (2, "2026-11", {"num_requests": 2}),
        (0, "2026-11", {"num_requests": 0}),
        (None, "2026-11", None),
        (2, "2026-07-21", None),  # the 2.46.0 SDK has no tool_usage
    ],
)
def test_billable_web_requests_set_tool_usage(given: Any, baseline: str, expected: Any) -> None:
    respond = {"hosted": HOSTED[:1], "text": "ok", "billable_web_requests": given}
    with MockServer(script(respond, baseline)) as running:
        for stream in (True, False):
            _, got = post(running, request(stream=stream))
            response = got[1][-1]["response"] if stream else got
            if expected is None:
                assert "tool_usage" not in response
            else:
                assert response["tool_usage"]["web_search"] == expected
                assert response["tool_usage"]["image_gen"]["total_tokens"] == 0


def test_a_failed_hosted_step_renders_its_status(server: MockServer) -> None:
    respond = {"hosted": [{"file_search": {"queries": ["q"], "status": "failed"}}], "text": "no"}
    with MockServer(script(respond)) as running:
        _, (_, events) = post(running, request(stream=True))
    assert events[-1]["response"]["output"][0]["status"] == "failed"
    assert "response.file_search_call.completed" not in [e["type"] for e in events]
    assert (
        oai.parse_stream(b"".join(oai._render.encode_sse([e]) for e in events))
        .hosted_calls[0]
        .status
        == "failed"
    )
