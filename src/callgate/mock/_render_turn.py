"""Render a scripted turn on its protocol's wire, with deterministic ids.

The provider's shapes live in its ``_providers`` module (which drives the room's
``_render`` seam); this module gives it the turn's ids and model, cuts the stream at
``disconnect_after`` and frames the events, keeping the ids it generated so later turns
can refer to "the previous response" or to a call by its function name.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from .._errors import CallgateError
from .._json import loads_strict
from ..contracts import CURRENT_REVISION
from ._http import Rendered
from ._providers import provider
from ._script import ScriptTurn

__all__ = ["arguments", "render", "usage"]


class _Ids:
    def __init__(self, seed: int, conversation: str, turn: int | str) -> None:
        self._base = f"{seed}/{conversation}/{turn}"

    def __call__(self, prefix: str, kind: str, n: int = 0, size: int = 24) -> str:
        digest = hashlib.sha256(f"{self._base}/{kind}/{n}".encode()).hexdigest()
        return prefix + digest[:size]


def arguments(spec: Mapping[str, Any], *, as_object: bool = False) -> str:
    """A scripted call's arguments as the exact text to send. ``as_object``: the wire
    needs an object (a non-streamed Anthropic/Gemini call), so ``raw`` text that is no
    JSON object gives ``{}`` -- the script loader allows such text on streamed turns
    only, so this is a stored snapshot (GET, cancel) of a streamed turn."""
    if "raw" in spec:
        raw = str(spec["raw"])
        if as_object and raw:
            try:
                parsed = loads_strict(raw)
            except CallgateError:
                parsed = None
            return raw if isinstance(parsed, dict) else ""
        return raw
    return json.dumps(spec.get("arguments", {}), separators=(",", ":"), ensure_ascii=False)


def usage(given: Mapping[str, int] | None, inp: str, out: str) -> dict[str, int]:
    """A turn's scripted usage under the wire's two names (12 and 34 by default)."""
    counts = dict(given or {})
    return {inp: counts.get("input_tokens", 12), out: counts.get("output_tokens", 34)}


def render(
    turn: ScriptTurn,
    *,
    seed: int,
    conversation: str,
    turn_number: int,
    stream: bool,
    baseline: str = CURRENT_REVISION,
    model: str | None = None,
    stored: bool = True,
    options: tuple[str, ...] = (),
    serial: int | None = None,
) -> Rendered:
    """Render ``turn`` as a stream (``stream=True``) or a JSON body.

    ``model`` is echoed in the response (the request's model); without it the turn's
    expected model, else ``"callgate-mock-model"``. ``stored=False`` (the request said
    ``store: false``) renders a Gemini interaction without its id, as the API does;
    ``response_id`` stays the mock's own key for it. ``options`` are the request options
    the provider renders by (its ``render_options``; OpenAI's ``include``). ``serial``
    renders a use of an order-free fixture: its ids derive from the fixture and the use.
    """
    ids = _Ids(seed, conversation, turn_number if serial is None else f"{turn.location}#{serial}")
    echo = model if isinstance(model, str) and model else _model(turn)
    wire = provider(turn.protocol)
    if options and wire.render_with is not None:
        done = wire.render_with(turn, ids, stream, echo, stored, baseline, options)
    else:
        done = wire.render(turn, ids, stream, echo, stored, baseline)
    events = done.events
    if "disconnect_after" in turn.respond:
        events = events[: turn.respond["disconnect_after"]]
    encode = wire.encode
    frames = tuple(encode([event]) for event in events)
    return Rendered(
        response_id=done.response_id,
        calls=done.calls,
        events=tuple(events),
        body=done.body,
        sse=b"".join(frames),
        frames=frames,
    )


def _model(turn: ScriptTurn) -> str:
    model = turn.expect.get("model")
    return model if isinstance(model, str) else "callgate-mock-model"
