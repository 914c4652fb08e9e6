"""Where ``docbase serve --workers N`` keeps its memory: each process, at rest and after a load.

For every ``--venv`` given (a docbase install; several for before and after), one
``docbase serve`` on SQLite (or ``--storage memory``) is started with the contender of
``benchmarks/versus.py`` (same 10,000 documents, same workloads, plain HTTP behind a
trusted proxy). The servers are up at once and loaded in turns, so a busy minute of a
shared machine falls on all of them. Printed for each server and each process of it
(the supervisor, multiprocessing's resource tracker if there is one, each worker):
resident memory (RSS, what ``versus.py`` sums), proportional (PSS) and private (USS)
memory and the thread count, three times: just after start (no request served yet),
after the 10,000 documents were posted, and after every workload ran ``--duration``
seconds ``--repeat`` times. Each measurement also prints the server's CPU time (all its
processes) per request served, the figure to compare on a shared machine.

    python benchmarks/memory_bench.py --venv /tmp/prod-venv --venv /tmp/main-venv \
        --duration 4 --repeat 1
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import versus  # noqa: E402  (the contender, its documents and its workloads)


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as listed:
            found += [int(c) for c in listed.read().split()]
    return found


def role(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline") as cmdline:
        command = cmdline.read()
    if "resource_tracker" in command:
        return "resource tracker"
    if "spawn_main" in command:
        return "worker"
    return "supervisor" if "docbase.http.launch" in command else "process"


def figures(pid: int) -> dict[str, int]:
    """RSS, PSS and USS in KiB and the threads of one process."""
    with open(f"/proc/{pid}/status") as status:
        fields = dict(line.split(":", 1) for line in status)
    rollup: dict[str, int] = {}
    with open(f"/proc/{pid}/smaps_rollup") as smaps:
        for line in smaps:
            parts = line.split()
            if len(parts) == 3 and parts[1].isdigit():
                rollup[parts[0].rstrip(":")] = int(parts[1])
    return {"rss": int(fields["VmRSS"].split()[0]), "pss": rollup.get("Pss", 0),
            "uss": rollup.get("Private_Clean", 0) + rollup.get("Private_Dirty", 0),
            "threads": int(fields["Threads"])}


def tree(pid: int) -> list[int]:
    """``pid`` and all its descendants."""
    processes, todo = [], [pid]
    while todo:
        process = todo.pop(0)
        processes.append(process)
        todo += children(process)
    return processes


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of ``pid`` and its descendants (live ones)."""
    total = 0
    for process in tree(pid):
        with open(f"/proc/{process}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def table(name: str, when: str, pid: int) -> None:
    """Print one line per process of the server, and their sum."""
    processes = tree(pid)
    total = {"rss": 0, "pss": 0, "uss": 0, "threads": 0}
    print(f"\n{name}, {when}")
    print(f"  {'process':18} {'RSS MiB':>8} {'PSS MiB':>8} {'USS MiB':>8} {'threads':>8}")
    for process in processes:
        got = figures(process)
        total = {k: total[k] + got[k] for k in total}
        print(f"  {role(process):18} {got['rss'] / 1024:8.1f} {got['pss'] / 1024:8.1f} "
              f"{got['uss'] / 1024:8.1f} {got['threads']:8}")
    print(f"  {'sum':18} {total['rss'] / 1024:8.1f} {total['pss'] / 1024:8.1f} "
          f"{total['uss'] / 1024:8.1f} {total['threads']:8}", flush=True)


class Server(versus.Docbase):
    """The versus contender, with a look at its processes before the documents go in."""

    def start(self) -> None:
        data = tempfile.mkdtemp(prefix="memory-bench-")
        command = [str(self.venv / "bin" / "docbase"), "serve", "--data-dir", data,
                   "--port", str(self.port), "--proxy-headers", "--workers", str(self.workers)]
        if self.storage == "memory":
            command += ["--storage", "memory://"]
        env = {**os.environ, "DOCBASE_ADMIN_KEY": versus.KEY}
        env.pop("PYTHONPATH", None)
        with open(data + "/serve.log", "wb") as log:
            self.process = subprocess.Popen(command, env=env, stdout=log,
                                            stderr=subprocess.STDOUT)
        headers = {"X-Forwarded-Proto": "https", "x-apikey": versus.KEY}
        versus.wait_ready(self.base + "/health", headers)
        table(self.name, "at rest, just started", self.process.pid)
        self.ids = []
        for start in range(0, versus.N, 1000):
            page = [versus.document(i) for i in range(start, start + 1000)]
            self.ids += [d["_id"] for d in versus.http("POST", self.base + "/rest/items", page,
                                                       headers)]
        table(self.name, f"after posting {versus.N:,} documents", self.process.pid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, action="append",
                        help="a venv docbase is installed in (repeat for before/after); "
                             "default: this checkout's")
    parser.add_argument("--storage", choices=("sqlite", "memory"), default="sqlite")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--workloads", default=",".join(versus.WORKLOADS))
    parser.add_argument("--duration", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--settle", type=float, default=3)
    parser.add_argument("--port", type=int, default=21400)
    args = parser.parse_args()
    venvs = [v.resolve() for v in (args.venv or [HERE.parent / ".venv"])]
    versus.install()
    servers = [Server(venv, args.storage, args.workers, args.port + i, f"v{i}-{venv.name}", "")
               for i, venv in enumerate(venvs)]
    try:
        loads = {}
        for server in servers:
            server.start()
            with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as ids:
                ids.write("\n".join(server.ids) + "\n")
            loads[server.name] = server.loads(ids.name)
        for round_ in range(args.repeat):
            for workload in args.workloads.split(","):
                turn = round_ % len(servers)
                for server in servers[turn:] + servers[:turn]:
                    assert server.process is not None
                    versus.settle(args.settle)
                    before = cpu_seconds(server.process.pid)
                    got = versus.wrk(duration=args.duration, headers=server.headers,
                                     **loads[server.name][workload])
                    used = cpu_seconds(server.process.pid) - before
                    served = max(1.0, got["rps"] * args.duration)
                    print(f"round {round_ + 1} {server.name:30} {workload:15} "
                          f"{got['rps']:>8.0f} req/s {used / served * 1e6:>7.0f} us CPU/req "
                          f"non2xx {got['non2xx']}", flush=True)
        for server in servers:
            assert server.process is not None
            table(server.name, "after the load", server.process.pid)
    finally:
        for server in servers:
            server.stop()


if __name__ == "__main__":
    main()
