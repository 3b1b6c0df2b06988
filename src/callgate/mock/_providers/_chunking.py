"""Chunk plans: how a scripted text or argument string is cut into stream deltas.

``"whole"`` (one piece), ``"char"`` (one character each), ``{"fixed": n}`` (``n``
characters each) or ``{"random": {"seed": s, "max": n}}`` (pieces of 1..n characters,
the same for the same seed and text).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

__all__ = ["MAX_SEED", "check_chunking", "make_splitter"]

MAX_SEED = 2**64  # |seed| below this: ids and chunk plans format it as text


def make_splitter(plan: Any) -> Callable[[str], list[str]]:
    """Chunk plan -> splitter. Assumes ``plan`` was validated."""
    if plan == "whole":
        return lambda text: [text] if text else []
    if plan == "char":
        return list
    if "fixed" in plan:
        size = plan["fixed"]
        return lambda text: [text[i : i + size] for i in range(0, len(text), size)]
    seed, most = plan["random"]["seed"], plan["random"]["max"]

    def random_pieces(text: str) -> list[str]:
        rng = random.Random(f"{seed}:{text}")  # noqa: S311 - a chunk plan, not crypto
        pieces, pos = [], 0
        while pos < len(text):
            step = rng.randint(1, most)
            pieces.append(text[pos : pos + step])
            pos += step
        return pieces

    return random_pieces


def check_chunking(plan: Any) -> str | None:
    """Why ``plan`` is no chunk plan, or ``None``."""
    if plan in ("whole", "char"):
        return None
    if isinstance(plan, dict) and set(plan) == {"fixed"}:
        size = plan["fixed"]
        if type(size) is int and size > 0:
            return None
    if isinstance(plan, dict) and set(plan) == {"random"} and isinstance(plan["random"], dict):
        spec = plan["random"]
        ints = set(spec) == {"seed", "max"} and all(type(v) is int for v in spec.values())
        if ints and spec["max"] > 0 and abs(spec["seed"]) < MAX_SEED:
            return None
    return "chunking is 'whole', 'char', {'fixed': n} or {'random': {'seed', 'max'}}"
