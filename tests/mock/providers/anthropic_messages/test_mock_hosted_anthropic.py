"""Anthropic server tools in the mock: ``respond.hosted`` at load, rendering per contract
section 12.3 with stream = body parity, and the request checks over a real socket.

Rendering is checked through the room's own parser (which fails closed on any block or
event out of place) and against the wire order the contract pins; the request checks go
through the official SDK, which must raise ``anthropic.BadRequestError`` with the
provider's error body. A refused request consumes no turn, so the corrected request that
follows is served.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from callgate import ToolResult
from callgate import anthropic_messages as am
from callgate.mock import MockServer, ScriptBuilder, ScriptError
from callgate.mock._render_turn import render

SEARCH = {"tool": "web_search", "query": "brest tides",
          "results": [{"url": "https://t.example/brest", "title": "Brest", "page_age": "2 days",
                       "marker": "t"}]}  # fmt: skip
FETCH = {"tool": "web_fetch", "url": "https://t.example/doc", "marker": "d",
         "document": {"text": "Brest: high tide 14:02, low 20:15.", "title": "Doc"}}  # fmt: skip
PDF = {"tool": "web_fetch", "url": "https://t.example/p.pdf", "retrieved_at": "2026-11-30",
       "document": {"pdf_base64": "JVBERi0xLjQK"}}  # fmt: skip
BASH = {"tool": "bash", "command": "ls", "stdout": "a.csv\n", "stderr": "", "return_code": 0,
        "files": ["file_1"]}  # fmt: skip
EDITS = [
    {"tool": "text_editor", "command": "view", "path": "/a.txt", "content": "one\ntwo\n"},
    {"tool": "text_editor", "command": "create", "path": "/b.txt", "file_text": "x",
     "is_file_update": False},
    {"tool": "text_editor", "command": "str_replace", "path": "/b.txt", "old_str": "x",
     "new_str": "y", "lines": ["y"]},
]  # fmt: skip
PYTHON = {"tool": "python", "code": "print(1)", "stdout": "1\n"}
CITE = {"text": "High tide 14:02.", "cite": [{"marker": "t"}, {"marker": "d", "quote": "14:02"}]}
FIXTURES: dict[str, dict[str, Any]] = {
    "search_cited": {"hosted": [SEARCH, FETCH, CITE]},
    "search_error": {"hosted": [{"tool": "web_search", "query": "q", "error": "max_uses_exceeded"},
                                {"text": "I could not search again."}]},
    "fetch_pdf": {"hosted": [PDF, {"tool": "web_fetch", "url": "u", "error": "url_not_allowed"}]},
    "code": {"hosted": [BASH, *EDITS, PYTHON], "text": "Running."},
    "code_error": {"hosted": [{**BASH, "error": "execution_time_exceeded"}]},
    "pending": {"hosted": [{**SEARCH, "pending": True}],
                "calls": [{"name": "get_weather", "arguments": {"city": "Brest"}}]},
    "resumed": {"hosted": [{**SEARCH, "result_for": "srvtoolu_x"}, CITE | {"cite": []}]},
    "paused": {"hosted": [SEARCH], "status": "pause_turn"},
    "called": {"hosted": [{"tool": "python", "code": "search()", "id": "srvtoolu_code"},
                          {**SEARCH, "caller": {"type": "code_execution_20250825",
                                                "tool_id": "srvtoolu_code"}},
                          {**FETCH, "caller": {"type": "direct"}}]},
}  # fmt: skip


def _turns() -> dict[str, Any]:
    b = ScriptBuilder(seed=1)
    for name, respond in FIXTURES.items():
        b.turn("anthropic_messages", conversation=name, **respond)
    return dict(b.build().conversations)


TURNS = _turns()


def _both(name: str) -> tuple[am.Turn, am.Turn, list[dict[str, Any]]]:
    (turn,) = TURNS[name]
    streamed = render(turn, seed=1, conversation=name, turn_number=0, stream=True)
    body = render(turn, seed=1, conversation=name, turn_number=0, stream=False)
    assert body.body is not None
    return am.parse_stream(streamed.sse), am.parse_response(body.body), list(streamed.events)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_stream_and_body_parity_for_every_server_tool_fixture(name: str) -> None:
    streamed, body, _ = _both(name)
    assert streamed.content == body.content
    assert streamed.hosted_calls == body.hosted_calls
    assert streamed.citations == body.citations
    assert streamed.usage == body.usage
    assert streamed.message.get("container") == body.message.get("container")
    assert streamed.stop_reason == body.stop_reason


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_stream_follows_the_pinned_server_tool_order(name: str) -> None:
    _, _, events = _both(name)
    kinds: dict[int, str] = {}
    deltas: dict[int, list[str]] = {}
    for event in events:
        if event["type"] == "content_block_start":
            kinds[event["index"]] = event["content_block"]["type"]
            if kinds[event["index"]] == "server_tool_use":
                assert event["content_block"]["input"] == {}
        elif event["type"] == "content_block_delta":
            deltas.setdefault(event["index"], []).append(event["delta"]["type"])
    for index, kind in kinds.items():
        if kind == "server_tool_use":  # an empty first fragment, then the input
            first = next(e for e in events if e.get("index") == index and "delta" in e)
            assert first["delta"] == {"type": "input_json_delta", "partial_json": ""}
        elif kind.endswith("_tool_result"):
            assert index not in deltas  # complete at content_block_start
    start, final = events[0]["message"]["usage"], events[-2]["usage"]
    if "server_tool_use" in final:
        assert start["server_tool_use"] == {"web_search_requests": 0, "web_fetch_requests": 0}
        assert set(final["server_tool_use"]) == {"web_search_requests", "web_fetch_requests"}


def test_hosted_projection_of_rendered_turns() -> None:
    turn, _, _ = _both("search_cited")
    assert [(h.tool, h.status) for h in turn.hosted_calls] == [
        ("web_search", "completed"), ("web_fetch", "completed")]  # fmt: skip
    web, char = turn.citations
    assert (web.kind, web.source) == ("web_search_result_location", "https://t.example/brest")
    document = "Brest: high tide 14:02, low 20:15."
    assert (char.kind, char.start, char.end) == ("char_location", 17, 22)
    assert document[char.start : char.end] == char.raw["cited_text"] == "14:02"
    assert turn.usage["server_tool_use"] == {"web_search_requests": 1, "web_fetch_requests": 1}
    error, _, _ = _both("search_error")
    assert [h.status for h in error.hosted_calls] == ["error:max_uses_exceeded"]
    assert error.usage["server_tool_use"]["web_search_requests"] == 0
    code, _, _ = _both("code")
    assert [h.tool for h in code.hosted_calls] == ["bash_code_execution"] + [
        "text_editor_code_execution"] * 3 + ["code_execution"]  # fmt: skip
    assert code.container_id is not None
    pending, _, _ = _both("pending")
    assert [h.status for h in pending.hosted_calls] == [None]
    assert [c.name for c in pending.calls] == ["get_weather"]
    resumed, _, _ = _both("resumed")
    assert [(h.tool, h.id) for h in resumed.hosted_calls] == [
        ("web_search_tool_result", "srvtoolu_x")]  # fmt: skip
    called, _, _ = _both("called")
    search_call, search_result = called.hosted_calls[1].raw
    assert search_call["caller"] == search_result["caller"] == {
        "type": "code_execution_20250825", "tool_id": "srvtoolu_code"}  # fmt: skip
    paused, _, _ = _both("paused")
    assert paused.send_back_unchanged
    assert paused.calls == ()


@pytest.mark.parametrize(
    ("hosted", "message"),
    [
        ("search", "non-empty list"),
        ([{"tool": "file_search", "query": "q"}], "hosted tool must be one of"),
        ([{"text": "x", "tool": "web_search"}], "exactly one of"),
        ([{"tool": "web_search"}], "needs query"),
        ([{"tool": "web_search", "query": "q", "error": "content_too_large"}], "error is one of"),
        ([{"tool": "web_search", "query": "q", "results": [{"url": "u"}]}], "url and title"),
        ([{"tool": "web_fetch", "url": "u", "document": {}}], "exactly one of text"),
        ([{"tool": "web_fetch", "url": "u", "document": {"pdf_base64": "x"}, "marker": "m"}],
         "only a text document"),
        ([{"tool": "bash", "command": "ls", "return_code": "0"}], "return_code"),
        ([{"tool": "bash", "command": "ls", "query": "q"}], "takes no query"),
        ([{"tool": "text_editor", "command": "delete", "path": "/a"}], "view, create"),
        ([{"text": "x", "cite": [{"marker": "nowhere"}]}], "names no result marker"),
        ([{"tool": "web_search", "query": "q", "pending": "yes"}], "pending is true"),
        ([{"tool": "web_search", "query": "q",
           "caller": {"type": "code_execution_20260521", "tool_id": "s"}}], "caller is"),
        ([{"tool": "bash", "command": "ls", "caller": {"type": "direct"}}], "take a caller"),
        ([{"tool": ["web_search"], "query": "q"}], "hosted tool must be one of"),
        ([{"tool": "web_search", "query": "q", "error": ["x"]}], "error is one of"),
        ([{"tool": "text_editor", "command": ["view"], "path": "/a"}], "needs command"),
        ([{"text": "x", "cite": [{"marker": ["t"]}]}], "names no result marker"),
    ],
)  # fmt: skip
def test_bad_hosted_steps_are_refused_at_load(hosted: Any, message: str) -> None:
    b = ScriptBuilder().turn("anthropic_messages", hosted=hosted)
    with pytest.raises(ScriptError, match=message):
        b.build()


def test_hosted_is_an_anthropic_respond_key_only() -> None:
    with pytest.raises(ScriptError):
        ScriptBuilder().turn("openai_responses", hosted=[SEARCH]).build()


# -- request checks over a real socket ----------------------------------------------------

MODEL = "hosted-model"
FIRST = [{"role": "user", "content": "Tides?"}]
WEB = {"type": "web_search_20250305", "name": "web_search"}
CODE = {"type": "code_execution_20250825", "name": "code_execution"}
# One accepted declaration per option (each is also refused in a wrong form below).
ACCEPTED: list[dict[str, Any]] = [
    WEB | {"max_uses": 2},
    WEB | {"allowed_domains": ["t.example"]},
    WEB | {"blocked_domains": ["spam.example"]},
    WEB | {"user_location": {"type": "approximate", "city": "Brest", "country": "FR",
                             "timezone": "Europe/Paris"}},
    {"type": "web_search_20260209", "name": "web_search", "allowed_callers": ["direct"]},
    {"type": "web_search_20260318", "name": "web_search", "response_inclusion": "excluded"},
    {"type": "web_fetch_20250910", "name": "web_fetch", "citations": {"enabled": True},
     "max_content_tokens": 1000},
    {"type": "web_fetch_20260309", "name": "web_fetch", "use_cache": False},
    {"type": "web_fetch_20260318", "name": "web_fetch", "response_inclusion": "full"},
    {"type": "code_execution_20250522", "name": "code_execution"},
    CODE | {"defer_loading": False, "strict": True},
    {"type": "code_execution_20260120", "name": "code_execution",
     "cache_control": {"type": "ephemeral", "ttl": "1h"}},
    {"type": "code_execution_20260521", "name": "code_execution"},
]  # fmt: skip
REFUSED: list[tuple[dict[str, Any], str]] = [
    (WEB | {"max_uses": 0}, "tools.0.max_uses: must be a positive integer"),
    (WEB | {"allowed_domains": ["a"], "blocked_domains": ["b"]}, "cannot be used alongside"),
    (WEB | {"allowed_domains": "t.example"}, "allowed_domains: Input should be a valid list"),
    (WEB | {"user_location": {"type": "exact"}}, "approximate"),
    (WEB | {"user_location": {"type": "approximate", "country": "FRA"}}, "alpha-2"),
    (WEB | {"allowed_callers": ["code_execution_20990101"]}, "allowed_callers"),
    (WEB | {"response_inclusion": "full"}, "response_inclusion: Extra inputs"),
    ({"type": "web_search_20260318", "name": "web_search", "response_inclusion": "none"},
     "response_inclusion: Input should be 'excluded' or 'full'"),
    ({"type": "web_fetch_20250910", "name": "web_fetch", "use_cache": True}, "use_cache: Extra"),
    ({"type": "web_fetch_20260309", "name": "web_fetch", "use_cache": "yes"}, "boolean"),
    ({"type": "web_fetch_20250910", "name": "web_fetch", "citations": True},
     "citations: Input should be a valid dictionary"),
    ({"type": "web_fetch_20250910", "name": "web_fetch", "max_content_tokens": -1}, "positive"),
    ({"type": "web_fetch_20250910", "name": "web_fetch", "url_sources": {}}, "not pinned"),
    ({"type": "web_search_20990101", "name": "web_search"}, "Input tag 'web_search_20990101'"),
    ({"type": "web_search_20250305", "name": "search"}, "name: Input should be 'web_search'"),
    (CODE | {"max_uses": 1}, "max_uses: Extra inputs are not permitted"),
    (CODE | {"strict": "yes"}, "boolean"),
    (WEB | {"allowed_callers": [{"type": "direct"}]}, "allowed_callers"),
    (CODE | {"defer_loading": 1}, "boolean"),
    (CODE | {"cache_control": {"type": "ephemeral", "ttl": "2h"}}, "ttl: Input should be"),
    (WEB | {"blocked_domains": [""]}, "list of domain strings"),
]  # fmt: skip


def _script(**validation: bool) -> Any:
    b = ScriptBuilder(seed=2, validation=validation)
    for n in range(len(ACCEPTED)):
        b.turn("anthropic_messages", conversation=f"ok-{n}", text="fine")
    for name in ("replay", "pause", "off"):
        status = {"status": "pause_turn"} if name == "pause" else {}
        b.turn("anthropic_messages", conversation=name, hosted=[SEARCH, BASH, CITE | {"cite":
               [{"marker": "t"}]}], calls=[{"name": "get_weather", "arguments": {}}]
               if name != "pause" else [], **status)  # fmt: skip
        b.turn("anthropic_messages", conversation=name, text="Done.")
    return b.build()


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(_script()) as running:
        yield running


@pytest.fixture(scope="module")
def lenient() -> Iterator[MockServer]:
    with MockServer(_script(anthropic_server_blocks_unchanged=False)) as running:
        yield running


def _client(server: MockServer, conversation: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=server.anthropic_base_url, api_key="k", max_retries=0,
        _strict_response_validation=True,
        default_headers={"x-callgate-conversation": conversation},
    )  # fmt: skip


def _refused(client: anthropic.Anthropic, **request: Any) -> str:
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model=MODEL, max_tokens=64, **request)
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["error"]["type"] == "invalid_request_error"
    return str(body["error"]["message"])


@pytest.mark.parametrize("n", range(len(ACCEPTED)))
def test_each_declaration_option_is_accepted(server: MockServer, n: int) -> None:
    with _client(server, f"ok-{n}") as client:
        reply = client.messages.create(
            model=MODEL, max_tokens=64, messages=FIRST, tools=[ACCEPTED[n]]
        )  # type: ignore[list-item]
    assert [b.type for b in reply.content] == ["text"]


@pytest.mark.parametrize(("tool", "message"), REFUSED)
def test_each_declaration_option_is_refused_in_a_wrong_form(
    server: MockServer, tool: dict[str, Any], message: str
) -> None:
    with _client(server, "ok-0") as client:
        assert message in _refused(client, messages=FIRST, tools=[tool])
    assert server.state.remaining()["ok-0"] in (0, 1)  # nothing consumed by a refusal


TOOLS = [WEB, CODE, {"name": "get_weather", "input_schema": {"type": "object"}}]


def _first(client: anthropic.Anthropic) -> tuple[am.Turn, dict[str, Any]]:
    reply = client.messages.create(model=MODEL, max_tokens=64, messages=FIRST, tools=TOOLS)
    turn = am.parse_response(reply.to_dict(mode="json"))
    results = [ToolResult(c.call_id, "rain") for c in turn.calls]
    request = am.build_continuation(turn, results, history=FIRST, model=MODEL, max_tokens=64,
                                    tools=TOOLS)  # fmt: skip
    return turn, request


def _edit(request: dict[str, Any], index: int, path: list[Any], value: Any) -> dict[str, Any]:
    edited = copy.deepcopy(request)
    target = edited["messages"][index]["content"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return edited


def test_a_replay_that_edits_or_drops_a_server_block_is_refused(server: MockServer) -> None:
    with _client(server, "replay") as client:
        turn, request = _first(client)
        kinds = [b["type"] for b in turn.content]
        result = kinds.index("web_search_tool_result")
        text = kinds.index("text")
        edits = [
            _edit(request, 1, [result, "content", 0, "encrypted_content"], "ZWRpdGVk"),
            _edit(request, 1, [result, "content", 0, "url"], "https://elsewhere.example"),
            _edit(request, 1, [text, "citations", 0, "encrypted_index"], "Zm9yZ2Vk"),
            _edit(request, 1, [0, "input"], {"query": "other"}),
        ]
        dropped = copy.deepcopy(request)
        del dropped["messages"][1]["content"][result]
        for bad in [*edits, dropped]:
            message = _refused(
                client, **{k: v for k, v in bad.items() if k not in ("model", "max_tokens")}
            )
            assert "passed back exactly as the API returned it" in message
        elsewhere = dict(request, container="container_unknown")
        assert "not found" in _refused(
            client, **{k: v for k, v in elsewhere.items() if k not in ("model", "max_tokens")}
        )
        reply = client.messages.create(**request)  # unchanged: served
    assert [b.text for b in reply.content if b.type == "text"] == ["Done."]


def test_a_paused_turn_must_come_back_unchanged_as_the_last_message(server: MockServer) -> None:
    with _client(server, "pause") as client:
        turn, request = _first(client)
        assert turn.stop_reason == "pause_turn"
        assert request["messages"][-1] == {"role": "assistant", "content": list(turn.content)}
        trimmed = copy.deepcopy(request)
        trimmed["messages"][-1]["content"] = trimmed["messages"][-1]["content"][:-1]
        body = {k: v for k, v in trimmed.items() if k not in ("model", "max_tokens")}
        assert "paused turn's content" in _refused(client, **body)
        reply = client.messages.create(**request)
    assert reply.stop_reason == "end_turn"


def test_the_replay_check_can_be_switched_off(lenient: MockServer) -> None:
    with _client(lenient, "off") as client:
        turn, request = _first(client)
        kinds = [b["type"] for b in turn.content]
        bad = _edit(request, 1, [kinds.index("web_search_tool_result"), "content", 0,
                                 "encrypted_content"], "ZWRpdGVk")  # fmt: skip
        reply = client.messages.create(**bad)
    assert reply.stop_reason == "end_turn"
