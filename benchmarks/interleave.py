"""Contenders measured side by side: ``benchmarks/versus.py --interleave``.

On a shared machine a minute can be slow for reasons of its own, so a comparison made
one contender after the other compares minutes as much as servers. Here every contender
is started at once (each on its own port), and each round runs each workload against
every contender in turn, in an order rotated from round to round. The ratio of a
contender to the first one is taken within a round, and the median of those ratios over
the rounds is reported with their lowest and highest, so a figure comes with its spread.

Besides requests per second, each measurement records the CPU time the contender's
processes (the server and its workers) spent per request served: throughput on a
machine shared with other work moves with that work, the CPU a request costs much less.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from docbase.testing.loopback import free_port

LoadsOf = Callable[[Any, str], dict[str, dict[str, Any]]]


def run_interleaved(chosen: list[Any], args: argparse.Namespace, loads_of: LoadsOf,
                    wrk: Callable[..., dict[str, Any]]) -> None:
    """Start ``chosen``, run ``args.repeat`` interleaved rounds, print and append the rows."""
    workloads = args.workloads.split(",")
    loads: dict[str, dict[str, dict[str, Any]]] = {}
    rows: list[dict[str, Any]] = []
    try:
        for contender in chosen:
            if contender.name.startswith("docbase"):
                # a port no one uses: other benchmarks on this machine take fixed ones,
                # and wait_ready would take their server for ours
                contender.base = f"http://127.0.0.1:{free_port()}"
            contender.start()
            if contender.process is None or contender.process.poll() is not None:
                raise SystemExit(f"{contender.name} exited: is {contender.base} taken?")
            with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as ids:
                ids.write("\n".join(contender.ids) + "\n")
            loads[contender.name] = loads_of(contender, ids.name)
            print(f"started {contender.name} at {contender.base}", flush=True)
        for workload in workloads:  # warm-up: each contender once per workload
            for contender in chosen:
                wrk(duration=2, headers=contender.headers, **loads[contender.name][workload])
        for round_ in range(args.repeat):
            turn = round_ % len(chosen)
            for workload in workloads:
                for contender in chosen[turn:] + chosen[:turn]:
                    time.sleep(1)  # let the previous load's stragglers finish
                    cpu = cpu_seconds(contender.process.pid)
                    result = wrk(duration=args.duration, headers=contender.headers,
                                 **loads[contender.name][workload])
                    served = result["rps"] * args.duration
                    result["cpu_us"] = ((cpu_seconds(contender.process.pid) - cpu) * 1e6
                                        / served if served else float("nan"))
                    rows.append({"ts": time.strftime("%Y-%m-%dT%H:%M:%S"),
                                 "contender": contender.name, "workload": workload,
                                 "round": round_ + 1, **result})
                    print(f"round {round_ + 1} {contender.name:28} {workload:15} "
                          f"{result['rps']:>9.0f} req/s  {result['cpu_us']:>6.0f} CPU us/req  "
                          f"p99 {result['p99_ms']:>7.2f} ms  non2xx {result['non2xx']}",
                          flush=True)
    finally:
        for contender in chosen:
            contender.stop()
        for load in loads.values():
            ids_file = load.get("get_one", {}).get("env", {}).get("BENCH_IDS")
            if ids_file and os.path.exists(ids_file):
                os.unlink(ids_file)
    with open(args.out, "a") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    report(rows, [c.name for c in chosen], workloads)


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system) of process ``pid`` and of its child processes (workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat.parent.name == str(pid) or fields[1] == str(pid):  # fields[1]: parent pid
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def report(rows: list[dict[str, Any]], names: list[str], workloads: list[str]) -> None:
    """Print the median req/s and the median per-round ratio to ``names[0]`` [min-max]."""
    rounds = sorted({r["round"] for r in rows})
    for figure, unit in (("rps", "req/s"), ("cpu_us", "CPU us per request, workers")):
        _table(rows, names, workloads, rounds, figure, unit)


def _table(rows: list[dict[str, Any]], names: list[str], workloads: list[str],
           rounds: list[int], figure: str, unit: str) -> None:
    rate = {(r["contender"], r["workload"], r["round"]): r[figure] for r in rows}
    print(f"\nmedian {unit} over {len(rounds)} rounds (median of per-round ratios to "
          f"{names[0]} [min-max])")
    for workload in workloads:
        cells = []
        for name in names:
            values = [rate[(name, workload, n)] for n in rounds if (name, workload, n) in rate]
            cell = f"{name}: {statistics.median(values):.0f}" if values else f"{name}: -"
            ratios = [rate[(name, workload, n)] / rate[(names[0], workload, n)]
                      for n in rounds if (name, workload, n) in rate
                      and rate.get((names[0], workload, n))]
            if name != names[0] and ratios:
                cell += (f" ({statistics.median(ratios):.3f}x "
                         f"[{min(ratios):.3f}-{max(ratios):.3f}])")
            cells.append(cell)
        print(f"{workload:10} " + "   ".join(cells))
