"""A worker that dies is respawned at once, even while the supervisor awaits its answer.

uvicorn's supervisor pings each worker twice a second and waits for the answer up to the
health-check timeout (60 s for docbase, whose workers take seconds to start on a loaded
machine). A worker killed after a ping and before its answer left that wait running the
whole minute: no respawn, and SIGTERM to the server unheard. CI saw it as a media test
whose killed worker never came back. ``WatchfulMultiprocess`` looks at the worker
between slices of the wait.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tests.test_serve_harness import alive, child_processes, eventually, serving

BACK_WITHIN = 15.0
"""Seconds a killed worker may take to be replaced and serve (a loaded machine; well
under the 60 s health-check timeout that used to pass first)."""


def test_a_worker_killed_while_its_health_check_waits_is_respawned_at_once(
    tmp_path: Path,
) -> None:
    with serving(tmp_path, "--workers", "1") as served:
        [worker] = child_processes(served.process.pid)
        os.kill(worker, signal.SIGSTOP)  # it cannot answer the next ping
        time.sleep(1.5)  # the supervisor has pinged it (every 0.5 s) and waits
        os.kill(worker, signal.SIGKILL)
        killed = time.monotonic()
        eventually(lambda: not alive(worker), "the killed worker to die", timeout=10)

        def replaced() -> bool:
            workers = child_processes(served.process.pid)
            return (len(workers) == 1 and workers[0] != worker
                    and served.request("GET", "/health").status_code == 200)

        eventually(replaced, "the respawned worker", timeout=BACK_WITHIN)
        took = time.monotonic() - killed
        assert f"Child process [{worker}] died" in served.output()
        assert served.request("GET", "/rest/things", served.admin_key).status_code == 200
    print(f"\nworker respawned and serving {took:.2f} s after SIGKILL")


def test_sigterm_stops_the_server_while_a_health_check_waits(tmp_path: Path) -> None:
    with serving(tmp_path, "--workers", "1") as served:
        [worker] = child_processes(served.process.pid)
        os.kill(worker, signal.SIGSTOP)
        time.sleep(1.5)  # the supervisor waits for the stopped worker's answer
        served.process.send_signal(signal.SIGTERM)
        try:  # heard while the worker still cannot answer
            eventually(lambda: "Received SIGTERM, exiting." in served.output(),
                       "the supervisor to act on SIGTERM", timeout=10)
        finally:
            os.kill(worker, signal.SIGCONT)  # the worker may now stop as asked
        assert served.process.wait(15) == 0
