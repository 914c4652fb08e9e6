"""CPU per request of one ``docbase serve`` worker's app, without sockets (a script, not a test).

The app a worker serves (``docbase.http.worker.build_app``, behind the proxy check as with
``--proxy-headers``) is called directly, ``app(scope, receive, send)``, by 32 concurrent
callers in one process for ``--duration`` seconds after a 1 s warm-up. Printed: requests
per second and CPU time per request (``time.process_time``: the event loop's thread and
the store's threads together). On a machine shared with other work, the CPU per request
moves by a few percent where ``wrk``'s figures move by half, so it is the figure to
compare two versions of the code by (run them alternately: ``PYTHONPATH=<checkout>``).

    PYTHONPATH=. .venv/bin/python benchmarks/inprocess_bench.py get list total post
    PYTHONPATH=. .venv/bin/python benchmarks/inprocess_bench.py --storage \\
        postgresql://postgres@127.0.0.1/bench list
    PYTHONPATH=. .venv/bin/python benchmarks/inprocess_bench.py --metrics get post

``--metrics`` serves with metrics on (``--metrics-token``, prometheus-client's
multiprocess files in a temporary directory), to compare with a run without it.
``--log-format text|json`` writes the log as ``docbase serve`` does (the same logging
configuration, standard error redirected to ``bench.log`` in the data directory), so
that every request writes its access line; without it (``none``, the default) no
logging is configured and no access line is written, as in the figures before it existed.

The workloads are those of ``versus.py``: ``get`` (a random one of 10,000 documents),
``list`` (the first 100), ``total`` (with the total count), ``post`` (a small
document), ``patch`` (one field of a random document), ``mixed`` (80 % ``get``, 20 %
``post``). The documents are seeded once
into ``--data-dir`` (default: a temporary
directory); a PostgreSQL database given with ``--storage`` must be empty or seeded by an
earlier run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging.config
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import uvloop

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from docbase.core.metrics import MULTIPROC_ENV  # noqa: E402 (no prometheus-client)

if "--metrics" in sys.argv:  # read when prometheus-client is imported, below
    os.environ[MULTIPROC_ENV] = tempfile.mkdtemp(prefix="inprocess-metrics-")

from benchmarks.versus import KEY, METRICS_TOKEN, N, document  # noqa: E402
from docbase.bootstrap import bootstrap  # noqa: E402
from docbase.config import resolve  # noqa: E402
from docbase.http.logs import logging_config  # noqa: E402
from docbase.http.worker import build_app  # noqa: E402

HEADERS = [(b"host", b"127.0.0.1"), (b"x-forwarded-proto", b"https"),
           (b"x-apikey", KEY.encode())]
_RUNNING: set[asyncio.Future[Any]] = set()
POST = json.dumps({"name": "bench item", "price": 12.5, "tags": ["x", "y"],
                   "created": "2024-06-01T12:00:00Z"}).encode()
PATCH = b'{"price": 42.5}'


async def call(app: Any, method: str, path: str, query: bytes = b"",
               body: bytes = b"") -> tuple[int, bytes]:
    """One request through the ASGI app; its status and body."""
    headers = [*HEADERS, (b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())] if body else HEADERS
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": query, "root_path": "", "headers": headers,
             "client": ("127.0.0.1", 5555), "server": ("127.0.0.1", 8143), "state": {}}
    sent, status, chunks = False, [0], []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the request is over: wait to be cancelled
        return {}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status[0] = message["status"]
        else:
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status[0], b"".join(chunks)


async def started(app: Any) -> None:
    """Run the app's startup (the lifespan protocol) and leave it running."""
    ready = asyncio.get_running_loop().create_future()
    messages = iter([{"type": "lifespan.startup"}])

    async def receive() -> dict[str, Any]:
        message = next(messages, None)
        if message is None:
            await asyncio.Event().wait()
        return message or {}

    async def send(message: dict[str, Any]) -> None:
        if message["type"].startswith("lifespan.startup") and not ready.done():
            ready.set_result(message["type"])

    lifespan = asyncio.ensure_future(app({"type": "lifespan", "asgi": {"version": "3.0"},
                                          "state": {}}, receive, send))
    _RUNNING.add(lifespan)  # kept referenced while the app serves
    if await ready != "lifespan.startup.complete":
        raise SystemExit("the app did not start")


async def seeded(app: Any) -> list[str]:
    status, body = await call(app, "GET", "/rest/items", b"max=10000&h={\"$fields\":{\"_id\":1}}")
    ids = [d["_id"] for d in json.loads(body)] if status == 200 else []
    for start in range(len(ids), N, 1000):
        page = [document(i) for i in range(start, min(start + 1000, N))]
        status, body = await call(app, "POST", "/rest/items", body=json.dumps(page).encode())
        if status != 201:
            raise SystemExit(f"seeding failed: {status} {body[:200]!r}")
        ids += [d["_id"] for d in json.loads(body)]
    return ids


async def measure(app: Any, workload: str, ids: list[str], duration: float) -> None:
    def request() -> tuple[str, str, bytes, bytes]:
        if workload == "mixed":  # as versus.py's: 80 % get_one, 20 % post_one
            return request_of("get" if random.random() < 0.8 else "post")
        return request_of(workload)

    def request_of(workload: str) -> tuple[str, str, bytes, bytes]:
        return {"get": ("GET", "/rest/items/" + random.choice(ids), b"", b""),
                "list": ("GET", "/rest/items", b"max=100", b""),
                "total": ("GET", "/rest/items", b"max=100&totals=true", b""),
                "post": ("POST", "/rest/created", b"", POST),
                "patch": ("PATCH", "/rest/items/" + random.choice(ids), b"", PATCH)}[workload]

    count, bad, stop = 0, 0, 0.0

    async def caller() -> None:
        nonlocal count, bad
        while time.perf_counter() < stop:
            status, _ = await call(app, *request())
            count += 1
            bad += status >= 300

    stop = time.perf_counter() + 1.0  # warm-up
    await asyncio.gather(*(caller() for _ in range(32)))
    count = bad = 0
    began, cpu = time.perf_counter(), time.process_time()
    stop = began + duration
    await asyncio.gather(*(caller() for _ in range(32)))
    elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
    print(f"{workload:6} {count / elapsed:8.0f} req/s   CPU per request "
          f"{cpu / count * 1e6:7.1f} us   not 2xx {bad}   load {os.getloadavg()[0]:.1f}",
          flush=True)


async def main(args: argparse.Namespace) -> None:
    os.environ["DOCBASE_ADMIN_KEY"] = KEY
    deployment = resolve(environ={}, data_dir=args.data_dir, storage=args.storage,
                         proxy_headers=True,
                         metrics_token=METRICS_TOKEN if args.metrics else None)
    await bootstrap(deployment)
    if args.log_format != "none":  # as uvicorn configures a worker of docbase serve
        log = os.open(Path(args.data_dir) / "bench.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.dup2(log, 2)  # the lines go where a server's standard error would
        logging.config.dictConfig(logging_config(args.log_format))
    app = build_app(deployment)
    await started(app)
    ids = await seeded(app)
    for workload in args.workloads:
        await measure(app, workload, ids, args.duration)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="+", choices=["get", "list", "total", "post",
                                                         "patch", "mixed"])
    parser.add_argument("--duration", type=float, default=4)
    parser.add_argument("--storage", help="storage URL (default: SQLite in --data-dir)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--metrics", action="store_true",
                        help="metrics on, as docbase serve --metrics-token runs them")
    parser.add_argument("--log-format", choices=["none", "text", "json"], default="none",
                        help="write the log (access lines) as docbase serve does")
    arguments = parser.parse_args()
    temporary = None if arguments.data_dir else tempfile.mkdtemp(prefix="inprocess-bench-")
    arguments.data_dir = arguments.data_dir or temporary
    uvloop.run(main(arguments))
    if temporary:
        shutil.rmtree(temporary, ignore_errors=True)
    os._exit(0)  # the app's background tasks are not stopped: leave at once
