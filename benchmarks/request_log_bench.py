"""Get-by-id over HTTP with the request log on and off (issue 33: the log costs at most 3 %).

Starts two ``docbase serve`` per backend side by side (plain HTTP on loopback behind a
trusted proxy header, as ``versus.py`` runs it; one worker each): **on** with the
default ``request_log_keep`` (every request recorded and written in batches to the
``_requestlog`` collections), **off** with ``--request-log-keep 0``. Each stores the same
``--documents`` notes; the full-access key then reads one by a random id (``GET
/rest/notes/ID``, ``wrk`` with 32 connections, ``benchmarks/get_random.lua``) for
``--duration`` seconds, in interleaved rounds: every round measures both servers, in
an alternating order, so load from other work on the machine falls on both alike.
Each round's ratio ``on / off`` is taken, and the median over the rounds is printed
with its spread, of two figures: the throughput, and the CPU time the server's
processes (the ``docbase serve`` process tree, read from ``/proc``: the worker with its
SQLite threads and the log's writer) spent per request served, which a machine loaded
by other work disturbs much less than the throughput. At least 0.97 (throughput) or at
most 1.03 (CPU per request) holds the issue's target.

    .venv/bin/python benchmarks/request_log_bench.py [--backends sqlite,postgresql]
        [--documents 10000] [--rounds 9] [--duration 4]
    .venv/bin/python benchmarks/request_log_bench.py --in-process [--backends sqlite]

``--in-process`` times the log's own work instead, in CPU time per request, the lowest
of 7 runs: :meth:`RequestLog.record` (the request path) and
:meth:`RequestLog.flush` of 2,000 recorded requests (a second of a busy worker: the
minute tallies and the entries listed) into a SQLite file or PostgreSQL.

Needs ``wrk`` (``apt-get install wrk``) and, for PostgreSQL, a server on 127.0.0.1
(trust auth): databases ``request_log_bench_on``/``_off`` are made afresh and dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from served_process import http as request_json
from served_process import serve_process

from docbase.adapters.sql import from_url
from docbase.core.requestlog import RequestLog

HERE = Path(__file__).resolve().parent
KEY = "request-log-bench-admin-key-0123456789"
MODES = {"on": [], "off": ["--request-log-keep", "0"]}


def http(method: str, url: str, body: object = None) -> Any:
    """One request with the full-access key."""
    return request_json(method, url, body, {"x-apikey": KEY})


@contextlib.contextmanager
def served(backend: str, mode: str, port: int) -> Iterator[tuple[str, int]]:
    """A ``docbase serve`` on ``backend`` with the log ``mode``; its base URL and pid."""
    directory = Path(tempfile.mkdtemp(prefix=f"request-log-bench-{mode}-"))
    fresh = f"request_log_bench_{mode}" if backend == "postgresql" else None
    with serve_process(directory, port, KEY, fresh_database=fresh,
                       options=MODES[mode]) as served_at:
        yield served_at


def seed(base: str, documents: int, ids_file: Path) -> None:
    """Store the notes; write their ids to ``ids_file``."""
    ids = []
    for start in range(0, documents, 1000):
        batch = [{"title": f"note {i}", "n": i, "tags": [f"t{i % 7}", f"t{i % 11}"]}
                 for i in range(start, min(documents, start + 1000))]
        ids += [d["_id"] for d in http("POST", f"{base}/rest/notes", batch)]
    ids_file.write_text("\n".join(ids) + "\n")


def tree_cpu(pid: int) -> float:
    """CPU seconds spent so far by process ``pid`` and all its descendants."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        process = int(stat.parent.name)
        parents[process] = int(fields[1])
        times[process] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    tree, grown = {pid}, True
    while grown:
        more = {p for p, parent in parents.items() if parent in tree} - tree
        grown = bool(more)
        tree |= more
    return sum(times.get(p, 0.0) for p in tree)


def wrk(base: str, ids_file: Path, duration: int, pid: int) -> tuple[float, float]:
    """Requests per second of random gets by id, and the server's CPU ms per request."""
    before = tree_cpu(pid)
    command = ["wrk", "-t", "1", "-c", "32", "-d", f"{duration}s", "--timeout", "10s",
               "-H", "X-Forwarded-Proto: https", "-H", f"x-apikey: {KEY}",
               "-s", str(HERE / "get_random.lua"), base]
    environment = {**os.environ, "BENCH_IDS": str(ids_file), "BENCH_PREFIX": "/rest/notes/"}
    out = subprocess.run(command, check=False, env=environment, capture_output=True,
                         text=True).stdout
    if re.search(r"Non-2xx or 3xx responses: (\d+)", out):
        raise SystemExit(f"some gets failed:\n{out}")
    found = re.search(r"Requests/sec:\s+([\d.]+)", out)
    served = re.search(r"(\d+) requests in", out)
    time.sleep(1.5)  # the log's last batch of the round is written, and counted
    cpu = (tree_cpu(pid) - before) * 1000 / max(int(served.group(1)) if served else 1, 1)
    return (float(found.group(1)) if found else 0.0), cpu


def measure(backend: str, args: argparse.Namespace, port: int) -> None:
    directory = Path(tempfile.mkdtemp(prefix="request-log-ids-"))
    with served(backend, "on", port) as on, served(backend, "off", port + 1) as off:
        servers = {"on": on, "off": off}
        for mode, (base, _) in servers.items():
            seed(base, args.documents, directory / f"{mode}.ids")
        rates: dict[str, list[float]] = {mode: [] for mode in servers}
        cpus: dict[str, list[float]] = {mode: [] for mode in servers}
        for number in range(args.rounds):
            for mode in (("on", "off") if number % 2 == 0 else ("off", "on")):
                base, pid = servers[mode]
                rate, cpu = wrk(base, directory / f"{mode}.ids", args.duration, pid)
                rates[mode].append(rate)
                cpus[mode].append(cpu)
    print(f"{backend}: {args.documents:,} notes, {args.rounds} rounds of {args.duration} s "
          f"per server, wrk 32 connections, 1 worker each")
    for mode in servers:
        print(f"  log {mode:3} get-by-id {statistics.median(rates[mode]):7.0f} req/s, "
              f"{statistics.median(cpus[mode]):.3f} ms CPU a request "
              f"(rounds: {', '.join(f'{r:.0f}' for r in rates[mode])})")
    ratios = [a / b for a, b in zip(rates["on"], rates["off"], strict=True)]
    ratio = statistics.median(ratios)
    print(f"  throughput on/off {ratio:.3f}x [{min(ratios):.3f}-{max(ratios):.3f}] "
          f"({'holds' if ratio >= 0.97 else 'FAILS'} the 3 % target)")
    costs = [a / b for a, b in zip(cpus["on"], cpus["off"], strict=True)]
    cost = statistics.median(costs)
    print(f"  CPU a request on/off {cost:.3f}x [{min(costs):.3f}-{max(costs):.3f}] "
          f"({'holds' if cost <= 1.03 else 'FAILS'} the 3 % target)")


FLUSH_DATABASE = "request_log_bench_flush"
PSQL = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-c"]


def flush_url(backend: str) -> str:
    """A fresh database of ``backend`` for the in-process timing."""
    if backend == "postgresql":
        subprocess.run([*PSQL, f"drop database if exists {FLUSH_DATABASE}", "-c",
                        f"create database {FLUSH_DATABASE}"], check=True, capture_output=True)
        return f"postgresql://postgres@127.0.0.1/{FLUSH_DATABASE}"
    return f"sqlite:///{tempfile.mkdtemp(prefix='request-log-flush-')}/bench.db"


async def in_process(backend: str, url: str) -> None:
    """CPU microseconds a request costs the log: recording it, and its share of a flush."""
    store, _ = from_url(url)
    async with store:
        log = RequestLog(store, keep=100_000)
        recording, flushing = [], []
        for _ in range(7):
            started = time.process_time()
            for _ in range(2000):
                log.record("GET", "/rest/{collection}/{document_id}", 200, 0.0011, "key")
            recording.append((time.process_time() - started) / 2000 * 1e6)
            started = time.process_time()
            await log.flush()
            flushing.append((time.process_time() - started) / 2000 * 1e6)
    print(f"{backend}: record {min(recording):.2f} us, flush {min(flushing):.2f} us "
          f"(median {statistics.median(flushing):.2f}) of CPU per request, at 2,000 a write")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--duration", type=int, default=4)
    parser.add_argument("--in-process", action="store_true")
    args = parser.parse_args()
    if args.in_process:
        for backend in args.backends.split(","):
            asyncio.run(in_process(backend, flush_url(backend)))
        subprocess.run([*PSQL, f"drop database if exists {FLUSH_DATABASE}"], check=False,
                       capture_output=True)
        return
    for number, backend in enumerate(args.backends.split(",")):
        measure(backend, args, 8470 + 2 * number)


if __name__ == "__main__":
    main()
