"""The ASGI app itself, driven without a socket: framing, mismatches, auth."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from callgate.mock import MockServer, ScriptBuilder, call, create_app
from callgate.sse import SSEDecoder

from .conftest import AUTH, PATHS, asgi_call


def _ggc_parts(chunk: dict[str, Any]) -> list[dict[str, Any]]:
    """The parts of a generateContent chunk (none for another wire's event)."""
    candidates = chunk.get("candidates") or [{}]
    parts: list[dict[str, Any]] = candidates[0].get("content", {}).get("parts", [])
    return parts


def _one(protocol: str, **respond: object) -> object:
    return ScriptBuilder(seed=1).turn(protocol, expect={"model": "m"}, **respond).build()


@pytest.mark.parametrize("protocol", sorted(PATHS))
def test_per_event_pacing_sends_each_sse_frame_as_its_own_body_message(
    protocol: str, call_app
) -> None:
    script = _one(
        protocol,
        text="hello",
        calls=[call("f", a=1)],
        chunking="char",
        pacing={"flush": "per_event"},
    )
    status, head, bodies, state = call_app(script, protocol, {"model": "m", "stream": True})
    assert status == 200
    assert head["content-type"].startswith("text/event-stream")
    rendered = state.served_turns()[0].rendered
    # One ASGI body message per wire event, in order, byte for byte.
    assert bodies == list(rendered.frames)
    events = SSEDecoder().feed(b"".join(bodies))
    assert len(events) == len(bodies)
    # The chunk plan decides the deltas: "hello" streamed one character per event.
    decoded = [json.loads(e.data) for e in events if e.data != "[DONE]"]  # Chat's sentinel
    text_deltas = [
        d
        for d in decoded
        if d.get("type") == "response.output_text.delta"
        or (d.get("type") == "content_block_delta" and d["delta"]["type"] == "text_delta")
        or (d.get("event_type") == "step.delta" and d["delta"]["type"] == "text")
        or any(p.get("text") for p in _ggc_parts(d))
        or any(c["delta"].get("content") for c in d.get("choices", ()))
    ]
    assert len(text_deltas) == len("hello")


@pytest.mark.parametrize("protocol", sorted(PATHS))
def test_without_pacing_the_stream_leaves_coalesced_in_one_body_message(
    protocol: str, call_app
) -> None:
    script = _one(protocol, text="hello", calls=[call("f", a=1)], chunking="char")
    status, _, bodies, state = call_app(script, protocol, {"model": "m", "stream": True})
    assert status == 200
    rendered = state.served_turns()[0].rendered
    assert len(rendered.frames) >= len("hello") + 1
    assert bodies == [rendered.sse]  # every frame, in order, in one message
    assert state.journal.last().response == rendered.sse.decode()


def test_fixed_chunk_plan_sets_the_number_of_argument_deltas(call_app) -> None:
    args = {"city": "Paris", "unit": "celsius"}
    text = json.dumps(args, separators=(",", ":"))
    script = _one("openai_responses", calls=[call("f", **args)], chunking={"fixed": 5})
    _, _, bodies, _ = call_app(script, "openai_responses", {"model": "m", "stream": True})
    events = SSEDecoder().feed(b"".join(bodies))
    deltas = [e for e in events if e.event == "response.function_call_arguments.delta"]
    assert len(deltas) == -(-len(text) // 5)


@pytest.mark.parametrize(
    ("protocol", "shape"),
    [
        ("openai_responses", lambda b: b["error"]["type"] and "message" in b["error"]),
        ("anthropic_messages", lambda b: b["type"] == "error" and b["error"]["type"]),
        ("gemini_interactions", lambda b: b["error"]["code"] == "invalid_request"),
    ],
)
def test_mismatch_is_a_400_in_the_provider_shape_and_is_recorded(protocol, shape, call_app) -> None:
    script = _one(protocol, text="hi")
    status, _, bodies, state = call_app(script, protocol, {"model": "other-model"})
    assert status == 400
    body = json.loads(b"".join(bodies))
    assert shape(body)
    text = json.dumps(body)
    assert "other-model" in text
    assert "'m'" in text
    assert len(state.mismatches) == 1
    assert state.mismatches[0].location == "/conversations/default/0"
    assert state.remaining() == {"default": 1}  # a mismatch consumes nothing


@pytest.mark.parametrize(
    ("protocol", "headers", "status"),
    [
        ("openai_responses", {}, 401),
        ("anthropic_messages", {}, 401),
        ("anthropic_messages", {"x-api-key": "k"}, 400),
        ("gemini_interactions", {}, 401),
    ],
    ids=["openai_no_key", "anthropic_no_key", "anthropic_no_version", "gemini_no_key"],
)
def test_missing_credentials_get_the_provider_error(protocol, headers, status, call_app) -> None:
    script = _one(protocol, text="hi")
    got, _, bodies, state = call_app(script, protocol, {"model": "m"}, headers)
    assert got == status
    assert json.loads(b"".join(bodies))
    assert state.remaining() == {"default": 1}


def test_azure_route_accepts_api_key_header() -> None:
    app = create_app(_one("openai_responses", text="hi"))
    status, _, bodies = asgi_call(
        app, "/azure-openai/openai/v1/responses", {"model": "m"}, {"api-key": "k"}
    )
    assert status == 200
    assert json.loads(b"".join(bodies))["output"][0]["content"][0]["text"] == "hi"


def test_wrong_route_for_the_next_turn_is_a_mismatch(call_app) -> None:
    script = _one("anthropic_messages", text="hi")
    status, _, _, state = call_app(
        script, "openai_responses", {"model": "m"}, AUTH["openai_responses"]
    )
    assert status == 400
    assert "anthropic_messages" in state.mismatches[0].problems[0]


def test_invalid_json_body_is_a_400_not_a_crash(call_app) -> None:
    app = create_app(_one("openai_responses", text="hi"))
    status, _, bodies = asgi_call(
        app, PATHS["openai_responses"], b'{"a":1,"a":2}', AUTH["openai_responses"]
    )
    assert status == 400
    assert "duplicate" in json.loads(b"".join(bodies))["error"]["message"]


def test_exhausted_script_answers_400(call_app) -> None:
    app = create_app(_one("openai_responses", text="hi"))
    for expected in (200, 400):
        status, _, _ = asgi_call(
            app, PATHS["openai_responses"], {"model": "m"}, AUTH["openai_responses"]
        )
        assert status == expected
    assert "no turn left" in app.state.callgate.mismatches[0].problems[0]


def test_ids_are_deterministic_from_the_seed() -> None:
    def first_id(seed: int) -> str:
        app = create_app(ScriptBuilder(seed=seed).turn("openai_responses", text="x").build())
        _, _, bodies = asgi_call(
            app, PATHS["openai_responses"], {"model": "m"}, AUTH["openai_responses"]
        )
        return str(json.loads(b"".join(bodies))["id"])

    assert first_id(5) == first_id(5)
    assert first_id(5) != first_id(6)


def test_disconnect_after_cuts_the_stream_before_its_terminal(call_app) -> None:
    script = _one(
        "anthropic_messages",
        calls=[call("f", a=1)],
        chunking="char",
        disconnect_after=4,
        pacing={"flush": "per_event"},
    )
    _, _, bodies, _ = call_app(script, "anthropic_messages", {"model": "m", "stream": True})
    assert len(bodies) == 4
    assert b"message_stop" not in b"".join(bodies)


def test_mock_server_works_from_async_code() -> None:
    async def scenario() -> dict[str, object]:
        script = _one("openai_responses", text="from async")
        async with MockServer(script) as server, httpx.AsyncClient() as client:
            resp = await client.post(
                f"{server.openai_base_url}/responses",
                json={"model": "m"},
                headers=AUTH["openai_responses"],
            )
            server.assert_script_done()
            return dict(resp.json())

    body = asyncio.run(scenario())
    assert body["output"][0]["content"][0]["text"] == "from async"  # type: ignore[index]
