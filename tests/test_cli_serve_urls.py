"""``callgate serve`` prints a base URL per client family: each one, used the way its
client uses it, reaches the mock's real route (the official SDKs strict, the clients that
want the version segment by the path they append)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
from google import genai

from callgate.cli import base_url_table
from callgate.mock import CONVERSATION_HEADER

KEY = "test-key"

# conversation -> (protocol, the printed URL's suffix after the root)
USES = {
    "openai_sdk": ("openai_responses", "/openai/v1"),
    "azure_sdk": ("openai_responses", "/azure-openai/openai/v1"),
    "anthropic_sdk": ("anthropic_messages", "/anthropic"),
    "anthropic_versioned": ("anthropic_messages", "/anthropic/v1"),
    "interactions_sdk": ("gemini_interactions", "/gemini"),
    "interactions_versioned": ("gemini_interactions", "/gemini/v1beta"),
    "generate_sdk": ("gemini_generate_content", "/gemini"),
    "generate_versioned": ("gemini_generate_content", "/gemini/v1beta"),
    "chat_sdk": ("openai_chat_completions", "/openai/v1"),
    "azure_chat_sdk": ("openai_chat_completions", "/azure-openai/openai/v1"),
}


def _script() -> dict[str, object]:
    return {
        "conversations": {
            name: [{"protocol": protocol, "respond": {"text": f"via {name}"}}]
            for name, (protocol, _) in USES.items()
        }
    }


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """A ``callgate serve`` process: its root URL and the lines it printed after the first."""
    script = tmp_path / "all.json"
    script.write_text(json.dumps(_script()))
    proc = subprocess.Popen(
        [sys.executable, "-m", "callgate.cli", "serve", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    try:
        root = proc.stdout.readline().rsplit(" ", 1)[-1].strip()
        lines = []
        while not lines or not lines[-1].lstrip().startswith("sessions:"):
            lines.append(proc.stdout.readline().rstrip("\n"))
        yield root, lines
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()


def _printed_urls(root: str, lines: list[str]) -> dict[str, set[str]]:
    """API heading -> the URL suffixes printed under it."""
    found: dict[str, set[str]] = {}
    api = ""
    for line in lines:
        if line.startswith("    http"):
            found[api].add(line.split()[0].removeprefix(root))
        elif line.startswith("  ") and not line.startswith("   ") and ":" not in line:
            api = line.strip()
            found[api] = set()
    return found


def _via(name: str) -> dict[str, str]:
    return {CONVERSATION_HEADER: name}


def test_every_printed_base_url_reaches_its_route(served: tuple[str, list[str]]) -> None:
    root, lines = served
    assert lines == base_url_table(root).split("\n")
    assert _printed_urls(root, lines) == {
        "OpenAI Responses": {"/openai/v1"},
        "Azure OpenAI v1": {"/azure-openai/openai/v1"},
        "Anthropic Messages": {"/anthropic", "/anthropic/v1"},
        "Gemini Interactions": {"/gemini", "/gemini/v1beta"},
        "Gemini generateContent": {"/gemini", "/gemini/v1beta"},
        "OpenAI Chat Completions": {"/openai/v1"},
        "Azure OpenAI v1 (Chat Completions)": {"/azure-openai/openai/v1"},
    }
    url = {name: root + suffix for name, (_, suffix) in USES.items()}
    strict = {"api_key": KEY, "max_retries": 0, "_strict_response_validation": True}

    # The official SDKs take the base URL as printed and append their own paths.
    for name in ("openai_sdk", "azure_sdk"):
        with openai.OpenAI(base_url=url[name], default_headers=_via(name), **strict) as oa:
            assert oa.responses.create(model="m", input="hi").output_text == f"via {name}"
    for name in ("chat_sdk", "azure_chat_sdk"):
        with openai.OpenAI(base_url=url[name], default_headers=_via(name), **strict) as oa:
            done = oa.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )
            assert done.choices[0].message.content == f"via {name}"
    with anthropic.Anthropic(
        base_url=url["anthropic_sdk"], default_headers=_via("anthropic_sdk"), **strict
    ) as claude:
        message = claude.messages.create(
            model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
        )
    assert message.content[0].type == "text"
    assert message.content[0].text == "via anthropic_sdk"
    for name, version in (("interactions_sdk", "v1beta"), ("generate_sdk", "v1")):
        options = {"base_url": url[name], "api_version": version, "headers": _via(name)}
        gemini = genai.Client(api_key=KEY, http_options=options)  # type: ignore[arg-type]
        if name == "interactions_sdk":
            done = gemini.interactions.create(model="m", input="hi")
            assert done.steps[-1].content[0].text == f"via {name}"  # type: ignore[union-attr]
        else:
            assert gemini.models.generate_content(model="m", contents="hi").text == f"via {name}"
        gemini.close()

    # Clients that want the version segment append only the method's own path.
    versioned = {
        "anthropic_versioned": ("/messages", {"x-api-key": KEY, "anthropic-version": "2023-06-01"},
                                {"model": "m", "max_tokens": 8,
                                 "messages": [{"role": "user", "content": "hi"}]}),
        "interactions_versioned": ("/interactions", {"x-goog-api-key": KEY},
                                   {"model": "m", "input": "hi"}),
        "generate_versioned": ("/models/m:generateContent", {"x-goog-api-key": KEY},
                               {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
    }  # fmt: skip
    for name, (path, auth, body) in versioned.items():
        answer = httpx.post(url[name] + path, json=body, headers={**auth, **_via(name)})
        assert answer.status_code == 200, answer.text
        assert f"via {name}" in answer.text

    status = httpx.get(f"{root}/_callgate/status").json()
    assert status["done"] is True
    (session,) = status["sessions"]
    assert session["served"] == len(USES)
    assert session["left"] == 0
