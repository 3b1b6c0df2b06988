"""Hosted tools on generateContent through google-genai over a real socket, both SDK generations.

``models.generate_content`` and ``models.generate_content_stream`` with each hosted tool
(``googleSearch``, ``fileSearch``, ``codeExecution``, ``urlContext``) against a mock turn
scripted with ``respond.hosted``: the SDK decodes every body and stream, and callgate's
projection of the very bytes that left the server equals what the SDK exposes
(``candidate.grounding_metadata``, ``url_context_metadata``, the code parts); the streamed
and the non-streamed turn project the same; the cited bytes are the segment's text.
"""

from __future__ import annotations

import datetime
import importlib.metadata
from typing import Any

import pytest
from google.genai import errors, types

from callgate import gemini_generate_content as ggc
from callgate.mock import Script, ScriptBuilder

from ...conftest import genai_client

GENERATION = int(importlib.metadata.version("google-genai").split(".")[0])
BASELINE = "2026-11" if GENERATION >= 3 else "2026-07-21"
MODEL = "gemini-3-flash-preview"
STORE = "fileSearchStores/handbook-1"

SEARCH = {
    "search": {
        "queries": ["euro 2024 winner", "euro 2024 final score"],
        "results": [
            {"id": "uefa", "uri": "https://example.com/redirect/uefa", "domain": "uefa.com"},
            {"id": "wiki", "uri": "https://example.com/redirect/wiki", "title": "Wikipedia"},
        ],
    },
    "tool_use_tokens": 41,
}
FILES = {
    "file_search": [
        {"id": "h1", "store": STORE, "document": "handbook.pdf", "text": "Leave is 25 days."},
        {
            "id": "h2",
            "store": STORE,
            "document": "faq.md",
            "text": "Ask HR.",
            "uri": "https://example.com/faq",
        },
    ]
}
CODE = {
    "code": [
        {"code": "print(sum(range(5)))", "outcome": "OUTCOME_OK", "output": "10\n", "id": "x1"},
        {"code": "1/0", "outcome": "OUTCOME_FAILED", "output": "ZeroDivisionError"},
    ]
}
URLS = {
    "url_context": [
        {"url": "https://example.com/a", "id": "a", "title": "Page A"},
        {"url": "https://example.com/b", "status": "PAYWALL"},
    ]
}
CASES: dict[str, tuple[dict[str, Any], str, types.Tool]] = {
    "googleSearch": (
        SEARCH,
        "Spain won Euro 2024 — their fourth title.[[uefa]] The final ended 2–1.[[uefa,wiki]]",
        types.Tool(google_search=types.GoogleSearch()),
    ),
    "fileSearch": (
        FILES,
        "You get 25 days of leave.[[h1]] Questions go to HR.[[h2,h1]]",
        types.Tool(file_search=types.FileSearch(file_search_store_names=[STORE], top_k=4)),
    ),
    "codeExecution": (
        CODE,
        "The sum is 10; dividing by zero failed.",
        types.Tool(code_execution=types.ToolCodeExecution()),
    ),
    "urlContext": (
        URLS,
        "Page A says hello.[[a]] Page B is paywalled.",
        types.Tool(url_context=types.UrlContext()),
    ),
}


def _script(hosted: dict[str, Any], text: str, stream: bool) -> Script:
    builder = ScriptBuilder(baseline=BASELINE)
    builder.turn(
        "gemini_generate_content",
        expect={"stream": stream},
        text=text,
        hosted=hosted,
        chunking={"fixed": 7},
        reasoning={"summary": "Let me look.", "signature": "c2lnLWdyb3VuZGVk"},
    )
    return builder.build()


def _dump(model: Any) -> Any:
    return (
        None if model is None else model.model_dump(by_alias=True, exclude_none=True, mode="json")
    )


def _sdk_citations(gm: Any) -> list[tuple[str, str | None, int, int]]:
    """Citations from the SDK's own objects, one per support and chunk index."""
    out = []
    for support in (gm.grounding_supports if gm else None) or ():
        for index in support.grounding_chunk_indices or ():
            chunk = gm.grounding_chunks[index]
            kind, body = (
                ("web", chunk.web) if chunk.web else ("retrievedContext", chunk.retrieved_context)
            )
            segment = support.segment
            out.append((kind, body.uri, segment.start_index or 0, segment.end_index))
    return out


def _sdk_hosted(parts: list[Any], candidate: Any) -> list[tuple[Any, ...]]:
    """What the SDK exposes of hosted calls: code parts, queries, file chunks, URLs."""
    found: list[tuple[Any, ...]] = []
    results = {
        p.code_execution_result.id: p.code_execution_result
        for p in parts
        if p.code_execution_result
    }
    for part in parts:
        if part.executable_code:
            result = results.get(part.executable_code.id)
            found.append(("codeExecution", part.executable_code.id, _dump(result)["outcome"]))
    gm = candidate.grounding_metadata
    for _query in (gm.web_search_queries if gm else None) or ():
        found.append(("googleSearch", None, None))
    if gm and any(c.retrieved_context for c in gm.grounding_chunks or ()):
        found.append(("fileSearch", None, None))
    ucm = candidate.url_context_metadata
    for entry in (ucm.url_metadata if ucm else None) or ():
        found.append(("urlContext", None, _dump(entry)["urlRetrievalStatus"]))
    return found


def _ours(turn: ggc.Turn) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    calls = [(c.tool, c.id, c.status) for c in turn.hosted_calls]
    return calls, [(c.kind, c.source, c.start, c.end) for c in turn.citations]


def _check_segments(turn: ggc.Turn, sdk_text: str) -> None:
    answer = sdk_text.encode()
    for citation in turn.citations:
        assert answer[citation.start : citation.end].decode() == citation.raw["segment"]["text"]


def _run(served: Any, tool: str, stream: bool, version: str) -> tuple[ggc.Turn, Any]:
    hosted, text, sdk_tool = CASES[tool]
    server, recorder = served(_script(hosted, text, stream))
    config = types.GenerateContentConfig(tools=[sdk_tool])
    client = genai_client(server, version)
    if stream:
        chunks = list(
            client.models.generate_content_stream(model=MODEL, contents="q", config=config)
        )
        exchange = recorder.exchanges[0]
        turn = ggc.parse_stream(exchange.response_body, baseline=BASELINE)
        last = chunks[-1].candidates[0]
        parts = [
            p for c in chunks if c.candidates[0].content for p in c.candidates[0].content.parts
        ]
        sdk = (last, parts, "".join(c.text or "" for c in chunks), chunks[-1].usage_metadata)
    else:
        response = client.models.generate_content(model=MODEL, contents="q", config=config)
        turn = ggc.parse_response(recorder.exchanges[0].response_body, baseline=BASELINE)
        candidate = response.candidates[0]
        sdk = (candidate, candidate.content.parts, response.text, response.usage_metadata)
    server.assert_script_done()
    return turn, sdk


@pytest.mark.parametrize("version", ["v1", "v1beta"])
@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("tool", sorted(CASES))
def test_projection_equals_what_the_sdk_exposes(
    served: Any, tool: str, stream: bool, version: str
) -> None:
    turn, (candidate, parts, text, usage) = _run(served, tool, stream, version)
    assert turn.calls == ()
    assert turn.candidate.get("groundingMetadata") == _dump(candidate.grounding_metadata)
    assert turn.candidate.get("urlContextMetadata") == _dump(candidate.url_context_metadata)
    calls, citations = _ours(turn)
    assert calls == _sdk_hosted(parts, candidate)
    assert citations == _sdk_citations(candidate.grounding_metadata)
    assert turn.text == text
    _check_segments(turn, text)
    code = [
        (p.executable_code.code, _dump(p.executable_code)["language"])
        for p in parts
        if p.executable_code
    ]
    assert code == [
        (c.raw[0]["executableCode"]["code"], "PYTHON")
        for c in turn.hosted_calls
        if c.tool == "codeExecution"
    ]
    gm = candidate.grounding_metadata
    queries = [c.raw for c in turn.hosted_calls if c.tool == "googleSearch"]
    assert queries == ((gm.web_search_queries if gm else None) or [])
    if tool == "googleSearch":
        assert usage.tool_use_prompt_token_count == turn.usage["toolUsePromptTokenCount"] == 41
        assert candidate.grounding_metadata.search_entry_point.rendered_content


@pytest.mark.parametrize("tool", sorted(CASES))
def test_stream_and_body_project_the_same(served: Any, tool: str) -> None:
    body, _ = _run(served, tool, False, "v1")
    streamed, _ = _run(served, tool, True, "v1")
    assert _ours(streamed) == _ours(body)
    assert streamed.hosted_calls == body.hosted_calls
    assert streamed.citations == body.citations
    assert streamed.parts == body.parts


def test_queries_first_stream_early_then_whole_on_the_last_chunk(served: Any) -> None:
    hosted, text, sdk_tool = CASES["googleSearch"]
    server, recorder = served(_script({**hosted, "queries_first": True}, text, True))
    config = types.GenerateContentConfig(tools=[sdk_tool])
    chunks = list(
        genai_client(server).models.generate_content_stream(
            model=MODEL, contents="q", config=config
        )
    )
    first, last = (
        chunks[0].candidates[0].grounding_metadata,
        chunks[-1].candidates[0].grounding_metadata,
    )
    assert first.web_search_queries == last.web_search_queries == SEARCH["search"]["queries"]
    assert first.grounding_chunks is None
    turn = ggc.parse_stream(recorder.exchanges[0].response_body, baseline=BASELINE)
    assert turn.candidate["groundingMetadata"] == _dump(last)
    assert _ours(turn)[1] == _sdk_citations(last)


def test_chat_replays_the_hosted_parts_and_the_next_turn_matches(served: Any) -> None:
    """The SDK's chat sends the code parts back verbatim; the mock's checks accept them."""
    builder = ScriptBuilder(baseline=BASELINE)
    builder.turn("gemini_generate_content", expect={"stream": True}, text="It is 10.", hosted=CODE)
    builder.turn("gemini_generate_content", expect={"stream": False}, text="Done.")
    server, recorder = served(builder.build())
    config = types.GenerateContentConfig(
        tools=[types.Tool(code_execution=types.ToolCodeExecution())]
    )
    chat = genai_client(server).chats.create(model=MODEL, config=config)
    list(chat.send_message_stream("Sum it"))
    assert chat.send_message("Thanks").text == "Done."
    replay = recorder.exchanges[1].request_json()["contents"]
    sent = [p for c in replay if c["role"] == "model" for p in c["parts"]]
    turn = ggc.parse_stream(recorder.exchanges[0].response_body, baseline=BASELINE)
    hosted_sent = [p for p in sent if "executableCode" in p or "codeExecutionResult" in p]
    assert hosted_sent == [c.raw[i] for c in turn.hosted_calls for i in (0, 1)]
    server.assert_script_done()


def test_a_refused_tool_option_raises_the_sdk_client_error(served: Any) -> None:
    hosted, text, _ = CASES["fileSearch"]
    server, _recorder = served(_script(hosted, text, False))
    tool = types.Tool(file_search=types.FileSearch(file_search_store_names=[STORE], top_k=0))
    with pytest.raises(errors.ClientError) as caught:
        genai_client(server).models.generate_content(
            model=MODEL, contents="q", config=types.GenerateContentConfig(tools=[tool])
        )
    assert caught.value.code == 400
    assert "top_k" in str(caught.value.message)


WHEN = (
    datetime.datetime(2024, 6, 1, tzinfo=datetime.UTC),
    datetime.datetime(2024, 7, 15, tzinfo=datetime.UTC),
)


@pytest.mark.parametrize(
    "tool",
    [
        types.Tool(
            google_search=types.GoogleSearch(
                time_range_filter=types.Interval(start_time=WHEN[0], end_time=WHEN[1])
            )
        ),
        types.Tool(
            file_search=types.FileSearch(
                file_search_store_names=[STORE], top_k=8, metadata_filter="year >= 2024"
            )
        ),
    ],
    ids=["timeRangeFilter", "fileSearch options"],
)
def test_the_sdk_spelling_of_each_option_is_accepted(served: Any, tool: types.Tool) -> None:
    """The SDK sends nested keys snake_case and datetimes as isoformat: both are accepted."""
    hosted, text, _ = CASES["googleSearch"]
    server, recorder = served(_script(hosted, text, False))
    config = types.GenerateContentConfig(tools=[tool])
    response = genai_client(server).models.generate_content(
        model=MODEL, contents="q", config=config
    )
    assert (
        response.candidates[0].grounding_metadata.web_search_queries == SEARCH["search"]["queries"]
    )
    sent = recorder.exchanges[0].request_json()["tools"][0]
    assert sent in (
        {
            "googleSearch": {
                "timeRangeFilter": {
                    "start_time": WHEN[0].isoformat(),
                    "end_time": WHEN[1].isoformat(),
                }
            }
        },
        {
            "fileSearch": {
                "file_search_store_names": [STORE],
                "top_k": 8,
                "metadata_filter": "year >= 2024",
            }
        },
    )


@pytest.mark.parametrize(
    ("tool", "fragment"),
    [
        (
            types.Tool(
                google_search=types.GoogleSearch(
                    time_range_filter=types.Interval(start_time=WHEN[0])
                )
            ),
            "end time",
        ),
        (
            types.Tool(
                google_search=types.GoogleSearch(
                    time_range_filter=types.Interval(start_time=WHEN[1], end_time=WHEN[0])
                )
            ),
            "after",
        ),
        (
            types.Tool(
                google_search=types.GoogleSearch(
                    time_range_filter=types.Interval(
                        start_time=WHEN[0].replace(tzinfo=None), end_time=WHEN[1]
                    )
                )
            ),
            "Timestamp",
        ),
        (types.Tool(file_search=types.FileSearch(top_k=3)), "file_search_store_names"),
    ],
    ids=["start only", "inverted", "naive datetime", "no stores"],
)
def test_the_sdk_gets_a_client_error_for_a_malformed_option(
    served: Any, tool: types.Tool, fragment: str
) -> None:
    hosted, text, _ = CASES["googleSearch"]
    server, _recorder = served(_script(hosted, text, False))
    with pytest.raises(errors.ClientError) as caught:
        genai_client(server).models.generate_content(
            model=MODEL, contents="q", config=types.GenerateContentConfig(tools=[tool])
        )
    assert caught.value.code == 400
    assert fragment in str(caught.value.message)
