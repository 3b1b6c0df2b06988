"""A tool that returns an image and a PDF, through the whole loop, per protocol, against the mock:
the ledger stores it, the builder renders the provider's native shape, the mock accepts it
and checks its digest, the journal keeps the digest instead of the bytes. Chat Completions
tool messages take no media: its builder refuses before anything is sent."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from callgate import ContinuationError, MediaPart, TextPart, ToolResult
from callgate.ledger import EffectState, Ledger, Tool, ToolContext
from callgate.loop import HostLoop, ToolSpec
from callgate.mock import MockServer, ScriptBuilder, call

from .loop_helpers import VARIANTS, base_url

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4  # every byte value: no codec survives
DIGEST = hashlib.sha256(PNG).hexdigest()
FINAL = "The chart shows rising sales."
PDF = b"%PDF-1.7\n" + bytes(range(256)) * 2 + b"\n%%EOF\n"
MEDIA = {"kind": "image", "media_type": "image/png", "size": len(PNG), "digest": DIGEST}
PDF_MEDIA = {
    "kind": "document",
    "media_type": "application/pdf",
    "size": len(PDF),
    "digest": hashlib.sha256(PDF).hexdigest(),
}
# Gemini Interactions takes documents in a function result from the 2026-11 types only;
# the loop's default baseline refuses them (tests/test_media_builders.py shows why).
NO_PDF = {"gemini_interactions"}
# Gemini generateContent sends media in functionResponse.parts to Gemini 3 models only.
MODELS = {"gemini_generate_content": "gemini-3.5-flash"}


def _tool(pdf: bool) -> Tool:
    def shot(args: Any, ctx: ToolContext) -> Any:
        parts: tuple[Any, ...] = (
            TextPart("sales chart"),
            MediaPart.image(PNG, "image/png", filename="chart.png"),
        )
        if pdf:
            parts = (*parts, MediaPart.document(PDF, filename="report.pdf"))
        return ToolResult("-", parts, audit={"renderer": "internal-7"})

    return Tool("screenshot", shot)


def _loop(server: MockServer, ledger: Ledger, variant: str) -> HostLoop:
    protocol, store = VARIANTS[variant]
    return HostLoop(
        protocol=protocol,
        base_url=base_url(server, protocol),
        api_key="test-key",
        ledger=ledger,
        tools=[ToolSpec(_tool(protocol not in NO_PDF), description="Render the sales chart.")],
        model=MODELS.get(protocol, "model-x"),
        store=store,
        headers={"x-callgate-conversation": variant},
        retry_backoff=0.0,
    )


def _script(variant: str) -> Any:
    protocol, _ = VARIANTS[variant]
    b = ScriptBuilder(seed=3)
    b.turn(protocol, conversation=variant, calls=[call("screenshot")])
    media = [MEDIA] if protocol in NO_PDF else [MEDIA, PDF_MEDIA]
    expect = {"function_results": [{"name": "screenshot", "media": media}]}
    b.turn(protocol, conversation=variant, expect=expect, text=FINAL)
    return b.build()


MEDIA_VARIANTS = [v for v in VARIANTS if v not in ("anthropic-threads", "openai-chat")]


@pytest.mark.parametrize("variant", MEDIA_VARIANTS)
def test_an_image_result_goes_through_the_loop_to_the_mock(variant: str, ledger: Ledger) -> None:
    protocol, _ = VARIANTS[variant]
    with MockServer(_script(variant)) as server:
        with _loop(server, ledger, variant) as loop:
            result = loop.run("run-1", "Show me the sales chart.")
        server.assert_script_done()
        posts = server.journal.requests(conversation=variant, outcome="matched")
    assert result.status == "final", result
    assert result.text == FINAL
    (effect,) = result.effects
    assert effect.state is EffectState.DELIVERED
    assert effect.result is not None
    assert effect.result.output[1].data == PNG  # byte for byte from the ledger
    if protocol not in NO_PDF:
        assert effect.result.output[2].data == PDF
    assert effect.result.audit == {"renderer": "internal-7"}
    journaled = repr(posts[1].body)
    assert f"<media sha256={DIGEST} size={len(PNG)}>" in journaled
    assert base64.b64encode(PNG).decode()[:64] not in journaled
    assert base64.urlsafe_b64encode(PNG).decode()[:64] not in journaled
    assert "internal-7" not in journaled  # the audit value never reaches a request


def test_a_media_expectation_that_differs_is_a_mismatch(ledger: Ledger) -> None:
    b = ScriptBuilder(seed=3)
    b.turn("anthropic_messages", conversation="anthropic", calls=[call("screenshot")])
    wrong = {**MEDIA, "digest": "0" * 64}
    expect = {"function_results": [{"name": "screenshot", "media": [wrong, PDF_MEDIA]}]}
    b.turn("anthropic_messages", conversation="anthropic", expect=expect, text=FINAL)
    with MockServer(b.build()) as server:
        with _loop(server, ledger, "anthropic") as loop:
            result = loop.run("run-1", "Show me the sales chart.")
        (miss,) = server.journal.requests(conversation="anthropic", outcome="mismatch")
    assert result.status != "final"
    assert any("digest" in problem and DIGEST in problem for problem in miss.problems)


def test_chat_completions_refuses_the_image_before_sending(ledger: Ledger) -> None:
    with MockServer(_script("openai-chat")) as server:
        with _loop(server, ledger, "openai-chat") as loop, pytest.raises(ContinuationError) as err:
            loop.run("run-1", "Show me the sales chart.")
        posts = server.journal.requests(conversation="openai-chat")
    assert "role 'tool' message takes text content parts only" in str(err.value)
    assert len(posts) == 1  # the call turn; no continuation left the host
    (effect,) = ledger.effects("run-1")
    assert effect.state is EffectState.COMMITTED  # ran once, kept, never delivered
    assert effect.result is not None
    assert effect.result.output[1].data == PNG
