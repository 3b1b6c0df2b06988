"""Property: every script the loader accepts is served without a 5xx it did not ask for.

Scripts are drawn from the loader's accepted space -- every protocol, text, calls with
object or raw arguments, reasoning, statuses, usage, chunk plans, interleaving,
``disconnect_after``, every fault kind and pacing, with values inside and at the edges of
the accepted bounds -- and some just outside it (the loader must then refuse them with a
``ScriptError``, never anything else). Each accepted script is served through the real
app over httpx's ASGI transport: every turn as a stream in one session and as a JSON body
in another, then every stored object is fetched (OpenAI GET; Gemini GET, resumed stream,
cancel). The only 5xx allowed is the ``http_error`` a turn scripted. Pacing delays are
not slept (the property is about answers, not time) and held streams end at once.
"""

from __future__ import annotations

import asyncio
import json
import types
from typing import Any
from unittest import mock

import httpx
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from callgate.mock import PROTOCOLS, Script, ScriptError, _faults, create_app
from callgate.mock._faults_spec import HTTP_STATUSES, MAX_PACING_MS, MAX_RETRY_AFTER
from callgate.mock._providers import provider
from callgate.mock._script import MAX_SEED, MAX_TOKENS
from callgate.sse import SSEDecoder

from .conftest import AUTH, PATHS, STREAM_PATHS

_STATUSES = {
    "openai_responses": st.sampled_from(provider("openai_responses").statuses or ()),
    "anthropic_messages": st.sampled_from(["end_turn", "tool_use", "max_tokens", "refusal"])
    | st.text(max_size=8),
    "gemini_interactions": st.sampled_from(
        ["completed", "requires_action", "failed", "incomplete", "cancelled", "in_progress"]
    )
    | st.text(max_size=8),
    "gemini_generate_content": st.sampled_from(provider("gemini_generate_content").statuses or ())
    | st.text(max_size=8),
    "openai_chat_completions": st.sampled_from(provider("openai_chat_completions").statuses or ()),
}
_SMALL = st.integers(0, 12)
_json_scalars = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.text(max_size=6)
_json = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _edge(low: int, high: int) -> st.SearchStrategy[int]:
    """Ints in [low, high], the bounds themselves often."""
    return st.sampled_from([low, high]) | st.integers(low, high)


@st.composite
def _call(draw: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": draw(st.text(max_size=8))}
    kind = draw(st.sampled_from(["arguments", "raw", "none"]))
    if kind == "arguments":
        spec["arguments"] = draw(st.dictionaries(st.text(max_size=5), _json, max_size=3))
    elif kind == "raw":
        spec["raw"] = draw(
            st.sampled_from(["", "{}", '{"a": 1}', '{"a": ', "not json", "[1]", "7"])
            | st.text(max_size=12)
        )
    if draw(st.booleans()):
        spec["id"] = draw(st.text(max_size=6))
    return spec


@st.composite
def _fault(draw: Any, protocol: str) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(_faults_kinds())))
    spec: dict[str, Any] = {"type": kind}
    if kind == "http_error":
        statuses = sorted(HTTP_STATUSES - ({529} if protocol != "anthropic_messages" else set()))
        spec["status"] = draw(st.sampled_from(statuses))
        if draw(st.booleans()):
            spec["retry_after"] = draw(_edge(0, MAX_RETRY_AFTER + 1))
        if draw(st.booleans()):
            spec["times"] = draw(st.integers(1, 3))
        if draw(st.booleans()):
            spec["message"] = draw(st.text(max_size=10))
    elif kind == "truncate":
        spec["call"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            spec["keep"] = draw(st.integers(0, 30))
    else:
        spec["after"] = draw(st.sampled_from([0, 1, 10**30]) | _SMALL)
        if kind == "error_event" and protocol == "openai_responses" and draw(st.booleans()):
            spec["shape"] = draw(st.sampled_from(["nested", "flat"]))
        if kind == "error_event" and draw(st.booleans()):
            spec["message"] = draw(st.text(max_size=10))
            spec["code"] = draw(st.text(max_size=6))
        if kind == "malformed" and draw(st.booleans()):
            spec["data"] = draw(st.text(max_size=10))
        if kind == "duplicate" and protocol == "gemini_interactions" and draw(st.booleans()):
            spec["payload"] = draw(st.sampled_from(["same", "different"]))
    return spec


def _faults_kinds() -> set[str]:
    return {"http_error", "disconnect", "error_event", "malformed", "duplicate",
            "out_of_order", "truncate", "never_end"}  # fmt: skip


_CHUNKING = (
    st.sampled_from(["whole", "char"])
    | st.builds(lambda n: {"fixed": n}, _edge(1, 10**30))
    | st.builds(
        lambda seed, most: {"random": {"seed": seed, "max": most}},
        _edge(-MAX_SEED + 1, MAX_SEED - 1),
        _edge(1, 10**30),
    )
)


@st.composite
def _turn(draw: Any) -> dict[str, Any]:
    protocol = draw(st.sampled_from(PROTOCOLS))
    respond: dict[str, Any] = {}
    if draw(st.booleans()):
        respond["text"] = draw(st.text(max_size=20))
    if draw(st.booleans()):
        respond["calls"] = draw(st.lists(_call(), max_size=3))
    if draw(st.booleans()):
        respond["reasoning"] = {
            "summary": draw(st.text(max_size=10)),
            "signature": draw(st.text(max_size=10)),
        }
    if draw(st.booleans()):
        respond["status"] = draw(_STATUSES[protocol])
    if draw(st.booleans()):
        respond["usage"] = {
            "input_tokens": draw(_edge(0, MAX_TOKENS - 1)),
            "output_tokens": draw(_edge(0, MAX_TOKENS - 1)),
        }
    if draw(st.booleans()):
        respond["chunking"] = draw(_CHUNKING)
    if draw(st.booleans()):
        respond["interleave"] = draw(st.sampled_from(["sequential", "round_robin"]))
    if draw(st.booleans()):
        respond["disconnect_after"] = draw(st.sampled_from([0, 1, 10**30]) | _SMALL)
    if draw(st.booleans()):
        respond["fault"] = draw(_fault(protocol))
    if draw(st.booleans()):
        pacing: dict[str, Any] = {}
        for key in ("first_byte_ms", "event_delay_ms"):
            if draw(st.booleans()):
                pacing[key] = draw(_edge(0, MAX_PACING_MS + 1))
        if draw(st.booleans()):
            pacing["flush"] = draw(st.sampled_from(["coalesce", "per_event"]))
        respond["pacing"] = pacing
    if protocol == "gemini_generate_content" and draw(st.booleans()):
        respond["chunk_plan"] = draw(st.lists(st.integers(-1, 4), max_size=6))
    expect: dict[str, Any] = {}
    if draw(st.booleans()):
        expect["stream"] = draw(st.booleans())
    return {"protocol": protocol, "expect": expect, "respond": respond}


@st.composite
def _control(draw: Any) -> dict[str, Any]:
    """A body for ``POST /_callgate/faults`` (the endpoint validates it)."""
    protocol = draw(st.sampled_from(PROTOCOLS))
    body: dict[str, Any] = {"fault": draw(_fault(protocol))}
    if draw(st.booleans()):
        body["protocol"] = protocol
    if draw(st.booleans()):
        body["pacing"] = {"event_delay_ms": draw(_edge(0, MAX_PACING_MS + 1))}
    return body


_SCRIPTS = st.builds(
    lambda seed, turns: {"seed": seed, "turns": turns},
    _edge(-MAX_SEED + 1, MAX_SEED - 1),
    st.lists(_turn(), min_size=1, max_size=3),
)


def _body(protocol: str, stream: bool, replay: list[Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "m", "stream": stream, "max_tokens": 16, "messages": []}
    body["input"] = replay if protocol == "openai_responses" and replay else "hi"
    return body


def _received_items(answer: httpx.Response) -> list[Any]:
    """The OpenAI output items a client would replay, as it received them (a stream's
    last terminal, else its completed items), plus a reference to each and the outputs."""
    items: list[Any] = []
    if answer.headers.get("content-type", "").startswith("application/json"):
        items = list(answer.json().get("output", []))
    else:
        for event in SSEDecoder().feed(answer.content):
            try:
                data = json.loads(event.data)
            except ValueError:
                continue  # a malformed frame
            if not isinstance(data, dict):
                continue  # a malformed frame that is valid JSON (a scripted "data": "0")
            if isinstance(data.get("response"), dict) and data["response"].get("output"):
                items = list(data["response"]["output"])
            elif data.get("type") == "response.output_item.done":
                items.append(data["item"])
    outputs = [
        {"type": "function_call_output", "call_id": i["call_id"], "output": "ok"}
        for i in items
        if i.get("type") == "function_call"
    ]
    refs = [{"type": "item_reference", "id": i["id"]} for i in items if "id" in i]
    return [{"role": "user", "content": "hi"}, *items, *outputs, *refs]


async def _no_sleep(_delay: float) -> None:
    await asyncio.sleep(0)


def _allowed(fault: Any) -> set[int]:
    return (
        {fault["status"]}
        if isinstance(fault, dict) and fault.get("type") == "http_error"
        else set()
    )


class _Run:
    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.answers: list[tuple[str, int, set[int]]] = []

    async def turn(self, turn: Any, test_id: str, stream: bool, replay: list[Any]) -> Any:
        headers = {**AUTH[turn.protocol], "x-callgate-test-id": test_id}
        allowed = _allowed(turn.respond.get("fault"))
        for _ in range(4):  # a scripted HTTP fault answers up to `times` requests
            path = STREAM_PATHS.get(turn.protocol, PATHS[turn.protocol]) if stream else None
            answer = await self.client.post(
                path or PATHS[turn.protocol],
                json=_body(turn.protocol, stream, replay),
                headers=headers,
            )
            self.answers.append((f"{turn.location} {test_id}", answer.status_code, allowed))
            if answer.status_code not in allowed:
                break
        ident = answer.headers.get("request-id")
        if answer.status_code == 200 and ident is not None:
            await self.stored(turn.protocol, ident, headers)
        return answer

    async def stored(self, protocol: str, ident: str, headers: dict[str, str]) -> None:
        if protocol == "openai_responses":
            gets = [f"/openai/v1/responses/{ident}"]
        elif protocol == "gemini_interactions":
            base = f"/gemini/v1/interactions/{ident}"
            gets = [base, f"{base}?stream=true", f"{base}?include_input=true"]
        else:
            return
        for path in gets:
            got = await self.client.get(path, headers=headers)
            self.answers.append((f"GET {path}", got.status_code, set()))
        if protocol == "gemini_interactions":
            got = await self.client.post(f"{base}/cancel", headers=headers)
            self.answers.append(("cancel", got.status_code, set()))


async def _serve(script: Script, runtime: list[Any]) -> list[tuple[str, int, set[int]]]:
    app = create_app(script)
    app.state.callgate.closing.set()  # a held stream (never_end) ends at once
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        run = _Run(client)
        turns = script.conversations["default"]
        for stream, test_id in ((True, "streamed"), (False, "json")):
            replay: list[Any] = []
            for turn in turns:
                answer = await run.turn(turn, test_id, stream, replay)
                if turn.protocol == "openai_responses" and answer.status_code == 200:
                    replay = _received_items(answer)
        # Faults armed at run time meet whichever turn they fit (an HTTP one: any request).
        armed_statuses: set[int] = set()
        for turn, control in zip(turns, runtime, strict=False):
            armed = await client.post(
                "/_callgate/faults", json=control, headers={"x-callgate-test-id": "runtime"}
            )
            run.answers.append(("arm", armed.status_code, set()))
            if armed.status_code == 200:
                armed_statuses |= _allowed(control.get("fault"))
            before = len(run.answers)
            await run.turn(turn, "runtime", True, [])
            run.answers[before:] = [(w, c, a | armed_statuses) for w, c, a in run.answers[before:]]
    return run.answers


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(doc=_SCRIPTS, runtime=st.lists(_control(), max_size=3))
def test_every_accepted_script_is_served_without_an_unscripted_5xx(
    doc: dict[str, Any], runtime: list[Any]
) -> None:
    try:
        script = Script.from_dict(doc)
        create_app(script)  # fault and pacing specs are checked here
    except ScriptError:
        event("refused by the loader")
        return
    event("accepted")
    with mock.patch.object(_faults, "asyncio", types.SimpleNamespace(sleep=_no_sleep)):
        answers = asyncio.run(_serve(script, runtime))
    for where, status, allowed in answers:
        assert status < 500 or status in allowed, (where, status, doc)
