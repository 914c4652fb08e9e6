"""Workers never outlive their supervisor: SIGKILL the main process, the workers stop.

Before, ``docbase serve --workers N`` whose main process was killed with SIGKILL left
its workers serving as orphans, holding the port, until someone found and killed them.
Now each worker gets SIGTERM from the kernel when its parent dies (Linux
``PR_SET_PDEATHSIG``) and watches its parent's process id besides (every platform):
it stops as on a graceful shutdown, the request in flight answered, and exits.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from docbase.http.supervision import WATCH_INTERVAL
from tests.test_serve_harness import Served, alive, child_processes, launch

EXIT_WITHIN = 10.0
"""Seconds the workers may take to exit once the main process is killed (a loaded
machine; they take well under one)."""


def gone_within(pids: list[int], timeout: float) -> float:
    """Wait until none of ``pids`` runs; return how long that took."""
    started = time.monotonic()
    while any(alive(pid) for pid in pids):
        assert time.monotonic() - started < timeout, [p for p in pids if alive(p)]
        time.sleep(0.02)
    return time.monotonic() - started


def killed_supervisor(served: Served) -> list[int]:
    """SIGKILL the main process alone; return its workers' ids."""
    workers = child_processes(served.process.pid)
    assert workers, "no worker processes"
    served.process.kill()
    served.process.wait(10)
    return workers


def test_workers_exit_when_the_main_process_is_killed_and_free_the_port(
    tmp_path: Path
) -> None:
    served = launch(tmp_path, "--workers", "2")
    assert len(child_processes(served.process.pid)) == 2
    workers = killed_supervisor(served)
    took = gone_within(workers, EXIT_WITHIN)
    served.stop()  # closes the client
    # the port is free: a new server listens on it and answers
    again = launch(tmp_path, port=served.port)
    try:
        assert again.request("GET", "/health").status_code == 200
    finally:
        again.stop()
    print(f"\n2 workers exited {took:.2f} s after SIGKILL of the main process")


def test_an_orphaned_worker_answers_the_request_in_flight_then_exits(tmp_path: Path) -> None:
    served = launch(tmp_path, "--workers", "1")
    key = served.admin_key
    body = b'{"name": "in flight"}'
    head = (f"POST /rest/people HTTP/1.1\r\nHost: 127.0.0.1\r\nx-apikey: {key}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n").encode()
    raw = socket.create_connection(("127.0.0.1", served.port), timeout=10)
    with served.ssl_context().wrap_socket(raw, server_hostname="127.0.0.1") as sock:
        sock.sendall(head + body[:5])
        time.sleep(0.5)  # the worker is reading this request's body
        workers = killed_supervisor(served)
        time.sleep(2 * WATCH_INTERVAL)  # the worker knows by now, and is stopping
        sock.sendall(body[5:])
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 201"), answer[:200]
    took = gone_within(workers, EXIT_WITHIN)
    served.stop()
    print(f"\nthe orphaned worker exited {took:.2f} s after answering")


def test_workers_still_starting_exit_when_the_main_process_is_killed(tmp_path: Path) -> None:
    served = launch(tmp_path, "--workers", "2", wait=False)
    deadline = time.monotonic() + 30
    while len(child_processes(served.process.pid)) < 2:  # spawned, still importing
        assert time.monotonic() < deadline, served.output()
        time.sleep(0.01)
    workers = killed_supervisor(served)
    took = gone_within(workers, 30)  # they exit once started far enough to look
    served.stop()
    print(f"\n2 starting workers exited {took:.2f} s after SIGKILL of the main process")


WATCHED_CHILD = """
import signal, sys, time
from docbase.http import supervision
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
supervision.threading.Thread(target=supervision._watch, args=({parent}, 30),
                             daemon=True).start()
print("watching", flush=True)
time.sleep(60)
"""
PARENT = """
import subprocess, sys, os, time
child = subprocess.Popen([sys.executable, "-c", {code!r}.format(parent=os.getpid())],
                         stdout=sys.stdout)
print(child.pid, flush=True)
time.sleep(60)
"""


def test_without_prctl_the_parent_watch_stops_an_orphan() -> None:
    """The portable fallback alone (no ``PR_SET_PDEATHSIG``): a process watching its
    parent as the workers do gets SIGTERM from itself once the parent is killed."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    with subprocess.Popen([sys.executable, "-c", PARENT.format(code=WATCHED_CHILD)],
                          stdout=subprocess.PIPE, text=True, env=env) as parent:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert parent.stdout.readline().strip() == "watching"
        parent.kill()
        parent.wait(10)
        took = gone_within([child], EXIT_WITHIN)
    assert took < EXIT_WITHIN
