"""Recording and replay keep media tool results byte-exact (issue 30): a host loop whose
tool returns an image is recorded through the recording transport, and the recordings
replay the same requests, byte for byte, from a fresh ledger."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from callgate import MediaPart, TextPart
from callgate.contracts import load_fixtures
from callgate.ledger import Tool, ToolContext, open_ledger
from callgate.loop import HostLoop, ToolSpec
from callgate.mock import MockServer, ScriptBuilder, call
from callgate.recording import Recorder, recording_transport
from callgate.recording._scan import mask_media, scan

# Image bytes whose base64 holds a Google-key-shaped run ("AIza" + 35 characters), as a
# few hundred KB of real image data will by chance: the scanner must not refuse it.
_SHAPED = "AIza" + "Sy" + "B" * 33 + "x" * 300
PNG = base64.b64decode(_SHAPED + "=" * (-len(_SHAPED) % 4))
PROTOCOLS = {
    "openai_responses": "model-x",
    "anthropic_messages": "model-x",
    "gemini_interactions": "model-x",
    "gemini_generate_content": "gemini-3-flash",
}


def _shot(args: Any, ctx: ToolContext) -> Any:
    return (TextPart("chart"), MediaPart.image(PNG, "image/png"))


def _base(server: MockServer, protocol: str) -> str:
    if protocol.startswith("openai"):
        return server.openai_base_url
    return server.anthropic_base_url if protocol.startswith("anthropic") else server.gemini_base_url


def _run(server: MockServer, protocol: str, db: Path, client: httpx.Client | None) -> Any:
    with (
        open_ledger(f"sqlite:///{db}") as ledger,
        HostLoop(
            protocol=protocol,
            base_url=_base(server, protocol),
            api_key="test-key",
            ledger=ledger,
            tools=[ToolSpec(Tool("shot", _shot), description="Render a chart.")],
            model=PROTOCOLS[protocol],
            store=False,
            retry_backoff=0.0,
            client=client,
        ) as loop,
    ):
        return loop.run("run-1", "Show the chart.")


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_recorded_media_result_replays_byte_exact(protocol: str, tmp_path: Path) -> None:
    script = (
        ScriptBuilder(seed=5)
        .turn(protocol, calls=[call("shot")])
        .turn(protocol, text="A chart.")
        .build()
    )
    out = tmp_path / "rec"
    recorder = Recorder(out)
    client = httpx.Client(transport=recording_transport(httpx.HTTPTransport(), recorder))
    with MockServer(script) as server, client:
        assert _run(server, protocol, tmp_path / "a.db", client).status == "final"
    recorded = [f.recording["request"]["body"] for f in load_fixtures(out)]
    assert len(recorded) == 2
    continuation = json.dumps(recorded[1])
    encoded = base64.b64encode(PNG).decode()
    urlsafe = base64.urlsafe_b64encode(PNG).decode()
    assert encoded in continuation or urlsafe in continuation  # the bytes, as sent
    with MockServer.from_recordings(out) as replay:
        result = _run(replay, protocol, tmp_path / "b.db", None)
        assert replay.replay is not None
        assert replay.replay.unserved() == []
        outcomes = [e.outcome for e in replay.journal.entries()]
        journaled = repr(replay.journal.entries()[1].body)
    assert result.status == "final"
    assert f"size={len(PNG)}>" in journaled  # the replay's journal keeps no bytes either
    assert encoded[:40] not in journaled
    assert outcomes == ["matched", "matched"]  # each request equal to its recording


def test_masking_hides_only_inline_base64_media_from_the_scanner() -> None:
    image = base64.b64encode(PNG).decode()
    body = json.dumps(
        {"input": [{"type": "input_image", "image_url": f"data:image/png;base64,{image}"}]}
    ).encode()
    assert [hit.rule for hit in scan("body", body)] == ["google-api-key"]
    masked = mask_media(body)
    assert len(masked) == len(body)  # offsets of any other hit stay right
    assert scan("body", masked) == []
    key = b'{"data": "AIzaSyB' + b"B" * 32 + b'", "note": "sk-proj-' + b"a" * 40 + b'"}'
    assert mask_media(key) == key  # short values and non-media text are still scanned
    assert {hit.rule for hit in scan("body", mask_media(key))} == {"google-api-key", "openai-key"}
