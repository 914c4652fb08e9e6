"""A worker whose application shutdown hangs exits after ``graceful_timeout``, saying why.

uvicorn bounds the requests in flight but not the application's shutdown, and its
supervisor waits for each worker without a bound: one shutdown step that never
returned kept ``docbase serve`` from exiting at all (CI once saw a served fuzzing
server stuck after "Waiting for application shutdown"). Here a step is made to hang
on purpose: the hooks file, loaded by every worker, replaces the webhook dispatchers'
``close`` with one that never returns. That is a fake fault (a store or plugin that
never answers cannot be summoned on demand), in a real server process.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.test_serve_harness import StuckShutdown, launch

HANGING_CLOSE = """
import asyncio

from docbase.core.webhooks.dispatcher import WebhookDispatcher


NEVER = asyncio.Event()  # held here: a step awaiting an object nothing else holds is
                        # collected as garbage, which ends the shutdown with an error


async def never_closes(self):
    await NEVER.wait()


WebhookDispatcher.close = never_closes


def setup(db):
    pass
"""


def test_a_hanging_shutdown_step_is_named_and_the_worker_exits(tmp_path: Path) -> None:
    (tmp_path / "hooks.py").write_text(HANGING_CLOSE)
    served = launch(tmp_path, "--hooks", "hooks.py", "--graceful-timeout", "2")
    assert served.request("GET", "/rest/people", key=served.admin_key).status_code == 200
    started = time.monotonic()
    served.process.send_signal(signal.SIGTERM)
    served.process.wait(30)  # before: never (the supervisor waited for the worker)
    waited = time.monotonic() - started
    log = served.output()
    assert "the application shutdown is still running after 2 s" in log, log
    assert "in step 'webhook dispatchers'" in log
    assert "never_closes" in log  # the stuck task's stack, down to the hanging call
    assert waited >= 2, waited  # the steps before it had their time
    with pytest.warns(StuckShutdown, match="in step 'webhook dispatchers'"):
        served.stop()  # the harness reports it in the summary of any other test
