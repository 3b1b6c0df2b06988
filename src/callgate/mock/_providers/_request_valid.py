"""Request validation of a create request against its SDK-generated spec: the shared part.

Each protocol's spec is generated from both SDK generations' request param types
(``request_specs/<protocol>.<generation>.json``, by ``tests/mock/request_spec_gen.py``)
and walked by :mod:`._reqspec`. Each provider folder's ``_request_spec.py`` adds what the
types do not state (its :class:`~._reqspec.Overlay`: documented ranges and conditional
requirements, each with its source), renders a :class:`~._reqspec.Problem` as the
provider's own 400, and names the switch that turns the check off
(``{"validation": {"<name>": false}}``). The facts behind the shapes are in
``docs/request-validation.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, Final

from ._kit import Reply
from ._reqspec import KIND_OF, Overlay, Problem, RequestSpec, compile_spec

__all__ = ["media_first", "quoted", "show_number", "validator", "value_kind"]

_GENERATIONS: Final = ("2026-11", "2026-07-21")


def validator(
    protocol: str,
    overlay: Overlay,
    render: Callable[[Problem], dict[str, Any]],
    *,
    proto: bool = False,
) -> Callable[[dict[str, Any]], Reply | None]:
    """The check of ``protocol``'s create body (its spec compiled on first use: ~0.1-0.5
    s): ``render(problem)`` as a 400, or ``None``. ``proto``: a protobuf API (Gemini)."""
    compiled: list[RequestSpec] = []

    def validate(body: dict[str, Any]) -> Reply | None:
        if not compiled:
            folder = resources.files(__package__) / "request_specs"
            specs = [
                json.loads((folder / f"{protocol}.{gen}.json").read_text(encoding="utf-8"))
                for gen in _GENERATIONS
            ]
            compiled.append(compile_spec(specs, overlay, proto=proto))
        problem = compiled[0].problem(body)
        return None if problem is None else Reply(400, render(problem))

    return validate


def media_first(
    media: Callable[[dict[str, Any]], Reply | None],
    validate: Callable[[dict[str, Any]], Reply | None],
) -> Callable[[dict[str, Any]], Reply | None]:
    """``validate`` preceded by the provider's check of media in tool results (its
    ``_media.py``), under the same switch: a media part the API refuses gets the API's
    own answer, not the spec walk's enum or type error."""

    def both(body: dict[str, Any]) -> Reply | None:
        return media(body) or validate(body)

    return both


def quoted(values: Sequence[Any], last: str, *, oxford: bool = True) -> str:
    """``'a', 'b', and 'c'`` (OpenAI) or ``'a', 'b' or 'c'`` (pydantic, ``oxford=False``)."""
    shown = [f"'{v}'" for v in values]
    if len(shown) <= 2:
        return f" {last} ".join(shown)
    return ", ".join(shown[:-1]) + ("," if oxford else "") + f" {last} " + shown[-1]


def value_kind(value: Any) -> str:
    return KIND_OF.get(type(value), "any")


def show_number(value: float | int | None) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
