"""Shared by the loop tests and the model-side crash cells: the protocol variants, their
mock scripts, and tools that apply to an fsynced append-only remote file."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

from callgate.ledger import Applied, EffectClass, Ledger, NotApplied, Tool, ToolContext
from callgate.loop import HostLoop, ToolSpec
from callgate.mock import MockServer, ScriptBuilder, call

# name -> (protocol, store): every room the loop drives, stateful and stateless.
VARIANTS = {
    "openai-stateful": ("openai_responses", True),
    "openai-stateless": ("openai_responses", False),
    "anthropic": ("anthropic_messages", True),
    "anthropic-threads": ("anthropic_messages", True),
    "gemini-stateful": ("gemini_interactions", True),
    "gemini-stateless": ("gemini_interactions", False),
    "gemini-generate-content": ("gemini_generate_content", False),  # stateless only
    "openai-chat": ("openai_chat_completions", False),  # stateless only
}
THREADED = frozenset({"anthropic-threads"})  # HostLoop(threads=True)
MODEL = "model-x"
FINAL = "Refunded order 42."


def base_url(server: MockServer, protocol: str) -> str:
    return {
        "openai_responses": server.openai_base_url,
        "anthropic_messages": server.anthropic_base_url,
        "gemini_interactions": server.gemini_base_url,
        "gemini_generate_content": server.gemini_base_url,
        "openai_chat_completions": server.openai_base_url,
    }[protocol]


def remote_apply(path: Path, token: str, *, dedup: bool = False) -> None:
    with open(path, "a+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        if dedup and token in fh.read().split():
            return
        fh.write(token + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def remote_count(path: Path, token: str | None = None) -> int:
    if not path.exists():
        return 0
    lines = path.read_text(encoding="utf-8").split()
    return len(lines) if token is None else lines.count(token)


def refund_specs(remote: Path, effect: str = "at_most_once", **kw: Any) -> list[ToolSpec]:
    """One ``refund`` tool of the given effect class, applying to ``remote``."""
    cls = EffectClass(effect)

    def run(args: Any, ctx: ToolContext) -> Any:
        if cls is EffectClass.LOCAL_TX:
            ctx.tx.outbox("refunds", {"order": args["order_id"]})
            return {"queued": args["order_id"]}
        if cls is not EffectClass.READ:
            remote_apply(remote, ctx.idempotency_token, dedup=cls is EffectClass.IDEMPOTENT_REMOTE)
        return {"refunded": args["order_id"]}

    def verify(args: Any, ctx: ToolContext) -> Any:
        if remote_count(remote, ctx.idempotency_token):
            return Applied({"refunded": args["order_id"], "verified": True})
        return NotApplied()

    extra: dict[str, Any] = {"verify": verify} if cls is EffectClass.VERIFIABLE else {}
    tool = Tool("refund", run, effect=cls, **extra, **kw)
    schema = {"type": "object", "properties": {"order_id": {"type": "integer"}}}
    return [ToolSpec(tool, description="Refund an order.", parameters=schema)]


def refund_script(conversations: dict[str, tuple[str, int, int]], **turn_kw: Any) -> Any:
    """``name -> (protocol, asks, answers)``: the call turn ``asks`` times (a re-send gets
    a fresh copy), then the final answer ``answers`` times."""
    b = ScriptBuilder(seed=7)
    for name, (protocol, asks, answers) in conversations.items():
        for _ in range(asks):
            b.turn(
                protocol,
                conversation=name,
                calls=[call("refund", order_id=42)],
                chunking={"fixed": 7},
                **turn_kw,
            )
        for _ in range(answers):
            b.turn(
                protocol,
                conversation=name,
                expect={"function_results": [{"name": "refund", "output_contains": "42"}]},
                text=FINAL,
            )
    return b.build()


def make_loop(
    server: MockServer | str,
    ledger: Ledger,
    variant: str,
    specs: list[ToolSpec],
    *,
    conversation: str | None = None,
    **kw: Any,
) -> HostLoop:
    protocol, store = VARIANTS[variant]
    url = server if isinstance(server, str) else base_url(server, protocol)
    return HostLoop(
        protocol=protocol,
        base_url=url,
        api_key="test-key",
        ledger=ledger,
        tools=specs,
        model=MODEL,
        store=store,
        threads=variant in THREADED,
        headers={"x-callgate-conversation": conversation or variant},
        retry_backoff=0.0,
        **kw,
    )
