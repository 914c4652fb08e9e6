"""The workers' shared counts of open connections (``docbase/http/connection_shares.py``)."""

from __future__ import annotations

import os
import subprocess
import sys

from docbase.http.connection_shares import SHARES_ENV, ConnectionShares, shares_file

WORKER = """
import sys
from docbase.http.connection_shares import ConnectionShares
shares = ConnectionShares.from_environment()
shares.change(+1); shares.change(+1); shares.change(+1); shares.change(-1)
print("ready", flush=True)
if sys.stdin.readline().strip() == "leave":
    shares.leave()
    print("left", flush=True)
    sys.stdin.readline()
"""


def other_worker() -> subprocess.Popen[str]:
    """A process that claims a slot, holds two connections, and waits to be told."""
    process = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


def stop(process: subprocess.Popen[str]) -> None:
    """Kill a worker as the OOM killer would; reap it and close its pipes."""
    process.kill()
    process.communicate()


def test_a_worker_sees_the_fewest_connections_of_the_other_live_workers() -> None:
    with shares_file(2):
        mine = ConnectionShares.from_environment()
        assert mine is not None
        assert mine.fewest_elsewhere() is None  # alone so far
        first, second = other_worker(), other_worker()
        try:
            mine.change(+1)
            assert mine.open == 1
            assert mine.fewest_elsewhere() == 2
        finally:
            stop(first)
            stop(second)
        assert mine.fewest_elsewhere() is None  # dead workers do not count
        again = other_worker()  # takes a dead worker's slot
        try:
            assert mine.fewest_elsewhere() == 2
        finally:
            stop(again)
        stopping = other_worker()
        try:
            assert mine.fewest_elsewhere() == 2
            assert stopping.stdin is not None
            assert stopping.stdout is not None
            stopping.stdin.write("leave\n")
            stopping.stdin.flush()
            assert stopping.stdout.readline().strip() == "left"
            assert mine.fewest_elsewhere() is None  # a worker that stops accepting
        finally:
            stop(stopping)


def test_the_file_exists_only_while_serving_with_several_workers() -> None:
    with shares_file(1):
        assert SHARES_ENV not in os.environ
        assert ConnectionShares.from_environment() is None
    with shares_file(2):
        path = os.environ[SHARES_ENV]
        assert os.path.getsize(path) > 0
    assert SHARES_ENV not in os.environ
    assert not os.path.exists(path)
