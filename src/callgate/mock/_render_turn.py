"""Render a scripted turn on its protocol's wire, with deterministic ids.

The provider's shapes live in its ``_providers`` module (which drives the room's
``_render`` seam); this module gives it the turn's ids and model, cuts the stream at
``disconnect_after`` and frames the events, keeping the ids it generated so later turns
can refer to "the previous response" or to a call by its function name.
"""

from __future__ import annotations

import hashlib

from ..contracts import CURRENT_REVISION
from ._providers import provider
from ._providers._kit import Rendered
from ._script import ScriptTurn

__all__ = ["render"]


class _Ids:
    def __init__(self, seed: int, conversation: str, turn: int | str) -> None:
        self._base = f"{seed}/{conversation}/{turn}"

    def __call__(self, prefix: str, kind: str, n: int = 0, size: int = 24) -> str:
        digest = hashlib.sha256(f"{self._base}/{kind}/{n}".encode()).hexdigest()
        return prefix + digest[:size]


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
