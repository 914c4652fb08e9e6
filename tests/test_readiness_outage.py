"""``GET /health/ready`` follows the backend: 503 within 5 s of PostgreSQL stopping, 200 back.

A private PostgreSQL instance (``tests/private_postgresql.py``, as the reliability tests
use) is stopped with ``pg_ctl`` while ``docbase serve --workers 2`` runs on it. The
readiness check of every worker then answers 503 naming the failed check, ``/health``
(liveness) still answers 200, the metrics say the store is down, and an error written
while a request was served carries that request's id. Once PostgreSQL is back, the
same server's readiness is 200 again, at every worker's first check after the first 200.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import docbase
from docbase.core.metrics.state import check_store
from tests.private_postgresql import private_postgresql
from tests.test_serve_harness import Served, eventually, launch

NOT_READY_WITHIN = 5.0
"""Seconds after PostgreSQL stopped by which readiness must answer 503."""
READY_AGAIN_WITHIN = 60.0
METRICS_TOKEN = "outage-metrics-token-90f1c2d3"
PROXY = {"x-forwarded-proto": "https"}


@pytest.fixture
def postgres() -> Iterator[Any]:
    with private_postgresql() as server:
        yield server


def fresh(served: Served, path: str, **headers: str) -> httpx.Response:
    """One GET on a new connection, so that either worker may answer it."""
    with httpx.Client(base_url=served.url, timeout=30) as client:
        return client.get(path, headers={**PROXY, **headers})


@pytest.mark.postgres
def test_readiness_turns_503_when_postgresql_stops_and_200_when_it_returns(
    tmp_path: Path, postgres: Any
) -> None:
    served = launch(tmp_path, "--storage", postgres.url, "--workers", "2", "--proxy-headers",
                    "--log-format", "json", "--metrics-token", METRICS_TOKEN, scheme="http")
    try:
        eventually(lambda: served.output().count("Application startup complete.") == 2,
                   "both workers to start", timeout=60)
        ready = fresh(served, "/health/ready", authorization=f"Bearer {METRICS_TOKEN}")
        assert ready.status_code == 200, ready.text
        assert ready.json() == {"status": "ok", "checks": {"store:docbase": "ok"}}
        assert fresh(served, "/health/ready").json() == {"status": "ok"}  # anonymous

        postgres.stop()
        stopped = time.monotonic()
        answers = []
        while time.monotonic() - stopped < NOT_READY_WITHIN:
            answer = fresh(served, "/health/ready")
            answers.append(answer.status_code)
            if answer.status_code == 503:
                break
            time.sleep(0.1)
        assert answer.status_code == 503, f"still {answers} {NOT_READY_WITHIN} s after the stop"
        assert answer.json() == {"status": "unavailable"}  # anonymous: no names, no reasons
        answer = fresh(served, "/health/ready", authorization=f"Bearer {METRICS_TOKEN}")
        body = answer.json()
        assert body["status"] == "unavailable"
        assert body["failed"] == ["store:docbase"]
        assert body["checks"]["store:docbase"] != "ok"
        for _ in range(4):  # every worker says so, whichever answers
            assert fresh(served, "/health/ready").status_code == 503
        assert fresh(served, "/health").status_code == 200  # liveness: the process is fine

        failed = fresh(served, "/rest/items", **{"x-apikey": served.admin_key,
                                                 "x-request-id": "outage-req-7"})
        assert failed.status_code == 503
        metrics = fresh(served, "/metrics", authorization=f"Bearer {METRICS_TOKEN}").text
        assert 'docbase_store_up{database="docbase"} 0.0' in metrics

        postgres.start()
        deadline = time.monotonic() + READY_AGAIN_WITHIN
        back = fresh(served, "/health/ready")
        while back.status_code != 200:  # PostgreSQL starting up: wait for the first worker
            assert time.monotonic() < deadline, f"still not ready: {back.text}"
            time.sleep(0.2)
            back = fresh(served, "/health/ready")
        # once one worker answers, every worker is ready at its first check: one whose
        # pooled connections died asks again on a fresh connection (check_store)
        again = [fresh(served, "/health/ready") for _ in range(8)]
        assert [a.status_code for a in again] == [200] * 8, [a.text for a in again]
        assert served.process.poll() is None, "the server was restarted"
    finally:
        served.stop()
    lines = [json.loads(line) for line in served.output().splitlines() if line.strip()]
    errors = [line for line in lines if line["level"] == "error"
              and line.get("request_id") == "outage-req-7"]
    assert errors, "the 503's error line does not carry the request id"
    assert "BackendError" in errors[0]["message"]


@pytest.mark.postgres
async def test_the_readiness_check_of_a_store_whose_pooled_connections_died_passes_at_once(
    postgres: Any,
) -> None:
    """PostgreSQL restarted while the store held pooled connections it did not use: the
    first readiness check after the return finds one dead and asks again on a new one."""
    async with await docbase.connect(postgres.url) as db:
        assert await check_store(db.store) is None  # the pool now holds a connection
        await asyncio.to_thread(postgres.stop)
        await asyncio.to_thread(postgres.start)  # the pooled connection is gone with it
        assert await check_store(db.store) is None
        assert await check_store(db.store) is None
