"""Realtime fan-out benchmark: one ``docbase serve`` process, many ``GET /realtime`` streams.

Starts the real server (uvicorn, TLS, one worker, SQLite or PostgreSQL storage, realtime
on), opens ``--subscribers`` concurrent event streams over TLS from
``--client-processes`` client processes, waits until each has its first ping, then
POSTs ``--writes`` documents at ``--rate`` per second. Each document carries the time it
was sent; each subscriber notes when its event arrived. Printed:

- events/s delivered: all events received by all subscribers, divided by the time from
  the first write to the last delivery;
- write-to-delivery latency p50/p99 over every delivery (send of the POST to receipt
  of the event by a subscriber; client and server share the machine's clock).

    .venv/bin/python benchmarks/realtime_bench.py                      # 1,000 subscribers
    .venv/bin/python benchmarks/realtime_bench.py --subscribers 100 --writes 50
    .venv/bin/python benchmarks/realtime_bench.py --storage postgresql://postgres@127.0.0.1/test

The clients are part of the measurement: on a small machine they compete with the
server for the same cores, and the figures say so (``docs/benchmarks.md``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import platform
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.http_bench import pg_database, stop  # noqa: E402
from docbase.testing.loopback import free_port  # noqa: E402
from docbase.testing.sse import open_events  # noqa: E402


def _docbase(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "docbase.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True, timeout=60)


@contextlib.contextmanager
def docbase_serve(work: Path, storage: str | None) -> Iterator[tuple[str, str, Path]]:
    """Run ``docbase serve`` with realtime on; yield its URL, admin key and certificate."""
    port = free_port()
    data = work / "data"
    options = ["--data-dir", str(data), *(["--storage", storage] if storage else [])]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    log = work / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "docbase.cli", "serve", "--port", str(port), *options],
            cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"https://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not (data / "cert.pem").exists() or not _healthy(url, data / "cert.pem"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"docbase serve did not start:\n{log.read_text()}")
            time.sleep(0.2)
        _docbase("settings", "set", "realtime.global", "true", *options, cwd=work)
        time.sleep(1.2)  # the server trusts its settings cache for one second
        yield url, (data / "admin.key").read_text().strip(), data / "cert.pem"
    finally:
        stop(process)


def _healthy(url: str, certfile: Path) -> bool:
    with contextlib.suppress(httpx.TransportError, ssl.SSLError, OSError):
        verify = ssl.create_default_context(cafile=str(certfile))
        return httpx.get(url + "/health", verify=verify, timeout=2).status_code == 200
    return False


# ------------------------------------------------------------------ client processes


async def _subscribe(url: str, key: str, certfile: str, count: int, expected: int,
                     ready: Connection) -> list[tuple[float, float]]:
    """Open ``count`` streams; return (sent, received) of every event they got."""
    verify = ssl.create_default_context(cafile=certfile)
    limits = httpx.Limits(max_connections=count + 10, max_keepalive_connections=0)
    received: list[tuple[float, float]] = []
    connected = 0
    all_connected = asyncio.Event()

    async with httpx.AsyncClient(base_url=url, verify=verify, limits=limits,
                                 timeout=httpx.Timeout(60, pool=120)) as client:

        async def one() -> None:
            nonlocal connected
            async with open_events(client, "/realtime", params={"apikey": key}) as stream:
                await stream.next(within=120)  # the first ping: subscribed
                connected += 1
                if connected == count:
                    all_connected.set()
                got = 0
                while got < expected:
                    event = await stream.next(skip_pings=True, within=120)
                    received.append((event.json()["data"]["sent"], time.time()))
                    got += 1

        tasks = [asyncio.create_task(one()) for _ in range(count)]
        await all_connected.wait()
        ready.send("ready")
        await asyncio.gather(*tasks)
    return received


def client_process(url: str, key: str, certfile: str, count: int, expected: int,
                   pipe: Connection) -> None:
    """In a client process: subscribe, report readiness, then send back the timings."""
    pipe.send(asyncio.run(_subscribe(url, key, certfile, count, expected, pipe)))


# ------------------------------------------------------------------ writer


async def write(url: str, key: str, certfile: Path, writes: int, rate: float) -> float:
    """POST ``writes`` documents, ``rate`` per second; return when the first was sent."""
    verify = ssl.create_default_context(cafile=str(certfile))
    async with httpx.AsyncClient(base_url=url, verify=verify, timeout=60,
                                 headers={"x-apikey": key}) as client:
        started = time.time()
        for n in range(writes):
            await asyncio.sleep(max(0.0, started + n / rate - time.time()))
            response = await client.post("/rest/bench", json={"n": n, "sent": time.time()})
            response.raise_for_status()
        return started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--rate", type=float, default=20.0, help="writes per second")
    parser.add_argument("--storage", help="storage URL (default: SQLite in the data dir); "
                        "on PostgreSQL a database of its own is made beside the URL's")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}")
    with contextlib.ExitStack() as stack:
        storage = args.storage
        if storage and storage.startswith("postgres"):  # a database of its own, dropped after
            storage = stack.enter_context(pg_database(storage, "docbase_realtime_bench"))
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="docbase-realtime-"))
        url, key, certfile = stack.enter_context(docbase_serve(Path(tmp), storage))
        shares = [args.subscribers // args.client_processes + (i < args.subscribers %
                  args.client_processes) for i in range(args.client_processes)]
        pipes, processes = [], []
        opened = time.monotonic()
        for share in shares:
            ours, theirs = multiprocessing.Pipe()
            process = multiprocessing.Process(target=client_process, args=(
                url, key, str(certfile), share, args.writes, theirs))
            process.start()
            pipes.append(ours)
            processes.append(process)
        for pipe in pipes:
            assert pipe.recv() == "ready"
        print(f"{args.subscribers} streams open in {time.monotonic() - opened:.1f} s")
        started = asyncio.run(write(url, key, certfile, args.writes, args.rate))
        timings = [t for pipe in pipes for t in pipe.recv()]
        for process in processes:
            process.join(30)
    latencies = sorted(received - sent for sent, received in timings)
    span = max(received for _, received in timings) - started
    quantiles = statistics.quantiles(latencies, n=100)
    print(f"{len(timings)} events delivered to {args.subscribers} subscribers "
          f"({args.writes} writes at {args.rate:g}/s) in {span:.2f} s: "
          f"{len(timings) / span:,.0f} events/s")
    print(f"write-to-delivery latency: p50 {1000 * quantiles[49]:.0f} ms, "
          f"p99 {1000 * quantiles[98]:.0f} ms, max {1000 * latencies[-1]:.0f} ms")


if __name__ == "__main__":
    main()
