"""generateContent hosted tools in the mock: the request's tool objects answered with Google's
400s over HTTP (each claimed option accepted and refused), unpinned options refused with a
message, the ``gemini_gc_hosted_tools`` switch, and ``respond.hosted`` validated at load."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from callgate import gemini_generate_content as ggc
from callgate.mock import MockServer, ScriptBuilder, ScriptError

KEY = {"x-goog-api-key": "k"}
PATH = "/gemini/v1beta/models/m:generateContent"
USER = [{"role": "user", "parts": [{"text": "hi"}]}]
STORE = "fileSearchStores/s-1"
WHEN = {"start_time": "2024-01-01T00:00:00+00:00", "end_time": "2024-02-01T00:00:00Z"}


def _post(
    tools: list[Any], validation: dict[str, bool] | None = None, **extra: Any
) -> httpx.Response:
    script = ScriptBuilder(validation=validation).turn("gemini_generate_content", text="ok").build()
    with MockServer(script) as server:
        answer = httpx.post(
            f"{server.url}{PATH}", json={"contents": USER, "tools": tools, **extra}, headers=KEY
        )
        if answer.status_code == 200:
            server.assert_script_done()
        else:
            assert server.state.remaining() == {"default": 1}  # a refusal consumes no turn
        return answer


def _refused(answer: httpx.Response, *fragments: str) -> None:
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    for fragment in fragments:
        assert fragment in error["message"]


ACCEPTED = {
    "googleSearch": [{"googleSearch": {}}],
    "googleSearch.timeRangeFilter": [{"googleSearch": {"timeRangeFilter": WHEN}}],
    "googleSearch.timeRangeFilter camelCase": [
        {
            "google_search": {
                "time_range_filter": {"startTime": WHEN["start_time"], "endTime": WHEN["end_time"]}
            }
        }
    ],
    "fileSearch": [{"fileSearch": {"file_search_store_names": [STORE]}}],
    "fileSearch.topK": [
        {"fileSearch": {"fileSearchStoreNames": [STORE, "fileSearchStores/b"], "topK": 1}}
    ],
    "fileSearch.topK int32 max": [
        {"fileSearch": {"fileSearchStoreNames": [STORE], "top_k": 2**31 - 1}}
    ],
    "fileSearch.metadataFilter": [
        {"fileSearch": {"fileSearchStoreNames": [STORE], "metadata_filter": 'author = "x"'}}
    ],
    "codeExecution": [{"codeExecution": {}}],
    "urlContext": [{"urlContext": {}}],
    "all four and functions": [
        {"googleSearch": {}, "urlContext": {}},
        {"codeExecution": {}},
        {"fileSearch": {"fileSearchStoreNames": [STORE]}},
        {"functionDeclarations": [{"name": "f"}]},
    ],
}


@pytest.mark.parametrize("tools", list(ACCEPTED.values()), ids=list(ACCEPTED))
def test_well_formed_tool_objects_are_served(tools: list[Any]) -> None:
    answer = _post(tools)
    assert answer.status_code == 200, answer.text
    assert ggc.parse_response(answer.content).text == "ok"


REFUSED: dict[str, tuple[list[Any], tuple[str, ...]]] = {
    "googleSearch not an object": ([{"googleSearch": []}], ("tools[0].google_search",)),
    "googleSearch unknown key": (
        [{"googleSearch": {"depth": 2}}],
        ('Unknown name "depth"', "tools[0].google_search"),
    ),
    "googleSearch Vertex excludeDomains": (
        [{"googleSearch": {"exclude_domains": ["a.com"]}}],
        ('Unknown name "excludeDomains"',),
    ),
    "timeRangeFilter start only": (
        [{"googleSearch": {"timeRangeFilter": {"start_time": WHEN["start_time"]}}}],
        ("end time must be set",),
    ),
    "timeRangeFilter end only": (
        [{"googleSearch": {"timeRangeFilter": {"end_time": WHEN["end_time"]}}}],
        ("vice versa",),
    ),
    "timeRangeFilter no offset": (
        [{"googleSearch": {"timeRangeFilter": {**WHEN, "start_time": "2024-01-01T00:00:00"}}}],
        ("Timestamp", "start_time"),
    ),
    "timeRangeFilter not a time": (
        [{"googleSearch": {"timeRangeFilter": {**WHEN, "end_time": "soon"}}}],
        ("Invalid time format",),
    ),
    "timeRangeFilter inverted": (
        [
            {
                "googleSearch": {
                    "timeRangeFilter": {
                        "start_time": WHEN["end_time"],
                        "end_time": WHEN["start_time"],
                    }
                }
            }
        ],
        ("end_time must be after",),
    ),
    "timeRangeFilter unknown key": (
        [{"googleSearch": {"timeRangeFilter": {**WHEN, "zone": "x"}}}],
        ('Unknown name "zone"',),
    ),
    "fileSearch without stores": (
        [{"fileSearch": {"topK": 3}}],
        ("file_search_store_names is not specified",),
    ),
    "fileSearch empty stores": ([{"fileSearch": {"fileSearchStoreNames": []}}], ("not specified",)),
    "fileSearch store not a name": (
        [{"fileSearch": {"fileSearchStoreNames": ["corpora/x"]}}],
        ("not a file search store name",),
    ),
    "fileSearch stores not strings": (
        [{"fileSearch": {"fileSearchStoreNames": [3]}}],
        ("list of strings",),
    ),
    "fileSearch topK zero": (
        [{"fileSearch": {"fileSearchStoreNames": [STORE], "topK": 0}}],
        ("callgate mock", "not pinned"),
    ),
    "fileSearch topK negative": (
        [{"fileSearch": {"fileSearchStoreNames": [STORE], "topK": -2}}],
        ("not pinned",),
    ),
    "fileSearch topK over int32": (
        [{"fileSearch": {"fileSearchStoreNames": [STORE], "topK": 2**31}}],
        ("TYPE_INT32",),
    ),
    "fileSearch topK not an int": (
        [{"fileSearch": {"fileSearchStoreNames": [STORE], "topK": 2.5}}],
        ("TYPE_INT32",),
    ),
    "fileSearch metadataFilter not a string": (
        [{"fileSearch": {"fileSearchStoreNames": [STORE], "metadataFilter": {"a": 1}}}],
        ("TYPE_STRING",),
    ),
    "fileSearch unknown key": (
        [{"fileSearch": {"fileSearchStoreNames": [STORE], "rank": 1}}],
        ('Unknown name "rank"',),
    ),
    "codeExecution not empty": (
        [{"codeExecution": {"language": "PYTHON"}}],
        ('Unknown name "language"', "tools[0].code_execution"),
    ),
    "urlContext not empty": ([{"urlContext": {"urls": ["https://x"]}}], ('Unknown name "urls"',)),
    "urlContext not an object": ([{"urlContext": "on"}], ("expected an object",)),
    "unknown tool": ([{"webBrowser": {}}], ('Unknown name "webBrowser"', "tools[0]")),
    "Vertex-only retrieval": ([{"retrieval": {}}], ('Unknown name "retrieval"',)),
    "image search selection": (
        [{"googleSearch": {"searchTypes": {"imageSearch": {}}}}],
        ("searchTypes", "not pinned"),
    ),
    "googleMaps": ([{"googleMaps": {}}], ("googleMaps tool is not pinned",)),
    "computerUse": ([{"computer_use": {}}], ("computerUse tool is not pinned",)),
    "second tool object": (
        [{"codeExecution": {}}, {"urlContext": {"x": 1}}],
        ("tools[1].url_context",),
    ),
}


@pytest.mark.parametrize(("tools", "fragments"), list(REFUSED.values()), ids=list(REFUSED))
def test_malformed_or_unpinned_tool_objects_get_googles_400(
    tools: list[Any], fragments: tuple[str, ...]
) -> None:
    # The hosted check alone: the request check would refuse the malformed ones first.
    _refused(_post(tools, validation={"gemini_gc_request_valid": False}), *fragments)


def test_server_side_tool_invocations_flag() -> None:
    assert (
        _post(
            [{"googleSearch": {}}], toolConfig={"includeServerSideToolInvocations": False}
        ).status_code
        == 200
    )
    _refused(
        _post([{"googleSearch": {}}], toolConfig={"include_server_side_tool_invocations": True}),
        "includeServerSideToolInvocations is not served",
    )
    _refused(_post([], toolConfig={"includeServerSideToolInvocations": "yes"}), "TYPE_BOOL")


def test_the_check_can_be_switched_off() -> None:
    switches = {"gemini_gc_hosted_tools": False, "gemini_gc_request_valid": False}
    answer = _post([{"codeExecution": {"x": 1}}], validation=switches)
    assert answer.status_code == 200


# -- respond.hosted at load -------------------------------------------------------------------

GOOD = {"search": {"queries": ["q"], "results": [{"id": "r", "uri": "https://x"}]}}


@pytest.mark.parametrize(
    ("hosted", "text", "fragment"),
    [
        ([], "x", "hosted must be an object"),
        ({"maps": {}}, "x", "unknown key(s) ['maps']"),
        ({"search": {"queries": "q"}}, "x", "search/queries must be a list"),
        ({"search": {"queries": [""]}}, "x", "non-empty strings"),
        ({"search": {"results": [{"id": "r"}]}}, "x", "search/results/0 needs 'uri'"),
        ({"search": {"results": [{"id": "r", "uri": "u", "text": "t"}]}}, "x", "carries no text"),
        (
            {"search": {"results": [{"id": "r", "uri": "u", "rank": 1}]}},
            "x",
            "unknown key(s) ['rank']",
        ),
        ({"file_search": [{"id": "f", "store": "s", "document": "d"}]}, "x", "needs 'text'"),
        ({"code": [{"code": "1", "outcome": "OUTCOME_MAYBE"}]}, "x", "outcome is one of"),
        ({"code": [{"code": ""}]}, "x", "code/0/code must be a non-empty string"),
        ({"url_context": [{"url": "u", "status": "GONE"}]}, "x", "status is one of"),
        (
            {**GOOD, "file_search": [{"id": "r", "store": "s", "document": "d", "text": "t"}]},
            "x",
            "unique",
        ),
        ({**GOOD, "tool_use_tokens": -1}, "x", "tool_use_tokens"),
        ({**GOOD, "queries_first": 1}, "x", "queries_first is a bool"),
        (GOOD, "Cited.[[nope]]", "unknown result(s) ['nope']"),
        (GOOD, "[[r]] first", "cites no text"),
        (GOOD, "One.[[r]]   [[r]]", "cites no text"),
    ],
)
def test_respond_hosted_is_validated_at_load(hosted: Any, text: str, fragment: str) -> None:
    with pytest.raises(ScriptError) as caught:
        ScriptBuilder().turn("gemini_generate_content", text=text, hosted=hosted).build()
    assert "respond" in str(caught.value)
    assert fragment in str(caught.value)


def test_hosted_is_a_generate_content_key_only() -> None:
    with pytest.raises(ScriptError, match="hosted"):
        ScriptBuilder().turn("gemini_interactions", text="x", hosted=GOOD).build()


def test_markers_become_byte_offsets_and_brackets_without_hosted_stay_text() -> None:
    text = "Ça va.[[r]] Très bien !  [[r]]"
    script = ScriptBuilder().turn("gemini_generate_content", text=text, hosted=GOOD)
    script.turn("gemini_generate_content", text="Literal [[r]] text.")
    with MockServer(script.build()) as server:
        first = ggc.parse_response(
            httpx.post(f"{server.url}{PATH}", json={"contents": USER}, headers=KEY).content
        )
        second = ggc.parse_response(
            httpx.post(f"{server.url}{PATH}", json={"contents": USER}, headers=KEY).content
        )
    assert first.text == "Ça va. Très bien !  "
    data = first.text.encode()
    assert [data[c.start : c.end].decode() for c in first.citations] == ["Ça va.", "Très bien !  "]
    assert [(c.start, c.end) for c in first.citations] == [(0, 7), (8, len(data))]
    assert second.text == "Literal [[r]] text."
    assert second.citations == ()


def test_expect_tools_can_name_the_hosted_tools_the_request_turns_on() -> None:
    script = ScriptBuilder()
    script.turn(
        "gemini_generate_content", text="ok", hosted=GOOD, expect={"tools": ["googleSearch", "f"]}
    )
    script.turn("gemini_generate_content", text="ok", expect={"tools": ["fileSearch"]})
    tools = [{"google_search": {}}, {"functionDeclarations": [{"name": "f"}]}]
    with MockServer(script.build()) as server:
        ok = httpx.post(f"{server.url}{PATH}", json={"contents": USER, "tools": tools}, headers=KEY)
        assert ok.status_code == 200
        missing = httpx.post(
            f"{server.url}{PATH}", json={"contents": USER, "tools": tools}, headers=KEY
        )
        assert missing.status_code == 400
        assert "fileSearch not declared" in missing.json()["error"]["message"]
        assert "['f', 'googleSearch']" in missing.json()["error"]["message"]
