"""The loop on turns that mix a hosted (provider-run) search with a call of its own: the
hosted tools are declared on every request, only the function call reaches the ledger
(once), and the continuation carries the search as each room replays it, through the
mock's native checks (a replayed hosted item must equal what was emitted)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from callgate import UsageError
from callgate.ledger import EffectState, Ledger
from callgate.mock import MockServer

from .loop_helpers import (
    FINAL,
    THREADED,
    VARIANTS,
    make_loop,
    refund_script,
    refund_specs,
    remote_count,
)

# protocol -> (its hosted search declaration, a scripted search step in its own shape)
SEARCH: dict[str, tuple[dict[str, Any], Any]] = {
    "openai_responses": (
        {"type": "web_search"},
        [{"web_search": {"query": "order 42", "queries": ["order 42"],
                         "results": [{"url": "https://a.example/42", "title": "Order 42"}]}}],
    ),
    "anthropic_messages": (
        {"type": "web_search_20250305", "name": "web_search"},
        [{"tool": "web_search", "query": "order 42",
          "results": [{"url": "https://a.example/42", "title": "Order 42"}]}],
    ),
    "gemini_interactions": (
        {"type": "google_search"},
        {"tools": [{"tool": "google_search", "queries": ["order 42"],
                    "results": [{"uri": "https://a.example/42", "title": "Order 42"}]}]},
    ),
    "gemini_generate_content": (
        {"googleSearch": {}},
        {"search": {"queries": ["order 42"],
                    "results": [{"id": "a", "uri": "https://a.example/42", "title": "A"}]}},
    ),
}  # fmt: skip


def _script(variant: str) -> Any:
    protocol, _ = VARIANTS[variant]
    return refund_script({variant: (protocol, 1, 1)}, hosted=SEARCH[protocol][1])


def _declared(body: dict[str, Any], protocol: str) -> list[Any]:
    tools: list[Any] = (body["body"] if protocol == "gemini_generate_content" else body)["tools"]
    return tools


# Chat Completions has no hosted tools on its wire (they are a Responses feature).
HOSTED_VARIANTS = [v for v, (protocol, _) in VARIANTS.items() if protocol in SEARCH]


@pytest.mark.parametrize("variant", HOSTED_VARIANTS)
def test_a_hosted_search_beside_a_call_runs_the_call_once_and_continues(
    variant: str, ledger: Ledger, remote: Path
) -> None:
    protocol, _ = VARIANTS[variant]
    declaration = SEARCH[protocol][0]
    with MockServer(_script(variant)) as server:
        specs = refund_specs(remote)
        with make_loop(server, ledger, variant, specs, hosted_tools=[declaration]) as loop:
            result = loop.run("run-1", "Refund order 42.")
        server.assert_script_done()
        posts = server.journal.requests(conversation=variant, outcome="matched")
    assert result.status == "final", result
    assert result.text == FINAL
    (effect,) = result.effects
    assert effect.state is EffectState.DELIVERED
    assert remote_count(remote) == 1
    assert len(posts) == 2
    # Declared after the function tools, on every request; a message thread holds its
    # tools, so only its first request names them.
    declaring = posts[:1] if variant in THREADED else posts
    for entry in declaring:
        sent = entry.body if protocol != "gemini_generate_content" else {"body": entry.body}
        assert _declared(sent, protocol)[-1] == declaration
    if variant in THREADED:
        assert posts[1].body["thread"]["type"] == "continue"
        assert "tools" not in posts[1].body


@pytest.mark.parametrize(
    ("protocol", "declaration"),
    [
        ("openai_responses", {"type": "function", "name": "x"}),
        ("gemini_interactions", {"type": "function", "name": "x"}),
        ("openai_responses", {"name": "x"}),
        ("anthropic_messages", {"name": "x", "input_schema": {"type": "object"}}),
        ("anthropic_messages", {"type": "custom", "name": "x"}),
        ("gemini_generate_content", {"functionDeclarations": [{"name": "x"}]}),
        ("anthropic_messages", {"type": "web_search_20250305", "name": "refund"}),
        ("openai_responses", "web_search"),
    ],
)
def test_a_function_tool_or_a_taken_name_is_no_hosted_tool(
    protocol: str, declaration: Any, ledger: Ledger, remote: Path
) -> None:
    variant = next(v for v, (p, _) in VARIANTS.items() if p == protocol)
    with pytest.raises(UsageError):
        make_loop("http://127.0.0.1:9", ledger, variant, refund_specs(remote),
                  hosted_tools=[declaration])  # fmt: skip


def test_hosted_tools_must_be_a_list(ledger: Ledger, remote: Path) -> None:
    with pytest.raises(UsageError, match="list"):
        make_loop("http://127.0.0.1:9", ledger, "openai-stateless", refund_specs(remote),
                  hosted_tools={"type": "web_search"})  # fmt: skip


def test_an_undeclared_hosted_search_releases_nothing(ledger: Ledger, remote: Path) -> None:
    """OpenAI's parser is told the request: a search no declared tool can run is refused,
    and the call beside it is not executed."""
    with (
        MockServer(_script("openai-stateless")) as server,
        make_loop(server, ledger, "openai-stateless", refund_specs(remote)) as loop,
    ):
        result = loop.run("run-1", "Refund order 42.")
    assert result.status == "refused", result
    assert remote_count(remote) == 0
