"""``n > 1`` on the Chat Completions mock: the choices it serves, the gate's choice
selection on them, and the unmodified openai SDK (either generation installed) reading
them over a real socket with strict response validation."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import httpx
import openai
import pytest

from callgate import TruncatedStreamError, UnsupportedProviderState
from callgate import openai_chat_completions as occ
from callgate.contracts import REVISIONS, get_baseline
from callgate.mock import MockServer, ScriptBuilder, call

PROTOCOL = "openai_chat_completions"
FIRST = [{"role": "user", "content": "Weather in Paris?"}]
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
         for n in ("get_weather", "get_time")]  # fmt: skip
CHOICES = [
    {"calls": [call("get_weather", city="Paris")]},
    {"calls": [call("get_time", zone="CET"), call("get_weather", city="Nice")]},
    {"text": "I cannot tell.", "status": "stop"},
]


def _baseline() -> str:
    major = importlib.metadata.version("openai").split(".")[0]
    return next(r for r in REVISIONS if get_baseline(PROTOCOL, r).sdk_version[0] == major)


BASELINE = _baseline()


def _server(times: int = 1, **respond: Any) -> MockServer:
    script = ScriptBuilder(seed=9)
    for _ in range(times):
        script.turn(PROTOCOL, chunking={"fixed": 4}, **respond)
    return MockServer(script.build())


def _post(server: MockServer, **body: Any) -> httpx.Response:
    return httpx.post(
        f"{server.openai_base_url}/chat/completions",
        headers={"authorization": "Bearer t"},
        json={"model": "m", "messages": FIRST, "tools": TOOLS, **body},
    )


def _released(turn: occ.Turn) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.arguments) for c in turn.calls]


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "body"])
def test_the_gate_refuses_n_choices_unless_one_is_selected(stream: bool) -> None:
    with _server(choices=CHOICES) as server:
        reply = _post(server, n=3, stream=stream)
    assert reply.status_code == 200

    def parse(**kw: Any) -> occ.Turn:
        if stream:
            return occ.parse_stream(reply.content, baseline=BASELINE, **kw)
        return occ.parse_response(reply.json(), baseline=BASELINE, **kw)

    with pytest.raises(UnsupportedProviderState, match="choice_index="):
        parse()
    first, second, third = (parse(choice_index=i) for i in range(3))
    assert _released(first) == [("get_weather", {"city": "Paris"})]
    assert _released(second) == [("get_time", {"zone": "CET"}), ("get_weather", {"city": "Nice"})]
    assert (first.finish_reason, second.finish_reason) == ("tool_calls", "tool_calls")
    assert third.calls == ()
    assert third.finish_reason == "stop"
    assert third.content == "I cannot tell."
    ids = [c.call_id for t in (first, second) for c in t.calls]
    assert len(set(ids)) == 3  # every choice's calls have their own ids
    if stream:  # a choice that never comes never finishes: nothing is released
        with pytest.raises(TruncatedStreamError):
            parse(choice_index=3)


def test_without_scripted_choices_the_turn_is_repeated_per_choice() -> None:
    with _server(calls=[call("get_weather", city="Rome")]) as server:
        reply = _post(server, n=2, stream=True, stream_options={"include_usage": True})
    turns = [occ.parse_stream(reply.content, baseline=BASELINE, choice_index=i) for i in (0, 1)]
    assert [_released(t) for t in turns] == [[("get_weather", {"city": "Rome"})]] * 2
    assert turns[0].calls[0].call_id != turns[1].calls[0].call_id
    assert turns[0].usage == turns[1].usage == {
        "prompt_tokens": 12, "completion_tokens": 34, "total_tokens": 46}  # fmt: skip
    assert reply.content.count(b'"usage"') == 1  # one usage chunk for the whole answer


def test_n_must_match_the_scripted_choices_and_stay_in_openais_bounds() -> None:
    with _server(choices=CHOICES) as server:
        wrong = _post(server, n=2)
        assert wrong.status_code == 400
        assert "the turn scripts 3 choices, the request asks for n=2" in wrong.text
        for n in (0, 129):
            out_of_range = _post(server, n=n)
            assert out_of_range.status_code == 400
            assert out_of_range.json()["error"]["param"] == "n"
        assert _post(server, n=3).status_code == 200


def test_a_choices_turn_is_refused_at_load_when_malformed() -> None:
    from callgate.mock import ScriptError

    bad = [
        {"choices": [{"text": "only one"}]},
        {"choices": CHOICES, "text": "beside"},
        {"choices": [{"text": "a"}, {"text": "b", "hosted": {}}]},
        {"choices": [{"text": "a"}, {"status": "eos"}]},
        {"choices": [{"text": "a"}] * 129},
    ]
    for respond in bad:
        with pytest.raises(ScriptError):
            ScriptBuilder().turn(PROTOCOL, **respond).build()


def _client(server: MockServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.openai_base_url, api_key="t", max_retries=0,
                         _strict_response_validation=True)  # fmt: skip


def test_the_sdk_reads_n_choices_streamed_and_not() -> None:
    with _server(3, choices=CHOICES) as server, _client(server) as client:
        body: dict[str, Any] = {"model": "m", "messages": FIRST, "tools": TOOLS, "n": 3}
        completion = client.chat.completions.create(**body)
        chunks = list(client.chat.completions.create(**body, stream=True))
        with client.chat.completions.stream(**body) as stream:
            final = stream.get_final_completion()
    assert [c.index for c in completion.choices] == [0, 1, 2]
    assert [c.finish_reason for c in completion.choices] == ["tool_calls", "tool_calls", "stop"]
    assert [c.index for c in final.choices] == [0, 1, 2]
    assert [c.finish_reason for c in final.choices] == ["tool_calls", "tool_calls", "stop"]
    named = [[t.function.name for t in c.message.tool_calls or ()] for c in final.choices]
    assert named == [["get_weather"], ["get_time", "get_weather"], []]
    assert final.choices[2].message.content == "I cannot tell."
    # The gate on the SDK's own objects: the chunks, then the accumulated completion.
    parser = occ.Parser(baseline=BASELINE, choice_index=1)
    for chunk in chunks:
        parser.feed_event(chunk)
    assert _released(parser.finish()) == [
        ("get_time", {"zone": "CET"}), ("get_weather", {"city": "Nice"})]  # fmt: skip
    for source in (completion, final.model_dump(mode="json")):
        with pytest.raises(UnsupportedProviderState):
            occ.parse_response(source, baseline=BASELINE)
        chosen = occ.parse_response(source, baseline=BASELINE, choice_index=0)
        assert _released(chosen) == [("get_weather", {"city": "Paris"})]
