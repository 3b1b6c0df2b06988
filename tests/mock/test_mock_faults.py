"""Faults in the mock: the schema, HTTP errors, stream faults as callgate's parsers classify
them, pacing, and the runtime control endpoint scoped by test id."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

import httpx
import pytest

from callgate import (
    FramingError,
    JSONError,
    ProviderError,
    SequenceError,
    TruncatedStreamError,
)
from callgate import anthropic_messages as am
from callgate import gemini_generate_content as ggc
from callgate import gemini_interactions as gi
from callgate import openai_chat_completions as occ
from callgate import openai_responses as oai
from callgate.mock import (
    TEST_ID_HEADER,
    MockServer,
    ScriptBuilder,
    ScriptError,
    call,
    create_app,
    load_script,
)
from callgate.sse import SSEDecoder

from .conftest import AUTH, PATHS, asgi_call, path_of, valid_body

PROTOCOLS = sorted(PATHS)
PARSE = {
    "openai_responses": oai.parse_stream,
    "anthropic_messages": am.parse_stream,
    "gemini_interactions": gi.parse_stream,
    "gemini_generate_content": ggc.parse_stream,
    "openai_chat_completions": occ.parse_stream,
}
# generateContent decodes UTF-8 with the JSON of one whole event (its framing keeps bytes).
BAD_BYTES = {"gemini_generate_content": JSONError}
ARGS = {"city": "Paris", "unit": "celsius"}
ARGS_TEXT = json.dumps(ARGS, separators=(",", ":"))


def _script(protocol: str, **respond: Any) -> Any:
    respond.setdefault("calls", [call("get_weather", **ARGS)])
    respond.setdefault("chunking", {"fixed": 4})
    if protocol == "gemini_generate_content":  # a call is one whole event there: add text
        respond.setdefault("text", "Checking the weather in Paris.")
    return ScriptBuilder(seed=3).turn(protocol, expect={"model": "m"}, **respond).build()


def _post(app: Any, protocol: str, stream: bool = True, **headers: str) -> tuple[int, Any, bytes]:
    status, head, bodies = asgi_call(
        app,
        path_of(protocol, stream),
        {"model": "m", "stream": stream},
        {**AUTH[protocol], **headers},
    )
    return status, head, b"".join(bodies)


def _stream(protocol: str, fault: dict[str, Any] | None = None, **respond: Any) -> bytes:
    if fault is not None:
        respond["fault"] = fault
    status, _, body = _post(create_app(_script(protocol, **respond)), protocol)
    assert status == 200
    return body


def _events(body: bytes) -> list[Any]:
    return SSEDecoder().feed(body)


# -- the schema -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "respond", "where"),
    [
        ("openai_responses", {"fault": {"type": "explode"}}, "/fault/type"),
        ("openai_responses", {"fault": {"type": "http_error", "status": 418}}, "/fault/status"),
        ("openai_responses", {"fault": {"type": "http_error", "status": 529}}, "/fault/status"),
        ("gemini_interactions", {"fault": {"type": "http_error", "status": 529}}, "/fault/status"),
        (
            "openai_responses",
            {"fault": {"type": "http_error", "status": 429, "times": 0}},
            "/fault/times",
        ),
        ("openai_responses", {"fault": {"type": "disconnect"}}, "/fault"),
        ("openai_responses", {"fault": {"type": "disconnect", "after": -1}}, "/fault/after"),
        ("openai_responses", {"fault": {"type": "disconnect", "after": 2, "times": 2}}, "/fault"),
        (
            "openai_responses",
            {"fault": {"type": "duplicate", "after": 2, "payload": "different"}},
            "/fault/payload",
        ),
        (
            "anthropic_messages",
            {"fault": {"type": "error_event", "after": 2, "shape": "flat"}},
            "/fault/shape",
        ),
        ("openai_responses", {"fault": {"type": "truncate", "call": 1}}, "/fault/call"),
        ("anthropic_messages", {"fault": {"type": "truncate", "keep": 999}}, "/fault/keep"),
        ("gemini_interactions", {"fault": {"type": "truncate"}, "disconnect_after": 3}, "/fault"),
        ("openai_responses", {"pacing": {"flush": "sometimes"}}, "/pacing/flush"),
        (
            "openai_responses",
            {"pacing": {"event_delay_ms": 5, "flush": "coalesce"}},
            "/pacing/flush",
        ),
        ("openai_responses", {"pacing": {"first_byte_ms": 1.5}}, "/pacing/first_byte_ms"),
        ("openai_responses", {"pacing": {"speed": 1}}, "/pacing"),
    ],
)
def test_invalid_fault_or_pacing_is_a_script_error_at_its_location(
    protocol: str, respond: dict[str, Any], where: str
) -> None:
    # The script schema refuses a fault's shape when the script is built; the rest (what
    # fits the turn or the provider) when an app is created for it.
    with pytest.raises(ScriptError) as info:
        create_app(_script(protocol, **respond))
    assert info.value.location == "/conversations/default/0/respond" + where


# -- HTTP errors ------------------------------------------------------------------------------

STATUSES = [400, 401, 403, 404, 408, 409, 429, 500, 503]
CASES = [(p, s) for p in PROTOCOLS for s in STATUSES] + [("anthropic_messages", 529)]


@pytest.mark.parametrize(("protocol", "status"), CASES)
def test_http_error_fault_answers_in_the_provider_shape_without_consuming_the_turn(
    protocol: str, status: int
) -> None:
    app = create_app(_script(protocol, fault={"type": "http_error", "status": status}))
    got, head, body = _post(app, protocol)
    assert got == status
    error = json.loads(body)
    if protocol in ("openai_responses", "openai_chat_completions"):
        assert set(error["error"]) == {"message", "type", "param", "code"}
        expected = {429: "requests"}.get(
            status, "server_error" if status >= 500 else "invalid_request_error"
        )
        assert error["error"]["type"] == expected
    elif protocol == "anthropic_messages":
        assert error["type"] == "error"
        assert error["error"]["type"].endswith("_error")
        if status == 529:
            assert error["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    elif protocol == "gemini_interactions":  # the Interactions API's documented codes
        assert set(error["error"]) <= {"code", "message", "details"}
        documented = {
            400: "invalid_request",
            401: "authentication",
            403: "permission_denied",
            404: "not_found",
            429: "rate_limit_exceeded",
            503: "service_unavailable",
        }
        fallback = "api_error" if status >= 500 else "invalid_request"
        assert error["error"]["code"] == documented.get(status, fallback)
    else:
        assert error["error"]["code"] == status
        assert error["error"]["status"].isupper()
    assert ("retry-after" in head) == (status == 429 and not protocol.startswith("gemini_"))
    state = app.state.callgate
    assert state.remaining() == {"default": 1}
    assert state.journal.last().outcome == "fault"
    # The request after it (an SDK retry) gets the real turn.
    got, _, body = _post(app, protocol)
    assert got == 200
    assert PARSE[protocol](body).calls[0].arguments == ARGS
    assert state.remaining() == {"default": 0}


def test_429_carries_each_providers_rate_limit_facts() -> None:
    fault = {"type": "http_error", "status": 429, "retry_after": 7}
    _, head, body = _post(create_app(_script("openai_responses", fault=fault)), "openai_responses")
    assert head["retry-after"] == "7"
    assert head["x-ratelimit-remaining-requests"] == "0"
    assert head["x-ratelimit-reset-tokens"] == "7s"
    assert json.loads(body)["error"]["code"] == "rate_limit_exceeded"

    app = create_app(_script("anthropic_messages", fault=fault))
    _, head, body = _post(app, "anthropic_messages")
    assert head["retry-after"] == "7"
    for kind in ("requests", "tokens", "input-tokens", "output-tokens"):
        assert head[f"anthropic-ratelimit-{kind}-remaining"] == "0"
        assert head[f"anthropic-ratelimit-{kind}-reset"].endswith("Z")
    assert json.loads(body)["error"]["type"] == "rate_limit_error"

    app = create_app(_script("gemini_interactions", fault=fault))
    _, head, body = _post(app, "gemini_interactions")
    details = json.loads(body)["error"]["details"]
    retry = [d for d in details if d["@type"].endswith("google.rpc.RetryInfo")]
    assert retry == [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}]
    assert json.loads(body)["error"]["code"] == "rate_limit_exceeded"


def test_http_error_times_answers_that_many_requests_then_serves_the_turn() -> None:
    fault = {"type": "http_error", "status": 503, "times": 2}
    app = create_app(_script("gemini_interactions", fault=fault))
    assert [_post(app, "gemini_interactions")[0] for _ in range(3)] == [503, 503, 200]
    # Each test id counts its own uses.
    assert _post(app, "gemini_interactions", **{TEST_ID_HEADER: "other"})[0] == 503


def test_http_error_fault_leaves_a_request_on_another_route_to_the_mismatch_check() -> None:
    app = create_app(_script("anthropic_messages", fault={"type": "http_error", "status": 500}))
    status, _, _ = _post(app, "openai_responses")
    assert status == 400
    assert "anthropic_messages" in app.state.callgate.mismatches[0].problems[0]


# -- stream faults, as callgate's parsers classify them --------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_disconnect_fault_is_a_truncated_stream(protocol: str) -> None:
    body = _stream(protocol, {"type": "disconnect", "after": 5})
    assert len(_events(body)) == 5
    with pytest.raises(TruncatedStreamError):
        PARSE[protocol](body)


def test_disconnect_after_in_respond_still_cuts_the_stream() -> None:
    body = _stream("gemini_interactions", disconnect_after=3)
    assert len(_events(body)) == 3
    with pytest.raises(TruncatedStreamError):
        gi.parse_stream(body)


@pytest.mark.parametrize(
    ("protocol", "fault", "shape"),
    [
        ("openai_responses", {}, {"type": "error", "sequence_number": 4}),
        ("openai_responses", {"shape": "flat"}, {"type": "error", "code": "server_error"}),
        ("anthropic_messages", {}, {"type": "error"}),
        ("gemini_interactions", {}, {"event_type": "error"}),
    ],
)
def test_error_event_in_the_provider_shape_is_a_provider_error(
    protocol: str, fault: dict[str, Any], shape: dict[str, Any]
) -> None:
    spec = {"type": "error_event", "after": 4, "message": "boom", **fault}
    body = _stream(protocol, spec)
    events = _events(body)
    assert len(events) == 5  # four events, then the error, then the stream ends
    last = json.loads(events[-1].data)
    assert shape.items() <= last.items()
    if fault.get("shape") == "flat":
        assert "error" not in last
    elif protocol == "openai_responses":
        assert last["error"]["message"] == "boom"
    if protocol == "anthropic_messages":
        assert events[-1].event == "error"
        assert last["error"] == {"type": "overloaded_error", "message": "boom"}
    if protocol == "gemini_interactions":
        assert last["event_id"].endswith(":4")
    with pytest.raises(ProviderError) as info:
        PARSE[protocol](body)
    assert info.value.provider_message == "boom"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_malformed_frame_is_a_json_error(protocol: str) -> None:
    body = _stream(protocol, {"type": "malformed", "after": 3})
    assert b'data: {"callgate_malformed": "this frame is cut sh\n\n' in body
    with pytest.raises(JSONError) as info:
        PARSE[protocol](body)
    assert info.value.event_index in (2, 3)  # the malformed frame, counted from 0 or 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_malformed_bytes_are_a_framing_error(protocol: str) -> None:
    # A lone surrogate in ``data`` leaves as the invalid UTF-8 byte it escapes.
    body = _stream(protocol, {"type": "malformed", "after": 2, "data": '{"a":"\udcff"}'})
    assert b'{"a":"\xff"}' in body
    with pytest.raises(BAD_BYTES.get(protocol, FramingError)):
        PARSE[protocol](body)


def test_duplicate_frame_breaks_openai_sequence_numbers() -> None:
    body = _stream("openai_responses", {"type": "duplicate", "after": 3})
    events = _events(body)
    assert events[2].data == events[3].data
    with pytest.raises(SequenceError):
        oai.parse_stream(body)


def test_duplicate_anthropic_frame_is_a_sequence_error() -> None:
    body = _stream("anthropic_messages", {"type": "duplicate", "after": 2})
    events = _events(body)
    assert events[1].data == events[2].data  # content_block_start twice
    with pytest.raises(SequenceError):
        am.parse_stream(body)


def test_gemini_duplicate_event_id_with_the_same_payload_is_idempotent() -> None:
    body = _stream("gemini_interactions", {"type": "duplicate", "after": 4, "payload": "same"})
    events = _events(body)
    assert events[3].data == events[4].data
    assert gi.parse_stream(body).calls[0].arguments == ARGS


def test_gemini_duplicate_event_id_with_another_payload_is_a_sequence_error() -> None:
    body = _stream("gemini_interactions", {"type": "duplicate", "after": 4, "payload": "different"})
    events = _events(body)
    first, again = json.loads(events[3].data), json.loads(events[4].data)
    assert first["event_id"] == again["event_id"]
    assert first != again
    with pytest.raises(SequenceError):
        gi.parse_stream(body)


def test_out_of_order_sequence_number_is_a_sequence_error() -> None:
    body = _stream("openai_responses", {"type": "out_of_order", "after": 3})
    numbers = [json.loads(e.data)["sequence_number"] for e in _events(body)]
    assert numbers[:5] == [0, 1, 2, 4, 3]
    with pytest.raises(SequenceError):
        oai.parse_stream(body)


def test_truncate_openai_cuts_the_arguments_and_ends_incomplete() -> None:
    body = _stream("openai_responses", {"type": "truncate", "keep": 9})
    objs = [json.loads(e.data) for e in _events(body)]
    deltas = [o["delta"] for o in objs if o["type"] == "response.function_call_arguments.delta"]
    assert "".join(deltas) == ARGS_TEXT[:9]
    assert objs[-1]["type"] == "response.incomplete"
    assert objs[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    assert [o["sequence_number"] for o in objs] == list(range(len(objs)))
    # callgate classifies the incomplete terminal as the provider ending the turn: no call.
    with pytest.raises(ProviderError) as info:
        oai.parse_stream(body)
    assert info.value.error_code == "max_output_tokens"


def test_truncate_anthropic_stops_at_max_tokens_and_releases_no_call() -> None:
    body = _stream("anthropic_messages", {"type": "truncate", "keep": 9})
    objs = [json.loads(e.data) for e in _events(body)]
    partial = [o["delta"]["partial_json"] for o in objs if o["type"] == "content_block_delta"]
    assert "".join(partial) == ARGS_TEXT[:9]
    assert [o["type"] for o in objs[-3:]] == ["content_block_stop", "message_delta", "message_stop"]
    turn = am.parse_stream(body)
    assert turn.stop_reason == "max_tokens"
    assert turn.calls == ()
    assert [(r.name, r.partial_input) for r in turn.recovery_calls] == [
        ("get_weather", ARGS_TEXT[:9])
    ]


def test_truncate_gemini_ends_incomplete_mid_arguments() -> None:
    script = _script(
        "gemini_interactions",
        text="Checking.",
        calls=[call("get_time", tz="UTC"), call("get_weather", **ARGS)],
        fault={"type": "truncate", "call": 1},
    )
    _, _, body = _post(create_app(script), "gemini_interactions")
    objs = [json.loads(e.data) for e in _events(body)]
    pieces = [
        o["delta"]["arguments"]
        for o in objs
        if o["event_type"] == "step.delta" and o["delta"]["type"] == "arguments_delta"
    ]
    assert "".join(pieces) == '{"tz":"UTC"}' + ARGS_TEXT[: len(ARGS_TEXT) // 2]
    assert objs[-1]["interaction"]["status"] == "incomplete"
    assert len({o["event_id"] for o in objs}) == len(objs)
    # callgate parses a call's arguments at its step.stop: the cut JSON fails there.
    with pytest.raises(JSONError) as info:
        gi.parse_stream(body)
    assert info.value.wire_type == "step.stop"


# -- pacing and coalescing --------------------------------------------------------------------


def _timed(app: Any, protocol: str) -> list[tuple[float, bytes]]:
    """Body messages with the time (s since the request) each was sent."""
    chunks: list[tuple[float, bytes]] = []
    raw = json.dumps(valid_body(protocol, {"stream": True})).encode()
    start = time.monotonic()

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and message.get("body"):
            chunks.append((time.monotonic() - start, message["body"]))

    scope = {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1", "method": "POST", "scheme": "http", "path": PATHS[protocol],
        "raw_path": PATHS[protocol].encode(), "query_string": b"", "root_path": "",
        "headers": [(k.encode(), v.encode()) for k, v in AUTH[protocol].items()],
        "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
    }  # fmt: skip
    asyncio.run(app(scope, receive, send))
    return chunks


def test_time_to_first_byte_and_per_event_delay() -> None:
    pacing = {"first_byte_ms": 150, "event_delay_ms": 20}
    app = create_app(_script("anthropic_messages", chunking={"fixed": 8}, pacing=pacing))
    chunks = _timed(app, "anthropic_messages")
    rendered = app.state.callgate.served_turns()[0].rendered
    assert [c for _, c in chunks] == list(rendered.frames)  # paced => one frame per message
    assert chunks[0][0] >= 0.15
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(chunks)]
    assert min(gaps) >= 0.018


def test_time_to_first_byte_alone_still_coalesces() -> None:
    app = create_app(_script("openai_responses", pacing={"first_byte_ms": 100}))
    chunks = _timed(app, "openai_responses")
    assert len(chunks) == 1
    assert chunks[0][0] >= 0.1
    assert chunks[0][1] == app.state.callgate.served_turns()[0].rendered.sse


def test_a_stream_fault_still_coalesces_without_pacing() -> None:
    app = create_app(_script("openai_responses", fault={"type": "disconnect", "after": 6}))
    chunks = _timed(app, "openai_responses")
    assert len(chunks) == 1
    assert len(_events(chunks[0][1])) == 6
    # The journal holds exactly what was sent.
    assert app.state.callgate.journal.last().response == chunks[0][1].decode()


# -- the runtime control endpoint -------------------------------------------------------------


def _call(server: MockServer, protocol: str, test_id: str, stream: bool = True) -> httpx.Response:
    return httpx.post(
        server.url + PATHS[protocol],
        json=valid_body(protocol, {"stream": stream}),
        headers={**AUTH[protocol], TEST_ID_HEADER: test_id},
        timeout=10,
    )


def _control(server: MockServer, method: str, test_id: str, body: Any = None) -> httpx.Response:
    return httpx.request(
        method,
        f"{server.url}/_callgate/faults",
        json=body,
        headers={TEST_ID_HEADER: test_id},
        timeout=10,
    )


def test_runtime_http_fault_hits_only_its_test_id() -> None:
    with MockServer(_script("openai_responses")) as server:
        fault = {"fault": {"type": "http_error", "status": 429, "retry_after": 2}, "times": 1}
        armed = _control(server, "POST", "A", fault)
        assert armed.status_code == 200
        assert armed.json()["faults"][0]["remaining"] == 1
        hit = _call(server, "openai_responses", "A")
        assert hit.status_code == 429
        assert hit.headers["retry-after"] == "2"
        assert _call(server, "openai_responses", "B").status_code == 200  # B is unaffected
        assert _call(server, "openai_responses", "A").status_code == 200  # used up
        assert _control(server, "GET", "A").json()["faults"] == []
        outcomes = [(e.test_id, e.outcome) for e in server.journal.entries()]
        assert outcomes == [
            ("A", "control"), ("A", "fault"), ("B", "matched"), ("A", "matched"),
            ("A", "control"),
        ]  # fmt: skip


def test_runtime_stream_fault_and_protocol_scope_and_delete() -> None:
    script = (
        ScriptBuilder(seed=3)
        .turn("anthropic_messages", expect={"model": "m"}, calls=[call("f", a=1)])
        .turn("anthropic_messages", expect={"model": "m"}, calls=[call("f", a=2)])
        .build()
    )
    with MockServer(script) as server:
        spec = {"fault": {"type": "error_event", "after": 2}, "protocol": "anthropic_messages"}
        assert _control(server, "POST", "A", spec).status_code == 200
        assert _control(server, "POST", "A", {**spec, "times": 5}).status_code == 200
        with pytest.raises(ProviderError):
            am.parse_stream(_call(server, "anthropic_messages", "A").content)
        assert am.parse_stream(_call(server, "anthropic_messages", "B").content).calls
        cleared = _control(server, "DELETE", "A")
        assert cleared.json() == {"cleared": 1, "faults": []}
        assert am.parse_stream(_call(server, "anthropic_messages", "A").content).calls


def test_runtime_pacing_alone_is_accepted() -> None:
    with MockServer(_script("gemini_interactions")) as server:
        body = {"pacing": {"first_byte_ms": 200}}
        assert _control(server, "POST", "A", body).status_code == 200
        started = time.monotonic()
        assert gi.parse_stream(_call(server, "gemini_interactions", "A").content).calls
        assert time.monotonic() - started >= 0.2


@pytest.mark.parametrize(
    ("body", "location"),
    [
        ({"fault": {"type": "http_error", "status": 418}}, "/fault/status"),
        ({"fault": {"type": "http_error", "status": 429, "times": 2}}, "/fault/times"),
        ({"times": 1}, ""),
        ({"pacing": {"flush": "x"}}, "/pacing/flush"),
        ({"fault": {"type": "disconnect", "after": 1}, "protocol": "grpc"}, "/protocol"),
    ],
)
def test_invalid_runtime_fault_is_a_400_and_is_journaled(body: Any, location: str) -> None:
    with MockServer(_script("openai_responses")) as server:
        reply = _control(server, "POST", "A", body)
        assert reply.status_code == 400
        assert f"<script>{':' + location if location else ''}:" in reply.json()["error"]["message"]
        entry = server.journal.last()
        assert (entry.outcome, entry.status, entry.body) == ("control", 400, body)
        assert _call(server, "openai_responses", "A").status_code == 200


def test_a_script_file_with_a_bad_fault_names_the_file_and_the_key(tmp_path: Any) -> None:
    doc = {
        "turns": [
            {"protocol": "openai_responses", "respond": {"text": "hi"}},
            {
                "protocol": "openai_responses",
                "respond": {"text": "hi", "fault": {"type": "error_event", "after": "3"}},
            },
        ]
    }
    path = tmp_path / "faulty.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ScriptError) as info:
        MockServer(load_script(path))
    assert info.value.path == str(path)
    assert info.value.location == "/turns/1/respond/fault/after"


def test_runtime_pacing_keeps_the_turns_own_fault() -> None:
    script = _script("openai_responses", fault={"type": "disconnect", "after": 4})
    with MockServer(script) as server:
        assert _control(server, "POST", "A", {"pacing": {"flush": "per_event"}}).status_code == 200
        body = _call(server, "openai_responses", "A").content
        assert len(_events(body)) == 4
