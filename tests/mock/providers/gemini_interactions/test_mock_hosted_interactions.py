"""Hosted tools in the mock's Gemini Interactions provider: ``respond.hosted`` rendering,
its load-time validation, and the 400s for hosted tool declarations (over a real socket).

Rendering: the same scripted turn rendered streamed and not, per baseline, parses to equal
hosted calls and citations; offsets are the UTF-8 byte offsets of the cited spans. Every
declaration option the mock claims has an accepted and a refused HTTP case; tools and
options it does not model are refused with a message saying so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from callgate import gemini_interactions as gi
from callgate.mock import MockServer, ScriptBuilder, ScriptError
from callgate.mock._render_turn import render

TEXT = "Paris — la capitale, voilà."
SEARCH = {
    "tool": "google_search",
    "queries": ["capital of France"],
    "suggestions": "<div>chips</div>",
    "signature": "c2ln",
    "results": [{"marker": "s1", "uri": "https://a.example/paris", "title": "Paris"}],
}
CODE = {"tool": "code_execution", "code": "1/0", "outcome": "failed", "output": "ZeroDivisionError"}
URLS = {
    "tool": "url_context",
    "stream_as": "delta",
    "results": [{"marker": "u1", "url": "https://b.example", "title": "B", "status": "success"}],
}
FILES = {
    "tool": "file_search",
    "chunks": [
        {"marker": "f1", "store": "fileSearchStores/s", "document": "d.pdf", "text": "chunk"}
    ],
}
CITE = [
    {"marker": "s1", "span": "Paris"},
    {"marker": "f1", "span": "capitale"},
    {"marker": "u1", "span": "à", "occurrence": 1},
]
HOSTED = {"tools": [SEARCH, CODE, URLS, FILES], "cite": CITE}


def _turn(baseline: str, **respond: Any) -> Any:
    builder = ScriptBuilder(seed=5, baseline=baseline)
    builder.turn("gemini_interactions", **respond)
    return builder.build().conversations["default"][0]


def _both(baseline: str, **respond: Any) -> tuple[gi.Turn, gi.Turn]:
    turn = _turn(baseline, **respond)
    parsed = []
    for stream in (True, False):
        done = render(
            turn, seed=5, conversation="default", turn_number=0, stream=stream, baseline=baseline
        )
        if stream:
            parsed.append(gi.parse_stream(done.sse, baseline=baseline))
        else:
            parsed.append(gi.parse_interaction(done.body, source="create", baseline=baseline))
    return parsed[0], parsed[1]


@pytest.mark.parametrize("baseline", ["2026-11", "2026-07-21"])
def test_streamed_and_json_renderings_project_equally(baseline: str) -> None:
    streamed, body = _both(baseline, text=TEXT, hosted=HOSTED)
    assert streamed.hosted_calls == body.hosted_calls
    assert streamed.citations == body.citations
    assert list(streamed.steps) == list(body.steps)
    assert [(c.tool, c.status) for c in body.hosted_calls] == [
        ("google_search", "completed"),
        ("code_execution", "failed"),
        ("url_context", "completed"),
        ("file_search", "completed"),
    ]
    encoded = TEXT.encode()
    spans = [encoded[c.start : c.end].decode() for c in body.citations]  # type: ignore[misc]
    assert spans == ["Paris", "capitale", "à"]
    assert [(c.kind, c.source) for c in body.citations] == [
        ("url_citation", "https://a.example/paris"),
        ("file_citation", "d.pdf"),
        ("url_citation", "https://b.example"),
    ]
    assert body.usage is not None
    assert body.usage["grounding_tool_count"] == [{"type": "google_search", "count": 1}]
    # The file chunks stream in the result delta (no place on the step): kept, not replayed.
    assert body.opaque == ()
    assert len(streamed.opaque) == 1
    assert "file_search_result" in streamed.opaque_reasons[0]


def test_rendered_steps_carry_what_the_script_says() -> None:
    _, body = _both("2026-11", text=TEXT, hosted=HOSTED)
    search, result = body.steps[0], body.steps[1]
    assert search["arguments"] == {"queries": ["capital of France"]}
    assert search["signature"] == result["signature"] == "c2ln"
    assert result["result"] == [{"search_suggestions": "<div>chips</div>"}]
    code = body.hosted_calls[1].raw
    assert code["call"]["arguments"] == {"code": "1/0", "language": "python"}
    assert code["result"]["result"] == "ZeroDivisionError"
    assert code["result"]["is_error"] is True
    assert body.hosted_calls[2].raw["result"]["result"] == [
        {"url": "https://b.example", "status": "success"}
    ]
    assert body.hosted_calls[3].raw["result"]["result"][0]["text"] == "chunk"
    assert body.citations[1].raw == {
        "type": "file_citation",
        "document_uri": "d.pdf",
        "source": "fileSearchStores/s",
        "start_index": TEXT.encode().index(b"capitale"),
        "end_index": TEXT.encode().index(b"capitale") + 8,
    }


def test_bash_renders_and_both_baselines_keep_it_raw() -> None:
    # google-genai 2.12.1 types the language `python` only; a hosted-tool detail never
    # refuses a turn (docs/required-fields.md), so the 2026-07-21 parser keeps it raw.
    bash = {**CODE, "language": "bash", "outcome": "ok"}
    streamed, body = _both("2026-11", text="ok", hosted={"tools": [bash]})
    assert streamed.hosted_calls == body.hosted_calls
    turn = _turn("2026-07-21", text="ok", hosted={"tools": [bash]})
    done = render(turn, seed=5, conversation="default", turn_number=0, stream=False)
    old = gi.parse_interaction(done.body, source="create", baseline="2026-07-21")
    assert old.hosted_calls == body.hosted_calls
    assert old.hosted_calls[0].raw["call"]["arguments"]["language"] == "bash"
    assert old.warnings == ()


BAD_SCRIPTS = {
    "search domain": (
        {"tools": [{**SEARCH, "results": [{"uri": "u", "domain": "d"}]}]},
        "no domain",
    ),
    "search text": ({"tools": [{**SEARCH, "results": [{"uri": "u", "text": "t"}]}]}, "no text"),
    "unknown tool": ({"tools": [{"tool": "google_maps"}]}, "needs a 'tool'"),
    "unknown key": ({"tools": [{**CODE, "timeout": 3}]}, "unknown key(s) timeout"),
    "outcome": ({"tools": [{**CODE, "outcome": "OUTCOME_OK"}]}, "outcome is one of"),
    "language": ({"tools": [{**CODE, "language": "rust"}]}, "'python' or 'bash'"),
    "missing output": (
        {"tools": [{"tool": "code_execution", "code": "", "outcome": "ok"}]},
        "needs 'output'",
    ),
    "url status": (
        {"tools": [{**URLS, "results": [{"url": "u", "status": "ok"}]}]},
        "status is one of",
    ),
    "chunk needs text": (
        {"tools": [{"tool": "file_search", "chunks": [{"store": "s", "document": "d"}]}]},
        "needs text",
    ),
    "stream_as": ({"tools": [{**CODE, "stream_as": "later"}]}, "'start' or 'delta'"),
    "same id": ({"tools": [{**CODE, "id": "x"}, {**CODE, "id": "x"}]}, "same id"),
    "same marker": ({"tools": [SEARCH, SEARCH]}, "marker names two results"),
    "marker unknown": (
        {"tools": [SEARCH], "cite": [{"marker": "zz", "span": "Paris"}]},
        "names no result",
    ),
    "span absent": (
        {"tools": [SEARCH], "cite": [{"marker": "s1", "span": "Lyon"}]},
        "does not occur",
    ),
    "occurrence": (
        {"tools": [SEARCH], "cite": [{"marker": "s1", "span": "Paris", "occurrence": 2}]},
        "does not occur 2",
    ),
    "not an object": (["google_search"], "hosted is an object"),
}


@pytest.mark.parametrize("case", sorted(BAD_SCRIPTS))
def test_a_hosted_block_the_wire_cannot_carry_is_refused_at_load(case: str) -> None:
    hosted, message = BAD_SCRIPTS[case]
    with pytest.raises(ScriptError, match="/respond") as info:
        _turn("2026-11", text=TEXT, hosted=hosted)
    assert message in str(info.value)


def test_an_interactions_hosted_block_is_not_another_providers() -> None:
    # Each provider reads ``respond.hosted`` in its own syntax (docs/hosted-tools.md).
    builder = ScriptBuilder()
    builder.turn("anthropic_messages", text="x", hosted=HOSTED)
    with pytest.raises(ScriptError, match="/respond"):
        builder.build()


# -- request validation of hosted tool declarations, over a real socket -----------------------

FS = {"type": "file_search", "file_search_store_names": ["fileSearchStores/a"]}
ACCEPTED = {
    "google_search": {"type": "google_search"},
    "google_search search_types": {
        "type": "google_search",
        "search_types": ["web_search", "image_search"],
    },
    "code_execution": {"type": "code_execution"},
    "url_context": {"type": "url_context"},
    "file_search stores": FS,
    "file_search metadata_filter": {**FS, "metadata_filter": 'author = "x"'},
    "file_search top_k": {**FS, "top_k": 3},
    "legacy google_search": {"google_search": {}},
    "legacy code_execution": {"code_execution": {}},
    "legacy url_context": {"url_context": {}},
}
REFUSED = {
    "search_types value": ({"type": "google_search", "search_types": ["news"]}, "search_types"),
    "search_types empty": ({"type": "google_search", "search_types": []}, "search_types"),
    "google_search field": (
        {"type": "google_search", "time_range": {}},
        "unknown field(s) time_range",
    ),
    "code_execution field": (
        {"type": "code_execution", "language": "python"},
        "unknown field(s) language",
    ),
    "url_context field": ({"type": "url_context", "urls": []}, "unknown field(s) urls"),
    "file_search no stores": ({"type": "file_search"}, "file_search_store_names: required"),
    "file_search bad store": (
        {"type": "file_search", "file_search_store_names": ["a"]},
        "fileSearchStores/",
    ),
    "metadata_filter": ({**FS, "metadata_filter": {"a": 1}}, "metadata_filter"),
    "top_k zero": ({**FS, "top_k": 0}, "top_k"),
    "top_k text": ({**FS, "top_k": "3"}, "top_k"),
    "legacy options": ({"google_search": {"search_types": ["web_search"]}}, "not pinned"),
    "google_maps": ({"type": "google_maps"}, "does not model the hosted tool 'google_maps'"),
    "mcp_server": ({"type": "mcp_server", "name": "n", "url": "u"}, "does not model"),
    "unknown type": ({"type": "hologram"}, "unknown tool type 'hologram'"),
    "no type": ({"hologram": {}}, "needs a string 'type'"),
}


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    builder = ScriptBuilder(seed=1)
    for name in ACCEPTED:
        builder.turn("gemini_interactions", conversation=name, text="ok")
    with MockServer(builder.build()) as running:
        yield running


@pytest.fixture(scope="module")
def hosted_only() -> Iterator[MockServer]:
    """The hosted check alone (the request check would refuse malformed ones first)."""
    builder = ScriptBuilder(seed=1, validation={"gemini_request_valid": False})
    builder.turn("gemini_interactions", conversation="refused", text="never served")
    with MockServer(builder.build()) as running:
        yield running


def _post(server: MockServer, conversation: str, tool: dict[str, Any]) -> httpx.Response:
    body = {"model": "m", "input": "hi", "tools": [{"type": "function", "name": "f"}, tool]}
    headers = {"x-goog-api-key": "k", "x-callgate-conversation": conversation}
    return httpx.post(f"{server.gemini_base_url}/v1/interactions", json=body, headers=headers)


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_a_claimed_declaration_is_accepted(server: MockServer, case: str) -> None:
    reply = _post(server, case, ACCEPTED[case])
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] == "completed"


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_bad_or_unpinned_declaration_gets_googles_400(hosted_only: MockServer, case: str) -> None:
    tool, message = REFUSED[case]
    reply = _post(hosted_only, "refused", tool)
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["code"] == "invalid_request"
    assert error["message"].startswith("tools[1]")
    assert message in error["message"]


def test_the_declaration_check_can_be_switched_off() -> None:
    switches = {"gemini_hosted_tool_declaration": False, "gemini_request_valid": False}
    builder = ScriptBuilder(validation=switches)
    builder.turn("gemini_interactions", conversation="refused", text="served")
    with MockServer(builder.build()) as running:
        reply = _post(running, "refused", {"type": "hologram"})
    assert reply.status_code == 200
    assert json.loads(reply.text)["steps"][0]["content"][0]["text"] == "served"


def test_a_stored_hosted_interaction_reads_back_with_the_same_projection() -> None:
    builder = ScriptBuilder(seed=2)
    hosted = {"tools": [SEARCH, CODE], "cite": CITE[:1]}
    builder.turn("gemini_interactions", text=TEXT, hosted=hosted)
    with MockServer(builder.build()) as running:
        base = f"{running.gemini_base_url}/v1/interactions"
        headers = {"x-goog-api-key": "k"}
        body = {"model": "m", "input": "hi", "stream": True, "tools": [{"type": "google_search"}]}
        created = httpx.post(base, json=body, headers=headers)
        streamed = gi.parse_stream(created.content)
        got = httpx.get(f"{base}/{streamed.interaction_id}", headers=headers)
        resumed = httpx.get(f"{base}/{streamed.interaction_id}?stream=true", headers=headers)
    stored = gi.parse_interaction(got.content, source="get")
    assert stored.steps[0]["type"] == "user_input"
    assert stored.hosted_calls == streamed.hosted_calls
    assert stored.citations == streamed.citations
    assert gi.parse_stream(resumed.content).hosted_calls == streamed.hosted_calls


def test_expect_tools_can_require_a_hosted_declaration() -> None:
    builder = ScriptBuilder()
    builder.turn(
        "gemini_interactions",
        expect={"tools": ["google_search", "f"]},
        text="ok",
        hosted={"tools": [SEARCH]},
    )
    with MockServer(builder.build()) as running:
        refused = _post(running, "default", {"type": "code_execution"})
        served = _post(running, "default", {"google_search": {}})
    assert refused.status_code == 400
    assert "google_search not declared" in refused.json()["error"]["message"]
    assert served.status_code == 200
