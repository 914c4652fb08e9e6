"""HTTP benchmark: docbase (SQLite, PostgreSQL) against a bare Litestar app, over TLS.

Every contender runs in its own server process, configured by the same function
``docbase serve`` uses (``docbase.http.launch.http_server``: same ASGI server, same TLS
certificate and settings, same number of workers), and is loaded by ``wrk`` on
loopback. Printed: requests/s, p50 and p99 latency for get-by-id, list of 100 and
create, and docbase's requests/s as a fraction of the bare app's.

    .venv/bin/python benchmarks/http_bench.py                 # ~2 minutes
    .venv/bin/python benchmarks/http_bench.py --server granian  # the same under Granian
    .venv/bin/python benchmarks/http_bench.py --only bare,docbase-memory --duration 5

Needs ``wrk`` (Debian: ``apt-get install wrk``). PostgreSQL is used at
``--postgres-url`` (default postgresql://postgres@127.0.0.1/test): the benchmark
creates a database of its own there and drops it afterwards; it is skipped when
PostgreSQL is unreachable.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import re
import shutil
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import httpx
import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from docbase.bootstrap import bootstrap  # noqa: E402
from docbase.config import Deployment, ensure_data_dir, resolve  # noqa: E402
from docbase.http import launch, serve  # noqa: E402
from docbase.http.tls import ensure_self_signed  # noqa: E402
from docbase.testing.loopback import free_port  # noqa: E402

BARE_APP = "benchmarks.bare_app:create_app"
PG_DATABASE = "docbase_http_bench"
OPERATIONS = ("get-by-id", "list-100", "create")
DOCUMENT = {"name": "Joe", "email": "joe@example.com", "age": 42, "tags": ["a", "b"]}


@dataclass
class Result:
    server: str
    contender: str
    operation: str
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    errors: int = 0


CONTENDERS = ("bare", "docbase-memory", "docbase-sqlite", "docbase-postgresql")


# ------------------------------------------------------------------ server processes


def run_server(kind: str, target: str) -> None:
    """In the server subprocess: serve ``target`` as ``docbase serve`` would.

    ``docbase`` is the server ``docbase serve`` runs (uvicorn, see
    ``docbase.http.launch.http_server``); ``granian`` is Granian with the settings
    ``docbase serve`` used before it (Rust HTTP and TLS, for comparison).
    """
    deployment = msgspec.json.decode(os.environ[launch.DEPLOYMENT_ENV], type=Deployment)
    listener = launch.Listener(deployment.certfile, deployment.keyfile)
    if kind == "granian":
        from granian import Granian  # noqa: PLC0415 (only for --server granian)
        from granian.constants import HTTPModes, Interfaces, SSLProtocols  # noqa: PLC0415

        Granian(target, factory=True, interface=Interfaces.ASGI, address=deployment.host,
                port=deployment.port, workers=deployment.workers, http=HTTPModes.auto,
                websockets=False,
                ssl_cert=Path(listener.certfile) if listener.certfile else None,
                ssl_key=Path(listener.keyfile) if listener.keyfile else None,
                ssl_protocol_min=SSLProtocols.tls12, log_access=False).serve()
    else:
        launch.http_server(target, deployment, listener).serve()


@contextlib.contextmanager
def server_process(kind: str, target: str, deployment: Deployment) -> Iterator[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env[launch.DEPLOYMENT_ENV] = msgspec.json.encode(deployment).decode()
    log = Path(deployment.data_dir) / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, __file__, "--run-server", kind, "--target", target],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    url = f"https://127.0.0.1:{deployment.port}"
    try:
        _wait_ready(url, deployment, process, log)
        yield url
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a server process gracefully (SIGTERM), killing it after 30 s."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _client(deployment: Deployment, key: str | None = None) -> httpx.Client:
    context = ssl.create_default_context(cafile=deployment.certfile)
    headers = {"x-apikey": key} if key else {}
    return httpx.Client(base_url=f"https://127.0.0.1:{deployment.port}", verify=context,
                        headers=headers, timeout=30)


def _wait_ready(url: str, deployment: Deployment, process: subprocess.Popen[bytes],
                log: Path) -> None:
    deadline = time.monotonic() + 60
    with _client(deployment) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"server for {url} exited:\n{log.read_text()}")
            with contextlib.suppress(httpx.TransportError):
                if client.get("/health").status_code == 200:
                    return
            time.sleep(0.2)
    raise SystemExit(f"server for {url} not ready:\n{log.read_text()}")


# ------------------------------------------------------------------ load


_LATENCY = re.compile(r"^\s+(50|99)(?:\.000)?%\s+([\d.]+)(us|ms|s)\s*$", re.MULTILINE)
_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def wrk(url: str, args: argparse.Namespace, key: str | None, script: Path | None) -> Result:
    command = ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.duration}s",
               "--latency", "--timeout", "10s"]
    if key:
        command += ["-H", f"x-apikey: {key}"]
    if script:
        command += ["-s", str(script)]
    output = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    rate = re.search(r"^Requests/sec:\s+([\d.]+)", output, re.MULTILINE)
    latencies = {p: float(v) * _UNITS[u] for p, v, u in _LATENCY.findall(output)}
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    socket_errors = re.search(r"Socket errors: (.*)", output)
    if rate is None or len(latencies) != 2:
        raise SystemExit(f"cannot read wrk's output:\n{output}")
    errors = int(non_2xx.group(1)) if non_2xx else 0
    if socket_errors:
        errors += sum(int(n) for n in re.findall(r"\d+", socket_errors.group(1)))
    return Result("", "", "", float(rate.group(1)), latencies["50"], latencies["99"], errors)


def post_script(directory: Path) -> Path:
    script = directory / "post.lua"
    body = json.dumps(DOCUMENT).replace("\\", "\\\\").replace('"', '\\"')
    script.write_text(
        'wrk.method = "POST"\n'
        f'wrk.body = "{body}"\n'
        'wrk.headers["Content-Type"] = "application/json"\n'
    )
    return script


def seed(deployment: Deployment, key: str | None) -> str:
    """Store the documents the reads fetch; return the id get-by-id asks for."""
    with _client(deployment, key) as client:
        created = client.post("/rest/bench", json=DOCUMENT)
        created.raise_for_status()
        page = client.post("/rest/list100",
                           json=[DOCUMENT | {"n": i} for i in range(100)])
        page.raise_for_status()
        listed = client.get("/rest/list100")
        if len(listed.json()) != 100:
            raise SystemExit(f"list of 100 answered {len(listed.json())} documents")
        document_id: str = created.json()["_id"]
        return document_id


def measure(server: str, contender: str, args: argparse.Namespace, work: Path,
            certfile: Path, keyfile: Path) -> list[Result]:
    """Start ``contender`` under ``server``, seed it, and load it with each operation."""
    data_dir = work / f"{server}-{contender}-{time.monotonic_ns()}"
    ensure_data_dir(data_dir)
    with contextlib.ExitStack() as stack:
        storage: str | None = {
            "bare": None,
            "docbase-memory": "memory://",
            "docbase-sqlite": f"sqlite:///{data_dir / 'docbase.db'}",
        }.get(contender)
        if contender == "docbase-postgresql":
            storage = stack.enter_context(pg_database(args.postgres_url))
        deployment = resolve(data_dir=str(data_dir), port=free_port(), workers=args.workers,
                             storage=storage, certfile=str(certfile), keyfile=str(keyfile))
        key: str | None = None
        target = BARE_APP
        if storage is not None:
            target = serve.WORKER_APP
            asyncio.run(bootstrap(deployment))
            key = (data_dir / "admin.key").read_text().strip()
        url = stack.enter_context(server_process(server, target, deployment))
        document_id = seed(deployment, key)
        urls = {
            "get-by-id": (f"{url}/rest/bench/{document_id}", None),
            "list-100": (f"{url}/rest/list100", None),
            "create": (f"{url}/rest/created", post_script(work)),
        }
        warm = argparse.Namespace(**vars(args) | {"duration": max(1, args.duration // 5)})
        wrk(urls["get-by-id"][0], warm, key, None)
        results = []
        for operation in args.operations:
            target_url, script = urls[operation]
            result = wrk(target_url, args, key, script)
            result.server, result.contender, result.operation = server, contender, operation
            results.append(result)
            print(f"  {server:<8} {contender:<19} {operation:<10} "
                  f"{result.requests_per_s:>7.0f} req/s  p50 {result.p50_ms:6.2f} ms  "
                  f"p99 {result.p99_ms:6.2f} ms"
                  + (f"  ERRORS {result.errors}" if result.errors else ""), flush=True)
        return results


# ------------------------------------------------------------------ PostgreSQL


async def _pg_admin(url: str, statement: str) -> None:
    import asyncpg  # noqa: PLC0415 (only when PostgreSQL is measured)

    connection = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def pg_reachable(url: str) -> bool:
    try:
        asyncio.run(_pg_admin(url, "SELECT 1"))
    except (OSError, ImportError) as exc:
        print(f"(PostgreSQL skipped: {exc})")
        return False
    return True


@contextlib.contextmanager
def pg_database(url: str, name: str = PG_DATABASE) -> Iterator[str]:
    """A fresh database ``name`` beside ``url``'s, dropped afterwards."""
    asyncio.run(_pg_admin(url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
    asyncio.run(_pg_admin(url, f"CREATE DATABASE {name}"))
    try:
        yield url.rsplit("/", 1)[0] + "/" + name
    finally:
        asyncio.run(_pg_admin(url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


# ------------------------------------------------------------------ report


def machine() -> dict[str, Any]:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    wrk_version = subprocess.run(["wrk", "-v"], capture_output=True, text=True,
                                 check=False).stdout.splitlines()[0]
    versions = {}
    for package in ("granian", "uvicorn", "litestar", "uvloop"):
        with contextlib.suppress(PackageNotFoundError):
            versions[package] = version(package)
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "wrk": wrk_version.strip(), **versions}


def _median(values: list[float]) -> float:
    return statistics.median(values)


def report(results: list[Result], args: argparse.Namespace) -> None:
    """Print the medians over rounds, and docbase's ratio to the bare app."""
    groups: dict[tuple[str, str, str], list[Result]] = {}
    for r in results:
        groups.setdefault((r.server, r.contender, r.operation), []).append(r)
    medians = {k: (_median([r.requests_per_s for r in v]), _median([r.p50_ms for r in v]),
                   _median([r.p99_ms for r in v]), sum(r.errors for r in v))
               for k, v in groups.items()}
    print()
    print(f"TLS (self-signed EC P-256), workers: {args.workers}, wrk -t{args.threads} "
          f"-c{args.connections} -d{args.duration}s, median of {args.repeat} round(s)")
    print(f"{'server':<8} {'contender':<19} {'operation':<10} {'req/s':>7} {'p50 ms':>7}"
          f" {'p99 ms':>7} {'vs bare':>7}")
    for (server, contender, operation), (rate, p50, p99, errors) in medians.items():
        bare = medians.get((server, "bare", operation))
        ratio = f"{rate / bare[0]:.2f}" if bare and contender != "bare" else ""
        print(f"{server:<8} {contender:<19} {operation:<10} {rate:>7.0f} {p50:>7.2f} "
              f"{p99:>7.2f} {ratio:>7}" + (f"  errors: {errors}" if errors else ""))
    if args.json:
        payload = {"machine": machine(), "workers": args.workers, "repeat": args.repeat,
                   "connections": args.connections, "duration": args.duration,
                   "results": [asdict(r) for r in results]}
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
        print(f"(written to {args.json})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="docbase",
                        help="docbase (the server docbase serve runs: uvicorn), granian, or "
                             "both comma-separated (interleaved)")
    parser.add_argument("--duration", type=int, default=10, help="seconds per measurement")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--workers", type=int, default=1, help="server worker processes")
    parser.add_argument("--repeat", type=int, default=1, help="rounds; medians are shown")
    parser.add_argument("--only", default="bare,docbase-sqlite,docbase-postgresql",
                        help=f"comma-separated, from: {', '.join(CONTENDERS)}")
    parser.add_argument("--operations", default=",".join(OPERATIONS))
    parser.add_argument("--postgres-url", default="postgresql://postgres@127.0.0.1/test")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--run-server", help=argparse.SUPPRESS)
    parser.add_argument("--target", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_server:
        run_server(args.run_server, args.target)
        return
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk")
    args.operations = [op for op in args.operations.split(",") if op]
    servers = args.server.split(",")
    contenders = [c for c in CONTENDERS if c in args.only.split(",")]
    if "docbase-postgresql" in contenders and not pg_reachable(args.postgres_url):
        contenders.remove("docbase-postgresql")
    print(f"machine: {machine()}")
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="docbase-bench-") as tmp:
        work = Path(tmp)
        certfile, keyfile, _ = ensure_self_signed(work, "127.0.0.1")
        for _ in range(args.repeat):
            for server in servers:
                for contender in contenders:
                    results += measure(server, contender, args, work, certfile, keyfile)
    report(results, args)


if __name__ == "__main__":
    main()
