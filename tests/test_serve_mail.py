"""Mail through the real ``docbase serve``: a crash after ``queued``, and ``mail retry``.

The server processes are real (``tests/test_serve_harness.py``), SIGKILLed mid-send;
the SMTP server is real (aiosmtpd on loopback) and can hold a message to keep the
sender waiting.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from docbase.testing.loopback import held_port
from tests.smtp_capture import smtp_server
from tests.test_serve_harness import (
    Served,
    child_processes,
    eventually,
    launch,
    run_cli,
    serving,
)

SETTINGS_STALENESS = 1.1
"""A server trusts the settings it read for up to a second (docbase/core/auth/cache.py)."""

ORDER = {"to": "ann@example.com", "html": "<p>Ready</p>", "sendername": "Shop"}


def outbound(served: Served) -> list[dict[str, Any]]:
    response = served.request("GET", "/rest/email_outbound", served.admin_key,
                              params={"h": '{"$orderby": {"_id": 1}}'})
    assert response.status_code == 200, response.text
    records: list[dict[str, Any]] = response.json()
    return records


def kill_server(served: Served) -> None:
    """SIGKILL the server and its workers at once: nothing runs its shutdown."""
    for pid in [*child_processes(served.process.pid), served.process.pid]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    served.process.wait(10)


def test_killed_after_queued_sends_on_restart_exactly_once(tmp_path: Path) -> None:
    with smtp_server() as smtp:
        first = launch(tmp_path)
        run_cli(tmp_path, "settings", "set", "mail", json.dumps(smtp.settings()))
        time.sleep(SETTINGS_STALENESS)
        smtp.capture.gate.clear()  # hold the first message: the sender waits mid-send
        answers: list[Any] = []

        def post() -> None:
            with contextlib.suppress(httpx.HTTPError):
                answers.append(first.request(
                    "POST", "/mail", first.admin_key,
                    json=[{**ORDER, "subject": f"#{i}"} for i in range(4)]))

        sender = threading.Thread(target=post)
        sender.start()
        assert smtp.capture.arrived.wait(20), first.output()
        kill_server(first)
        sender.join(10)
        assert answers == []  # the client never got an answer
        assert len(smtp.received) == 1  # the SMTP server kept the message it was handed
        smtp.capture.gate.set()

        with serving(tmp_path, "--workers", "2") as second:  # both workers resume
            eventually(lambda: sum(r["status"] in ("sent", "failed")
                                   for r in outbound(second)) == 3,
                       "the three queued messages to be sent")
            statuses = [(r["subject"], r["status"]) for r in outbound(second)]
    assert statuses == [("#0", "sending"), ("#1", "sent"), ("#2", "sent"), ("#3", "sent")]
    assert sorted(smtp.capture.subjects()) == ["#0", "#1", "#2", "#3"]  # each once


def test_mail_retry_sends_the_failed_messages(tmp_path: Path) -> None:
    with held_port() as down, serving(tmp_path) as served:
        run_cli(tmp_path, "settings", "set", "mail", json.dumps({
            "transport": "smtp", "from": "noreply@example.com",
            "smtp": {"host": "127.0.0.1", "port": down, "starttls": False, "timeout": 2}}))
        time.sleep(SETTINGS_STALENESS)
        answer = served.request("POST", "/mail", served.admin_key,
                                json=[{**ORDER, "subject": "A"}, {**ORDER, "subject": "B"}])
        assert answer.status_code == 502, answer.text
        failed = run_cli(tmp_path, "mail", "retry", check=False)
        assert failed.returncode == 1
        assert failed.stdout.count("\tfailed\t") == 2
        with smtp_server(port=down) as smtp:
            retried = run_cli(tmp_path, "mail", "retry")
            assert smtp.capture.subjects() == ["A", "B"]
        assert [line.split("\t")[1] for line in retried.stdout.splitlines()] == [
            "sent", "sent"]
        assert "2 message(s) retried, 2 sent, 0 failed" in retried.stderr
        assert [r["status"] for r in outbound(served)] == ["sent", "sent"]
