"""Run a command (by default the README's test command) and report what it cost.

The suite keeps three figures that ``pytest`` does not print (docs/testing.md): the
wall time of the README's command, the peak memory of the whole run (every worker, the
Mongo wire servers, the served ``docbase`` processes and Chromium together) and the
time from the summary line to the process's exit. This script starts the command in a
new process group, samples its processes (descendants and group) twice a second from
``/proc``, passes the command's output through, then prints::

    wall 652.1 s; summary line at 640.3 s, exit 0.4 s after it
    peak memory of the process tree: 1,254 MiB resident (sum of RSS), 1,101 MiB PSS
    CPU: the machine was busy 1,210 of 1,304 core-seconds (93%); sampled by kind ...

RSS counts a page shared by two processes twice; PSS divides it between them, so the
sum of PSS is the tree's real share of the machine. Linux only (``/proc``).

    python3 scripts/suite_footprint.py                     # README's command, in .
    CI=true python3 scripts/suite_footprint.py -- .venv/bin/python -m pytest tests/test_ids.py
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = re.compile(rb"^(=+ )?[^=]*\b(passed|failed|errors?|no tests ran)\b.* in [0-9.]+s")


def readme_command() -> str:
    """The bash block after ``<!-- test-command -->`` in README.md (as ``.ci/run`` reads it)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("<!-- test-command -->")
    block: list[str] = []
    for line in lines[start + 1:]:
        if line.startswith("```bash"):
            continue
        if line.startswith("```"):
            break
        block.append(line)
    return "\n".join(block)


def tree(root: int) -> list[int]:
    """``root`` and its descendants, and any process of its process group.

    Both, because a test may start a server in a session of its own (to kill its whole
    group), and a process whose parent died leaves the tree but not the group.
    """
    parents: dict[int, int] = {}
    members = {root}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2:].split()  # state, ppid, pgrp, ...
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        if int(fields[2]) == root:
            members.add(pid)
    changed = True
    while changed:
        grown = {pid for pid, parent in parents.items() if parent in members}
        changed = not grown <= members
        members |= grown
    return sorted(members)


KINDS = (("pytest", ("pytest", "sys.stdin.readline")), ("chromium", ("chrom",)),
         ("playwright driver", ("playwright",)), ("mongo wire server", ("start.mjs",)),
         ("docbase serve", ("docbase", "spawn_main")))
"""Kinds of processes, by words of their command line (the first kind that matches)."""


def kind_of(pid: int) -> str:
    """The kind of process ``pid`` (``KINDS``), else ``other``."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
            "utf-8", "replace")
    except OSError:
        return "other"
    return next((kind for kind, words in KINDS if any(w in command for w in words)), "other")


TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_of(pid: int) -> tuple[int, float] | None:
    """``(start time in ticks, CPU seconds so far)`` of ``pid``, ``None`` if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2:].split()  # fields 3.. of proc(5)
    return int(fields[19]), (int(fields[11]) + int(fields[12])) / TICKS


def machine_cpu() -> float:
    """CPU seconds the whole machine has been busy since it booted (``/proc/stat``).

    Busy is every state but idle and I/O wait. The difference over the run, less what
    the tree used, is the rest of the machine: the PostgreSQL server, whose backends
    come and go too fast to sample, and whatever else runs.
    """
    fields = Path("/proc/stat").read_text(encoding="ascii").split("\n", 1)[0].split()[1:]
    ticks = [int(value) for value in fields]
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / TICKS


def memory_kib(pid: int) -> tuple[int, int]:
    """``(rss, pss)`` of ``pid`` in KiB, zeros if it is gone."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text(encoding="ascii")
    except OSError:
        return 0, 0
    values = dict(re.findall(r"^(Rss|Pss):\s+(\d+) kB", text, re.MULTILINE))
    return int(values.get("Rss", 0)), int(values.get("Pss", 0))


class Sampler(threading.Thread):
    """Samples the memory of the command's processes until told to stop, keeping peaks."""

    def __init__(self, group: int, every: float) -> None:
        super().__init__(daemon=True)
        self.group, self.every = group, every
        self.peak_rss = self.peak_pss = self.peak_processes = 0
        self.peak_by_kind: dict[str, int] = {}  # PSS KiB, each kind's own peak
        self.at_peak: dict[str, int] = {}  # PSS KiB by kind in the sample of the peak
        self.timeline: list[tuple[float, dict[str, int]]] = []  # each sample, by kind
        self.cpu: dict[tuple[int, int], tuple[str, float]] = {}  # (pid, start): kind, s
        self.started = time.monotonic()
        self.stopped = threading.Event()

    def run(self) -> None:
        """Sample until :attr:`stopped` is set."""
        while not self.stopped.wait(self.every):
            pids = tree(self.group)
            sizes = [memory_kib(pid) for pid in pids]
            by_kind: dict[str, int] = {}
            for pid, (_, pss) in zip(pids, sizes, strict=True):
                kind = kind_of(pid)
                by_kind[kind] = by_kind.get(kind, 0) + pss
                used = cpu_of(pid)
                if used is not None:  # the last value seen: its CPU until then
                    self.cpu[(pid, used[0])] = (kind, used[1])
            for kind, pss in by_kind.items():
                self.peak_by_kind[kind] = max(self.peak_by_kind.get(kind, 0), pss)
            self.timeline.append((time.monotonic() - self.started, by_kind))
            self.peak_rss = max(self.peak_rss, sum(rss for rss, _ in sizes))
            if sum(pss for _, pss in sizes) > self.peak_pss:
                self.peak_pss, self.at_peak = sum(pss for _, pss in sizes), by_kind
            self.peak_processes = max(self.peak_processes, len(pids))


def main() -> int:
    """Run the command, pass its output through, print the figures; its exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=0.5, help="seconds between samples")
    parser.add_argument("--timeline", type=Path,
                        help="write each sample's PSS by kind (MiB) to this CSV file")
    parser.add_argument("command", nargs="*", help="the command (default: README's)")
    args = parser.parse_args()
    command = " ".join(args.command) if args.command else readme_command()
    print(f"+ {command}", flush=True)
    started, machine_before = time.monotonic(), machine_cpu()
    process = subprocess.Popen(["bash", "-c", command], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    sampler = Sampler(process.pid, args.every)
    sampler.start()
    summary_at: float | None = None
    assert process.stdout is not None
    try:
        for line in process.stdout:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
            if summary_at is None and SUMMARY.match(line.strip()):
                summary_at = time.monotonic() - started
        status = process.wait()
    except KeyboardInterrupt:
        os.killpg(process.pid, signal.SIGTERM)
        status = process.wait()
    wall = time.monotonic() - started
    sampler.stopped.set()
    sampler.join()
    after = "no summary line seen" if summary_at is None else (
        f"summary line at {summary_at:.1f} s, exit {wall - summary_at:.1f} s after it")
    print(f"\nwall {wall:.1f} s; {after}; exit status {status}")
    print(f"peak memory of the process tree: {sampler.peak_rss / 1024:,.0f} MiB resident "
          f"(sum of RSS), {sampler.peak_pss / 1024:,.0f} MiB PSS; "
          f"at most {sampler.peak_processes} processes")
    kinds = sorted(sampler.peak_by_kind.items(), key=lambda item: -item[1])
    print("each kind's own peak (PSS): " + ", ".join(
        f"{kind} {kib / 1024:,.0f} MiB" for kind, kib in kinds))
    print("at the peak (PSS): " + ", ".join(
        f"{kind} {kib / 1024:,.0f} MiB"
        for kind, kib in sorted(sampler.at_peak.items(), key=lambda item: -item[1])))
    print_cpu(sampler.cpu, machine_cpu() - machine_before, wall)
    if args.timeline:
        write_timeline(args.timeline, sampler.timeline)
    return status


def print_cpu(cpu: dict[tuple[int, int], tuple[str, float]], machine: float,
              wall: float) -> None:
    """CPU seconds by kind of process, as sampled, and the rest of the machine's."""
    seconds: dict[str, float] = {}
    started: dict[str, int] = {}
    for kind, used in cpu.values():
        seconds[kind] = seconds.get(kind, 0.0) + used
        started[kind] = started.get(kind, 0) + 1
    cores = os.cpu_count() or 1
    print(f"CPU: the machine was busy {machine:,.0f} of {wall * cores:,.0f} core-seconds "
          f"({machine / (wall * cores):.0%}); sampled by kind (a process's last half "
          "second is missed): " + ", ".join(
              f"{kind} {used:,.1f} s ({started[kind]} processes)"
              for kind, used in sorted(seconds.items(), key=lambda item: -item[1]))
          + f"; the rest (the PostgreSQL server, short processes, others) "
          f"{machine - sum(seconds.values()):,.1f} s")


def write_timeline(path: Path, timeline: list[tuple[float, dict[str, int]]]) -> None:
    """One CSV row a sample: seconds since start, then each kind's PSS in MiB."""
    kinds = sorted({kind for _, by_kind in timeline for kind in by_kind})
    rows = [",".join(["seconds", *kinds, "total"])]
    for at, by_kind in timeline:
        values = [by_kind.get(kind, 0) / 1024 for kind in kinds]
        rows.append(",".join([f"{at:.1f}", *(f"{v:.0f}" for v in values),
                              f"{sum(values):.0f}"]))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
