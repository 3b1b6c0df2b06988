"""Gemini Interactions v1: everything the mock knows about this provider.

Auth (``x-goog-api-key`` or ``?key=``), the versioned create and stored-interaction routes
(``v1`` and ``v1beta``), the request view, rendering through the room's ``_render`` seam,
error bodies (the Interactions API's ``{"error": {"code": "<documented code>", "message"}}``,
:mod:`._errors`, with a retry hint in ``details``: Gemini sends no
rate-limit headers), the in-stream error event, truncation and the native checks
(:mod:`._checks`).

Stored interactions: an interaction is stored unless ``store: false``.
``GET /gemini/{v}/interactions/{id}`` returns it with its whole timeline: for every hop
of its ``previous_interaction_id`` chain, oldest first, the hop's input steps (a string
input becomes one ``user_input`` step) and then its model steps -- so the body starts with
``user_input`` and pairs every call with its result, which is what a GET snapshot must
hold to be replayed without supplementing
(``callgate.gemini_interactions.parse_interaction(source="get")``). ``?include_input=true``
also echoes the request's ``input``. ``?stream=true`` re-sends the interaction's complete
event stream, and with ``last_event_id=E`` only the events after ``E`` (event ids are
``<interaction id>:<n>``; an unknown ``E`` is a 400). ``POST .../{id}/cancel`` turns an
interaction waiting in ``requires_action`` into ``cancelled`` (its pending calls are
abandoned and it can no longer be continued); any other status is a 400
``FAILED_PRECONDITION``, since the mock never has one still running. ``DELETE`` answers
``{}`` and the id stops resolving (404 for GET, cancel and ``previous_interaction_id``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.routing import Route

from ....gemini_interactions import _render
from .._gemini_common import VERSIONS, error_body
from .._kit import (
    BaseUrl,
    Endpoint,
    Event,
    FunctionResult,
    Host,
    Ids,
    Provider,
    RenderedTurn,
    Reply,
    RequestView,
    ScriptTurn,
    Stored,
    StoredAnswer,
    arguments,
    cut_deltas,
    last_text,
    list_of,
    texts,
    tool_names,
    usage,
)
from .._request_valid import SWITCHES, validator
from . import _errors as errors
from ._checks import check
from ._hosted import check_hosted, hosted_specs, hosted_types

if TYPE_CHECKING:
    from ..._store_state import Record

__all__ = ["PROVIDER"]

_PROTOCOL = "gemini_interactions"
_VERSIONS = VERSIONS
CHECKS = (
    SWITCHES[_PROTOCOL],
    "gemini_previous_interaction_found",
    "gemini_previous_interaction_stored",
    "gemini_previous_interaction_active",
    "gemini_result_is_step",
    "gemini_result_has_call",
    "gemini_call_has_result",
    "gemini_hosted_tool_declaration",
)
# A list input of these is content for one user_input step, not a list of steps.
_CONTENT_TYPES = frozenset({"text", "image", "audio", "document", "video"})


def _unknown_version(request: Request) -> Reply | None:
    if request.path_params["version"] in _VERSIONS:
        return None
    return Reply(404, error_body(404, "unknown API version"))


# -- the request view -------------------------------------------------------------------------


def view(body: Mapping[str, Any]) -> RequestView:
    inp = body.get("input")
    found: list[str] = []
    # User texts per user turn: a user_input step is one; a bare content list is one.
    groups: list[list[str]] = []
    bare: list[str] = []
    results = []
    nested = 0
    if isinstance(inp, str):
        found.append(inp)
        groups.append([inp])
    elif isinstance(inp, dict):
        found.extend(texts([inp]))
        groups.append(texts([inp]))
    for step in list_of(inp):
        if not isinstance(step, dict):
            continue
        kind = step.get("type")
        if kind == "function_result":
            results.append(
                FunctionResult(
                    step.get("call_id"), step.get("name"), step.get("result"),
                    step.get("is_error") is True,
                )
            )  # fmt: skip
        elif kind == "user_input":
            groups.append(texts(step.get("content")))
            found.extend(groups[-1])
            nested += sum(
                isinstance(p, dict) and p.get("type") == "function_result"
                for p in list_of(step.get("content"))
            )
        elif kind == "model_output":
            results = []  # a model's answer closed the rounds whose results came before it
        elif kind == "text" and isinstance(step.get("text"), str):
            found.append(step["text"])
            bare.append(step["text"])
    if bare:
        groups.append(bare)
    return RequestView(
        model=body.get("model"),
        stream=body.get("stream") is True,
        tools=tool_names(body.get("tools")) + hosted_types(body.get("tools")),
        results=tuple(results),
        previous_id=body.get("previous_interaction_id"),
        user_text="\n".join(found),
        instructions=body.get("system_instruction"),
        nested_results=nested,
        last_user_text=last_text(groups),
    )


# -- rendering --------------------------------------------------------------------------------


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


def fault_roles(event: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A call is a ``function_call`` step; the terminal is ``interaction.completed``."""
    kind, index = event["event_type"], event.get("index")
    if kind == "step.start" and event["step"]["type"] == "function_call":
        return (("start", index),)
    if kind == "step.delta" and event["delta"]["type"] == "arguments_delta":
        return (("delta", index),)
    if kind == "step.stop":
        return (("done", index),)
    return (("terminal", None),) if kind == "interaction.completed" else ()


# -- stream faults ----------------------------------------------------------------------------


def _event_id(events: Sequence[Event], position: int) -> str | None:
    """The id of the event at ``position`` (``None`` in an unstored stream, which has none)."""
    if events and "event_id" not in events[0]:
        return None
    base = str(events[0]["event_id"]).rpartition(":")[0] if events else "callgate"
    return f"{base}:{position}"


def error_event(sent: Sequence[Event], fault: Mapping[str, Any]) -> Event:
    given = {"code": fault["code"]} if "code" in fault else {}
    event_id = _event_id(sent, len(sent))
    return _render.render_error_event(message=fault.get("message"), event_id=event_id, **given)


def truncate(events: list[Event], fault: Mapping[str, Any]) -> list[Event]:
    """Cut a call step's ``arguments_delta`` after ``keep`` chars; end ``incomplete``."""
    starts = [
        e
        for e in events
        if e["event_type"] == "step.start" and e["step"]["type"] == "function_call"
    ]
    index = starts[fault.get("call", 0)]["index"]
    out = cut_deltas(
        events,
        lambda e: e["event_type"] == "step.delta" and e["index"] == index
        and e["delta"]["type"] == "arguments_delta",
        lambda e: str(e["delta"]["arguments"]),
        lambda e, text: {**e, "delta": {"type": "arguments_delta", "arguments": text}},
        fault.get("keep"),
    )  # fmt: skip
    final = copy.deepcopy(events[-1])
    final["interaction"]["status"] = "incomplete"
    out.append({"event_type": "step.stop", "index": index})
    out.append(final)
    if _event_id(events, 0) is None:
        return out
    return [{**e, "event_id": _event_id(events, n)} for n, e in enumerate(out)]


# -- stored interactions ----------------------------------------------------------------------


def _input_steps(value: Any) -> list[Any]:
    """A create request's ``input`` as the steps a GET timeline shows for it."""
    if isinstance(value, str):
        return [{"type": "user_input", "content": [{"type": "text", "text": value}]}]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return []
    if value and all(isinstance(v, dict) and v.get("type") in _CONTENT_TYPES for v in value):
        return [{"type": "user_input", "content": list(value)}]
    return list(value)


def _interaction(call: Stored, found: Record, *, echo: bool) -> Any:
    body = dict(call.final_object(found))
    timeline: list[Any] = []
    for hop in reversed(list(call.store.chain(found))):
        timeline.extend(_input_steps(hop.served.request.get("input")))
        timeline.extend(call.final_object(hop).get("steps", ()))
    body["steps"] = timeline
    if found.previous is not None:
        body["previous_interaction_id"] = found.previous
    if found.cancelled:
        body["status"] = "cancelled"
    if echo and "input" in found.served.request:
        body["input"] = found.served.request["input"]
    return body


def _resume(call: Stored, found: Record, last_event_id: str | None) -> Reply | bytes:
    full = call.full_stream(found)
    start = 0
    if last_event_id is not None:
        ids = [event.get("event_id") for event in full.events]
        if last_event_id not in ids:
            return errors.gemini_error(
                400,
                f"last_event_id {last_event_id!r} is not an event of interaction {found.id!r}.",
            )
        start = ids.index(last_event_id) + 1
    return b"".join(full.frames[start:])


def _cancel(call: Stored, found: Record) -> Reply:
    status = "cancelled" if found.cancelled else call.final_object(found).get("status")
    if status != "requires_action":
        return errors.gemini_error(
            400,
            f"Interaction {found.id!r} is {status}; only an interaction in progress or "
            "waiting in requires_action can be cancelled.",
            "failed_precondition",
        )
    found.cancelled = True
    return Reply(200, _interaction(call, found, echo=False))


def _stored_auth(request: Request) -> Reply | None:
    return _unknown_version(request) or errors.auth(request)


def _stored(action: str) -> StoredAnswer:
    def answer(call: Stored) -> Reply | bytes:
        interaction_id = call.request.path_params["interaction_id"]
        query = call.request.query_params
        found = call.store.referable(_PROTOCOL, interaction_id)
        if found is None:
            return errors.not_found(interaction_id)
        if action == "delete":
            found.deleted = True
            return Reply(200, {})
        if action == "cancel":
            return _cancel(call, found)
        if query.get("stream", "false").lower() == "true":
            return _resume(call, found, query.get("last_event_id"))
        echo = query.get("include_input", "false").lower() == "true"
        return Reply(200, _interaction(call, found, echo=echo))

    return answer


def state_routes(host: Host) -> list[Route]:
    """GET (JSON or resumed SSE), DELETE and cancel of stored interactions."""
    interaction = "/gemini/{version:str}/interactions/{interaction_id:str}"

    def make(action: str) -> Any:
        return host.stored(_PROTOCOL, _stored_auth, _stored(action), "state")

    return [
        Route(interaction, make("get"), methods=["GET"]),
        Route(interaction, make("delete"), methods=["DELETE"]),
        Route(f"{interaction}/cancel", make("cancel"), methods=["POST"]),
    ]


PROVIDER = Provider(
    protocol=_PROTOCOL,
    prefixes=("/gemini/",),
    endpoints=(
        Endpoint(
            "/gemini/{version:str}/interactions",
            errors.auth,
            tuple(f"/gemini/{v}/interactions" for v in _VERSIONS),
            refuse=_unknown_version,
        ),
    ),
    state_routes=state_routes,
    view=view,
    render=render,
    encode=_render.encode_sse,
    event_name=_event_name,
    error_body=lambda status, message: errors.error_body(status, message),
    http_error=errors.http_error,
    error_event=error_event,
    truncate=truncate,
    fault_options=frozenset({"duplicate_different", "argument_deltas"}),
    fault_roles=fault_roles,
    object_arguments=True,
    previous_key="previous_interaction_id",
    checks=CHECKS,
    check=check,
    validate=validator(_PROTOCOL),
    validate_switch=SWITCHES[_PROTOCOL],
    respond_keys=frozenset({"hosted"}),
    check_respond=check_hosted,
    base_urls=(
        BaseUrl(
            "Gemini Interactions",
            "google-genai http_options base_url, api_version 'v1' or 'v1beta'",
            "/gemini",
            "/v1beta/interactions",
        ),
        BaseUrl(
            "Gemini Interactions",
            "clients wanting the version segment (also .../gemini/v1)",
            "/gemini/v1beta",
            "/interactions",
        ),
    ),
    server_bases=(("gemini_base_url", "/gemini"),),
)
