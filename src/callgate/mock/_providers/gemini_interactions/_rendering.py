"""Gemini Interactions in the mock:
a scripted turn on the wire, through the room's ``_render`` seam.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....gemini_interactions import _render
from .._kit import Ids, RenderedTurn, ScriptTurn, arguments, usage
from ._hosted import hosted_specs


def render(
    turn: ScriptTurn, ids: Ids, stream: bool, model: str, stored: bool, baseline: str
) -> RenderedTurn:
    respond = turn.respond
    interaction_id = ids("", "interaction", size=32)
    steps: list[dict[str, Any]] = []
    reasoning = respond.get("reasoning")
    if reasoning is not None:
        steps.append({"type": "thought", "signature": reasoning.get("signature", ""),
                      "summary": reasoning.get("summary", "")})  # fmt: skip
    hosted, annotations, grounding = hosted_specs(respond, ids)
    steps.extend(hosted)
    if "text" in respond:
        steps.append({"type": "model_output", "text": respond["text"], "annotations": annotations})
    calls: list[tuple[str, str]] = []
    specs = respond.get("calls", [])
    for n, spec in enumerate(specs):
        call_id = spec.get("id") or ids("", "call", n, size=16)
        calls.append((call_id, spec["name"]))
        steps.append({"type": "function_call", "id": call_id, "name": spec["name"],
                      "arguments": arguments(spec, as_object=not stream)})  # fmt: skip
    status = respond.get("status", "requires_action" if specs else "completed")
    counts: dict[str, Any] = {
        **usage(respond.get("usage"), "total_input_tokens", "total_output_tokens"),
        "grounding_tool_count": grounding,
    }
    wire_id = interaction_id if stored else None  # an unstored interaction has no id
    if not stream:
        body = _render.render_body(
            interaction_id=wire_id, model=model, steps=steps, status=status, usage=counts
        )
        return RenderedTurn(interaction_id, tuple(calls), [], body)
    events = _render.render_events(
        interaction_id=wire_id, model=model, steps=steps, status=status,
        split=turn.splitter(), interleave=respond.get("interleave") == "round_robin",
        usage=counts,
    )  # fmt: skip
    return RenderedTurn(interaction_id, tuple(calls), events, None)


def _event_name(event: Mapping[str, Any]) -> str:
    return str(event["event_type"])
