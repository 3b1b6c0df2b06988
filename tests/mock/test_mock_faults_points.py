"""Faults placed by a named point (a call, its argument deltas, the terminal) on every
protocol, in-process: where each strikes on the wire, and what is refused at load."""

from __future__ import annotations

import json
from typing import Any

import pytest

from callgate import CallgateError
from callgate import anthropic_messages as am
from callgate import gemini_generate_content as ggc
from callgate import gemini_interactions as gi
from callgate import openai_chat_completions as occ
from callgate import openai_responses as oai
from callgate.mock import PROTOCOLS, Script, ScriptError, create_app

from .conftest import AUTH, asgi_call, path_of

ARGS = ({"city": "Paris"}, {"tz": "UTC"})  # 16 and 12 chars: 6 and 4 deltas of 3
TEXTS = tuple(json.dumps(a, separators=(",", ":")) for a in ARGS)
STREAMED = (
    "openai_responses",
    "anthropic_messages",
    "gemini_interactions",
    "openai_chat_completions",
)  # in pieces
PARSERS = {
    "openai_responses": oai.parse_stream,
    "anthropic_messages": am.parse_stream,
    "gemini_interactions": gi.parse_stream,
    "gemini_generate_content": ggc.parse_stream,
    "openai_chat_completions": occ.parse_stream,
}


def _turn(protocol: str, fault: dict[str, Any], **respond: Any) -> dict[str, Any]:
    calls = [
        {"name": n, "arguments": a} for n, a in zip(("get_weather", "get_time"), ARGS, strict=True)
    ]
    return {
        "protocol": protocol,
        "respond": {"text": "Hi", "calls": calls, "chunking": {"fixed": 3}, "fault": fault,
                    **respond},
    }  # fmt: skip


def _script(protocol: str, fault: dict[str, Any], **respond: Any) -> Script:
    return Script.from_dict({"turns": [_turn(protocol, fault, **respond)]})


def _events(raw: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(line[len(b"data: ") :])
        for frame in raw.split(b"\n\n")
        for line in frame.split(b"\n")
        if line.startswith(b"data: ") and line[len(b"data: ") :].startswith(b"{")
    ]


def _stream(protocol: str, fault: dict[str, Any], **respond: Any) -> bytes:
    app = create_app(_script(protocol, fault, **respond))
    status, _, bodies = asgi_call(app, path_of(protocol, True), {"stream": True}, AUTH[protocol])
    assert status == 200
    return b"".join(bodies)


def _arguments(protocol: str, events: list[dict[str, Any]]) -> list[str]:
    """The argument text of each call received, in call order."""
    pieces: dict[Any, list[str]] = {}
    for e in events:
        if protocol == "openai_responses":
            if e["type"] == "response.output_item.added" and e["item"]["type"] == "function_call":
                pieces[e["output_index"]] = []
            elif e["type"] == "response.function_call_arguments.delta":
                pieces[e["output_index"]].append(e["delta"])
        elif protocol == "anthropic_messages":
            if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use":
                pieces[e["index"]] = []
            elif e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta":
                pieces[e["index"]].append(e["delta"]["partial_json"])
        elif protocol == "gemini_interactions":
            if e.get("event_type") == "step.start" and e["step"]["type"] == "function_call":
                pieces[e["index"]] = []
            elif e.get("event_type") == "step.delta" and e["delta"]["type"] == "arguments_delta":
                pieces[e["index"]].append(e["delta"]["arguments"])
        elif protocol == "openai_chat_completions":
            for delta in (c["delta"] for c in e.get("choices", ())):
                for tc in delta.get("tool_calls", ()):
                    pieces.setdefault(tc["index"], []).append(tc["function"]["arguments"])
        elif "candidates" in e:  # not an error chunk
            for part in e["candidates"][0].get("content", {}).get("parts", ()):
                if "functionCall" in part:
                    pieces[len(pieces)] = [json.dumps(part["functionCall"]["args"],
                                                      separators=(",", ":"))]  # fmt: skip
    return ["".join(p) for p in pieces.values()]


def _terminal(protocol: str, events: list[dict[str, Any]]) -> bool:
    for e in events:
        if protocol == "openai_responses" and e["type"] == "response.completed":
            return True
        if protocol == "anthropic_messages" and e["type"] == "message_delta":
            return True
        if protocol == "gemini_interactions" and e.get("event_type") == "interaction.completed":
            return True
        if protocol == "openai_chat_completions" and any(
            c.get("finish_reason") for c in e.get("choices", ())
        ):
            return True
        if protocol == "gemini_generate_content" and "finishReason" in e.get("candidates", [{}])[0]:
            return True
    return False


@pytest.mark.parametrize("protocol", STREAMED)
@pytest.mark.parametrize("deltas", [0, 1, 2, 4])
def test_a_disconnect_after_k_argument_deltas_of_a_call(protocol: str, deltas: int) -> None:
    raw = _stream(
        protocol, {"type": "disconnect", "after_call": 1, "after_argument_deltas": deltas}
    )
    events = _events(raw)
    assert _arguments(protocol, events) == [TEXTS[0], TEXTS[1][: 3 * deltas]]
    assert not _terminal(protocol, events)
    with pytest.raises(CallgateError):
        PARSERS[protocol](raw)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_error_event_after_a_complete_call(protocol: str) -> None:
    raw = _stream(protocol, {"type": "error_event", "after_call": 0, "message": "cut here"})
    events = _events(raw)
    assert _arguments(protocol, events) == [TEXTS[0]]
    assert "cut here" in json.dumps(events[-1])
    # generateContent's calls ride whole in their chunk; a Chat Completions call has no
    # end of its own (the next call or the finish chunk ends it).
    if protocol not in ("gemini_generate_content", "openai_chat_completions"):
        before = events[-2]
        assert "stop" in json.dumps(before) or "done" in json.dumps(before)
    with pytest.raises(CallgateError):
        PARSERS[protocol](raw)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_before_terminal_withholds_only_the_terminal(protocol: str) -> None:
    raw = _stream(protocol, {"type": "disconnect", "before_terminal": True})
    events = _events(raw)
    full = _events(_stream(protocol, {"type": "disconnect", "after": 10_000}))
    assert _terminal(protocol, full)
    assert not _terminal(protocol, events)
    if protocol == "anthropic_messages":
        assert events == full[:-2]  # message_delta and message_stop
    else:
        assert events == full[:-1]
    expected = [TEXTS[0]] if protocol == "gemini_generate_content" else list(TEXTS)
    assert _arguments(protocol, events) == expected  # generateContent: call 1 is in the last
    with pytest.raises(CallgateError):
        PARSERS[protocol](raw)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_duplicate_and_a_swap_at_a_named_point(protocol: str) -> None:
    full = _events(_stream(protocol, {"type": "disconnect", "after": 10_000}))
    dup = _events(_stream(protocol, {"type": "duplicate", "before_terminal": True}))
    cut = len(full) - (2 if protocol == "anthropic_messages" else 1)
    assert dup == [*full[:cut], full[cut - 1], *full[cut:]]
    raw = _stream(protocol, {"type": "out_of_order", "before_terminal": True})
    swapped = _events(raw)
    if protocol == "openai_chat_completions":  # the finish chunk and [DONE] change places
        assert swapped == full
        assert raw.index(b"data: [DONE]") < raw.index(b'"finish_reason":"tool_calls"')
    elif protocol == "anthropic_messages":
        assert swapped == [*full[:cut], full[cut + 1], full[cut]]
    else:
        assert swapped == [*full[: cut - 1], full[cut], full[cut - 1]]


# -- refused at load ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "fault", "extra", "where", "said"),
    [
        ("openai_responses", {"type": "disconnect", "after_call": 2}, {}, "after_call",
         "no complete call 2"),
        ("anthropic_messages", {"type": "disconnect", "after_call": 0,
                                "after_argument_deltas": 7}, {}, "after_argument_deltas",
         "fewer than 7 argument delta"),
        ("gemini_generate_content", {"type": "disconnect", "after_call": 0,
                                     "after_argument_deltas": 1}, {}, "after_argument_deltas",
         "sends each call whole"),
        ("gemini_interactions", {"type": "disconnect", "before_terminal": True},
         {"disconnect_after": 3}, "before_terminal", "no terminal event"),
        ("openai_responses", {"type": "disconnect", "after": 2, "after_call": 0}, {}, "",
         "place a fault once"),
        ("openai_responses", {"type": "disconnect", "before_terminal": False}, {},
         "before_terminal", "is true"),
        ("openai_responses", {"type": "disconnect", "after_argument_deltas": 1}, {},
         "after_argument_deltas", "needs after_call"),
        ("openai_responses", {"type": "disconnect", "after_call": -1}, {}, "after_call",
         "int >= 0"),
        ("openai_responses", {"type": "truncate", "before_terminal": True}, {}, "",
         "unknown key"),
        ("anthropic_messages", {"type": "error_event"}, {}, "", "'after_call' or"),
    ],
)  # fmt: skip
def test_a_point_the_stream_does_not_have_is_refused_at_load(
    protocol: str, fault: dict[str, Any], extra: dict[str, Any], where: str, said: str
) -> None:
    with pytest.raises(ScriptError, match=said) as info:
        create_app(_script(protocol, fault, **extra))
    assert info.value.location == "/turns/0/respond/fault" + (f"/{where}" if where else "")


def test_a_runtime_fault_at_a_named_point_waits_for_a_turn_that_has_it() -> None:
    one = {"protocol": "openai_responses", "respond": {"calls": [{"name": "a"}]}}
    two = _turn("openai_responses", {"type": "disconnect", "after": 10_000})
    del two["respond"]["fault"]
    app = create_app(Script.from_dict({"turns": [one, two]}))
    control = {"fault": {"type": "disconnect", "after_call": 1, "after_argument_deltas": 1}}
    status, _, _ = _control(app, control)
    assert status == 200
    body = {"model": "m", "stream": True, "input": "x"}
    path, auth = path_of("openai_responses", True), AUTH["openai_responses"]
    first = _events(b"".join(asgi_call(app, path, body, auth)[2]))
    assert _terminal("openai_responses", first)  # one call only: the fault waits
    second = _events(b"".join(asgi_call(app, path, body, auth)[2]))
    assert _arguments("openai_responses", second) == [TEXTS[0], TEXTS[1][:3]]


def _control(app: Any, body: dict[str, Any]) -> tuple[int, dict[str, str], list[bytes]]:
    return asgi_call(app, "/_callgate/faults", body, {})


def test_the_control_endpoint_refuses_argument_deltas_on_generate_content() -> None:
    app = create_app(Script.from_dict({"turns": [{"protocol": "gemini_generate_content"}]}))
    fault = {"type": "disconnect", "after_call": 0, "after_argument_deltas": 1}
    status, _, bodies = _control(app, {"fault": fault, "protocol": "gemini_generate_content"})
    assert status == 400
    assert "sends each call whole" in b"".join(bodies).decode()
