"""OpenAI Responses (plain and Azure): everything the mock knows about this provider.

Auth (``Authorization: Bearer``; Azure also ``api-key``), the create and stored-response
routes, the request view, rendering through the room's ``_render`` seam, error bodies,
``x-ratelimit-*`` headers, the in-stream error event, truncation, the native checks
(:mod:`._checks`) and the index of emitted output items.

Stored responses: a response is stored unless its request said ``store: false``.
``GET /openai/v1/responses/{id}`` (and the Azure route) returns the Response object a
non-streaming create returned (for a streamed turn: the terminal event's ``response``);
streaming retrieval (``?stream=true``) is refused with a 400. ``DELETE`` answers
``{"id", "object": "response", "deleted": true}`` and the id stops resolving. Nothing is
inherited through ``previous_response_id``: a script's ``expect`` sees only what the
request itself sent.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.routing import Route

from ....openai_responses import _render
from .._kit import (
    BaseUrl,
    Endpoint,
    Event,
    FunctionResult,
    Host,
    Ids,
    Provider,
    Rendered,
    RenderedTurn,
    Reply,
    RequestView,
    ScriptTurn,
    Stored,
    arguments,
    bearer,
    header,
    last_text,
    list_of,
    texts,
    tool_names,
    usage,
)
from .._request_valid import SWITCHES, validator
from . import _aux as aux
from . import _hosted as hosted
from . import _tools as tools
from ._checks import check as continuation_check
from ._checks import emitted_index, openai_error

if TYPE_CHECKING:
    from ..._store_state import Record, SessionStore

__all__ = ["PROVIDER"]

_PROTOCOL = "openai_responses"
_TERMINALS = frozenset({"response.completed", "response.incomplete", "response.failed"})
# What the renderer can send: the three stream terminals (queued, in_progress and
# cancelled belong to background mode, which the mock does not serve).
STATUSES = ("completed", "incomplete", "failed")
CHECKS = (
    SWITCHES[_PROTOCOL],
    "openai_previous_response_found",
    "openai_item_reference_found",
    "openai_output_has_call",
    "openai_call_has_output",
    "openai_reasoning_has_next_item",
    "openai_replay_matches_emitted",
    tools.CHECK,
)


def check(store: SessionStore, body: dict[str, Any], on: Collection[str]) -> Reply | None:
    """The hosted declarations and ``include`` first, then the continuation rules."""
    if tools.CHECK in on:
        problem = tools.tools_problem(body)
        if problem is not None:
            return problem
    return continuation_check(store, body, on)


# -- auth -------------------------------------------------------------------------------------


def auth(request: Request) -> Reply | None:
    if bearer(request):
        return None
    message = "You didn't provide an API key. Send it as 'Authorization: Bearer <key>'."
    return Reply(401, error_body(401, message))


def auth_azure(request: Request) -> Reply | None:
    if header(request, b"api-key") or bearer(request):
        return None
    message = "Access denied due to missing subscription key or Bearer token."
    return Reply(401, error_body(401, message))


# -- errors -----------------------------------------------------------------------------------

_TYPES = {401: "invalid_request_error", 404: "invalid_request_error", 429: "requests"}
_CODES = {401: "invalid_api_key", 429: "rate_limit_exceeded", 500: "server_error"}


def error_body(status: int, message: str, *, code: str | None = None) -> dict[str, Any]:
    kind = _TYPES.get(status, "invalid_request_error" if status < 500 else "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def http_error(status: int, message: str, retry: int | None) -> Reply:
    """A scripted HTTP error; a 429 carries ``x-ratelimit-*`` headers."""
    headers: dict[str, str] = {}
    if retry is not None:
        headers["retry-after"] = str(retry)
    if status == 429:
        reset = f"{retry if retry is not None else 1}s"
        headers |= {
            "x-ratelimit-limit-requests": "60",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": reset,
            "x-ratelimit-limit-tokens": "150000",
            "x-ratelimit-remaining-tokens": "0",
            "x-ratelimit-reset-tokens": reset,
        }
    return Reply(status, error_body(status, message, code=_CODES.get(status)), headers)


# -- the request view -------------------------------------------------------------------------


def view(body: Mapping[str, Any]) -> RequestView:
    inp = body.get("input")
    if isinstance(inp, str):  # one user message, nothing replayed
        return _view(body, inp, (), inp)
    found: list[str] = []
    groups: list[list[str]] = []
    results = []
    names: dict[str, str] = {}  # call_id -> name, from the function_call items replayed
    for item in list_of(inp):
        if not isinstance(item, dict):
            continue
        call_id = item.get("call_id")
        if item.get("type") == "function_call":
            if isinstance(call_id, str) and isinstance(item.get("name"), str):
                names[call_id] = item["name"]
        elif item.get("type") == "function_call_output":
            name = names.get(call_id) if isinstance(call_id, str) else None
            results.append(FunctionResult(call_id, name, item.get("output"), False))
        elif item.get("role") == "user":
            groups.append(texts(item.get("content")))
            found.extend(groups[-1])
        elif item.get("role") == "assistant":
            results = []  # a model's answer closed the rounds whose results came before it
    return _view(body, "\n".join(found), tuple(results), last_text(groups))


def _view(
    body: Mapping[str, Any], text: str, results: tuple[FunctionResult, ...], last: str
) -> RequestView:
    return RequestView(
        model=body.get("model"),
        stream=body.get("stream") is True,
        tools=tool_names(body.get("tools")),
        results=results,
        previous_id=body.get("previous_response_id"),
        user_text=text,
        instructions=body.get("instructions"),
        last_user_text=last,
    )


# -- rendering --------------------------------------------------------------------------------


def render_options(body: Mapping[str, Any]) -> tuple[str, ...]:
    """The request's ``include`` values that change the rendering, sorted."""
    include = body.get("include")
    if not include or not isinstance(include, list):
        return ()
    return tuple(sorted({v for v in include if isinstance(v, str)} & hosted.RENDER_INCLUDES))


def render(
    turn: ScriptTurn, ids: Ids, stream: bool, model: str, stored: bool, baseline: str
) -> RenderedTurn:
    return render_with(turn, ids, stream, model, stored, baseline, ())


def render_with(
    turn: ScriptTurn,
    ids: Ids,
    stream: bool,
    model: str,
    stored: bool,
    baseline: str,
    include: tuple[str, ...],
) -> RenderedTurn:
    respond = turn.respond
    response_id = ids("resp_", "response")
    items: list[dict[str, Any]] = []
    reasoning = respond.get("reasoning")
    if reasoning is not None:
        item = {"type": "reasoning", "id": ids("rs_", "reasoning"),
                "summary": [reasoning.get("summary", "")]}  # fmt: skip
        if reasoning.get("signature"):
            item["encrypted_content"] = reasoning["signature"]
        items.append(item)
    steps, cites = hosted.hosted_items(respond, ids, include)
    items.extend(steps)
    if "text" in respond:
        message = {"type": "message", "id": ids("msg_", "message"), "text": respond["text"]}
        if "hosted" in respond:
            message["text"], message["annotations"] = hosted.cited_text(respond["text"], cites)
        items.append(message)
    calls: list[tuple[str, str]] = []
    for n, spec in enumerate(respond.get("calls", [])):
        call_id = spec.get("id") or ids("call_", "call", n)
        calls.append((call_id, spec["name"]))
        items.append({"type": "function_call", "id": ids("fc_", "item", n), "call_id": call_id,
                      "name": spec["name"], "arguments": arguments(spec)})  # fmt: skip
    status = respond.get("status", "completed")
    counts = usage(respond.get("usage"), "input_tokens", "output_tokens")
    metered = hosted.tool_usage(respond, baseline)
    if not stream:
        body = _render.render_body(
            response_id=response_id, model=model, items=items, status=status, usage=counts,
            tool_usage=metered,
        )  # fmt: skip
        return RenderedTurn(response_id, tuple(calls), [], body)
    events = _render.render_events(
        response_id=response_id, model=model, items=items, status=status,
        split=turn.splitter(), interleave=respond.get("interleave") == "round_robin",
        usage=counts, baseline=baseline, tool_usage=metered,
    )  # fmt: skip
    return RenderedTurn(response_id, tuple(calls), events, None)


def _event_name(event: Mapping[str, Any]) -> str:
    return str(event["type"])


def fault_roles(event: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A call is an output item: added, argument deltas, done; then a terminal event."""
    kind, index = event["type"], event.get("output_index")
    if kind == "response.output_item.added" and event["item"]["type"] == "function_call":
        return (("start", index),)
    if kind == "response.function_call_arguments.delta":
        return (("delta", index),)
    if kind == "response.output_item.done":
        return (("done", index),)
    return (("terminal", None),) if kind in _TERMINALS else ()


# -- stream faults ----------------------------------------------------------------------------


def error_event(sent: Sequence[Event], fault: Mapping[str, Any]) -> Event:
    given = {k: fault[k] for k in ("error_type", "code", "shape") if k in fault}
    seq = sent[-1]["sequence_number"] + 1 if sent else 0
    return _render.render_error_event(message=fault.get("message"), sequence_number=seq, **given)


def truncate(events: list[Event], fault: Mapping[str, Any]) -> list[Event]:
    """Cut call ``fault["call"]``'s argument deltas after ``keep`` chars and end the stream
    with ``response.incomplete`` (``max_output_tokens``) holding the cut call."""
    added = [e for e in events if e["type"] == "response.output_item.added"]
    calls = [e for e in added if e["item"]["type"] == "function_call"]
    index = calls[fault.get("call", 0)]["output_index"]
    terminal = events[-1]["response"]
    full = terminal["output"][index]["arguments"]
    keep = fault.get("keep", len(full) // 2)
    out: list[Event] = []
    done: dict[int, dict[str, Any]] = {}
    sent = ""
    for event in events:
        kind = event["type"]
        if kind == "response.function_call_arguments.delta" and event["output_index"] == index:
            rest = keep - len(sent)
            if len(event["delta"]) >= rest:
                if rest:
                    out.append({**event, "delta": event["delta"][:rest]})
                sent += event["delta"][:rest]
                break
            sent += event["delta"]
        elif kind == "response.output_item.done":
            done[event["output_index"]] = event["item"]
        out.append(event)
    item = {**terminal["output"][index], "arguments": sent, "status": "incomplete"}
    output = [done[i] for i in sorted(done)] + [item]
    response = {
        **copy.deepcopy(terminal),
        "status": "incomplete",
        "output": output,
        "incomplete_details": {"reason": "max_output_tokens"},
        "error": None,
    }
    out.append({"type": "response.incomplete", "response": response})
    return [{**e, "sequence_number": n} for n, e in enumerate(out)]


# -- what was emitted -------------------------------------------------------------------------


def final_from_stream(rendered: Rendered) -> dict[str, Any] | None:
    """The terminal event's ``response``: the complete Response object of a stream."""
    if rendered.events and rendered.events[-1].get("type") in _TERMINALS:
        response: dict[str, Any] = rendered.events[-1]["response"]
        return response
    return None


def emitted_items(rendered: Rendered) -> list[dict[str, Any]]:
    """The output items the client received (complete items only, in output order)."""
    if rendered.body is not None:
        return list(rendered.body.get("output", ()))
    final = final_from_stream(rendered)
    if final is not None:
        return list(final.get("output", ()))
    done = [e for e in rendered.events if e.get("type") == "response.output_item.done"]
    return [e["item"] for e in sorted(done, key=lambda e: e.get("output_index", 0))]


def index(store: SessionStore, record: Record) -> None:
    """Index a record's output items by id, and the item after each reasoning item."""
    items = emitted_items(record.received)
    found = emitted_index(store)
    for position, item in enumerate(items):
        item_id = item.get("id")
        if not isinstance(item_id, str):
            continue
        found.items[item_id] = item
        found.owner[item_id] = record.id
        if item.get("type") == "reasoning":
            following = items[position + 1] if position + 1 < len(items) else None
            found.followers[item_id] = following


# -- stored responses -------------------------------------------------------------------------


def _not_found(response_id: str) -> Reply:
    return openai_error(404, f"No response found with id '{response_id}'.")


def _stored(call: Stored) -> Reply:
    response_id = call.request.path_params["response_id"]
    found = call.store.referable(_PROTOCOL, response_id)
    if found is None:
        return _not_found(response_id)
    if call.request.method == "DELETE":
        found.deleted = True
        return Reply(200, {"id": response_id, "object": "response", "deleted": True})
    if call.request.query_params.get("stream", "false").lower() == "true":
        return openai_error(
            400,
            "callgate mock: streaming retrieval (stream=true) is not served; retrieve "
            "the Response object without it.",
            param="stream",
        )
    return Reply(200, call.final_object(found))


def state_routes(host: Host) -> list[Route]:
    """GET/DELETE of stored responses (plain and Azure)."""
    methods = ["GET", "DELETE"]
    return [
        Route(
            "/openai/v1/responses/{response_id:str}",
            host.stored(_PROTOCOL, auth, _stored, "state"),
            methods=methods,
        ),
        Route(
            "/azure-openai/openai/v1/responses/{response_id:str}",
            host.stored(_PROTOCOL, auth_azure, _stored, "state"),
            methods=methods,
        ),
    ]


PROVIDER = Provider(
    protocol=_PROTOCOL,
    prefixes=("/openai/", "/azure-openai/"),
    endpoints=(
        Endpoint("/openai/v1/responses", auth, ("/openai/v1/responses",)),
        Endpoint(
            "/azure-openai/openai/v1/responses",
            auth_azure,
            ("/azure-openai/openai/v1/responses",),
        ),
    ),
    state_routes=state_routes,
    view=view,
    render=render,
    encode=_render.encode_sse,
    event_name=_event_name,
    error_body=error_body,
    http_error=http_error,
    error_event=error_event,
    truncate=truncate,
    fault_options=frozenset({"error_shape", "argument_deltas"}),
    fault_roles=fault_roles,
    statuses=STATUSES,
    previous_key="previous_response_id",
    checks=CHECKS,
    check=check,
    validate=validator(_PROTOCOL),
    validate_switch=SWITCHES[_PROTOCOL],
    index=index,
    final_from_stream=final_from_stream,
    respond_keys=hosted.RESPOND_KEYS,
    check_respond=hosted.check_respond,
    render_options=render_options,
    render_with=render_with,
    family=aux.FAMILY,
    aux_routes=lambda host: aux.routes(host, auth, auth_azure, error_body),
    base_urls=(
        BaseUrl(
            "OpenAI Responses",
            "openai SDKs OpenAI(base_url=...), OpenAI-compatible clients",
            "/openai/v1",
            "/responses",
        ),
        BaseUrl(
            "Azure OpenAI v1",
            "openai SDKs OpenAI(base_url=...), as Azure's v1 API is used",
            "/azure-openai/openai/v1",
            "/responses",
        ),
    ),
    server_bases=(
        ("openai_base_url", "/openai/v1"),
        ("azure_openai_base_url", "/azure-openai/openai/v1"),
    ),
)
