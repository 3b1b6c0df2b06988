"""SDK objects fed as they are (``callgate._feed``): every room's ``feed_event`` and
``parse_response`` take the official SDK's own event and response objects, decoded by the
SDK itself from real bytes served on a local socket (strict response validation on), and
give the turn the same bytes give. Runs under the current SDKs and, in the baseline venv,
openai 2.46.0 / anthropic 0.117.0 / google-genai 2.12.1."""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pydantic
import pytest

from callgate import CallgateError, JSONError, UsageError
from callgate import anthropic_messages as am
from callgate import gemini_generate_content as ggc
from callgate import gemini_interactions as gi
from callgate import openai_responses as oai
from callgate._feed import wire_mapping
from callgate.contracts import Fixture, load_fixtures
from callgate.gemini_generate_content._assembly import decode_signature

from ..anthropic_messages.wire import CONTAINER_BODY
from ..gemini_generate_content.sdk_server import serve

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")

GENERATION = {
    name: int(importlib.metadata.version(name).split(".")[0])
    for name in ("openai", "anthropic", "google-genai")
}
CURRENT_GENAI = GENERATION["google-genai"] >= 3
FIXTURES_ROOT = Path(__file__).resolve().parents[1] / "fixtures"
ROOMS = {
    "openai_responses": oai,
    "anthropic_messages": am,
    "gemini_interactions": gi,
    "gemini_generate_content": ggc,
}
ASK = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}


def _fixtures(room: str, layer: str) -> list[Fixture]:
    return [f for f in load_fixtures(FIXTURES_ROOT / room) if f.layer == layer]


def _outcome(parse: Callable[[], Any]) -> Any:
    """The turn, or the error as (type, message): what a parse came to."""
    try:
        return parse()
    except CallgateError as exc:
        return type(exc), exc.message


def _client(room: str, url: str, strict: bool) -> Any:
    if room == "openai_responses":
        return openai.OpenAI(
            api_key="k", base_url=url + "/v1", max_retries=0, _strict_response_validation=strict
        )
    if room == "anthropic_messages":
        return anthropic.Anthropic(
            api_key="k", base_url=url, max_retries=0, _strict_response_validation=strict
        )
    # generateContent: each SDK generation's own default API version (v1 / v1beta)
    version = {"api_version": "v1"} if room == "gemini_interactions" else {}
    return genai.Client(api_key="k", http_options={"base_url": url, **version})


def _request(room: str, client: Any, *, stream: bool, get: bool) -> Any:
    if get:
        return client.interactions.get("gt-1")
    if room == "openai_responses":
        return client.responses.create(model="m", input="hi", stream=stream)
    if room == "anthropic_messages":
        return client.messages.create(stream=stream, **ASK)
    if room == "gemini_interactions":
        # google-genai 3 merges continuation hops (and sums usage) unless told not to
        hops = {"automatic_continuation": False} if CURRENT_GENAI else {}
        return client.interactions.create(model="m", input="hi", stream=stream, **hops)
    generate = client.models.generate_content_stream if stream else client.models.generate_content
    return generate(model="m", contents="hi", config=_config())


def sdk_objects(room: str, data: bytes, *, stream: bool, get: bool = False) -> Any:
    """The SDK's own objects for ``data`` served on a local socket: the list of stream
    events, or the response object of a non-streamed call (``get``: an Interaction read
    with ``interactions.get``, whose body holds the history). The openai and anthropic
    clients validate every object against their types; where a generation's types refuse
    what the wire sends (openai 2.46.0 requires the ``name`` the API never sends on
    ``function_call_arguments.done``; an unknown stop reason), the objects are those of
    the SDK's default, non-validating client."""
    content_type = "text/event-stream" if stream else "application/json"
    with serve(data, content_type=content_type) as (url, _seen):
        for strict in (True, False):
            client = _client(room, url, strict)
            try:
                with warnings.catch_warnings():
                    # google-genai 2.12.1 marks interactions.get deprecated
                    warnings.simplefilter("ignore", DeprecationWarning)
                    answer = _request(room, client, stream=stream, get=get)
                    return list(answer) if stream else answer
            except (openai.APIResponseValidationError, anthropic.APIResponseValidationError):
                if not strict:
                    raise
            finally:
                client.close()
    raise AssertionError("unreachable")  # pragma: no cover


def _config() -> Any:
    # A CONTINUATION fixture would make google-genai 3 re-POST forever against a fixed body.
    if not CURRENT_GENAI:
        return None
    return genai.types.GenerateContentConfig(automatic_continuation=False)


def _comparable(room: str, outcome: Any) -> Any:
    """What must be equal between the bytes' outcome and the SDK objects' outcome.

    google-genai re-encodes a ``thoughtSignature`` (bytes) URL-safe and drops candidate
    fields its types do not declare, so a generateContent turn is compared on what the
    gate decides and what a builder replays: calls, parts (signatures as their bytes),
    finish reason, usage and the hosted projection."""
    if room != "gemini_generate_content" or not isinstance(outcome, ggc.Turn):
        return outcome
    parts = []
    for part in outcome.parts:
        part = dict(part)
        if "thoughtSignature" in part:
            part["thoughtSignature"] = decode_signature(part["thoughtSignature"])
        parts.append(part)
    return (
        [(c.call_id, c.name, c.arguments) for c in outcome.calls],
        parts,
        outcome.finish_reason,
        outcome.usage,
        [(c.tool, c.id, c.status) for c in outcome.hosted_calls],
        [(c.kind, c.source, c.start, c.end) for c in outcome.citations],
    )


def _turns(room: str) -> list[Fixture]:
    """The room's golden streams that give a turn (the SDKs raise on an error event)."""
    module = ROOMS[room]
    fixtures = _fixtures(room, "wire-sse")
    return [
        f
        for f in fixtures
        if not isinstance(
            _outcome(lambda f=f: module.parse_stream(f.data, baseline=f.contract_revision)), tuple
        )
    ]


STREAMS = [
    pytest.param(
        room,
        f,
        id=f"{room}-{f.name}",
        marks=pytest.mark.skipif(
            f.name == "continuation_token" and not CURRENT_GENAI,
            reason="finishReason CONTINUATION is new in google-genai 3",
        ),
    )
    for room in ROOMS
    for f in _turns(room)
]


@pytest.mark.parametrize(("room", "fixture"), STREAMS)
def test_sdk_stream_events_fed_as_they_are_give_the_bytes_outcome(
    room: str, fixture: Fixture
) -> None:
    module = ROOMS[room]
    revision = fixture.contract_revision
    want = _outcome(lambda: module.parse_stream(fixture.data, baseline=revision))
    events = sdk_objects(room, fixture.data, stream=True)
    assert events
    assert all(type(e) is not dict for e in events)
    parser = module.Parser(baseline=revision)

    def feed() -> Any:
        for event in events:
            parser.feed_event(event)
        return parser.finish()

    assert _comparable(room, _outcome(feed)) == _comparable(room, want)


def _bodies() -> list[tuple[str, bytes, dict[str, Any]]]:
    """(room, body bytes, parse_response keywords): the json-body fixtures, and for OpenAI
    the terminal Response of each golden stream that gives a turn."""
    out = []
    for room in ROOMS:
        for f in _fixtures(room, "json-body"):
            kwargs: dict[str, Any] = {"baseline": f.contract_revision}
            expected = f.expected or {}
            if room == "gemini_interactions":
                kwargs["source"] = expected.get("source", "create")
            out.append((room, f.data, kwargs))
    for f in _turns("openai_responses"):
        response = oai.parse_stream(f.data, baseline=f.contract_revision).response
        out.append(("openai_responses", json.dumps(response).encode(), {}))
    return out


BODIES = _bodies()


@pytest.mark.parametrize(("room", "body", "kwargs"), BODIES, ids=[r for r, _, _ in BODIES])
def test_sdk_response_objects_parse_as_they_are(room: str, body: bytes, kwargs: Any) -> None:
    module = ROOMS[room]
    obj = sdk_objects(room, body, stream=False, get=kwargs.get("source") == "get")
    assert type(obj) is not dict
    got = _outcome(lambda: module.parse_response(obj, **kwargs))
    assert _comparable(room, got) == _comparable(
        room, _outcome(lambda: module.parse_response(body, **kwargs))
    )
    assert not isinstance(got, tuple)


def test_an_anthropic_message_holding_a_datetime_parses_as_it_is() -> None:
    body = json.dumps(CONTAINER_BODY).encode()
    message = sdk_objects("anthropic_messages", body, stream=False)
    assert type(message.container.expires_at) is datetime.datetime
    turn = am.parse_response(message)
    assert turn == am.parse_response(body)
    assert turn.message["container"] == CONTAINER_BODY["container"]
    assert [(c.call_id, c.programmatic) for c in turn.calls] == [("toolu_9", True)]
    # A dict made by plain to_dict() still holds the datetime: the clear error it was.
    with pytest.raises(JSONError, match="datetime"):
        am.parse_response(message.to_dict())


def test_anthropic_stream_events_holding_a_datetime_feed_as_they_are() -> None:
    fixture = next(
        f for f in _fixtures("anthropic_messages", "wire-sse") if f.name == "programmatic_first"
    )
    events = sdk_objects("anthropic_messages", fixture.data, stream=True)
    delta = next(e for e in events if e.type == "message_delta")
    assert type(delta.delta.container.expires_at) is datetime.datetime
    parser = am.Parser()
    for event in events:
        parser.feed_event(event)
    assert parser.finish() == am.parse_stream(fixture.data)


def test_generate_content_objects_lose_the_fields_no_wire_carries() -> None:
    fixture = next(f for f in _fixtures("gemini_generate_content", "json-body"))
    response = sdk_objects("gemini_generate_content", fixture.data, stream=False)
    assert response.sdk_http_response is not None  # the SDK keeps the HTTP headers there
    turn = ggc.parse_response(response, baseline=fixture.contract_revision)
    assert "sdkHttpResponse" not in turn.response
    assert (
        turn.response
        == ggc.parse_response(fixture.data, baseline=fixture.contract_revision).response
    )


# -- the helper itself ---------------------------------------------------------------------


class _Opaque(pydantic.BaseModel):
    """A pydantic model holding a value JSON mode cannot serialise (google-genai allows
    arbitrary types, e.g. an image object)."""

    model_config = pydantic.ConfigDict(arbitrary_types_allowed=True)
    value: object


def test_a_dict_passes_untouched_and_a_mapping_as_it_is() -> None:
    event = {"type": "ping"}
    assert wire_mapping(event, "f()") is event
    view = MappingProxyType(event)
    assert wire_mapping(view, "f()") is view


def test_an_sdk_object_that_cannot_convert_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="f\\(\\): the _Opaque could not be converted"):
        wire_mapping(_Opaque(value=object()), "f()")


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_another_type_is_a_usage_error_and_the_parser_stays_usable(room: str) -> None:
    module = ROOMS[room]
    fixture = _turns(room)[0]
    events = sdk_objects(room, fixture.data, stream=True)
    parser = module.Parser(baseline=fixture.contract_revision)
    for bad in (42, ["type"], _Opaque(value=object())):
        with pytest.raises(UsageError, match="feed_event"):
            parser.feed_event(bad)
    with pytest.raises(UsageError, match="parse_response"):
        module.parse_response(42)
    for event in events:
        parser.feed_event(event)
    assert _comparable(room, parser.finish()) == _comparable(
        room, module.parse_stream(fixture.data, baseline=fixture.contract_revision)
    )


def test_feed_whole_slices_bytes_and_passes_chunks_through() -> None:
    from callgate._feed import feed_whole

    fed: list[bytes] = []
    data = bytes(range(256)) * 600  # 153,600 bytes: three slices of at most 64 KiB
    feed_whole(fed.append, bytearray(data))
    assert [len(c) for c in fed] == [65536, 65536, 22528]
    assert b"".join(fed) == data
    fed.clear()
    feed_whole(fed.append, b"")
    assert fed == [b""]  # an empty stream is still fed once
    fed.clear()
    feed_whole(fed.append, iter([b"ab", b"c"]))
    assert fed == [b"ab", b"c"]
    for bad in ("data: {}\n\n", {"type": "x"}, 42):
        with pytest.raises(UsageError, match="takes bytes or an iterable of bytes"):
            feed_whole(fed.append, bad)
