"""Connections opened at once spread evenly over the workers of ``docbase serve``.

An application opens its pool of keep-alive connections at once and keeps it. Both
workers accept from one socket, and uvloop's server takes every connection waiting
when its loop wakes, so such a pool used to land unevenly, and stayed so: 25 to 7 and
29 to 3 of 32 were seen, the worker with few connections idle while the other queued.
Each worker now accepts one connection at a time and leaves one to a worker holding
fewer (``docbase/http/accepting.py``).
"""

from __future__ import annotations

import json
import socket
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from docbase.http.connection_shares import SHARES_ENV, slot_holders
from tests.test_serve_harness import Served, child_processes, eventually, launch

POOL = 32
BURSTS = 5
WITHIN = 4
"""How far from an even split a worker's share of a pool may be (16 +/- 4 of 32)."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = launch(tmp_path_factory.mktemp("balance"), "--workers", "2", "--proxy-headers",
                    "--log-format", "json", scheme="http")
    try:
        deadline = time.monotonic() + 10  # the start's health check, logged a moment later
        while not health_answers(server) and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = child_processes(server.process.pid)
        eventually(lambda: set(workers) <= slot_holders(shares_path(workers[0])),
                   "both workers accepting (a slot each)")
        yield server
    finally:
        server.stop()


def shares_path(worker: int) -> str:
    """The shares file a worker was started with (its environment names it)."""
    environment = Path(f"/proc/{worker}/environ").read_bytes().split(b"\0")
    [path] = [e.split(b"=", 1)[1] for e in environment if e.startswith(f"{SHARES_ENV}=".encode())]
    return path.decode()


def pool_split(served: Served) -> list[int]:
    """Open a pool of connections at once, one request on each; the workers' shares."""
    before = health_answers(served)
    pool = [socket.create_connection(("127.0.0.1", served.port)) for _ in range(POOL)]
    try:
        for connection in pool:
            connection.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                               b"X-Forwarded-Proto: https\r\n\r\n")
        for connection in pool:
            connection.settimeout(10)
            assert connection.recv(4096).startswith(b"HTTP/1.1 200")
        deadline = time.monotonic() + 10  # a worker writes its access lines a moment later
        after = health_answers(served)
        while sum(after.values()) - sum(before.values()) < POOL and time.monotonic() < deadline:
            time.sleep(0.1)
            after = health_answers(served)
    finally:
        for connection in pool:
            connection.close()
    return sorted(after[pid] - before.get(pid, 0) for pid in after)


def health_answers(served: Served) -> Counter[int]:
    """How many ``GET /health`` each worker (process id) has answered so far."""
    return Counter(line["pid"] for line in map(json.loads, (
        text for text in served.output().splitlines() if text.startswith("{")))
        if line.get("route") == "/health")


def test_a_pool_opened_at_once_is_split_evenly_between_two_workers(served: Served) -> None:
    splits = []
    for _burst in range(BURSTS):
        splits.append(pool_split(served))
        time.sleep(0.5)  # the workers see the pool closed before the next one opens
    print(f"\nsplits of {POOL} connections: {splits}")
    for split in splits:
        assert sum(split) == POOL, splits
        assert len(split) == 2, splits
        assert split[0] >= POOL // 2 - WITHIN, splits
