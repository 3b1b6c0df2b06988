"""Property: what an official SDK builds from its typed params, the mock accepts; the same
body with a required field removed or a field of the wrong kind, the mock refuses, naming
that field in the provider's own error shape. Run under both SDK generations (the
Makefile's BASELINE_TESTS), for all four protocols, streamed and not; some bodies go
through the real SDK client to a real MockServer socket.

The params are drawn from the SDK's request types by ``sdk_requests`` (not from the
mock's specs) and serialized by the SDK's own transform; the only values fixed by hand
are those the types cannot state: a ``model`` (OpenAI: required unless a stored prompt
names one) and numbers inside their documented ranges.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable
from typing import Any

import hypothesis
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from callgate.mock import MockServer, ScriptBuilder
from callgate.mock._providers import PROTOCOLS, provider
from callgate.mock._validate import CHECKS

from .sdk_requests import Drawn, Field, at, mutated, present, requests, wrong_value

# The switch of each provider's request validation (the rest of CHECKS are native checks).
SWITCHES = {provider(p).validate_switch for p in PROTOCOLS}

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
genai = pytest.importorskip("google.genai")

SETTINGS = settings(
    max_examples=30, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)  # fmt: skip


# -- the SDKs' own serializers ----------------------------------------------------------------


def _openai_wire(params: dict[str, Any], stream: bool) -> dict[str, Any]:
    from openai._utils._transform import maybe_transform
    from openai.types.responses import response_create_params as p

    cls = p.ResponseCreateParamsStreaming if stream else p.ResponseCreateParamsNonStreaming
    sent = {**params, "stream": True} if stream else params
    return json.loads(json.dumps(maybe_transform(sent, cls)))


def _anthropic_wire(params: dict[str, Any], stream: bool, beta: bool) -> dict[str, Any]:
    from anthropic.types import message_create_params as plain
    from anthropic.types.beta import message_create_params as beta_params

    module = beta_params if beta else plain
    cls = module.MessageCreateParamsStreaming if stream else module.MessageCreateParamsNonStreaming
    sent = {**params, "stream": True} if stream else params
    try:  # 0.117.0: the TypedDict-driven transform
        from anthropic._utils._transform import maybe_transform
    except ImportError:  # 2.14.0: the body is prepared without the types
        from anthropic._utils._prepare import prepare_request_data

        return json.loads(json.dumps(prepare_request_data(sent, location="body")))
    return json.loads(json.dumps(maybe_transform(sent, cls)))


def _interactions_wire(params: dict[str, Any], stream: bool) -> dict[str, Any]:
    from google.genai._gaos import models, utils

    body = {**params, "stream": True} if stream else params
    with warnings.catch_warnings():  # the SDK warns of the deprecated fields it still sends
        warnings.simplefilter("ignore", DeprecationWarning)
        request = utils.unmarshal({"body": body}, models.CreateInteractionRequest)
        serialized = utils.serialize_request_body(
            request.body, False, False, "json", models.CreateInteractionRequestBody
        )
    # google-genai 2.12.1 serializes a list of content items given as ``input`` as
    # {"type": "UNKNOWN", "raw": ..., "is_unknown": true}: its own union resolution, not
    # a body the API takes (the mock refuses it); such draws are left out.
    hypothesis.assume('"is_unknown":true' not in serialized.content)
    return dict(json.loads(serialized.content))


def _roots() -> dict[str, Any]:
    from anthropic.types import message_create_params as plain
    from anthropic.types.beta import message_create_params as beta
    from google.genai._gaos.types import interactions as gi
    from openai.types.responses import response_create_params as oai

    return {
        "openai": oai.ResponseCreateParamsNonStreaming,
        "anthropic": plain.MessageCreateParamsNonStreaming,
        "anthropic_beta": beta.MessageCreateParamsNonStreaming,
        "interactions": gi.CreateModelInteractionParam,
    }


ROOTS = _roots()
PROTOCOL = {"openai": "openai_responses", "anthropic": "anthropic_messages",
            "anthropic_beta": "anthropic_messages",
            "interactions": "gemini_interactions"}  # fmt: skip
FIXED = {"openai": {"model": "gpt-5", "stream": None}, "anthropic": {"stream": None},
         "anthropic_beta": {"stream": None}, "interactions": {"stream": None}}  # fmt: skip


def _wire(kind: str, params: dict[str, Any], stream: bool) -> dict[str, Any]:
    params = {k: v for k, v in params.items() if v is not None}
    if kind == "openai":
        return _openai_wire(params, stream)
    if kind == "interactions":
        return _interactions_wire(params, stream)
    return _anthropic_wire(params, stream, beta=kind == "anthropic_beta")


def _drawn(kind: str) -> st.SearchStrategy[Drawn]:
    return requests(ROOTS[kind], fixed=FIXED[kind])


# -- how each provider names a field ----------------------------------------------------------


def _named(protocol: str, body: dict[str, Any], path: tuple[Any, ...]) -> None:
    """``body`` is that provider's 400 naming the field at ``path``."""
    if protocol == "openai_responses":
        expected = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
        assert body["error"]["type"] == "invalid_request_error"
        assert body["error"]["param"] == expected, body
    elif protocol == "anthropic_messages":
        assert body["type"] == "error"
        assert body["error"]["type"] == "invalid_request_error"
        named = body["error"]["message"].split(": ", 1)[0].split(".")
        wanted = [str(p) for p in path]
        it = iter(named)  # the path, with the tags of tagged unions in between
        assert all(segment in it for segment in wanted), (wanted, body)
        assert named[-1] == wanted[-1], (wanted, body)
    else:
        message = body["error"]["message"]
        expected = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
        if protocol == "gemini_generate_content":
            assert body["error"]["status"] == "INVALID_ARGUMENT"
            violation = body["error"]["details"][0]["fieldViolations"][0]
            assert violation.get("field", "") == expected or expected.endswith(
                violation.get("field", "")
            ), body
        else:
            assert body["error"]["code"] == "invalid_request"
            # An untagged union member (an Interactions turn: no ``type``) whose field has
            # the wrong type no longer matches that member; in a list of turns-or-contents
            # the walk then reads the list as contents and names the first item's missing
            # tag. The refusal still lands inside the top-level field the draw corrupted.
            top = str(path[0])
            if isinstance(path[1:2][0] if path[1:] else None, int) and re.search(
                rf"\.{re.escape(top)}\[\d+\]\.type: type is not specified", message
            ):
                return
        assert expected.rsplit(".", 1)[-1].split("[")[0] in message, body


# -- accepted as built ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(ROOTS))
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_every_body_an_sdk_builds_from_its_types_is_accepted(kind: str, stream: bool) -> None:
    check = _validator(PROTOCOL[kind])

    @SETTINGS
    @given(_drawn(kind))
    def run(drawn: Drawn) -> None:
        body = _wire(kind, drawn.params, stream)
        note(json.dumps(body)[:2000])
        refused = check(body)
        assert refused is None, refused.body

    run()


# -- refused when broken ----------------------------------------------------------------------


# Fields one generation requires and the other does not: the mock accepts what either SDK
# builds, so removing them is no refusal (Interactions `input`: 2.12.1 requires it, 3.6.1
# does not; OpenAI `call_id` of a function_call_output: 2.46.0 does, 3.57.0 does not).
RELAXED = frozenset({"input", "call_id"})


def _candidates(drawn: Drawn, body: dict[str, Any], want: str) -> list[Field]:
    out = []
    for field in drawn.fields:
        if not field.distinct or not present(body, field.path):
            continue
        # (a union member's ``type`` tag removed makes it another member, e.g. a tool
        # without ``type`` is a custom tool: that refusal names the other member's field)
        relaxed = field.path[-1] in RELAXED or field.path[-1] == "type"
        # 2026-11's beta system message may leave out its content
        parent = at(body, field.path[:-1])
        relaxed |= field.path[-1] == "content" and parent.get("role") == "system"
        if want == "missing" and field.required and not relaxed:
            out.append(field)
        if want == "type" and wrong_value(field.kinds, proto=False) is not None:
            out.append(field)
    return out


@pytest.mark.parametrize("kind", sorted(ROOTS))
@pytest.mark.parametrize("want", ["missing", "type"])
def test_a_body_with_a_field_removed_or_mistyped_is_refused_naming_it(kind: str, want: str) -> None:
    protocol = PROTOCOL[kind]
    check = _validator(protocol)
    proto = protocol == "gemini_interactions"

    @SETTINGS
    @given(_drawn(kind), st.data())
    def run(drawn: Drawn, data: st.DataObject) -> None:
        body = _wire(kind, drawn.params, False)
        fields = _candidates(drawn, body, want)
        if not fields:
            return
        field = data.draw(st.sampled_from(fields))
        if want == "missing":
            broken = mutated(body, field.path)
        else:
            value = wrong_value(field.kinds, proto=proto)
            if value is None:
                return
            broken = mutated(body, field.path, value)
        note(f"{want} {field.path}: {json.dumps(broken)[:2000]}")
        refused = check(broken)
        assert refused is not None
        assert refused.status == 400
        _named(protocol, refused.body, field.path)

    run()


# -- generateContent: the SDK's converters build the wire --------------------------------------


def _ggc_wire(contents: list[dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
    from google.genai import _common, client, models

    api = client.Client(api_key="k")._api_client
    try:
        request = models._GenerateContentParameters_to_mldev(
            api, {"model": "m", "contents": contents, "config": config}
        )
    except ValueError:  # a field this generation sends to Vertex only (2.12.1: labels)
        hypothesis.reject()
    request.pop("_url", None)
    return dict(json.loads(json.dumps(_common.encode_unserializable_types(
        _common.convert_to_dict(request)))))  # fmt: skip


PART = st.one_of(
    st.fixed_dictionaries({"text": st.text(max_size=5)}, optional={"thought": st.booleans()}),
    st.fixed_dictionaries(
        {"function_call": st.fixed_dictionaries({"name": st.sampled_from(["f", "g"]),
                                                 "args": st.just({"a": 1})},
                                                optional={"id": st.just("c1")})},
        optional={"thought_signature": st.just(b"sig")},
    ),
    st.fixed_dictionaries({"function_response": st.fixed_dictionaries(
        {"name": st.just("f"), "response": st.just({"output": "ok"})},
        optional={"id": st.just("c1")})}),
    st.fixed_dictionaries({"inline_data": st.fixed_dictionaries(
        {"mime_type": st.just("image/png"), "data": st.just(b"\x89PNG")})}),
)  # fmt: skip
CONTENT = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "model"]), "parts": st.lists(PART, min_size=1, max_size=3)}
)
DECLARATION = st.fixed_dictionaries(
    {"name": st.sampled_from(["f", "g"])},
    optional={"description": st.text(max_size=5),
              "parameters": st.just({"type": "OBJECT", "properties": {"a": {"type": "STRING"}},
                                     "required": ["a"]}),
              "parameters_json_schema": st.just({"type": "object"})},
)  # fmt: skip
CONFIG = st.fixed_dictionaries(
    {},
    optional={
        "temperature": st.floats(0, 2), "top_p": st.floats(0, 1), "top_k": st.integers(1, 40),
        "max_output_tokens": st.integers(1, 4096), "candidate_count": st.integers(1, 2),
        "stop_sequences": st.lists(st.text(min_size=1, max_size=3), max_size=2),
        "system_instruction": st.just("Be brief."),
        "tools": st.lists(st.one_of(
            st.fixed_dictionaries({"function_declarations": st.lists(DECLARATION, min_size=1,
                                                                     max_size=2)}),
            st.just({"google_search": {}}), st.just({"code_execution": {}}),
            st.just({"url_context": {}})), max_size=2),
        "tool_config": st.just({"function_calling_config": {"mode": "AUTO"}}),
        "thinking_config": st.fixed_dictionaries({}, optional={
            "thinking_budget": st.integers(0, 1024), "include_thoughts": st.booleans()}),
        "response_mime_type": st.just("application/json"),
        "seed": st.integers(0, 10), "safety_settings": st.just(
            [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]),
        "labels": st.just({"team": "a"}), "cached_content": st.just("cachedContents/x"),
    },
)  # fmt: skip


@SETTINGS
@given(st.lists(CONTENT, min_size=1, max_size=3), CONFIG)
def test_every_generate_content_body_the_sdk_converts_is_accepted(
    contents: list[dict[str, Any]], config: dict[str, Any]
) -> None:
    body = _ggc_wire(contents, config)
    note(json.dumps(body)[:2000])
    refused = _validator("gemini_generate_content")(body)
    assert refused is None, refused.body


@SETTINGS
@given(st.lists(CONTENT, min_size=1, max_size=3), CONFIG, st.data())
def test_a_generate_content_body_with_a_mistyped_part_field_is_refused_naming_it(
    contents: list[dict[str, Any]], config: dict[str, Any], data: st.DataObject
) -> None:
    body = _ggc_wire(contents, config)
    # The Part fields the SDK's Part type declares as scalars, as the converter names them.
    from google.genai import types

    scalars = {"text": str, "thought": bool, "thoughtSignature": bytes}
    assert {"text", "thought", "thought_signature"} <= set(types.Part.model_fields)
    spots = [(c, p, name) for c, content in enumerate(body["contents"])
             for p, part in enumerate(content["parts"])
             for name in part if name in scalars]  # fmt: skip
    check = _validator("gemini_generate_content")
    if spots:
        c, p, name = data.draw(st.sampled_from(spots))
        value = 7 if scalars[name] is not bool else "yes"
        refused = check(mutated(body, ("contents", c, "parts", p, name), value))
        assert refused is not None
        snake = {"thoughtSignature": "thought_signature"}.get(name, name)
        _named("gemini_generate_content", refused.body, ("contents", c, "parts", p, snake))
    refused = check(mutated(body, ("contents",)))
    assert refused is not None
    assert refused.body["error"]["message"] == (
        "* GenerateContentRequest.contents: contents is not specified"
    )


# -- through the real SDK clients, over a socket ----------------------------------------------


def _open_server(protocol: str, turns: int) -> MockServer:
    """A server whose script answers any ``turns`` requests, every check but the request
    check off (a drawn history need not be a coherent conversation)."""
    off = {name: False for name in CHECKS if name not in SWITCHES}
    builder = ScriptBuilder(seed=3, validation=off)
    for _ in range(turns):
        builder.turn(protocol, text="ok")
    return MockServer(builder.build())


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_sdk_clients_get_their_drawn_requests_through_a_real_socket(stream: bool) -> None:
    runs = 12
    for kind in ("openai", "anthropic", "interactions"):
        with _open_server(PROTOCOL[kind], 2 * runs) as server:  # a turn for every request
            _sends(kind, server, stream, runs)
        rejected = server.journal.requests(outcome="rejected")
        assert not rejected, [e.response for e in rejected]


def _sends(kind: str, server: MockServer, stream: bool, runs: int) -> None:
    @settings(max_examples=runs, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(_drawn(kind))
    def run(drawn: Drawn) -> None:
        params = {k: v for k, v in drawn.params.items() if v is not None}
        with warnings.catch_warnings():  # deprecated models and fields, as drawn
            warnings.simplefilter("ignore", DeprecationWarning)
            _send(kind, server, params, stream)

    run()


def _send(kind: str, server: MockServer, params: dict[str, Any], stream: bool) -> None:
    """One create call through the SDK's own client; any error fails the test."""
    if kind == "openai":
        client: Any = openai.OpenAI(api_key="k", base_url=server.openai_base_url, max_retries=0)
        result = client.responses.create(**params, stream=stream)
    elif kind == "anthropic":
        client = anthropic.Anthropic(api_key="k", base_url=server.anthropic_base_url, max_retries=0)
        result = client.messages.create(**params, stream=stream)
    else:
        from google import genai as google_genai

        options = {"base_url": server.gemini_base_url, "api_version": "v1"}
        client = google_genai.Client(api_key="k", http_options=options)
        result = client.interactions.create(**params, stream=stream)
    if stream:
        list(result)


def _validator(protocol: str) -> Callable[[dict[str, Any]], Any]:
    """The provider's check of a create body against its SDK-generated spec."""
    check = provider(protocol).validate
    if check is None:
        raise AssertionError(f"{protocol} has no request validation")
    return check
