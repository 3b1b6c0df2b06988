"""Order-free fixtures on every protocol: what a framework's requests get, in-process.

Each request is a plain JSON body on the provider's real route (the app is driven over
ASGI); the follow-up requests replay the whole history, as frameworks do, instead of
naming a previous id. Provider-native validation stays on throughout.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from callgate.mock import PROTOCOLS, Script, ScriptError, create_app

from .conftest import AUTH, asgi_call, path_of

MODEL = "m"
TOOL = "get_weather"


# -- requests as a framework sends them (full history, no previous id) -------------------------


def first_request(protocol: str, text: str, tools: tuple[str, ...] = (TOOL,)) -> dict[str, Any]:
    if protocol == "openai_responses":
        declared = [
            {"type": "function", "name": t, "parameters": {"type": "object"}} for t in tools
        ]
        return {"model": MODEL, "input": [{"role": "user", "content": text}], "tools": declared}
    if protocol == "anthropic_messages":
        declared = [{"name": t, "input_schema": {"type": "object"}} for t in tools]
        return {"model": MODEL, "max_tokens": 64, "tools": declared,
                "messages": [{"role": "user", "content": text}]}  # fmt: skip
    if protocol == "openai_chat_completions":
        declared = [
            {"type": "function", "function": {"name": t, "parameters": {"type": "object"}}}
            for t in tools
        ]
        return {"model": MODEL, "messages": [{"role": "user", "content": text}],
                **({"tools": declared} if tools else {})}  # fmt: skip
    if protocol == "gemini_interactions":
        content = [{"type": "text", "text": text}]
        return {"model": MODEL, "tools": [{"type": "function", "name": t} for t in tools],
                "input": [{"type": "user_input", "content": content}]}  # fmt: skip
    declarations = [{"name": t} for t in tools]
    return {"contents": [{"role": "user", "parts": [{"text": text}]}],
            "tools": [{"functionDeclarations": declarations}] if tools else []}  # fmt: skip


def replay(protocol: str, request: dict[str, Any], answer: dict[str, Any],
           outputs: list[str]) -> dict[str, Any]:  # fmt: skip
    """``request`` + the model's ``answer`` + one result per call, in call order."""
    follow = json.loads(json.dumps(request))
    if protocol == "openai_responses":
        items = answer["output"]
        calls = [i for i in items if i["type"] == "function_call"]
        follow["input"] += items + [
            {"type": "function_call_output", "call_id": c["call_id"], "output": out}
            for c, out in zip(calls, outputs, strict=True)
        ]
    elif protocol == "anthropic_messages":
        blocks = answer["content"]
        uses = [b for b in blocks if b["type"] == "tool_use"]
        follow["messages"] += [
            {"role": "assistant", "content": blocks},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": u["id"], "content": out}
                for u, out in zip(uses, outputs, strict=True)
            ]},
        ]  # fmt: skip
    elif protocol == "openai_chat_completions":
        message = answer["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        follow["messages"] += [
            {k: v for k, v in message.items() if v is not None},
            *({"role": "tool", "tool_call_id": c["id"], "content": out}
              for c, out in zip(calls, outputs, strict=True)),
        ]  # fmt: skip
    elif protocol == "gemini_interactions":
        steps = answer["steps"]
        calls = [s for s in steps if s["type"] == "function_call"]
        follow["input"] += steps + [
            {"type": "function_result", "call_id": c["id"], "name": c["name"], "result": out}
            for c, out in zip(calls, outputs, strict=True)
        ]
    else:
        parts = answer["candidates"][0]["content"]["parts"]
        calls = [p["functionCall"] for p in parts if "functionCall" in p]
        follow["contents"] += [
            {"role": "model", "parts": parts},
            {"role": "user", "parts": [
                {"functionResponse": {"name": c["name"], "response": {"output": out}}}
                for c, out in zip(calls, outputs, strict=True)
            ]},
        ]  # fmt: skip
    return follow


def text_of(protocol: str, answer: dict[str, Any]) -> str:
    if protocol == "openai_responses":
        return "".join(
            c["text"] for i in answer["output"] if i["type"] == "message" for c in i["content"]
        )
    if protocol == "anthropic_messages":
        return "".join(b["text"] for b in answer["content"] if b["type"] == "text")
    if protocol == "openai_chat_completions":
        return str(answer["choices"][0]["message"]["content"] or "")
    if protocol == "gemini_interactions":
        return "".join(
            c["text"]
            for s in answer["steps"]
            if s["type"] == "model_output"
            for c in s.get("content", ())
        )
    return "".join(p.get("text", "") for p in answer["candidates"][0]["content"]["parts"])


def calls_of(protocol: str, answer: dict[str, Any]) -> list[str]:
    """The function names called, in order."""
    if protocol == "openai_responses":
        return [i["name"] for i in answer["output"] if i["type"] == "function_call"]
    if protocol == "anthropic_messages":
        return [b["name"] for b in answer["content"] if b["type"] == "tool_use"]
    if protocol == "gemini_interactions":
        return [s["name"] for s in answer["steps"] if s["type"] == "function_call"]
    if protocol == "openai_chat_completions":
        calls = answer["choices"][0]["message"].get("tool_calls") or []
        return [c["function"]["name"] for c in calls]
    parts = answer["candidates"][0]["content"]["parts"]
    return [p["functionCall"]["name"] for p in parts if "functionCall" in p]


def response_id(protocol: str, answer: dict[str, Any]) -> str:
    if protocol == "gemini_generate_content":
        return str(answer["responseId"])
    return str(answer["id"])


class Client:
    """One app, requests sent in-process in one session."""

    def __init__(self, script: Script, test_id: str = "t") -> None:
        self.app = create_app(script)
        self.test_id = test_id

    def send(self, protocol: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        headers = {**AUTH[protocol], "x-callgate-test-id": self.test_id}
        status, _, bodies = asgi_call(self.app, path_of(protocol, False), body, headers)
        return status, json.loads(b"".join(bodies))

    def ok(self, protocol: str, body: dict[str, Any]) -> dict[str, Any]:
        status, answer = self.send(protocol, body)
        assert status == 200, answer
        return answer


def agent_script(**extra: Any) -> Script:
    """A framework's weather agent as fixtures only: a title request, the tool round and
    the final answer, in an order a script of turns could not predict."""
    return Script.from_dict(
        {
            "fixtures": [
                {"match": {"last_user_text_regex": "^Generate a (short )?title"},
                 "respond": {"text": "Weather in Paris"}},
                {"match": {"tool_results": [TOOL]},
                 "respond": {"text": "It is sunny in Paris."}},
                {"match": {"tools": [TOOL], "last_user_text_contains": "weather",
                           "has_tool_results": False},
                 "respond": {"calls": [{"name": TOOL, "arguments": {"city": "Paris"}}]}},
            ],
            **extra,
        }
    )  # fmt: skip


# -- a framework's sequence, served by fixtures --------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_title_request_and_a_replayed_history_are_served_by_fixtures(protocol: str) -> None:
    client = Client(agent_script())
    ask = first_request(protocol, "What is the weather in Paris?")
    title = client.ok(protocol, first_request(protocol, "Generate a title for: weather", ()))
    assert text_of(protocol, title) == "Weather in Paris"
    answer = client.ok(protocol, ask)
    assert calls_of(protocol, answer) == [TOOL]
    final = client.ok(protocol, replay(protocol, ask, answer, ["sunny"]))
    assert text_of(protocol, final) == "It is sunny in Paris."
    # A second title request (the framework names the thread again) is served again.
    again = client.ok(protocol, first_request(protocol, "Generate a short title please", ()))
    assert text_of(protocol, again) == "Weather in Paris"
    assert list(client.app.state.callgate.mismatches) == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_use_of_a_fixture_has_ids_of_its_own(protocol: str) -> None:
    client = Client(agent_script())
    ask = first_request(protocol, "weather?")
    one, two = client.ok(protocol, ask), client.ok(protocol, ask)
    assert response_id(protocol, one) != response_id(protocol, two)
    # ... and the same ids in a fresh session: the script is deterministic.
    other = Client(agent_script(), test_id="t")
    assert response_id(protocol, other.ok(protocol, ask)) == response_id(protocol, one)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_times_then_the_next_fixture_then_the_fallback(protocol: str) -> None:
    script = Script.from_dict(
        {
            "fixtures": [
                {"match": {"last_user_text": "hi"}, "respond": {"text": "first"}, "times": 1},
                {"match": {"last_user_text": "hi"}, "respond": {"text": "second"}, "times": 1},
            ],
            "fallback": {"respond": {"text": "fallback"}},
        }
    )
    client = Client(script)
    hi = first_request(protocol, "hi", ())
    texts = [text_of(protocol, client.ok(protocol, hi)) for _ in range(3)]
    assert texts == ["first", "second", "fallback"]
    # Use counts are per session: another test id starts afresh.
    fresh = Client(script, test_id="u")
    fresh.app = client.app
    assert text_of(protocol, fresh.ok(protocol, hi)) == "first"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_no_fixture_and_no_fallback_is_the_mismatch_reply_naming_each_fixture(
    protocol: str,
) -> None:
    script = Script.from_dict(
        {"fixtures": [{"match": {"model": "other"}, "respond": {"text": "x"}},
                      {"match": {"last_user_text": "hi"}, "respond": {"text": "y"}, "times": 1}]}
    )  # fmt: skip
    client = Client(script)
    client.ok(protocol, first_request(protocol, "hi", ()))
    status, body = client.send(protocol, first_request(protocol, "hi", ()))
    assert status == 400
    text = json.dumps(body)
    assert "fixture /fixtures/0: model is " in text
    assert "fixture /fixtures/1 is used up (1 use(s))" in text
    (mismatch,) = client.app.state.callgate.mismatches
    assert mismatch.problems[0].startswith("fixture /fixtures/0: model is")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_ordered_turn_comes_first_and_fixtures_serve_what_it_does_not_match(
    protocol: str,
) -> None:
    script = Script.from_dict(
        {
            "turns": [
                {"protocol": protocol, "expect": {"tools": [TOOL]}, "respond": {"text": "turn 0"}},
                {"protocol": protocol, "expect": {"tools": [TOOL]}, "respond": {"text": "turn 1"}},
            ],
            "fixtures": [{"match": {"last_user_text_contains": "title"},
                          "respond": {"text": "a title"}}],
        }
    )  # fmt: skip
    client = Client(script)
    ask, title = first_request(protocol, "go"), first_request(protocol, "title?", ())
    got = [text_of(protocol, client.ok(protocol, body)) for body in (ask, title, ask, title)]
    assert got == ["turn 0", "a title", "turn 1", "a title"]
    assert client.app.state.callgate.remaining("t") == {"default": 0}


def test_a_fixture_without_protocol_serves_only_the_protocols_it_names() -> None:
    script = Script.from_dict(
        {"fixtures": [{"protocol": "anthropic_messages", "respond": {"text": "claude"}}]}
    )
    client = Client(script)
    assert text_of("anthropic_messages", client.ok("anthropic_messages",
                   first_request("anthropic_messages", "x", ()))) == "claude"  # fmt: skip
    status, body = client.send("openai_responses", first_request("openai_responses", "x", ()))
    assert status == 400
    assert "no fixture serves openai_responses" in json.dumps(body)


@pytest.mark.parametrize("protocol", ["openai_responses", "gemini_interactions"])
def test_previous_means_the_response_a_fixture_served(protocol: str) -> None:
    key = "previous_response_id" if protocol == "openai_responses" else "previous_interaction_id"
    script = Script.from_dict(
        {"fixtures": [
            {"match": {"previous_id": "previous", "tool_results": [TOOL]},
             "respond": {"text": "continued"}},
            {"match": {"previous_id": "absent"}, "respond": {"calls": [{"name": TOOL}]}},
        ]}
    )  # fmt: skip
    client = Client(script)
    answer = client.ok(protocol, first_request(protocol, "weather"))
    full = replay(protocol, first_request(protocol, "weather"), answer, ["sunny"])
    follow = {"model": MODEL, key: answer["id"], "input": full["input"][-1:]}
    assert text_of(protocol, client.ok(protocol, follow)) == "continued"


# -- provider-native validation stays on -------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_result_for_a_call_never_made_gets_the_providers_refusal_not_a_fixture(
    protocol: str,
) -> None:
    client = Client(agent_script())
    ask = first_request(protocol, "weather?")
    answer = client.ok(protocol, ask)
    forged = replay(protocol, ask, answer, ["sunny"])
    if protocol == "openai_responses":
        forged["input"][-1]["call_id"] = "call_never_made"
        forged["input"] = [i for i in forged["input"] if i.get("type") != "function_call"]
    elif protocol == "anthropic_messages":
        forged["messages"][-1]["content"][0]["tool_use_id"] = "toolu_never_made"
    elif protocol == "gemini_interactions":
        forged["input"][-1]["call_id"] = "never-made"
        forged["input"] = [s for s in forged["input"] if s.get("type") != "function_call"]
    elif protocol == "openai_chat_completions":
        forged["messages"][-1]["tool_call_id"] = "call_never_made"
    else:
        forged["contents"][1]["parts"] = [{"text": "no call here"}]
    status, body = client.send(protocol, forged)
    assert status in (400, 404), body
    assert "callgate mock: request does not match" not in json.dumps(body)
    assert list(client.app.state.callgate.mismatches) == []


# -- two parallel calls to the same tool ---------------------------------------------------------


def _parallel_script(protocol: str, results: list[dict[str, Any]]) -> Script:
    calls = [{"name": TOOL, "arguments": {"city": c}} for c in ("Paris", "Rome")]
    return Script.from_dict(
        {
            "turns": [
                {"protocol": protocol, "respond": {"calls": calls}},
                {"protocol": protocol, "expect": {"function_results": results},
                 "respond": {"text": "both"}},
            ]
        }
    )  # fmt: skip


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_parallel_results_of_one_tool_are_matched_by_call_position(protocol: str) -> None:
    wanted = [{"call": 0, "output": "sunny"}, {"call": 1, "output": "rainy"}]
    client = Client(_parallel_script(protocol, wanted))
    ask = first_request(protocol, "Paris and Rome?")
    answer = client.ok(protocol, ask)
    final = client.ok(protocol, replay(protocol, ask, answer, ["sunny", "rainy"]))
    assert text_of(protocol, final) == "both"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_results_in_the_wrong_order_are_named_by_position(protocol: str) -> None:
    wanted = [{"call": 0, "output": "sunny"}, {"call": 1, "output": "rainy"}]
    client = Client(_parallel_script(protocol, wanted))
    ask = first_request(protocol, "Paris and Rome?")
    answer = client.ok(protocol, ask)
    status, _ = client.send(protocol, replay(protocol, ask, answer, ["rainy", "sunny"]))
    assert status == 400
    (mismatch,) = client.app.state.callgate.mismatches
    assert len(mismatch.problems) == 2
    assert mismatch.problems[0].startswith("result for call 0 (")
    assert mismatch.problems[0].endswith("is 'rainy', expected 'sunny'")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_parallel_results_are_matched_by_scripted_call_id(protocol: str) -> None:
    calls = [{"name": TOOL, "arguments": {"city": c}, "id": f"id-{c}"} for c in ("Paris", "Rome")]
    results = [
        {"call_id": "id-Rome", "output": "rainy"},
        {"call_id": "id-Paris", "output": "sunny"},
    ]
    script = Script.from_dict(
        {"turns": [{"protocol": protocol, "respond": {"calls": calls}},
                   {"protocol": protocol, "expect": {"function_results": results},
                    "respond": {"text": "both"}}]}
    )  # fmt: skip
    client = Client(script)
    ask = first_request(protocol, "Paris and Rome?")
    answer = client.ok(protocol, ask)
    final = client.ok(protocol, replay(protocol, ask, answer, ["sunny", "rainy"]))
    assert text_of(protocol, final) == "both"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_two_results_of_one_name_are_ambiguous_and_said_once(protocol: str) -> None:
    wanted = [{"name": TOOL, "output": "sunny"}, {"name": TOOL, "output": "rainy"}]
    client = Client(_parallel_script(protocol, wanted))
    ask = first_request(protocol, "Paris and Rome?")
    answer = client.ok(protocol, ask)
    status, _ = client.send(protocol, replay(protocol, ask, answer, ["sunny", "rainy"]))
    assert status == 400
    (mismatch,) = client.app.state.callgate.mismatches
    assert mismatch.problems == (
        f"2 results for calls of {TOOL!r}; name each by its position in the previous turn "
        "('call': i) or its 'call_id'",
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_call_position_past_the_previous_turn_is_named(protocol: str) -> None:
    client = Client(_parallel_script(protocol, [{"call": 2, "output": "x"}]))
    ask = first_request(protocol, "Paris and Rome?")
    answer = client.ok(protocol, ask)
    client.send(protocol, replay(protocol, ask, answer, ["sunny", "rainy"]))
    (mismatch,) = client.app.state.callgate.mismatches
    assert mismatch.problems == ("the previous turn made 2 call(s); there is no call 2",)


@pytest.mark.parametrize("protocol", ["openai_responses", "anthropic_messages"])
def test_a_replayed_older_result_of_the_same_tool_does_not_make_a_name_ambiguous(
    protocol: str,
) -> None:
    one = {"protocol": protocol, "respond": {"calls": [{"name": TOOL}]}}
    script = Script.from_dict(
        {"turns": [one, one, {"protocol": protocol, "respond": {"text": "done"},
                              "expect": {"function_results": [{"name": TOOL, "output": "2"}]}}]}
    )  # fmt: skip
    client = Client(script)
    request = first_request(protocol, "twice")
    for output in ("1", "2"):
        answer = client.ok(protocol, request)
        request = replay(protocol, request, answer, [output])
    assert text_of(protocol, client.ok(protocol, request)) == "done"


# -- fixture HTTP errors and retries ------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_fixture_http_error_is_served_then_the_retry_gets_the_next_fixture(
    protocol: str,
) -> None:
    script = Script.from_dict(
        {"fixtures": [
            {"match": {"last_user_text": "hi"}, "times": 2,
             "respond": {"fault": {"type": "http_error", "status": 429, "retry_after": 0}}},
            {"match": {"last_user_text": "hi"}, "respond": {"text": "after retries"}},
        ]}
    )  # fmt: skip
    client = Client(script)
    hi = first_request(protocol, "hi", ())
    assert [client.send(protocol, hi)[0] for _ in range(2)] == [429, 429]
    assert text_of(protocol, client.ok(protocol, hi)) == "after retries"


# -- JSONPath predicates -----------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_jsonpath_predicate_picks_the_fixture(protocol: str) -> None:
    path = {
        "openai_responses": "$.input[0].content",
        "anthropic_messages": "$.messages[0].content",
        "gemini_interactions": "$.input[0].content[0].text",
        "gemini_generate_content": "$.contents[-1].parts[*].text",
        "openai_chat_completions": "$.messages[0].content",
    }[protocol]
    script = Script.from_dict(
        {"fixtures": [
            {"match": {"jsonpath": [{"path": path, "regex": "^blue"},
                                    {"path": "$.no_such_field", "exists": False}]},
             "respond": {"text": "blue one"}},
            {"match": {"jsonpath": {"path": path, "equals": "red"}},
             "respond": {"text": "red one"}},
        ]}
    )  # fmt: skip
    client = Client(script)
    assert text_of(protocol, client.ok(protocol, first_request(protocol, "blue sky", ()))) == (
        "blue one"
    )
    assert text_of(protocol, client.ok(protocol, first_request(protocol, "red", ()))) == "red one"
    status, body = client.send(protocol, first_request(protocol, "green", ()))
    assert status == 400
    assert "no node at " in json.dumps(body)


# -- refused at load ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("$..text", "recursive descent"),
        ("$.messages[?(@.role=='user')]", "a filter"),
        ("$.messages[0:2]", "a slice"),
        ("$.messages[0,1]", "a union"),
        ("messages[0]", "starts with '$'"),
        ("$.a[", "expected [n]"),
        ("$['a", "unterminated"),
    ],
)
def test_unsupported_jsonpath_syntax_is_refused_at_load(path: str, said: str) -> None:
    doc = {"fixtures": [{"match": {"jsonpath": {"path": path, "exists": True}},
                         "respond": {"text": "x"}}]}  # fmt: skip
    with pytest.raises(ScriptError, match=re.escape(said)) as info:
        Script.from_dict(doc)
    assert info.value.location == "/fixtures/0/match/jsonpath/path"


@pytest.mark.parametrize(
    ("doc", "location", "said"),
    [
        ({"fixtures": [{"respond": {"text": "x"}, "when": {}}]}, "/fixtures/0", "unknown key"),
        ({"fixtures": [{"match": {}}]}, "/fixtures/0", "needs a 'respond'"),
        ({"fixtures": [{"respond": {"text": "x"}, "times": 0}]}, "/fixtures/0/times", "int in"),
        ({"fixtures": [{"match": {"last_user_text_regex": "("}, "respond": {}}]},
         "/fixtures/0/match/last_user_text_regex", "not a regular expression"),
        ({"fixtures": [{"match": {"jsonpath": {"path": "$", "equals": 1, "exists": True}},
                        "respond": {}}]}, "/fixtures/0/match/jsonpath", "exactly one of"),
        ({"fixtures": [{"match": {"tool_results": [1]}, "respond": {}}]},
         "/fixtures/0/match/tool_results/0", "expected str"),
        ({"fixtures": [{"respond": {"status": "completed"}}]}, "/fixtures/0/respond/status",
         "give 'protocol' to serve one"),
        ({"fixtures": "no"}, "/fixtures", "a list"),
        ({"fallback": {"respond": {}, "match": {}}}, "/fallback", "unknown key"),
        ({"seed": 1}, "", "exactly one of 'turns'"),
    ],
)  # fmt: skip
def test_a_bad_fixture_is_refused_at_load_with_its_location(
    doc: dict[str, Any], location: str, said: str
) -> None:
    with pytest.raises(ScriptError, match=said) as info:
        Script.from_dict(doc)
    assert info.value.location == location


def test_a_fixture_http_error_counts_with_the_fixture_not_the_fault() -> None:
    doc = {
        "fixtures": [
            {
                "protocol": "openai_responses",
                "respond": {"fault": {"type": "http_error", "status": 500, "times": 2}},
            }
        ]
    }
    with pytest.raises(ScriptError, match="give 'times' on it") as info:
        create_app(Script.from_dict(doc))  # fmt: skip
    assert info.value.location == "/fixtures/0/respond/fault/times"


def test_a_fixture_stream_fault_is_checked_like_a_turns() -> None:
    doc = {"fixtures": [{"protocol": "openai_responses",
                         "respond": {"fault": {"type": "truncate", "call": 3}}}]}  # fmt: skip
    with pytest.raises(ScriptError, match="there is no call 3") as info:
        create_app(Script.from_dict(doc))
    assert info.value.location == "/fixtures/0/respond/fault/call"


def test_a_fixtures_only_script_is_done_from_the_start() -> None:
    from callgate.mock import MockServer

    with MockServer(agent_script()) as server:
        server.assert_script_done()


def test_the_python_builder_adds_fixtures_and_a_fallback() -> None:
    from callgate.mock import ScriptBuilder, call

    script = (
        ScriptBuilder(seed=2)
        .fixture("openai_responses", match={"tools": [TOOL]}, times=1, calls=[call(TOOL)])
        .fixture(match={"last_user_text": "hi"}, text="hello")
        .fallback(text="sorry")
        .build()
    )
    assert dict(script.conversations) == {}
    assert [f.times for f in script.fixtures] == [1, None]
    assert set(script.fixtures[1].turns) == set(PROTOCOLS)
    client = Client(script)
    ask = first_request("openai_responses", "weather")
    assert calls_of("openai_responses", client.ok("openai_responses", ask)) == [TOOL]
    assert text_of("openai_responses", client.ok("openai_responses", ask)) == "sorry"
    hi = first_request("gemini_generate_content", "hi", ())
    assert text_of("gemini_generate_content", client.ok("gemini_generate_content", hi)) == "hello"


@pytest.mark.parametrize("protocol", ["openai_responses", "gemini_interactions"])
def test_each_stored_use_of_a_fixture_reads_back_as_it_was_streamed(protocol: str) -> None:
    import httpx

    from callgate.mock import MockServer

    script = Script.from_dict(
        {"fixtures": [{"respond": {"text": "stored", "calls": [{"name": TOOL}],
                                   "chunking": "char"}}]}
    )  # fmt: skip
    route = (
        "/openai/v1/responses" if protocol == "openai_responses" else ("/gemini/v1/interactions")
    )
    with MockServer(script) as server, httpx.Client(base_url=server.url) as http:
        ids = []
        for _ in range(2):
            body = {**first_request(protocol, "x"), "stream": True}
            sent = http.post(route, json=body, headers=AUTH[protocol])
            assert sent.status_code == 200
            terminal = [json.loads(line[6:]) for line in sent.text.splitlines()
                        if line.startswith("data: ")][-1]  # fmt: skip
            ids.append((terminal.get("response") or terminal.get("interaction"))["id"])
        assert ids[0] != ids[1]
        for got_id in ids:
            got = http.get(f"{route}/{got_id}", headers=AUTH[protocol])
            assert got.status_code == 200
            assert got.json()["id"] == got_id
            assert TOOL in got.text


# -- hostile requests: a mismatch or an answer, never a crash ----------------------------------

_KEYS = ["type", "role", "call_id", "tool_use_id", "id", "name", "content", "text", "parts",
         "functionResponse", "functionCall", "output", "result", "response"]  # fmt: skip


def _hostile() -> Any:
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(
        ["", "user", "assistant", "model", "function_call", "function_call_output", "tool_use",
         "tool_result", "function_result", "user_input", "text", TOOL, "hi"]
    )  # fmt: skip
    values = st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4)
        ),
        max_leaves=12,
    )
    top = ["input", "messages", "contents", "tools", "model", "previous_response_id",
           "previous_interaction_id", "system", "instructions", "stream"]  # fmt: skip
    return st.dictionaries(st.sampled_from(top), values, max_size=5)


EVERY_KEY = {
    "model": "m", "tools": [TOOL], "last_user_text": "hi", "last_user_text_contains": "h",
    "last_user_text_regex": "h.", "tool_results": [TOOL], "has_tool_results": True,
    "previous_id": "present", "text_contains": "h",
    "function_results": [{"call": 0, "output": "x"}, {"name": TOOL, "output_contains": "x"},
                         {"call_id": "c", "is_error": False}],
    "jsonpath": [{"path": "$.input[*].content[0].text", "regex": "h"},
                 {"path": "$['messages'][-1].content", "contains": "x"},
                 {"path": "$.*", "equals": [1]}],
}  # fmt: skip


@pytest.mark.parametrize("validation", [True, False])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_hostile_requests_get_an_answer_or_a_mismatch_never_a_crash(
    protocol: str, validation: bool
) -> None:
    from hypothesis import HealthCheck, given, settings

    from callgate.mock._validate import CHECKS

    switches = {} if validation else dict.fromkeys(CHECKS, False)
    script = Script.from_dict(
        {"validation": switches, "turns": [{"protocol": protocol, "expect": EVERY_KEY}],
         "fixtures": [{"match": EVERY_KEY, "respond": {"calls": [{"name": TOOL}]}}]}
    )  # fmt: skip
    client = Client(script)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_hostile())
    def check(body: dict[str, Any]) -> None:
        status, _ = client.send(protocol, body)
        assert status in (200, 400, 404)

    check()


_ODD = [1]  # an id no provider accepts: a list
ODD_SHAPES = [
    ("openai_responses", {"input": [{"type": "function_call", "call_id": _ODD, "name": _ODD},
                                    {"type": "function_call_output", "call_id": _ODD}]}),
    ("gemini_interactions", {"input": [{"type": "function_call", "id": _ODD, "name": _ODD},
                                       {"type": "function_result", "call_id": _ODD}]}),
    ("anthropic_messages", {"messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": _ODD, "name": _ODD}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": _ODD}]}]}),
    ("anthropic_messages", {"messages": [
        {"role": "assistant", "content": [{"type": "thinking", "signature": _ODD}]}]}),
    ("gemini_generate_content", {"contents": [
        {"role": "model", "parts": [{"functionCall": {"name": _ODD}, "thoughtSignature": _ODD}]},
        {"role": "user", "parts": [{"functionResponse": {"name": _ODD, "id": _ODD}}]}]}),
]  # fmt: skip


@pytest.mark.parametrize("validation", [True, False])
@pytest.mark.parametrize(("protocol", "body"), ODD_SHAPES)
def test_ids_of_a_shape_no_api_accepts_get_a_400_not_a_crash(
    protocol: str, body: dict[str, Any], validation: bool
) -> None:
    from callgate.mock._validate import CHECKS

    switches = {} if validation else dict.fromkeys(CHECKS, False)
    script = Script.from_dict(
        {"validation": switches, "turns": [{"protocol": protocol, "expect": EVERY_KEY}],
         "fixtures": [{"match": EVERY_KEY, "respond": {"text": "x"}}]}
    )  # fmt: skip
    status, answer = Client(script).send(protocol, body)
    assert status == 400, answer


@pytest.mark.parametrize("protocol", ["openai_responses", "gemini_interactions"])
def test_a_title_request_between_turns_leaves_previous_to_the_ordered_turn(
    protocol: str,
) -> None:
    key = "previous_response_id" if protocol == "openai_responses" else "previous_interaction_id"
    script = Script.from_dict(
        {"turns": [
            {"protocol": protocol, "expect": {"tools": [TOOL]},
             "respond": {"calls": [{"name": TOOL}]}},
            {"protocol": protocol, "respond": {"text": "done"},
             "expect": {"previous_id": "previous",
                        "function_results": [{"call": 0, "output": "ok"}]}},
         ],
         "fixtures": [{"match": {"last_user_text_contains": "title"}, "respond": {"text": "T"}}]}
    )  # fmt: skip
    client = Client(script)
    ask = first_request(protocol, "weather")
    answer = client.ok(protocol, ask)
    assert text_of(protocol, client.ok(protocol, first_request(protocol, "a title?", ()))) == "T"
    full = replay(protocol, ask, answer, ["ok"])
    follow = {"model": MODEL, key: answer["id"], "input": full["input"][-1:]}
    assert text_of(protocol, client.ok(protocol, follow)) == "done"


def _ask_again(protocol: str, request: dict[str, Any], final: dict[str, Any],
               text: str) -> dict[str, Any]:  # fmt: skip
    """``request`` + the model's final ``answer`` + a new user question."""
    follow = json.loads(json.dumps(request))
    if protocol == "openai_responses":
        follow["input"] += [*final["output"], {"role": "user", "content": text}]
    elif protocol == "anthropic_messages":
        follow["messages"] += [{"role": "assistant", "content": final["content"]},
                               {"role": "user", "content": text}]  # fmt: skip
    elif protocol == "gemini_interactions":
        question = {"type": "user_input", "content": [{"type": "text", "text": text}]}
        follow["input"] += [*final["steps"], question]
    elif protocol == "openai_chat_completions":
        message = final["choices"][0]["message"]
        follow["messages"] += [{k: v for k, v in message.items() if v is not None},
                               {"role": "user", "content": text}]  # fmt: skip
    else:
        follow["contents"] += [final["candidates"][0]["content"],
                               {"role": "user", "parts": [{"text": text}]}]  # fmt: skip
    return follow


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_second_question_in_a_replayed_chat_is_not_taken_for_a_tool_round(
    protocol: str,
) -> None:
    client = Client(agent_script())
    ask = first_request(protocol, "What is the weather in Paris?")
    for question in ("And the weather tomorrow?", "And the weather next week?"):
        answer = client.ok(protocol, ask)
        assert calls_of(protocol, answer) == [TOOL], question
        done = replay(protocol, ask, answer, ["sunny"])
        final = client.ok(protocol, done)
        assert text_of(protocol, final) == "It is sunny in Paris."
        ask = _ask_again(protocol, done, final, question)
    assert list(client.app.state.callgate.mismatches) == []


def test_a_fixture_script_file_loads_and_names_its_path_in_errors(tmp_path: Any) -> None:
    from callgate.mock import load_script

    good = tmp_path / "fixtures.json"
    good.write_text(json.dumps({"fixtures": [{"match": {"last_user_text": "hi"},
                                              "respond": {"text": "hello"}}]}))  # fmt: skip
    client = Client(load_script(good))
    assert text_of("anthropic_messages", client.ok("anthropic_messages",
                   first_request("anthropic_messages", "hi", ()))) == "hello"  # fmt: skip
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"fixtures": [{"match": {"jsonpath": {"path": "$..x",
                                                                    "exists": True}},
                                             "respond": {}}]}))  # fmt: skip
    with pytest.raises(ScriptError) as info:
        load_script(bad)
    assert info.value.path == str(bad)
    assert str(info.value).startswith(f"{bad}:/fixtures/0/match/jsonpath/path: recursive")
