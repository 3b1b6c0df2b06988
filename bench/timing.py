"""The one timing rule the parse and projection benchmarks share: the best of N runs."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best(run: Callable[[], Any], repeat: int) -> float:
    """The shortest of ``repeat`` timed calls of ``run``, in seconds (the least disturbed)."""
    shortest = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        shortest = min(shortest, time.perf_counter() - start)
    return shortest
