"""Gemini generateContent: everything the mock knows about this provider.

Routes ``POST /gemini/{v1,v1beta}/models/{model}:generateContent`` (a JSON body) and
``...:streamGenerateContent?alt=sse`` (``data:`` lines only, as the SDK reads them); the
model and the stream flag come from the path, so the engine sees them as the body's
``model`` and ``stream``. Auth, error bodies (``google.rpc.Status``, retry delay in its
``details``) and the missing-key answer are the Interactions provider's: one Google API.
Rendering goes through the room's ``_render`` seam; the native checks are in
:mod:`._checks`. Nothing is stored for later reference:
generateContent is stateless (the request replays the whole conversation).

A turn on this wire (the ``respond`` block): ``text`` (streamed in ``chunking`` pieces, one
part per piece), ``calls`` (whole, one part each, ``functionCall.id`` only when scripted),
``reasoning`` (``summary`` as thought parts; ``signature`` on the first call's part, or on a
trailing empty text part when there is no call: where Gemini 3 puts it),
``thought_signatures`` (whether a turn without a scripted signature is signed as a Gemini 3
model signs it; default: by the model name, :mod:`._signatures`),
``status`` (the ``finishReason``, default ``STOP``; ``CONTINUATION`` adds a ``continuationToken``),
``usage`` and ``chunk_plan``: how many parts each chunk carries (parallel calls in one chunk
or several; it must add up to the turn's parts). Default: one part per chunk, the finish
reason and usage on the last one. ``hosted``: scripted results of the server's own tools
(search, file search, code execution, URL context) and the citations of ``text``; see
:mod:`._hosted`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from ...._errors import CallgateError, UsageError
from ...._json import loads_strict
from ....gemini_generate_content import _render
from .._gemini_common import VERSIONS, auth, error_body, http_error
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
    arguments,
    last_text,
    list_of,
    usage,
)
from .._request_valid import SWITCHES, validator
from . import _aux as aux
from . import _hosted as hosted
from . import _tools as hosted_tools
from ._checks import CHECKS, check
from ._signatures import place_signature, signs

__all__ = ["PROVIDER", "STATUSES"]

_PROTOCOL = "gemini_generate_content"
_VERSIONS = VERSIONS
_METHODS = {"generateContent": False, "streamGenerateContent": True}
# Every finishReason either SDK generation knows (google-genai 3.6.1's 24 values).
STATUSES = (
    "STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "LANGUAGE", "OTHER", "BLOCKLIST",
    "PROHIBITED_CONTENT", "SPII", "MALFORMED_FUNCTION_CALL", "IMAGE_SAFETY",
    "UNEXPECTED_TOOL_CALL", "IMAGE_PROHIBITED_CONTENT", "NO_IMAGE", "IMAGE_RECITATION",
    "IMAGE_OTHER", "FINISH_REASON_UNSPECIFIED", "TOO_MANY_TOOL_CALLS",
    "MISSING_THOUGHT_SIGNATURE", "MALFORMED_RESPONSE", "ESCALATION", "PUP_LIMITED_DISABLED",
    "CONTINUATION", "MODEL_ARMOR",
)  # fmt: skip


# -- the path -------------------------------------------------------------------------------


def _target(request: Request) -> tuple[str, bool] | None:
    """(model, stream) of a ``models/{model}:{method}`` path, or ``None``."""
    model, colon, method = request.path_params["target"].rpartition(":")
    if not colon or not model or method not in _METHODS:
        return None
    return model, _METHODS[method]


def refuse_path(request: Request) -> Reply | None:
    """An unknown API version or method is a 404; a stream without ``alt=sse`` a 400 (the
    mock serves the SSE framing only, which is what both SDK generations request)."""
    target = _target(request)
    if request.path_params["version"] not in _VERSIONS or target is None:
        return Reply(404, error_body(404, f"Method not found: {request.url.path}"))
    if target[1] and not _alt_sse(request):
        message = "callgate mock: streamGenerateContent is served with ?alt=sse only"
        return Reply(400, error_body(400, message))
    return None


def _alt_sse(request: Request) -> bool:
    """``?alt=sse`` (the query the SDKs send, read without parsing it), else as Starlette
    reads it: the last ``alt`` value counts."""
    query = request.scope["query_string"]
    return query == b"alt=sse" or request.query_params.get("alt") == "sse"


def request_body(request: Request, body: dict[str, Any]) -> dict[str, Any]:
    """The body as the engine reads it: the path's model and stream flag added."""
    target = _target(request)
    model, stream = target if target is not None else ("", False)
    return {**body, "model": model, "stream": stream}


# -- the request view -------------------------------------------------------------------------


def _response(value: Any) -> tuple[Any, bool]:
    """A ``functionResponse.response`` as (output, is_error): the value under its one key
    ``output``/``result`` (``error``: an error result), else the whole object."""
    if isinstance(value, dict) and len(value) == 1:
        ((key, inner),) = value.items()
        if key in ("output", "result", "error"):
            return inner, key == "error"
    return value, False


def _part(part: Any, camel: str, snake: str) -> Any:
    if not isinstance(part, dict):
        return None
    return part.get(camel, part.get(snake))


def view(body: Mapping[str, Any]) -> RequestView:
    contents = [c for c in list_of(body.get("contents")) if isinstance(c, dict)]
    groups: list[list[str]] = []
    results = []
    last = contents[-1] if contents else {}
    for content in contents:
        if content.get("role", "user") != "user":
            continue
        parts = [_part(part, "text", "text") for part in list_of(content.get("parts"))]
        groups.append([text for text in parts if isinstance(text, str)])
    found = [text for group in groups for text in group]
    for position, part in enumerate(list_of(last.get("parts"))):
        answer = _part(part, "functionResponse", "function_response")
        if isinstance(answer, dict):
            output, is_error = _response(answer.get("response"))
            call_id = answer.get("id")
            # An answer without id (the SDK never sends one) is named by its function.
            key = call_id if isinstance(call_id, str) else f"(no id) #{position}"
            results.append(FunctionResult(key, answer.get("name"), output, is_error))
    system = _part(body, "systemInstruction", "system_instruction")
    instructions = None
    if isinstance(system, dict):
        texts = [_part(p, "text", "text") for p in list_of(system.get("parts"))]
        instructions = "".join(t for t in texts if isinstance(t, str))
    return RequestView(
        model=body.get("model"),
        stream=body.get("stream") is True,
        tools=_declared(body.get("tools")),
        results=tuple(results),
        previous_id=None,
        user_text="\n".join(found),
        instructions=instructions,
        last_user_text=last_text(groups),
    )


def _declared(tools: Any) -> tuple[str, ...]:
    """The declared function names, then the hosted tools (``googleSearch``, ...) the
    request turns on, so ``expect.tools`` can name either."""
    names, hosted = [], []
    for tool in list_of(tools):
        declarations = _part(tool, "functionDeclarations", "function_declarations")
        for decl in list_of(declarations):
            if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                names.append(decl["name"])
        # An empty object ({"googleSearch": {}}) turns a hosted tool on; a Tool holding
        # only its function declarations turns none on.
        if isinstance(tool, dict) and len(tool) > (declarations is not None):
            hosted += [k for k, spelled in hosted_tools.SPELLINGS if not spelled.isdisjoint(tool)]
    return tuple(names + [key for key in hosted_tools.HOSTED if key in hosted])


# -- rendering --------------------------------------------------------------------------------


def _parts(
    turn: ScriptTurn, ids: Ids, model: str
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The room renderer's scripted parts for ``turn``, and its (call key, name) pairs."""
    respond, split = turn.respond, turn.splitter()
    parts: list[dict[str, Any]] = []
    reasoning = respond.get("reasoning") or {}
    signature = reasoning.get("signature") or None
    signed = signature is None and signs(respond, model)
    if reasoning.get("summary"):
        summary = reasoning["summary"]
        parts.append({"text": summary, "deltas": split(summary) or [summary], "thought": True})
    parts += hosted.code_parts(respond)
    text = hosted.answer_text(respond)  # cited text: its markers removed
    if text:
        parts.append({"text": text, "deltas": split(text) or [text]})
    calls: list[tuple[str, str]] = []
    for n, spec in enumerate(respond.get("calls", [])):
        call: dict[str, Any] = {"name": spec["name"]}
        if "id" in spec:
            call["id"] = spec["id"]
        call["args"] = json.loads(arguments(spec, as_object=True) or "{}")
        part: dict[str, Any] = {"function_call": call}
        if signature is not None and n == 0:
            part["signature"] = signature
        parts.append(part)
        # The mock's key for an id-less call (never sent: the wire has no id there).
        calls.append((spec.get("id") or ids("gc-", "call", n, size=16), spec["name"]))
    if not parts or (signature is not None and not calls):
        parts.append({"text": "", **({"signature": signature} if signature else {})})
    if signed:
        place_signature(parts, ids("", "thought_signature", size=32))
    return parts, calls


def render(
    turn: ScriptTurn, ids: Ids, stream: bool, model: str, stored: bool, baseline: str
) -> RenderedTurn:
    respond = turn.respond
    response_id = ids("", "response", size=22)
    parts, calls = _parts(turn, ids, model)
    finish = respond.get("status", "STOP")
    counts = usage(respond.get("usage"), "promptTokenCount", "candidatesTokenCount")
    counts["totalTokenCount"] = counts["promptTokenCount"] + counts["candidatesTokenCount"]
    tool_tokens = hosted.tool_tokens(respond)
    if tool_tokens is not None:  # hosted tool results are metered as prompt tokens
        counts["toolUsePromptTokenCount"] = tool_tokens
        counts["totalTokenCount"] += tool_tokens
    texts = [n for n, p in enumerate(parts) if "text" in p and not p.get("thought")]
    found = hosted.metadata(respond, texts[0] if texts else 0)
    token = None
    if finish == "CONTINUATION":
        token = base64.b64encode(ids("", "continuation", size=24).encode()).decode()
    common: dict[str, Any] = {
        "parts": parts,
        "finish_reason": finish,
        "usage": counts,
        "response_id": response_id,
        "model_version": model,
    }
    if not stream:
        extra = found if token is None else {**found, "continuationToken": token}
        body = _render.render_body(**common, candidate_extra=extra)
        return RenderedTurn(response_id, tuple(calls), [], body)
    events = _render.render_events(
        **common,
        chunk_plan=respond.get("chunk_plan"),
        continuation_token=token,
        candidate_extra=found,
        first_extra=hosted.first_chunk(respond),
    )
    return RenderedTurn(response_id, tuple(calls), events, None)


def _dummy_ids(prefix: str, kind: str, n: int = 0, size: int = 24) -> str:
    return prefix + "0" * size


def _object_text(raw: Any) -> bool:
    try:
        return isinstance(raw, str) and isinstance(loads_strict(raw), dict)
    except CallgateError:
        return False


def check_respond(respond: Mapping[str, Any]) -> str | None:
    """Why a ``respond`` block the engine accepted cannot be sent on this wire, or ``None``:
    the turn is rendered once, both ways, when the script is loaded (never a 500 later)."""
    problem = hosted.check(respond)
    if problem is not None:
        return problem
    for n, spec in enumerate(respond.get("calls") or ()):
        if isinstance(spec, Mapping) and "raw" in spec and not _object_text(spec["raw"]):
            return (
                f"calls[{n}].raw: generateContent sends a call's args whole, as a JSON "
                "object; raw text that is no JSON object cannot be carried (script a "
                "MAX_TOKENS status or a stream fault instead)"
            )
    if type(respond.get("thought_signatures", False)) is not bool:
        return "thought_signatures is true or false (default: by the model name)"
    plan = respond.get("chunk_plan")
    if plan is not None and (
        not isinstance(plan, list) or not all(type(n) is int and n >= 0 for n in plan)
    ):
        return "chunk_plan is a list of part counts (ints >= 0), one per chunk"
    turn = ScriptTurn(_PROTOCOL, {}, respond, "")
    try:
        for stream in (True, False):
            render(turn, _dummy_ids, stream, "gemini-3", True, "2026-11")
    except UsageError as exc:
        return f"cannot be rendered as generateContent: {exc.message}"
    return None


# -- stream faults ----------------------------------------------------------------------------

_CODES = {"INVALID_ARGUMENT": 400, "RESOURCE_EXHAUSTED": 429, "UNAVAILABLE": 503}


def error_event(sent: Sequence[Event], fault: Mapping[str, Any]) -> Event:
    """An ``{"error": ...}`` chunk: ``code`` (digits) is the HTTP code, ``error_type`` the
    Google status (default from the code, else 500 ``INTERNAL``)."""
    given = str(fault.get("code", ""))
    status = fault.get("error_type")
    code = int(given) if given.isdigit() else _CODES.get(status, 500) if status else 500
    if status is None:
        status = error_body(code, "")["error"]["status"]
    return _render.render_error_event(code=code, message=fault.get("message"), status=status)


def truncate(events: list[Event], fault: Mapping[str, Any]) -> list[Event]:
    """A generateContent call is never cut inside its arguments (each arrives whole), so a
    truncation ends the stream before the chunk holding call ``fault["call"]``: EOF with no
    ``finishReason``, which the SDK ends silently and a strict reader refuses."""
    wanted, seen = fault.get("call", 0), 0
    for position, event in enumerate(events):
        for part in event["candidates"][0].get("content", {}).get("parts", ()):
            if "functionCall" in part:
                if seen == wanted:
                    return events[:position]
                seen += 1
    return events[:-1]


def fault_roles(event: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Each call arrives whole in its chunk's parts; the chunk with the ``finishReason`` is
    the terminal (it may carry the turn's last parts too)."""
    candidate = event["candidates"][0]
    parts = candidate.get("content", {}).get("parts", ())
    roles: list[tuple[str, Any]] = [
        ("whole", (id(event), n)) for n, part in enumerate(parts) if "functionCall" in part
    ]
    if "finishReason" in candidate:
        roles.append(("terminal", None))
    return tuple(roles)


def _no_state_routes(host: Host) -> list[Route]:
    return []


PROVIDER = Provider(
    protocol=_PROTOCOL,
    prefixes=tuple(f"/gemini/{v}/models/" for v in _VERSIONS),
    endpoints=(
        Endpoint("/gemini/{version:str}/models/{target:str}", auth, (), refuse=refuse_path),
    ),
    state_routes=_no_state_routes,
    view=view,
    render=render,
    encode=_render.encode_sse,
    event_name=lambda event: "",  # the SDK reads data lines only
    error_body=error_body,
    http_error=http_error,
    error_event=error_event,
    truncate=truncate,
    statuses=STATUSES,
    object_arguments=True,
    fault_roles=fault_roles,
    checks=(SWITCHES[_PROTOCOL], *CHECKS),
    check=check,
    validate=validator(_PROTOCOL),
    validate_switch=SWITCHES[_PROTOCOL],
    request_body=request_body,
    respond_keys=frozenset({"chunk_plan", "hosted", "thought_signatures"}),
    check_respond=check_respond,
    family=aux.FAMILY,
    aux_routes=lambda host: aux.routes(host, auth, error_body),
    base_urls=(
        BaseUrl(
            "Gemini generateContent",
            "google-genai http_options base_url, api_version 'v1' or 'v1beta'",
            "/gemini",
            "/v1beta/models/{model}:generateContent",
        ),
        BaseUrl(
            "Gemini generateContent",
            "clients wanting the version segment (Vercel AI SDK createGoogleGenerativeAI "
            "baseURL; also .../gemini/v1)",
            "/gemini/v1beta",
            "/models/{model}:generateContent",
        ),
    ),
)
