"""Recordings replayed through the mock are judged too: a client that replays a recorded
conversation in which a result answers a call of a cut turn gets the verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest

from callgate.mock import MockServer, ScriptBuilder, call
from callgate.recording import Recorder, recording_transport

AUTH = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
ASK = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "Weather?"}]}


def _answer(call_id: str) -> dict[str, Any]:
    use = {"type": "tool_use", "id": call_id, "name": "get_weather", "input": {"city": "Oslo"}}
    result = {"type": "tool_result", "tool_use_id": call_id, "content": "cold"}
    return {**ASK, "messages": [*ASK["messages"], {"role": "assistant", "content": [use]},
                                {"role": "user", "content": [result]}]}  # fmt: skip


def _conversation(post: Any) -> None:
    assert post({**ASK, "stream": True}).status_code == 200
    assert post(_answer("c1")).status_code == 200


def _record(tmp_path: Path, fault: dict[str, Any] | None) -> Path:
    weather = call("get_weather", city="Oslo") | {"id": "c1"}
    script = (
        ScriptBuilder(seed=9)
        .turn("anthropic_messages", calls=[weather], **({"fault": fault} if fault else {}))
        .turn("anthropic_messages", text="Cold.")
        .build()
    )
    with MockServer(script) as server:
        transport = recording_transport(httpx2.HTTPTransport(), Recorder(tmp_path))
        with httpx2.Client(transport=transport) as client:
            url = f"{server.anthropic_base_url}/v1/messages"
            _conversation(lambda body: client.post(url, json=body, headers=AUTH))
    return tmp_path


@pytest.mark.parametrize(
    ("fault", "expected"),
    [({"type": "disconnect", "before_terminal": True}, ["executed_unreleased_call"]), (None, [])],
    ids=["cut", "whole"],
)
def test_a_replayed_recording_is_judged(
    tmp_path: Path, fault: dict[str, Any] | None, expected: list[str]
) -> None:
    directory = _record(tmp_path, fault)
    with MockServer.from_recordings(directory) as server:
        url = f"{server.anthropic_base_url}/v1/messages"
        _conversation(lambda body: httpx.post(url, json=body, headers=AUTH))
        verdicts = server.verdicts()
    assert [v["id"] for v in verdicts] == expected
    if expected:
        assert verdicts[0]["evidence"]["call_id"] == "c1"
