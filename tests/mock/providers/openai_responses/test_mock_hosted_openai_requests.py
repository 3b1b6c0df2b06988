"""Hosted tool declarations and ``include`` values: every claimed option is accepted in
one request and refused (OpenAI's 400 shape, ``param`` and ``code``) in another; unpinned
options are refused with a message saying they are not pinned. Also the replay rule: a
hosted item sent back with changed native fields is refused."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from callgate.mock import MockServer, Script

from .test_mock_hosted_openai import post

WS = {"type": "web_search"}
FS = {"type": "file_search", "vector_store_ids": ["vs_1"]}
CI = {"type": "code_interpreter", "container": {"type": "auto"}}
LOC = {"type": "approximate", "city": "Paris", "country": "FR", "region": "IDF",
       "timezone": "Europe/Paris"}  # fmt: skip
EQ = {"type": "eq", "key": "team", "value": "a"}

ACCEPTED = {
    "web_search": WS,
    "web_search_2025_08_26": {"type": "web_search_2025_08_26"},
    "search_context_size": {**WS, "search_context_size": "high"},
    "user_location": {**WS, "user_location": LOC},
    "user_location_bare": {**WS, "user_location": {"type": "approximate"}},
    "user_location_null": {**WS, "user_location": None},
    "allowed_domains": {**WS, "filters": {"allowed_domains": ["example.com"]}},
    "external_web_access": {**WS, "external_web_access": False},
    "web_search_preview": {"type": "web_search_preview", "search_context_size": "low",
                           "user_location": LOC, "search_content_types": ["text", "image"]},
    "web_search_preview_dated": {"type": "web_search_preview_2025_03_11"},
    "vector_store_ids": FS,
    "max_num_results_1": {**FS, "max_num_results": 1},
    "max_num_results_50": {**FS, "max_num_results": 50},
    "comparison_filter": {**FS, "filters": EQ},
    "in_filter": {**FS, "filters": {"type": "in", "key": "year", "value": [2025, 2026]}},
    "compound_filter": {**FS, "filters": {"type": "and", "filters": [
        EQ, {"type": "or", "filters": [{"type": "gte", "key": "year", "value": 2025},
                                       {"type": "eq", "key": "public", "value": True}]}]}},
    "ranker": {**FS, "ranking_options": {"ranker": "default-2024-11-15",
                                         "score_threshold": 0.5}},
    "container_id": {"type": "code_interpreter", "container": "cntr_1"},
    "container_auto": CI,
    "container_files_memory": {"type": "code_interpreter", "container": {
        "type": "auto", "file_ids": ["file-1"], "memory_limit": "4g"}},
}  # fmt: skip

REFUSED = {
    "context_size": ({**WS, "search_context_size": "huge"}, "tools[0].search_context_size",
                     "invalid_value"),
    "location_type": ({**WS, "user_location": {"type": "exact"}}, "tools[0].user_location.type",
                      "invalid_value"),
    "location_country": ({**WS, "user_location": {"type": "approximate", "country": "France"}},
                         "tools[0].user_location.country", "invalid_value"),
    "location_city": ({**WS, "user_location": {"city": 7}}, "tools[0].user_location.city",
                      "invalid_type"),
    "location_key": ({**WS, "user_location": {"zip": "1"}}, "tools[0].user_location.zip",
                     "unknown_parameter"),
    "preview_location_type": ({"type": "web_search_preview", "user_location": {"city": "x"}},
                              "tools[0].user_location.type", "missing_required_parameter"),
    "preview_content_types": ({"type": "web_search_preview", "search_content_types": ["video"]},
                              "tools[0].search_content_types[0]", "invalid_value"),
    "preview_external_access": ({"type": "web_search_preview", "external_web_access": True},
                                "tools[0].external_web_access", "unknown_parameter"),
    "domains_type": ({**WS, "filters": {"allowed_domains": "example.com"}},
                     "tools[0].filters.allowed_domains", "invalid_type"),
    "external_web_access": ({**WS, "external_web_access": "no"}, "tools[0].external_web_access",
                            "invalid_type"),
    "blocked_domains": ({**WS, "filters": {"blocked_domains": ["x.com"]}},
                        "tools[0].filters.blocked_domains", "unsupported_parameter"),
    "return_token_budget": ({**WS, "return_token_budget": 100},
                            "tools[0].return_token_budget", "unsupported_parameter"),
    "unknown_option": ({**WS, "colour": "red"}, "tools[0].colour", "unknown_parameter"),
    "vector_store_ids": ({"type": "file_search"}, "tools[0].vector_store_ids",
                         "missing_required_parameter"),
    "vector_store_ids_type": ({"type": "file_search", "vector_store_ids": [1]},
                              "tools[0].vector_store_ids[0]", "invalid_type"),
    "max_num_results_0": ({**FS, "max_num_results": 0}, "tools[0].max_num_results",
                          "integer_below_min_value"),
    "max_num_results_51": ({**FS, "max_num_results": 51}, "tools[0].max_num_results",
                           "integer_above_max_value"),
    "max_num_results_bool": ({**FS, "max_num_results": True}, "tools[0].max_num_results",
                             "invalid_type"),
    "filter_type": ({**FS, "filters": {"type": "like", "key": "k", "value": "v"}},
                    "tools[0].filters.type", "invalid_value"),
    "filter_key": ({**FS, "filters": {"type": "eq", "value": "v"}}, "tools[0].filters.key",
                   "missing_required_parameter"),
    "filter_value": ({**FS, "filters": {"type": "eq", "key": "k", "value": {"a": 1}}},
                     "tools[0].filters.value", "invalid_type"),
    "compound_inner": ({**FS, "filters": {"type": "or", "filters": [{"type": "eq"}]}},
                       "tools[0].filters.filters[0].key", "missing_required_parameter"),
    "ranker": ({**FS, "ranking_options": {"ranker": "best"}}, "tools[0].ranking_options.ranker",
               "invalid_value"),
    "score_threshold": ({**FS, "ranking_options": {"score_threshold": 1.5}},
                        "tools[0].ranking_options.score_threshold", "invalid_value"),
    "hybrid_search": ({**FS, "ranking_options": {"hybrid_search": {
        "embedding_weight": 0.5, "text_weight": 0.5}}},
        "tools[0].ranking_options.hybrid_search", "unsupported_parameter"),
    "container_missing": ({"type": "code_interpreter"}, "tools[0].container",
                          "missing_required_parameter"),
    "container_empty": ({"type": "code_interpreter", "container": ""}, "tools[0].container",
                        "invalid_value"),
    "container_type": ({"type": "code_interpreter", "container": {"type": "manual"}},
                       "tools[0].container.type", "invalid_value"),
    "memory_limit": ({"type": "code_interpreter", "container": {"type": "auto",
                      "memory_limit": "2g"}}, "tools[0].container.memory_limit",
                     "invalid_value"),
    "file_ids": ({"type": "code_interpreter", "container": {"type": "auto", "file_ids": "f"}},
                 "tools[0].container.file_ids", "invalid_type"),
    "network_policy": ({"type": "code_interpreter", "container": {
        "type": "auto", "network_policy": {"type": "disabled"}}},
        "tools[0].container.network_policy", "unsupported_parameter"),
    "allowed_callers": ({**FS, "allowed_callers": ["direct"]}, "tools[0].allowed_callers",
                        "unsupported_parameter"),
}  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    turns = [{"protocol": "openai_responses", "respond": {"text": "ok"}}]
    with MockServer(Script.from_dict({"turns": turns})) as running:
        yield running


@pytest.fixture(scope="module")
def hosted_only() -> Iterator[MockServer]:
    """The hosted check alone (the request check, on by default, would refuse the
    malformed declarations first, in the API's own words: tests/mock/test_mock_request_*)."""
    turns = [{"protocol": "openai_responses", "respond": {"text": "ok"}}]
    script = {"validation": {"openai_request_valid": False}, "turns": turns}
    with MockServer(Script.from_dict(script)) as running:
        yield running


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_a_valid_declaration_is_accepted(server: MockServer, name: str) -> None:
    status, body = post(server, {"model": "m", "input": "hi", "tools": [ACCEPTED[name]]})
    assert status == 200, body
    assert body["output"][0]["content"][0]["text"] == "ok"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_an_invalid_declaration_gets_openais_400(hosted_only: MockServer, name: str) -> None:
    tool, param, code = REFUSED[name]
    for azure in (False, True):
        request = {"model": "m", "input": "hi", "tools": [tool]}
        status, body = post(hosted_only, request, azure=azure)
        assert status == 400
        error = body["error"]
        assert (error["type"], error["param"], error["code"]) == (
            "invalid_request_error",
            param,
            code,
        )
        if code != "invalid_value":  # OpenAI's invalid_value message names the value only
            assert param in error["message"]
        if code == "unsupported_parameter":
            assert "is not pinned" in error["message"]


def test_valid_include_values_are_accepted(server: MockServer) -> None:
    include = ["web_search_call.action.sources", "file_search_call.results",
               "code_interpreter_call.outputs", "reasoning.encrypted_content",
               "message.output_text.logprobs"]  # fmt: skip
    status, _ = post(server, {"model": "m", "input": "hi", "include": include})
    assert status == 200


@pytest.mark.parametrize(
    ("include", "code", "words"),
    [
        ("web_search_call.results", "unsupported_parameter", "is not pinned"),
        ("web_search_call.everything", "invalid_value", "Supported values are"),
    ],
)
def test_unpinned_or_unknown_include_values_are_refused(
    server: MockServer, include: str, code: str, words: str
) -> None:
    status, body = post(server, {"model": "m", "input": "hi", "include": [include]})
    assert status == 400
    assert (body["error"]["param"], body["error"]["code"]) == ("include[0]", code)
    assert words in body["error"]["message"]


def test_forcing_a_hosted_tool_is_refused_as_unpinned(server: MockServer) -> None:
    status, body = post(
        server, {"model": "m", "input": "hi", "tools": [FS], "tool_choice": {"type": "file_search"}}
    )
    assert status == 400
    assert body["error"]["code"] == "unsupported_parameter"
    assert "not pinned" in body["error"]["message"]


def test_switching_the_check_off_accepts_the_declaration() -> None:
    script = Script.from_dict(
        {
            "validation": {"openai_hosted_tools_valid": False, "openai_request_valid": False},
            "turns": [{"protocol": "openai_responses", "respond": {"text": "ok"}}],
        }
    )
    with MockServer(script) as running:
        status, _ = post(running, {"model": "m", "input": "hi", "tools": [REFUSED["ranker"][0]]})
    assert status == 200


# -- replayed hosted items --------------------------------------------------------------------

TWO_TURNS = [
    {"protocol": "openai_responses", "respond": {
        "hosted": [{"web_search": {"query": "q", "results": [
            {"marker": "w", "url": "https://example.com", "title": "E"}]}}],
        "text": "[Cited](cite:w).", "calls": [{"name": "f", "arguments": {}}]}},
    {"protocol": "openai_responses", "respond": {"text": "done"}},
]  # fmt: skip


def _replay(first: dict[str, Any], change: Any = None) -> dict[str, Any]:
    items = [dict(item) for item in first["output"]]
    if change is not None:
        change(items)
    call_id = items[-1]["call_id"]
    return {
        "model": "m",
        "store": False,
        "tools": [WS, {"type": "function", "name": "f", "parameters": None, "strict": None}],
        "input": [{"role": "user", "content": "q"}, *items,
                  {"type": "function_call_output", "call_id": call_id, "output": "1"}],
    }  # fmt: skip


def _edit_action(items: list[dict[str, Any]]) -> None:
    items[0]["action"] = {**items[0]["action"], "query": "other"}


def _edit_annotation(items: list[dict[str, Any]]) -> None:
    part = dict(items[1]["content"][0])
    part["annotations"] = [{**part["annotations"][0], "url": "https://elsewhere.example"}]
    items[1]["content"] = [part]


@pytest.mark.parametrize(
    ("change", "status", "words"),
    [
        (None, 200, ""),
        (_edit_action, 400, "its 'action' was changed"),
        (_edit_annotation, 400, "its 'annotations' was changed"),
    ],
)
def test_replayed_hosted_items_must_equal_what_was_emitted(
    change: Any, status: int, words: str
) -> None:
    with MockServer(Script.from_dict({"turns": TWO_TURNS})) as running:
        headers_id = "replay"
        first_status, first = _post_as(running, headers_id, {"model": "m", "input": "q",
                                                              "tools": [WS]})  # fmt: skip
        assert first_status == 200
        got, body = _post_as(running, headers_id, _replay(first, change))
    assert got == status, body
    if words:
        assert words in body["error"]["message"]


def _post_as(server: MockServer, test_id: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        server.openai_base_url.rstrip("/") + "/responses",
        json.dumps(body).encode(),
        {"content-type": "application/json", "authorization": "Bearer k",
         "x-callgate-test-id": test_id},
        method="POST",
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
