"""What every protocol adapter is made of: the :class:`Adapter` record, the loop's
:class:`Config`, and the helpers more than one adapter uses."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..._errors import UsageError
from ..._protocols import room
from ..._results import ToolResult
from .._model import ToolSpec, TurnRefused

__all__ = ["Adapter", "Config", "function_declarations", "kind_unless", "stream", "text_request"]


@dataclasses.dataclass(frozen=True, slots=True)
class Config:
    """What a continuation needs besides the turn, its results and the previous body."""

    model: str
    tools: tuple[dict[str, Any], ...]
    store: bool
    instructions: str | None
    max_tokens: int
    threads: bool = False  # Anthropic: continue in a server-held message thread


def text_request(request: Any, key: str, wrap: Callable[[str], Any]) -> dict[str, Any]:
    if isinstance(request, str):
        return {key: wrap(request)}
    if isinstance(request, Mapping):
        return dict(request)
    raise UsageError("request must be the user's text or a mapping of request fields")


def stream(body: dict[str, Any]) -> dict[str, Any]:
    body["stream"] = True
    return body


def function_declarations(specs: Sequence[ToolSpec]) -> tuple[dict[str, Any], ...]:
    """Tools as OpenAI Responses and Gemini Interactions declare functions (one shape)."""
    return tuple(
        {
            "type": "function",
            "name": s.name,
            "description": s.description,
            "parameters": dict(s.parameters),
        }
        for s in specs
    )


def kind_unless(turn: Any, refused: str | None, protocol: str) -> str:
    """``calls`` when the turn released some, else ``final``, or refused for ``refused``."""
    if turn.calls:
        return "calls"
    if refused is not None:
        raise TurnRefused(f"{refused} released no call", provider=protocol, turn=turn)
    return "final"


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
    # Whether the room's Parser takes the request (to refuse what no declared tool makes).
    parser_takes_request: bool = False

    def room(self) -> Any:
        return room(self.protocol)

    def parser(self, request: dict[str, Any]) -> Any:
        """A parser for the answer to ``request`` (OpenAI's is told the request, so a
        hosted call no declared tool can produce is refused)."""
        if self.parser_takes_request:
            return self.room().Parser(request=request)
        return self.room().Parser()

    def post(self, request: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The path and the JSON body that carry a recorded request."""
        return self.route(request) if self.route is not None else (self.path, request)
