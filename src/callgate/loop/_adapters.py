"""One table entry per protocol: how the loop talks to a room.

Each adapter knows its endpoint and headers, how tools are declared, the first request
body, the event that names the provider turn (R5), how a turn is classified (calls, final
answer or refusal), the continuation builder to call and whether a lost turn can be fetched
again from the provider instead of re-asking the model. What every room's Turn projects
alike (``turn.id``, ``turn.text``) the loop reads from the turn itself. Only the rooms'
public packages are used (looked up through :func:`callgate._protocols.room`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._errors import UsageError
from .._protocols import room
from .._results import ToolResult
from ._model import ToolSpec, TurnRefused

__all__ = ["ADAPTERS", "Adapter", "Config", "adapter_for"]


@dataclasses.dataclass(frozen=True, slots=True)
class Config:
    """What a continuation needs besides the turn, its results and the previous body."""

    model: str
    tools: tuple[dict[str, Any], ...]
    store: bool
    instructions: str | None
    max_tokens: int
    threads: bool = False  # Anthropic: continue in a server-held message thread


def _text_request(request: Any, key: str, wrap: Callable[[str], Any]) -> dict[str, Any]:
    if isinstance(request, str):
        return {key: wrap(request)}
    if isinstance(request, Mapping):
        return dict(request)
    raise UsageError("request must be the user's text or a mapping of request fields")


def _stream(body: dict[str, Any]) -> dict[str, Any]:
    body["stream"] = True
    return body


# -- OpenAI Responses ---------------------------------------------------------------------


def _oai_tools(specs: Sequence[ToolSpec]) -> tuple[dict[str, Any], ...]:
    return tuple(
        {
            "type": "function",
            "name": s.name,
            "description": s.description,
            "parameters": dict(s.parameters),
        }
        for s in specs
    )


def _oai_first(request: Any, cfg: Config) -> dict[str, Any]:
    body = _text_request(request, "input", lambda t: [{"role": "user", "content": t}])
    body.update(model=cfg.model, tools=list(cfg.tools), store=cfg.store)
    if cfg.instructions is not None:
        body["instructions"] = cfg.instructions
    return _stream(body)


def _oai_next(turn: Any, results: Sequence[ToolResult], prev: dict[str, Any], cfg: Config) -> Any:
    oai = room("openai_responses")
    common: dict[str, Any] = {
        "model": cfg.model,
        "instructions": cfg.instructions,
        "tools": cfg.tools,
        "request_controls": {"stream": True},
    }
    if cfg.store:
        return oai.build_stateful_continuation(
            turn, results, previous_response_was_stored=True, store=True, **common
        )
    prior = prev.get("input")
    if isinstance(prior, str):
        prior = [{"role": "user", "content": prior}]
    return oai.build_stateless_continuation(
        turn, results, prior_input_items=prior or [], store=False, **common
    )


def _oai_id(event: Mapping[str, Any]) -> Any:
    if event.get("type") == "response.created":
        response = event.get("response")
        return response.get("id") if isinstance(response, Mapping) else None
    return None


def _oai_kind(turn: Any) -> str:
    return "calls" if turn.calls else "final"


# -- Anthropic Messages -------------------------------------------------------------------


def _am_tools(specs: Sequence[ToolSpec]) -> tuple[dict[str, Any], ...]:
    return tuple(
        {"name": s.name, "description": s.description, "input_schema": dict(s.parameters)}
        for s in specs
    )


def _am_first(request: Any, cfg: Config) -> dict[str, Any]:
    body = _text_request(request, "messages", lambda t: [{"role": "user", "content": t}])
    body.update(model=cfg.model, tools=list(cfg.tools), max_tokens=cfg.max_tokens)
    if cfg.instructions is not None:
        body["system"] = cfg.instructions
    if cfg.threads:
        body["thread"] = {"type": "create"}
    return _stream(body)


def _am_next(turn: Any, results: Sequence[ToolResult], prev: dict[str, Any], cfg: Config) -> Any:
    if isinstance(prev.get("thread"), Mapping):  # the thread holds the conversation
        body = room("anthropic_messages").build_thread_continuation(
            turn,
            results,
            previous_message_id=turn.message_id,
            thread_request=prev,
            model=cfg.model,
            max_tokens=cfg.max_tokens,
            tools=cfg.tools,
            system=cfg.instructions,
        )
        return _stream(body)
    body = room("anthropic_messages").build_continuation(
        turn,
        results,
        history=prev["messages"],
        model=cfg.model,
        max_tokens=cfg.max_tokens,
        tools=cfg.tools,
        system=cfg.instructions,
    )
    return _stream(body)


def _am_id(event: Mapping[str, Any]) -> Any:
    if event.get("type") == "message_start":
        message = event.get("message")
        return message.get("id") if isinstance(message, Mapping) else None
    return None


_AM_FINAL = frozenset({"end_turn", "stop_sequence"})


def _am_kind(turn: Any) -> str:
    if turn.calls:
        return "calls"
    if turn.recovery_calls or turn.stop_reason not in _AM_FINAL:
        held = len(turn.recovery_calls)
        raise TurnRefused(
            f"stop_reason {turn.stop_reason!r} released no call ({held} held for recovery)",
            provider="anthropic_messages",
            turn=turn,
        )
    return "final"


# -- Gemini Interactions ------------------------------------------------------------------


def _gi_first(request: Any, cfg: Config) -> dict[str, Any]:
    body = _text_request(
        request,
        "input",
        lambda t: [{"type": "user_input", "content": [{"type": "text", "text": t}]}],
    )
    body.update(model=cfg.model, tools=list(cfg.tools), store=cfg.store)
    if cfg.instructions is not None:
        body["system_instruction"] = cfg.instructions
    return _stream(body)


def _gi_next(turn: Any, results: Sequence[ToolResult], prev: dict[str, Any], cfg: Config) -> Any:
    gi = room("gemini_interactions")
    common: dict[str, Any] = {
        "model": cfg.model,
        "tools": list(cfg.tools),
        "system_instruction": cfg.instructions,
    }
    if cfg.store:
        body = gi.build_stateful_continuation(
            turn, results, previous_interaction_was_stored=True, store=True, **common
        )
    else:
        body = gi.build_stateless_continuation(
            turn,
            results,
            snapshot_source=turn.origin,
            prior_input_steps=prev.get("input"),
            **common,
        )
    return _stream(body)


def _gi_id(event: Mapping[str, Any]) -> Any:
    if event.get("event_type") == "interaction.created":
        interaction = event.get("interaction")
        return interaction.get("id") if isinstance(interaction, Mapping) else None
    return None


def _kind_unless(turn: Any, refused: str | None, protocol: str) -> str:
    """``calls`` when the turn released some, else ``final``, or refused for ``refused``."""
    if turn.calls:
        return "calls"
    if refused is not None:
        raise TurnRefused(f"{refused} released no call", provider=protocol, turn=turn)
    return "final"


def _gi_kind(turn: Any) -> str:
    refused = None if turn.status == "completed" else f"interaction status {turn.status!r}"
    return _kind_unless(turn, refused, "gemini_interactions")


# -- Gemini generateContent ---------------------------------------------------------------
# Stateless: every request replays the whole ``contents``. The model is in the path, so
# the loop records ``{"model": "models/<m>", "body": {...}}`` (what the room's builder
# returns) and posts the body to ``/v1/<model>:streamGenerateContent?alt=sse``.


def _ggc_tools(specs: Sequence[ToolSpec]) -> tuple[dict[str, Any], ...]:
    declarations = [
        {"name": s.name, "description": s.description, "parametersJsonSchema": dict(s.parameters)}
        for s in specs
    ]
    return ({"functionDeclarations": declarations},) if declarations else ()


def _ggc_first(request: Any, cfg: Config) -> dict[str, Any]:
    body = _text_request(request, "contents", lambda t: [{"role": "user", "parts": [{"text": t}]}])
    body["tools"] = list(cfg.tools)
    if cfg.instructions is not None:
        body["systemInstruction"] = {"parts": [{"text": cfg.instructions}]}
    return {"model": f"models/{cfg.model}", "body": body}


def _ggc_next(turn: Any, results: Sequence[ToolResult], prev: dict[str, Any], cfg: Config) -> Any:
    body = prev["body"]
    built: dict[str, Any] = room("gemini_generate_content").build_continuation(
        turn,
        results,
        history=body["contents"],
        model=cfg.model,
        tools=list(cfg.tools),
        tool_config=body.get("toolConfig"),
        system_instruction=cfg.instructions,
        generation_config=body.get("generationConfig"),
        safety_settings=body.get("safetySettings"),
    )
    return built


def _ggc_route(request: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return f"/v1/{request['model']}:streamGenerateContent?alt=sse", request["body"]


def _ggc_id(event: Mapping[str, Any]) -> Any:
    return event.get("responseId")


def _ggc_kind(turn: Any) -> str:
    refused = None if turn.finish_reason == "STOP" else f"finishReason {turn.finish_reason!r}"
    return _kind_unless(turn, refused, "gemini_generate_content")


@dataclasses.dataclass(frozen=True, slots=True)
class Adapter:
    """How the loop drives one protocol room (see the module docstring)."""

    protocol: str
    path: str  # POST path under base_url
    headers: Callable[[str], dict[str, str]]  # api key -> auth headers
    declare: Callable[[Sequence[ToolSpec]], tuple[dict[str, Any], ...]]
    first: Callable[[Any, Config], dict[str, Any]]
    next: Callable[[Any, Sequence[ToolResult], dict[str, Any], Config], dict[str, Any]]
    event_turn_id: Callable[[Mapping[str, Any]], Any]
    kind: Callable[[Any], str]
    # The GET path (under base_url) that gives a stored turn back, by its id, and whether
    # its answer is an SSE stream ("sse") or a JSON body ("body"); None: not retrievable.
    retrieve: Callable[[str], tuple[str, str]] | None
    # Where a recorded request goes and what is posted (default: ``path``, the request),
    # for a protocol whose path names the model (generateContent).
    route: Callable[[dict[str, Any]], tuple[str, dict[str, Any]]] | None = None

    def room(self) -> Any:
        return room(self.protocol)

    def parser(self, request: dict[str, Any]) -> Any:
        """A parser for the answer to ``request`` (OpenAI's is told the request, so a
        hosted call no declared tool can produce is refused)."""
        if self.protocol == "openai_responses":
            return self.room().Parser(request=request)
        return self.room().Parser()

    def post(self, request: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The path and the JSON body that carry a recorded request."""
        return self.route(request) if self.route is not None else (self.path, request)


ADAPTERS: dict[str, Adapter] = {
    "openai_responses": Adapter(
        protocol="openai_responses",
        path="/responses",
        headers=lambda key: {"authorization": f"Bearer {key}"},
        declare=_oai_tools,
        first=_oai_first,
        next=_oai_next,
        event_turn_id=_oai_id,
        kind=_oai_kind,
        retrieve=lambda turn_id: (f"/responses/{turn_id}", "body"),
    ),
    "anthropic_messages": Adapter(
        protocol="anthropic_messages",
        path="/v1/messages",
        headers=lambda key: {"x-api-key": key, "anthropic-version": "2023-06-01"},
        declare=_am_tools,
        first=_am_first,
        next=_am_next,
        event_turn_id=_am_id,
        kind=_am_kind,
        retrieve=None,
    ),
    "gemini_interactions": Adapter(
        protocol="gemini_interactions",
        path="/v1/interactions",
        headers=lambda key: {"x-goog-api-key": key},
        declare=_oai_tools,  # the same function declaration shape
        first=_gi_first,
        next=_gi_next,
        event_turn_id=_gi_id,
        kind=_gi_kind,
        retrieve=lambda turn_id: (f"/v1/interactions/{turn_id}?stream=true", "sse"),
    ),
    "gemini_generate_content": Adapter(
        protocol="gemini_generate_content",
        path="/v1/models",
        headers=lambda key: {"x-goog-api-key": key},
        declare=_ggc_tools,
        first=_ggc_first,
        next=_ggc_next,
        event_turn_id=_ggc_id,
        kind=_ggc_kind,
        retrieve=None,
        route=_ggc_route,
    ),
}


def adapter_for(protocol: str) -> Adapter:
    room(protocol)  # UsageError for a name that is not a room
    try:
        return ADAPTERS[protocol]
    except KeyError:
        raise UsageError(f"the host loop does not drive {protocol!r} yet") from None
