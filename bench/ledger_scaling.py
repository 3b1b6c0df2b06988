"""PostgreSQL ledger scaling: calls per second with 1, 2, 4, 8 worker processes, and what
each call costs (statements, round trips, commits, WAL syncs, CPU of the worker and of its
backend, lock waits).

    PYTHONPATH=src python bench/ledger_scaling.py [--calls 120] [--repeat 3] [--path next]
    PYTHONPATH=src python bench/ledger_scaling.py --compare OTHER/src   # old vs new, same run

Every worker process runs the ledger's per-call path on its own run, as the plain loop
does for a one-call turn: the request recorded as sent, the turn and its effect recorded
(R1), the effect claimed (``--path next``: ``claim_next``, SKIP LOCKED, any worker may take
any ready effect; ``--path lean``: ``record_turn(claim_as=)``), the tool run and its result
settled. Server defaults (``synchronous_commit=on``): every write transaction waits for its
WAL fsync.

The bench makes a database of its own (dropped at the end) so that ``pg_stat_database``
counts only its transactions. ``pg_stat_wal`` is cluster-wide: other users of the server
add to its ``wal_sync``. A sampler polls ``pg_stat_activity`` every 10 ms for the workers'
backends and counts what they wait on (``Lock``, ``LWLock``, ``IO``/``WALSync``, ``Client``
= waiting for the worker) or whether they run. CPU is read from ``/proc`` for the workers
and their backends (same machine), and ``/proc/stat`` gives the machine's busy and idle
share over the same seconds. Worker counts run interleaved, ``--repeat`` rounds, and each
round's ratio (N workers / 1 worker) is taken within that round.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PG_URL = os.environ.get("CALLGATE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
TICK = os.sysconf("SC_CLK_TCK")


def _db_url(url: str, dbname: str) -> str:
    """``url`` (a postgresql:// URL) naming database ``dbname`` instead."""
    return urllib.parse.urlsplit(url)._replace(path=f"/{dbname}").geturl()


def _proc_cpu(pid: int) -> float:
    """utime + stime of a process, in seconds (0.0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def _machine() -> tuple[float, float]:
    """(busy, idle) CPU seconds of the whole machine since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / TICK, idle / TICK


def fsync_ms(seconds: float = 1.0) -> float:
    """Milliseconds per synced 4 KiB page rewrite in a preallocated file in the temporary
    directory (as a WAL flush sees the disk; the same device as the server's data here)."""
    fd, name = tempfile.mkstemp(prefix="fsync-probe-")
    try:
        os.write(fd, b"\0" * (1 << 20))
        os.fsync(fd)
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            os.pwrite(fd, b"x" * 4096, (count % 256) * 4096)
            os.fdatasync(fd)
            count += 1
        return (time.perf_counter() - start) * 1000 / count
    finally:
        os.close(fd)
        os.unlink(name)


def _counting(ledger: Any) -> dict[str, int]:
    """Count statements and transactions this process sends (psycopg cursor executes;
    ``store.transaction`` entries; ``store.read`` blocks run in autocommit)."""
    import psycopg

    counts = {"statements": 0, "transactions": 0}
    execute = psycopg.Cursor.execute

    def counted_execute(self: Any, *args: Any, **kwargs: Any) -> Any:
        counts["statements"] += 1
        return execute(self, *args, **kwargs)

    psycopg.Cursor.execute = counted_execute  # type: ignore[method-assign]
    store = ledger._store
    opened = store.transaction

    def counted() -> Any:
        counts["transactions"] += 1
        return opened()

    store.transaction = counted
    return counts


def _worker(
    url: str, schema: str, path: str, calls: int, worker: int, ready: Any, start: Any, out: Any
) -> None:
    from callgate.ledger import CallInput, EffectClass, Tool, TurnInput, open_ledger

    seen: list[str] = []

    def run(args: Any, ctx: Any) -> Any:
        seen.append(ctx.effect_id)
        return {"ok": args["i"]}

    ledger = open_ledger(
        url, schema=schema, tools=[Tool("work", run, effect=EffectClass.AT_MOST_ONCE)]
    )
    tool = ledger.tool("work")
    with ledger.reading() as tx:
        backend = int(tx.one("SELECT pg_backend_pid()")[0])
    counts = _counting(ledger)
    me = f"w{worker}"
    ready.put(backend)
    start.wait()
    cpu, backend_cpu = time.process_time(), _proc_cpu(backend)
    for turn in range(calls):
        req = ledger.record_request(f"run-{worker}", provider="b", request_digest="r", sent=True)
        record = TurnInput("b", f"w{worker}t{turn}", "d", {}, [CallInput("c", "work", {"i": turn})])
        if path == "lean":
            effects = ledger.record_turn(req.request_id, record, claim_as=me)
            for effect in effects:
                ledger.run_claim(ledger.held_claim(effect), tool)  # type: ignore[arg-type]
            continue
        ledger.record_turn(req.request_id, record)
        claim = ledger.claim_next(worker_id=me)
        if claim is not None and tool is not None:
            ledger.run_claim(claim, tool)
    while path == "next" and (claim := ledger.claim_next(worker_id=me)) is not None and tool:
        ledger.run_claim(claim, tool)
    cpu, backend_cpu = time.process_time() - cpu, _proc_cpu(backend) - backend_cpu
    ledger.close()
    out.put({"seen": seen, "cpu": cpu, "backend_cpu": backend_cpu, **counts})


class _Sampler(threading.Thread):
    """What the workers' backends are doing, every 10 ms (pg_stat_activity)."""

    def __init__(self, url: str, pids: list[int]) -> None:
        super().__init__(daemon=True)
        self.url, self.pids, self.stop = url, pids, threading.Event()
        self.seen: Counter[str] = Counter()

    def run(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self.stop.wait(0.01):
                rows = conn.execute(
                    "SELECT state, wait_event_type, wait_event FROM pg_stat_activity "
                    "WHERE pid = ANY(%s)",
                    (self.pids,),
                ).fetchall()
                for state, kind, event in rows:
                    if state == "idle in transaction" or (state == "idle" and kind == "Client"):
                        self.seen["client (waiting for the worker)"] += 1
                    elif kind is None:
                        self.seen["running (CPU)"] += 1
                    else:
                        self.seen[f"{kind}:{event}"] += 1


def _server(conn: Any, dbname: str) -> dict[str, float]:
    row = conn.execute(
        "SELECT xact_commit, xact_rollback, deadlocks FROM pg_stat_database WHERE datname = %s",
        (dbname,),
    ).fetchone()
    wal = conn.execute("SELECT wal_records, wal_write, wal_sync FROM pg_stat_wal").fetchone()
    return {
        "xact_commit": row[0],
        "xact_rollback": row[1],
        "wal_records": wal[0],
        "wal_write": wal[1],
        "wal_sync": wal[2],
    }


def cell(dbname: str, workers: int, calls: int, path: str) -> dict[str, Any]:
    """One measurement: ``workers`` processes, ``calls`` each, on a fresh schema."""
    import psycopg

    from callgate.ledger import open_ledger

    schema = f"s_{uuid.uuid4().hex[:10]}"
    admin_url = _db_url(PG_URL, dbname)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = admin_url
    open_ledger(url, schema=schema).close()
    ctx = multiprocessing.get_context("fork")
    ready, start, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(url, schema, path, calls, w, ready, start, out))
        for w in range(workers)
    ]
    for proc in procs:
        proc.start()
    backends = [ready.get(timeout=60) for _ in procs]
    with psycopg.connect(PG_URL, autocommit=True) as stats:  # another database: not counted
        sampler = _Sampler(PG_URL, backends)
        server0, machine0 = _server(stats, dbname), _machine()
        sampler.start()
        began = time.perf_counter()
        start.set()
        results = [out.get(timeout=900) for _ in procs]
        elapsed = time.perf_counter() - began
        machine1 = _machine()
        sampler.stop.set()
        sampler.join()
        for proc in procs:
            proc.join()
        time.sleep(0.6)  # statistics reach pg_stat_* within PGSTAT_MIN_INTERVAL (1 s)
        server1 = _server(stats, dbname)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
    seen = [eid for r in results for eid in r["seen"]]
    done = calls * workers
    busy, idle = machine1[0] - machine0[0], machine1[1] - machine0[1]
    worker_cpu = sum(r["cpu"] for r in results)
    backend_cpu = sum(r["backend_cpu"] for r in results)
    return {
        "workers": workers,
        "rate": done / elapsed,
        "elapsed": elapsed,
        "duplicates": len(seen) - len(set(seen)),
        "missing": done - len(set(seen)),
        "statements": sum(r["statements"] for r in results) / done,
        "transactions": sum(r["transactions"] for r in results) / done,
        "xact_commit": (server1["xact_commit"] - server0["xact_commit"]) / done,
        "wal_sync": (server1["wal_sync"] - server0["wal_sync"]) / done,
        "wal_records": (server1["wal_records"] - server0["wal_records"]) / done,
        "worker_ms": worker_cpu * 1000 / done,
        "backend_ms": backend_cpu * 1000 / done,
        "machine_busy": busy / (busy + idle),
        "ours": (worker_cpu + backend_cpu) / (busy + idle),
        "waits": dict(sampler.seen),
        "load": os.getloadavg()[0],
        "fsync_ms": fsync_ms(),
    }


def run_rounds(calls: int, repeat: int, counts: list[int], path: str) -> list[list[dict[str, Any]]]:
    import psycopg

    dbname = f"callgate_scale_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {dbname}")
    rounds = []
    try:
        for n in range(repeat):
            order = counts if n % 2 == 0 else counts[::-1]
            got = {w: cell(dbname, w, calls, path) for w in order}
            rounds.append([got[w] for w in counts])
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {dbname} WITH (FORCE)")
    return rounds


def report(rounds: list[list[dict[str, Any]]], label: str = "") -> None:
    print(f"{label}load average at the start of each round: "
          + ", ".join(f"{r[0]['load']:.1f}" for r in rounds))  # fmt: skip
    head = (
        "workers | calls/s (per round) | x 1 worker (per round) | stmts/call | tx/call | "
        "commits/call (server) | WAL syncs/call (cluster) | worker CPU ms/call | "
        "backend CPU ms/call | machine busy | ours of machine | dup/missing"
    )
    print("| " + head + " |")
    print("|---" * head.count("|") + "|---|")
    for i, first in enumerate(rounds[0]):
        cells = [r[i] for r in rounds]
        rates = [c["rate"] for c in cells]
        ratios = [r[i]["rate"] / r[0]["rate"] for r in rounds]

        def med(key: str, cells: list[dict[str, Any]] = cells) -> float:
            return statistics.median(c[key] for c in cells)

        print(
            f"| {first['workers']} | " + " / ".join(f"{v:.0f}" for v in rates)
            + " | " + " / ".join(f"{v:.2f}" for v in ratios)
            + f" | {med('statements'):.1f} | {med('transactions'):.1f} | {med('xact_commit'):.1f}"
            f" | {med('wal_sync'):.2f} | {med('worker_ms'):.2f} | {med('backend_ms'):.2f}"
            f" | {med('machine_busy'):.0%} | {med('ours'):.0%}"
            f" | {sum(c['duplicates'] for c in cells)}/{sum(c['missing'] for c in cells)} |"
        )  # fmt: skip
    _model(rounds)
    print("backend wait samples (all rounds; share of samples per worker count):")
    for i, first in enumerate(rounds[0]):
        total: Counter[str] = Counter()
        for r in rounds:
            total.update(r[i]["waits"])
        n = sum(total.values()) or 1
        top = ", ".join(f"{k} {v / n:.0%}" for k, v in total.most_common(6))
        print(f"  {first['workers']} worker(s): {top}")


def _model(rounds: list[list[dict[str, Any]]]) -> None:
    """Where one worker's call goes, and what more cores would give (medians)."""
    one = [r[0] for r in rounds]
    top = [r[-1] for r in rounds]

    def med(cells: list[dict[str, Any]], key: str) -> float:
        return statistics.median(c[key] for c in cells)

    cpu1 = med(one, "worker_ms") + med(one, "backend_ms")
    cpu_n = med(top, "worker_ms") + med(top, "backend_ms")
    wall1 = statistics.median(1000 / c["rate"] for c in one)
    commits, fsync = med(one, "transactions"), med(one, "fsync_ms")
    quiet1 = 1000 / (cpu1 + commits * fsync)
    print(
        f"model: 1 worker {wall1:.1f} ms/call = CPU {cpu1:.2f} (worker + backend) + "
        f"{wall1 - cpu1:.1f} waiting (WAL fsync, the CPU run queue); {commits:.0f} commits x "
        f"{fsync:.2f} ms/fsync (probe) = {commits * fsync:.1f} ms. Quiet machine, 1 worker: "
        f"1 / (CPU + commits x fsync) = {quiet1:.0f} calls/s. With {top[0]['workers']} "
        f"workers the CPU per call is {cpu_n:.2f} ms; all of P cores give at most P / CPU:"
    )
    for cores in (2, 4, 8, 16):
        ceiling = cores * 1000 / cpu_n
        n = top[0]["workers"]
        bound = min(n * quiet1, ceiling)
        print(
            f"  {cores} cores: CPU ceiling {ceiling:.0f} calls/s; {n} workers "
            f"<= {bound:.0f} calls/s = {bound / quiet1:.1f}x one worker"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=120, help="calls per worker")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", default="1,2,4,8")
    parser.add_argument("--path", choices=["next", "lean"], default="next")
    parser.add_argument("--compare", type=Path, help="another tree's src/: run both, same run")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    if args.compare is None:
        rounds = run_rounds(args.calls, args.repeat, counts, args.path)
        if args.json:
            print("JSON", json.dumps(rounds))
        else:
            report(rounds)
        return
    trees = {"this": ROOT / "src", "other": args.compare.resolve()}
    got: dict[str, list[list[dict[str, Any]]]] = {"this": [], "other": []}
    for n in range(args.repeat):
        for name in ("this", "other") if n % 2 == 0 else ("other", "this"):
            argv = [sys.executable, __file__, "--json", "--repeat", "1", "--calls", str(args.calls)]
            argv += ["--workers", args.workers, "--path", args.path]
            env = {**os.environ, "PYTHONPATH": str(trees[name])}
            done = subprocess.run(argv, check=True, capture_output=True, text=True, env=env)
            got[name].extend(json.loads(done.stdout.split("JSON", 1)[1]))
    report(got["other"], f"other tree ({args.compare}): ")
    report(got["this"], "this tree: ")


if __name__ == "__main__":
    main()
