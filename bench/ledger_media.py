"""Ledger storage for media tool results (issue 30): bytes on disk, new layout vs the old.

    PYTHONPATH=src python bench/ledger_media.py [--turns 10] [--shot-kib 1024]

Two SQLite ledgers per case, in one run, so the figures are ratios:

1. results: one effect settled by three attempts (two fenced into ``late_results``), each
   returning the same 5 MiB PNG. New: ``MediaPart`` parts, bytes once in ``ledger_blobs``.
   Old: what a text-only ledger could store, the image as a base64 ``str`` output.
2. request bodies: a stateless computer-use run of ``--turns`` requests; each turn adds
   a new ``--shot-kib`` screenshot (base64, random bytes) to the replayed history. New:
   strings of 64 KiB or more in a body go to ``ledger_blobs`` once. Old: the same ledger
   with that threshold set past any string (every body stored whole, as before).

Sizes are the database file after a WAL checkpoint; they do not depend on machine load.
The time per settle of case 1 is printed too (it does).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from callgate import MediaPart, TextPart
from callgate.ledger import (
    CallInput,
    EffectClass,
    FencedError,
    Ledger,
    Tool,
    TurnInput,
    _bodies,
    open_ledger,
)

MiB = 1024 * 1024


def _size(db: Path) -> int:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return os.path.getsize(db)


def _effect(ledger: Ledger) -> str:
    req = ledger.record_request("run", provider="t", request_digest="d")
    ledger.mark_sent(req.request_id)
    ledger.identify(req.request_id, "resp-1")
    turn = TurnInput("t", "resp-1", "g", {}, [CallInput("c1", "shot", {})])
    (effect,) = ledger.record_turn(req.request_id, turn)
    return effect.effect_id


def results(folder: Path, output: Any) -> tuple[int, float]:
    db = folder / f"results-{len(list(folder.iterdir()))}.db"
    tool = Tool("shot", lambda a, c: output, effect=EffectClass.IDEMPOTENT_REMOTE)
    with open_ledger(f"sqlite:///{db}", tools=[tool]) as ledger:
        effect_id = _effect(ledger)
        claims = []
        for _ in range(3):
            claim = ledger.claim(effect_id, worker_id=f"w{len(claims)}")
            assert claim is not None
            claims.append(claim)
            if len(claims) < 3:
                with ledger.transaction() as tx:
                    tx.run("UPDATE ledger_effects SET lease_until = 0")
                ledger.recover("r")
        start = time.perf_counter()
        for stale in claims[:2]:
            with contextlib.suppress(FencedError):
                ledger.settle(stale, output)
        ledger.settle(claims[2], output)
        elapsed = (time.perf_counter() - start) / 3
    return _size(db), elapsed


def bodies(folder: Path, shots: list[str], threshold: int) -> int:
    db = folder / f"bodies-{threshold}.db"
    _bodies.BLOB_CHARS = threshold  # type: ignore[misc]
    history: list[Any] = [{"role": "user", "content": "book the flight"}]
    with open_ledger(f"sqlite:///{db}") as ledger:
        for turn, shot in enumerate(shots):
            history = [*history, {"type": "image", "data": shot}, {"text": f"step {turn}"}]
            body = {"model": "m", "messages": history}
            req = ledger.record_request("run", provider="t", request_digest="d", body=body)
            ledger.mark_sent(req.request_id)
            ledger.identify(req.request_id, f"resp-{turn}")
            ledger.record_turn(req.request_id, TurnInput("t", f"resp-{turn}", "g", {}, []))
        assert ledger.requests("run")[-1].body == body
    return _size(db)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--shot-kib", type=int, default=1024)
    args = parser.parse_args()
    png = (bytes(range(256)) * (5 * MiB // 256 + 1))[: 5 * MiB]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        new, new_t = results(folder, (TextPart("chart"), MediaPart.image(png, "image/png")))
        old, old_t = results(folder, base64.b64encode(png).decode())
        print(f"results, 5 MiB image x 3 attempts: new {new / MiB:.2f} MiB, old {old / MiB:.2f}"
              f" MiB, new/old {new / old:.3f}; settle {new_t * 1000:.1f} ms vs {old_t * 1000:.1f}"
              " ms")  # fmt: skip
        shots = [
            base64.b64encode(os.urandom(args.shot_kib * 1024)).decode() for _ in range(args.turns)
        ]
        default = _bodies.BLOB_CHARS
        blobbed = bodies(folder, shots, default)
        whole = bodies(folder, shots, 1 << 62)
        print(f"request bodies, {args.turns} turns, a new {args.shot_kib} KiB screenshot added "
              f"per turn: new {blobbed / MiB:.2f} MiB, old {whole / MiB:.2f} MiB, "
              f"new/old {blobbed / whole:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
