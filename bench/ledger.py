"""Ledger throughput: calls per second through record -> claim -> commit.

    PYTHONPATH=src python bench/ledger.py [--calls 200] [--pg-calls 400]
    PYTHONPATH=src python bench/ledger.py --compare OTHER/src [--rounds 5] [--dir /dev/shm]

Phases, all in one run so the figures are comparable as ratios:

1. the disk's fsync rate (4 KiB page rewrite + fdatasync in a preallocated file, as a
   WAL sees it), measured next to each SQLite phase in the same directory;
2. the ledger on SQLite (``synchronous=FULL``, WAL), one process: each call is the full
   path the loop takes (request recorded, sent, identified; turn + effect recorded;
   claimed; run; committed). Once with one call per turn, once with 8 calls per turn.
   The fsyncs per call are counted with ``strace -c`` when strace is installed;
3. DBOS (if ``.venv-bench`` holds ``dbos``; never a runtime dependency): a workflow with
   one step per call on a SQLite system database, in DBOS's default journal mode and on a
   file switched to WAL first;
4. PostgreSQL (``CALLGATE_TEST_POSTGRES_URL``), 1 and 8 worker processes, each recording
   its calls and claiming any ready effect (``SKIP LOCKED``); duplicate executions are
   counted from what the tools saw.

``--compare OTHER/src`` instead runs only the SQLite phases, in child processes over this
tree's ``src`` (or ``--this``) and over OTHER's, interleaved round by round (the order
flips each round), and prints the median ratio (this tree / OTHER) of calls per second and
of CPU seconds per call. ``--dir /dev/shm`` puts the files on tmpfs, where an fsync costs
next to nothing, so the rate shows the ledger's own work rather than the disk's.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from callgate.ledger import CallInput, EffectClass, Ledger, Tool, TurnInput, open_ledger

ROOT = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get("CALLGATE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
DBOS_PY = ROOT / ".venv-bench" / "bin" / "python"

DBOS_SCRIPT = """
import sys, time
from dbos import DBOS
path, n = sys.argv[1], int(sys.argv[2])
DBOS(config={"name": "ledgerbench", "system_database_url": f"sqlite:///{path}"})
@DBOS.step()
def call(i: int) -> dict:
    return {"ok": i}
@DBOS.workflow()
def one_call(i: int) -> dict:
    return call(i)
DBOS.launch()
one_call(-1)
t = time.perf_counter()
for i in range(n):
    one_call(i)
print("RATE", n / (time.perf_counter() - t))
DBOS.destroy()
"""


def fsync_rate(directory: Path, seconds: float = 1.5) -> float:
    """Synced 4 KiB page writes per second into a preallocated file, as a WAL sees them
    (an append that grows the file also syncs its size, and is slower)."""
    path = directory / "fsync.probe"
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        os.write(fd, b"\0" * (1 << 20))
        os.fsync(fd)
        page = b"x" * 4096
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            os.pwrite(fd, page, (count % 256) * 4096)
            os.fdatasync(fd)
            count += 1
        return count / (time.perf_counter() - start)
    finally:
        os.close(fd)
        path.unlink()


def _tool(seen: list[str] | None = None) -> Tool:
    def run(args: Any, ctx: Any) -> Any:
        if seen is not None:
            seen.append(ctx.effect_id)
        return {"ok": args["i"]}

    return Tool("work", run, effect=EffectClass.AT_MOST_ONCE)


# How a call gets from the model's turn to a committed result:
#   steps: every state as its own commit (record request, sent, identified, turn +
#          effects, claim, commit);
#   lean:  request recorded as sent, turn + effects + claims in one commit, commit per call
#          (what `record -> claim -> commit` costs once a request exists).
PATHS = ("steps", "lean")


def one_turn(ledger: Ledger, run_id: str, turn: int, batch: int, path: str) -> list[str]:
    """One model turn with ``batch`` calls taken to committed results."""
    turn_id = f"{run_id}-t{turn}"
    calls = [CallInput(f"c{i}", "work", {"i": i}) for i in range(batch)]
    record = TurnInput("bench", turn_id, f"d{turn}", {}, calls)
    if path == "steps":
        req = ledger.record_request(run_id, provider="bench", request_digest=f"r{turn}")
        ledger.mark_sent(req.request_id)
        ledger.identify(req.request_id, turn_id)
        effects = ledger.record_turn(req.request_id, record)
        claims = [ledger.claim(e.effect_id, worker_id="w") for e in effects]
    else:
        req = ledger.record_request(run_id, provider="bench", request_digest="r", sent=True)
        effects = ledger.record_turn(req.request_id, record, claim_as="w")
        claims = [ledger.held_claim(e) for e in effects]
    for claim in claims:
        if claim is None:
            raise SystemExit("lost a claim in a one-process run")
        ledger.settle(claim, {"ok": 1})
    return [e.effect_id for e in effects]


def sqlite_phase(db: Path, calls: int, batch: int, path: str) -> tuple[float, float]:
    """(calls per second, CPU seconds per call) of one SQLite phase."""
    with open_ledger(f"sqlite:///{db}", tools=[_tool()]) as ledger:
        start, cpu = time.perf_counter(), time.process_time()
        for turn in range(calls // batch):
            one_turn(ledger, "bench", turn, batch, path)
        done = calls // batch * batch
        return done / (time.perf_counter() - start), (time.process_time() - cpu) / done


def compare(this_src: Path, other_src: Path, work: Path, calls: int, rounds: int) -> None:
    """``this_src`` against ``other_src`` in the same interleaved rounds (see the docstring)."""
    trees = {"new": this_src, "old": other_src}
    for kind in PATHS:
        for batch in (1, 8):
            got: dict[str, list[tuple[float, float]]] = {"new": [], "old": []}
            for n in range(rounds):
                for name in ("new", "old") if n % 2 == 0 else ("old", "new"):
                    db = work / f"c{name}{kind}{batch}{n}.db"
                    argv = [sys.executable, __file__, "--phase", "sqlite", "--calls", str(calls)]
                    argv += ["--batch", str(batch), "--path-kind", kind, "--path", str(db)]
                    env = {**os.environ, "PYTHONPATH": str(trees[name])}
                    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=env)
                    rate, cpu = out.stdout.split("RATE")[1].split()
                    got[name].append((float(rate), float(cpu)))
            ratios = [new[0] / old[0] for new, old in zip(got["new"], got["old"], strict=True)]
            cpus = [new[1] / old[1] for new, old in zip(got["new"], got["old"], strict=True)]
            old_rate = statistics.median(r for r, _ in got["old"])
            new_rate = statistics.median(r for r, _ in got["new"])
            print(
                f"{kind}, {batch} call(s)/turn: old {old_rate:,.1f} calls/s, new "
                f"{new_rate:,.1f}; new/old rate median {statistics.median(ratios):.3f} "
                f"(min {min(ratios):.3f}, max {max(ratios):.3f}); CPU/call new/old median "
                f"{statistics.median(cpus):.3f}",
                flush=True,
            )


def count_fsyncs(argv: list[str], calls: int) -> float | None:
    """fsync + fdatasync calls per ledger call of a child running ``argv`` (None: no strace)."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    with tempfile.NamedTemporaryFile(suffix=".strace") as out:
        subprocess.run(
            [strace, "-f", "-qq", "-c", "-e", "trace=fsync,fdatasync", "-o", out.name, *argv],
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )
        text = Path(out.name).read_text()
    total = sum(
        int(m.group(1))
        for m in re.finditer(
            r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+).*"
            r"(?:fsync|fdatasync)\s*$",
            text,
            re.M,
        )
    )
    return total / calls


def dbos_phase(directory: Path, calls: int, wal: bool) -> tuple[float, float | None] | None:
    if not DBOS_PY.exists():
        return None
    script = directory / "dbos_bench.py"
    script.write_text(DBOS_SCRIPT)
    results = []
    for attempt in ("rate", "fsyncs"):
        db = directory / f"dbos-{wal}-{attempt}.sqlite"
        if wal:
            import sqlite3

            conn = sqlite3.connect(db)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.close()
        argv = [str(DBOS_PY), str(script), str(db), str(calls)]
        if attempt == "rate":
            out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
            results.append(float(out.split("RATE")[1].split()[0]))
        else:
            results.append(count_fsyncs(argv, calls + 1) or 0.0)
    return results[0], results[1]


def _pg_worker(url: str, per_worker: int, worker: int, start: Any, out: Any) -> None:
    seen: list[str] = []
    ledger = open_ledger(url, tools=[_tool(seen)])
    tool = ledger.tool("work")
    start.wait()
    for turn in range(per_worker):
        req = ledger.record_request(f"run-{worker}", provider="b", request_digest="r", sent=True)
        calls = [CallInput("c", "work", {"i": turn})]
        ledger.record_turn(req.request_id, TurnInput("b", f"w{worker}t{turn}", "d", {}, calls))
        claim = ledger.claim_next(worker_id=f"w{worker}")
        if claim is not None and tool is not None:
            ledger.run_claim(claim, tool)
    while (claim := ledger.claim_next(worker_id=f"w{worker}")) is not None and tool:
        ledger.run_claim(claim, tool)
    ledger.close()
    out.put(seen)


def pg_phase(calls: int, workers: int) -> tuple[float, int, int] | None:
    try:
        import psycopg

        psycopg.connect(PG_URL, connect_timeout=3).close()
    except Exception as exc:
        print(f"PostgreSQL unavailable ({exc}); skipped", file=sys.stderr)
        return None
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = f"{PG_URL}{'&' if '?' in PG_URL else '?'}options=-csearch_path%3D{schema}"
    try:
        open_ledger(url).close()
        ctx = multiprocessing.get_context("fork")
        start, out = ctx.Event(), ctx.Queue()
        per = calls // workers
        procs = [
            ctx.Process(target=_pg_worker, args=(url, per, w, start, out)) for w in range(workers)
        ]
        for proc in procs:
            proc.start()
        time.sleep(0.5)  # let every worker connect before the clock starts
        began = time.perf_counter()
        start.set()
        seen = [eid for _ in procs for eid in out.get(timeout=600)]
        elapsed = time.perf_counter() - began
        for proc in procs:
            proc.join()
        return per * workers / elapsed, len(seen) - len(set(seen)), per * workers - len(set(seen))
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--dbos-calls", type=int, default=100)
    parser.add_argument("--pg-calls", type=int, default=400)
    parser.add_argument("--phase", choices=["sqlite"], help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--path-kind", default="steps", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--compare", type=Path, help="another tree's src/ to compare against")
    parser.add_argument("--this", type=Path, default=ROOT / "src", help="the tree to time")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dir", type=Path, help="where the database files go")
    args = parser.parse_args()
    if args.phase == "sqlite":  # the child that strace counts (and --compare times)
        rate, cpu = sqlite_phase(Path(args.path), args.calls, args.batch, args.path_kind)
        print("RATE", rate, cpu)
        return
    work = Path(tempfile.mkdtemp(prefix="ledger-bench-", dir=args.dir))
    if args.compare is not None:
        try:
            compare(args.this.resolve(), args.compare.resolve(), work, args.calls, args.rounds)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    try:
        for kind in PATHS:
            for batch in (1, 8):
                ceiling = fsync_rate(work)  # measured next to each phase: the disk drifts
                rate, _ = sqlite_phase(work / f"l{kind}{batch}.db", args.calls, batch, kind)
                argv = [
                    sys.executable,
                    __file__,
                    "--phase",
                    "sqlite",
                    "--calls",
                    str(args.calls),
                    "--batch",
                    str(batch),
                    "--path-kind",
                    kind,
                    "--path",
                    str(work / f"s{kind}{batch}.db"),
                ]
                per_call = count_fsyncs(argv, args.calls)
                bound = f"{ceiling / per_call:,.1f}" if per_call else "n/a"
                shown = f"{per_call:.2f}" if per_call is not None else "n/a"
                print(
                    f"ledger sqlite, {kind}, {batch} call(s)/turn: {rate:,.1f} calls/s; "
                    f"fsyncs/call {shown}; disk {ceiling:,.0f} fsync/s -> ceiling {bound} calls/s",
                    flush=True,
                )
        for wal in (False, True):
            dbos = dbos_phase(work, args.dbos_calls, wal)
            label = "WAL file" if wal else "default journal"
            if dbos is None:
                print("dbos: not installed in .venv-bench; skipped")
                break
            print(
                f"dbos sqlite ({label}): {dbos[0]:,.1f} workflows/s; fsyncs/workflow {dbos[1]:.2f}"
            )
        for workers in (1, 8):
            pg = pg_phase(args.pg_calls, workers)
            if pg is not None:
                print(
                    f"ledger postgres, {workers} worker(s): {pg[0]:,.1f} calls/s; duplicate "
                    f"executions {pg[1]}; never executed {pg[2]}"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
