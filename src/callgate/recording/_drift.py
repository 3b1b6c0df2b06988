"""``callgate check --drift DIR``: what changed in recorded traffic, per file and baseline.

Every ``recorded`` fixture under ``DIR`` (recursively) is parsed under every contract
revision with its room's public parser (``callgate._protocols.room``). Its events, items,
blocks, steps and deltas are then compared with the type unions of the SDK each baseline
pins (``sdk_types.json``: ``_sdkdiff.registry_from`` over the ``docs/drift/*.json``
readings of ``callgate drift sdk``): wire types the SDK does not know, enum values it does
not know, required fields missing, fields it does not declare. A parser refusal is a
change that **affects the gate** (the command exits 1), except where a refusal is
expected: a stream the client cut short (recorded ``complete: false``) or a provider
error status. The other findings are reported, not failed on: the parser accepted the
turn.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .._errors import CallgateError, ContractError, TruncatedStreamError
from .._protocols import PROTOCOLS, room
from ..contracts import CURRENT_REVISION, REVISIONS, Fixture, get_baseline, load_fixtures

__all__ = ["DriftReport", "FileDrift", "check_directory", "inventory", "inventory_of"]

Triple = tuple[str, str, dict[str, Any]]  # (union label, wire type, the object)


def _sdk_types() -> dict[str, Any]:
    text = importlib.resources.files(__package__).joinpath("sdk_types.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        obj = obj.get(key) if type(obj) is dict else None
    return obj


def _typed(label: str, obj: Any, key: str = "type") -> list[Triple]:
    if type(obj) is dict and type(obj.get(key)) is str:
        return [(label, obj[key], obj)]
    return []


def _each(value: Any) -> list[Any]:
    return value if type(value) is list else []


def _openai(ev: dict[str, Any]) -> tuple[list[Triple], list[tuple[str, Any]]]:
    found = _typed("stream events", ev)
    response = ev.get("response") if "response" in ev else (ev if "output" in ev else None)
    items = [ev.get("item"), *_each(_get(response, "output"))]
    for item in items:
        found += _typed("output items", item)
        if type(item) is dict and item.get("type") == "message":
            for part in _each(item.get("content")):
                found += _typed("message content parts", part)
    found += _typed("message content parts", ev.get("part"))
    values = [
        ("response status", _get(response, "status")),
        ("incomplete reason", _get(response, "incomplete_details", "reason")),
    ]
    return found, values


def _anthropic(ev: dict[str, Any]) -> tuple[list[Triple], list[tuple[str, Any]]]:
    found = _typed("stream events", ev) if ev.get("type") != "message" else []
    message = ev.get("message") if "message" in ev else (ev if ev.get("type") == "message" else {})
    blocks = [ev.get("content_block"), *_each(_get(message, "content"))]
    for block in blocks:
        found += _typed("content blocks", block)
    if ev.get("type") == "content_block_delta":
        found += _typed("content block deltas", ev.get("delta"))
    values = [
        ("stop reasons", _get(message, "stop_reason")),
        ("stop reasons", _get(ev, "delta", "stop_reason")),
    ]
    return found, values


def _gemini(ev: dict[str, Any]) -> tuple[list[Triple], list[tuple[str, Any]]]:
    found = _typed("stream events", ev, "event_type")
    interaction = ev.get("interaction") if "interaction" in ev else ev
    for step in [ev.get("step"), *_each(_get(interaction, "steps"))]:
        found += _typed("steps", step)
    if ev.get("event_type") == "step.delta":
        found += _typed("step deltas", ev.get("delta"))
    values = [("interaction status", _get(interaction, "status")), ("interaction status",
              ev.get("status") if ev.get("event_type") else None)]  # fmt: skip
    return found, values


def _chat(ev: dict[str, Any]) -> tuple[list[Triple], list[tuple[str, Any]]]:
    """Chat Completions objects carry no wire type: each is named by its SDK class."""
    found: list[Triple] = []
    values: list[tuple[str, Any]] = []
    if ev.get("object") == "chat.completion":
        found.append(("chat completions", "ChatCompletion", ev))
        for choice in _each(ev.get("choices")):
            if type(choice) is not dict:
                continue
            found.append(("chat completion choices", "Choice", choice))
            message = choice.get("message")
            if type(message) is dict:
                found.append(("chat messages", "ChatCompletionMessage", message))
                for call in _each(message.get("tool_calls")):
                    found += _typed("chat message tool calls", call)
            values.append(("chat finish reasons", choice.get("finish_reason")))
        return found, values
    if "choices" not in ev:  # an in-stream {"error": ...}: the parser's verdict covers it
        return found, values
    found.append(("chat chunks", "ChatCompletionChunk", ev))
    for choice in _each(ev.get("choices")):
        if type(choice) is not dict:
            continue
        found.append(("chat chunk choices", "Choice", choice))
        delta = choice.get("delta")
        if type(delta) is dict:
            found.append(("chat deltas", "ChoiceDelta", delta))
            for call in _each(delta.get("tool_calls")):
                if type(call) is dict:
                    found.append(("chat delta tool calls", "ChoiceDeltaToolCall", call))
        values.append(("chat finish reasons", choice.get("finish_reason")))
    return found, values


_PROBES = {
    "openai_responses": _openai,
    "openai_chat_completions": _chat,
    "anthropic_messages": _anthropic,
    "gemini_interactions": _gemini,
}


def _objects(fixture: Fixture) -> Iterator[dict[str, Any]]:
    if fixture.streamed:
        for _, data in fixture.wire_events():
            if type(data) is dict:
                yield data
    else:
        yield fixture.body()


def inventory(fixture: Fixture) -> tuple[list[Triple], list[tuple[str, str]]]:
    """The typed objects and the enum values a recording carries."""
    return inventory_of(fixture.api_family, _objects(fixture))


def inventory_of(
    protocol: str, objects: Iterable[dict[str, Any]]
) -> tuple[list[Triple], list[tuple[str, str]]]:
    """The typed objects and enum values among ``objects`` (events, or one body)."""
    probe = _PROBES.get(protocol)
    if probe is None:
        return [], []
    triples: list[Triple] = []
    values: list[tuple[str, str]] = []
    for obj in objects:
        found, seen = probe(obj)
        triples += found
        values += [(label, v) for label, v in seen if type(v) is str]
    return triples, values


def _against_sdk(fixture: Fixture, revision: str, sdk: dict[str, Any]) -> list[str]:
    if fixture.api_family not in _PROBES:
        return [f"no SDK union probes for {fixture.api_family} yet"]
    baseline = get_baseline(fixture.api_family, revision)
    unions = sdk.get(baseline.sdk_name, {}).get(baseline.sdk_version)
    if unions is None:
        return [f"no SDK reading for {baseline.sdk_name} {baseline.sdk_version}"]
    triples, values = inventory(fixture)
    notes: list[str] = []
    for label, wire, obj in triples:
        members = unions.get(label, {}).get("members", {})
        spec = members.get(wire)
        if spec is None:
            notes.append(f"new {label[:-1] if label.endswith('s') else label} type {wire!r}")
            continue
        missing = [f for f in spec["required"] if f not in obj]
        if missing:
            notes.append(f"{wire!r} misses required {', '.join(sorted(missing))}")
        extra = sorted(set(obj) - set(spec["fields"]))
        if extra:
            notes.append(f"{wire!r} has fields the SDK does not declare: {', '.join(extra)}")
    for label, value in values:
        known = unions.get(label, {}).get("values")
        if known and value not in known:
            notes.append(f"new {label} value {value!r}")
    return sorted(set(notes))


@dataclasses.dataclass(slots=True)
class FileDrift:
    """One recording's findings: the parser's verdict and the SDK findings per revision."""

    path: str
    protocol: str
    verdicts: dict[str, str]
    findings: dict[str, list[str]]
    affects_gate: bool

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(slots=True)
class DriftReport:
    files: list[FileDrift]
    refused: list[str]  # files that could not be loaded at all

    @property
    def affects_gate(self) -> bool:
        return bool(self.refused) or any(f.affects_gate for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        return {
            "affects_gate": self.affects_gate,
            "files": [f.to_dict() for f in self.files],
            "refused": self.refused,
        }

    def text(self) -> str:
        lines: list[str] = []
        for f in self.files:
            mark = "DRIFT" if f.affects_gate else "ok"
            lines.append(f"{mark:5} {f.path} ({f.protocol})")
            for revision, verdict in f.verdicts.items():
                lines.append(f"      {revision}: {verdict}")
                lines += [f"        - {n}" for n in f.findings.get(revision, [])]
            if f.findings.get("mock"):
                lines.append("      against the mock's rendering of the same turn:")
                lines += [f"        - {n}" for n in f.findings["mock"]]
        lines += [f"ERROR {r}" for r in self.refused]
        gate = "affects the gate" if self.affects_gate else "nothing that affects the gate"
        lines.append(f"{len(self.files)} recording(s) checked: {gate}")
        return "\n".join(lines)


def _verdict(fixture: Fixture, revision: str) -> tuple[str, bool]:
    """The parser's verdict under ``revision`` and whether it is a drift of the gate."""
    rec = fixture.recording or {}
    status = rec.get("response", {}).get("status", 0)
    if status >= 400:
        return f"provider error status {status} (not parsed)", False
    if fixture.api_family not in PROTOCOLS:
        return f"no room registered for {fixture.api_family} (not parsed)", False
    module = room(fixture.api_family)
    try:
        if fixture.streamed:
            turn = module.parse_stream(fixture.data, baseline=revision)
        else:
            turn = module.parse_response(fixture.body(), baseline=revision)
    except TruncatedStreamError as exc:
        cut = rec.get("response", {}).get("complete") is False
        note = "cut short by the client (expected)" if cut else f"refused: {exc}"
        return note, not cut
    except CallgateError as exc:
        return f"refused: {type(exc).__name__}: {exc}", True
    return f"accepted ({len(turn.calls)} call(s))", False


def check_file(fixture: Fixture, sdk: dict[str, Any]) -> FileDrift:
    verdicts: dict[str, str] = {}
    findings: dict[str, list[str]] = {}
    affects = False
    for revision in REVISIONS:
        verdicts[revision], refused = _verdict(fixture, revision)
        findings[revision] = _against_sdk(fixture, revision, sdk)
        # The gate drifts when the recording's own baseline or the current one refuses.
        if refused and revision in (fixture.contract_revision, CURRENT_REVISION):
            affects = True
    return FileDrift(str(fixture.path_sse), fixture.api_family, verdicts, findings, affects)


def check_directory(root: Path) -> DriftReport:
    """Drift-check every ``recorded`` fixture under ``root`` (``ContractError`` if none)."""
    sdk = _sdk_types()
    files: list[FileDrift] = []
    refused: list[str] = []
    folders = sorted(
        {p.parent for p in root.rglob("*.json")} | ({root} if root.is_dir() else set())
    )
    for folder in folders:
        if not any(folder.glob("*.json")):
            continue
        try:
            fixtures = load_fixtures(folder, allow_local_source_urls=True)
        except CallgateError as exc:
            refused.append(f"{folder}: {exc}")
            continue
        for fixture in fixtures:
            if fixture.layer == "recorded":
                files.append(check_file(fixture, sdk))
    if not files and not refused:
        raise ContractError(f"{root}: no recorded fixtures to check")
    return DriftReport(files, refused)
