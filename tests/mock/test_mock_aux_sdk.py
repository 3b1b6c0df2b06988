"""The auxiliary read-only routes through the official SDKs' own methods, both generations
(this file runs in the baseline venv too): OpenAI ``models.list/retrieve`` (plain and Azure
v1), Anthropic ``models.list/retrieve`` and ``messages.count_tokens``, google-genai
``models.list/get/count_tokens`` on ``v1`` and ``v1beta``. Each answer decodes into the
SDK's types, an unknown model is the provider's 404 as the SDK raises it, the count follows
the documented rule unless the script sets it, and every request is journaled in its
session with its credentials checked."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors

from callgate.mock import MockServer, Script

SCRIPT = {
    "turns": [
        {"protocol": "openai_responses", "expect": {"model": "gpt-5-scripted"}},
        {"protocol": "anthropic_messages", "expect": {"model": "claude-scripted"}},
        {"protocol": "gemini_generate_content", "expect": {"model": "gemini-3-scripted"}},
    ]
}
LISTED = {
    "turns": [{"protocol": "openai_responses"}],
    "token_count": 42,
    "models": [
        {"id": "gemini-3.1-pro-preview", "provider": "gemini",
         "fields": {"inputTokenLimit": 2000, "displayName": "Pro"}},
        {"id": "claude-opus-4-5", "provider": "anthropic", "fields": {"display_name": "Opus"}},
        {"id": "shared-model"},
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(Script.from_dict(SCRIPT)) as mock:
        mock.register("listed", Script.from_dict(LISTED))
        yield mock


def _rule(*texts: str) -> int:
    return max(1, math.ceil(sum(len(t.encode()) for t in texts) / 4))


# -- OpenAI -----------------------------------------------------------------------------------


def test_openai_models_list_and_retrieve(server: MockServer) -> None:
    client = openai.OpenAI(base_url=server.openai_base_url, api_key="k")
    assert [m.id for m in client.models.list()] == ["gpt-4.1", "gpt-5-scripted"]
    model = client.models.retrieve("gpt-5-scripted")
    assert (model.id, model.object, model.created, model.owned_by) == (
        "gpt-5-scripted", "model", 0, "callgate",
    )  # fmt: skip
    with pytest.raises(openai.NotFoundError) as raised:
        client.models.retrieve("gpt-unknown")
    assert raised.value.body["code"] == "model_not_found"  # type: ignore[index]


def test_openai_models_on_the_azure_v1_base(server: MockServer) -> None:
    client = openai.OpenAI(
        base_url=server.azure_openai_base_url, api_key="k", default_headers={"api-key": "k"}
    )
    assert client.models.retrieve("gpt-4.1").id == "gpt-4.1"


# -- Anthropic --------------------------------------------------------------------------------


def _anthropic(server: MockServer, test_id: str | None = None) -> anthropic.Anthropic:
    headers = {"x-callgate-test-id": test_id} if test_id else None
    return anthropic.Anthropic(
        base_url=server.anthropic_base_url, api_key="k", default_headers=headers
    )


def test_anthropic_models_list_and_retrieve(server: MockServer) -> None:
    client = _anthropic(server)
    page = client.models.list()
    assert [m.id for m in page.data] == ["claude-sonnet-4-5", "claude-scripted"]
    assert (page.first_id, page.last_id, page.has_more) == (
        "claude-sonnet-4-5", "claude-scripted", False,
    )  # fmt: skip
    assert [m.id for m in client.models.list(limit=1)] == ["claude-sonnet-4-5", "claude-scripted"]
    info = client.models.retrieve("claude-scripted")
    assert (info.id, info.type, info.display_name) == ("claude-scripted", "model", info.id)
    assert info.created_at.year == 1970
    with pytest.raises(anthropic.NotFoundError):
        client.models.retrieve("claude-unknown")


def test_anthropic_count_tokens_follows_the_rule(server: MockServer) -> None:
    counted = _anthropic(server).messages.count_tokens(
        model="claude-sonnet-4-5",
        system="Be brief.",
        messages=[{"role": "user", "content": "What is the weather in Paris?"}],
    )
    assert counted.input_tokens == _rule("Be brief.", "user", "What is the weather in Paris?")
    with pytest.raises(anthropic.NotFoundError):
        _anthropic(server).messages.count_tokens(
            model="claude-unknown", messages=[{"role": "user", "content": "hi"}]
        )


def test_a_session_script_lists_its_own_models_and_count(server: MockServer) -> None:
    client = _anthropic(server, "listed")
    assert [(m.id, m.display_name) for m in client.models.list()] == [
        ("claude-opus-4-5", "Opus"), ("shared-model", "shared-model"),
    ]  # fmt: skip
    counted = client.messages.count_tokens(
        model="shared-model", messages=[{"role": "user", "content": "hi"}]
    )
    assert counted.input_tokens == 42
    with pytest.raises(anthropic.NotFoundError):
        client.models.retrieve("claude-sonnet-4-5")  # not listed: the defaults are replaced
    entries = server.journal.entries(test_id="listed")
    assert {e.outcome for e in entries} == {"aux"}
    assert entries[-1].path == "/anthropic/v1/models/claude-sonnet-4-5"
    assert entries[-1].status == 404


# -- Gemini -----------------------------------------------------------------------------------


def _genai(server: MockServer, version: str, test_id: str | None = None) -> Any:
    options: dict[str, Any] = {"base_url": server.gemini_base_url, "api_version": version}
    if test_id:
        options["headers"] = {"x-callgate-test-id": test_id}
    return genai.Client(api_key="k", http_options=options)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", ["v1", "v1beta"])
def test_genai_models_get_list_and_count_tokens(server: MockServer, version: str) -> None:
    client = _genai(server, version)
    names = [m.name for m in client.models.list()]
    assert names == [
        "models/gemini-2.5-flash", "models/gemini-3-flash-preview", "models/gemini-3-scripted",
    ]  # fmt: skip
    model = client.models.get(model="gemini-3-scripted")
    assert (model.name, model.input_token_limit, model.output_token_limit) == (
        "models/gemini-3-scripted", 1048576, 65536,
    )  # fmt: skip
    assert "countTokens" in (model.supported_actions or [])
    counted = client.models.count_tokens(model="gemini-2.5-flash", contents="Weather in Paris?")
    assert counted.total_tokens == _rule("Weather in Paris?", "user")
    with pytest.raises(genai_errors.ClientError) as raised:
        client.models.get(model="gemini-unknown")
    assert raised.value.code == 404


def test_genai_list_pages_and_fields_come_from_the_script(server: MockServer) -> None:
    client = _genai(server, "v1beta", "listed")
    pager = client.models.list(config={"page_size": 1})
    assert [m.name for m in pager] == ["models/gemini-3.1-pro-preview", "models/shared-model"]
    model = client.models.get(model="models/gemini-3.1-pro-preview")
    assert (model.display_name, model.input_token_limit) == ("Pro", 2000)
    assert client.models.count_tokens(model="shared-model", contents="x").total_tokens == 42


# -- the mock's own rules, as on every route ---------------------------------------------------


@pytest.mark.parametrize(
    ("path", "headers", "status"),
    [
        ("/openai/v1/models", {}, 401),
        ("/anthropic/v1/models", {"anthropic-version": "2023-06-01"}, 401),
        ("/gemini/v1beta/models", {}, 401),
        ("/gemini/v9/models/gemini-2.5-flash", {"x-goog-api-key": "k"}, 404),
        ("/openai/v1/models", {"authorization": "Bearer k", "host": "evil.example"}, 403),
    ],
)
def test_credentials_and_the_loopback_guard_apply(
    server: MockServer, path: str, headers: dict[str, str], status: int
) -> None:
    response = httpx.get(server.url + path, headers=headers, timeout=30)
    assert response.status_code == status, response.text


def test_count_tokens_needs_a_json_object_body(server: MockServer) -> None:
    url = f"{server.gemini_base_url}/v1beta/models/gemini-2.5-flash:countTokens"
    response = httpx.post(url, content=b"[1,", headers={"x-goog-api-key": "k"}, timeout=30)
    assert response.status_code == 400
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_fixture_models_are_served_and_others_are_not() -> None:
    doc = {
        "fixtures": [
            {"protocol": "anthropic_messages", "match": {"model": "claude-fixture"},
             "respond": {"text": "hi"}},
            {"protocol": "openai_responses", "match": {"model": "gpt-fixture"},
             "respond": {"text": "hi"}},
        ]
    }  # fmt: skip
    with MockServer(Script.from_dict(doc)) as mock:
        listed = [m.id for m in _anthropic(mock).models.list()]
    assert listed == ["claude-sonnet-4-5", "claude-fixture"]  # not the OpenAI fixture's
