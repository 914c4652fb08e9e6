"""The request log's writer and reader on every backend: batches, the cap, sharing, failures."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest

from docbase.core.query import MATCH_ALL
from docbase.core.requestlog import (
    ENTRIES_COLLECTION,
    MINUTES_COLLECTION,
    RequestLog,
    logged_count,
    per_minute,
    recent_requests,
)
from docbase.core.requestlog.records import bucket_bound, latency_bucket
from tests.backends import sql_backend, sql_url


async def test_recorded_requests_are_written_together_at_the_flush(store: Any) -> None:
    log = RequestLog(store, keep=100)
    log.record("GET", "/rest/{collection}/{document_id}", 200, 0.002, "key")
    log.record("GET", "/rest/{collection}", 401, 0.001, "none")
    log.record("POST", "/auth/login", 200, 0.05, "token")
    assert await logged_count(store) == 0  # nothing is written on the request's path
    assert await log.flush() == 3
    shown = await recent_requests(store)
    assert [(r.method, r.route, r.status, r.credential) for r in shown] == [
        ("POST", "/auth/login", 200, "JWT"),
        ("GET", "/rest/{collection}", 401, "anonymous"),
        ("GET", "/rest/{collection}/{document_id}", 200, "API key")]
    assert shown[2].milliseconds == 2.0
    assert await log.flush() == 0  # written once


async def test_minutes_add_up_every_flush_with_the_99th_percentile(store: Any) -> None:
    log = RequestLog(store, keep=1000)
    for _ in range(60):
        log.record("GET", "/rest/{collection}", 200, 0.001, "key")
    await log.flush()
    for status in (404, 404, 500):
        log.record("GET", "/rest/{collection}", status, 0.001, "key")
    for _ in range(37):
        log.record("GET", "/rest/{collection}", 200, 0.001, "key")
    log.record("GET", "/rest/{collection}", 200, 0.8, "key")  # the slowest of the minute
    await log.flush()
    assert await store.count(MINUTES_COLLECTION, MATCH_ALL) >= 2  # one tally per flush
    figures = [f for f in await per_minute(store, 5) if f.requests]
    assert sum(f.requests for f in figures) == 101
    assert sum(f.client_errors for f in figures) == 2
    assert sum(f.server_errors for f in figures) == 1
    slow = max(f.p99_ms or 0 for f in figures)
    assert slow >= 1.0  # 1 % of 101 is 2 requests: the slow one and a fast one
    assert len(await per_minute(store, 60)) == 60  # quiet minutes are there, as zeros


def test_latency_buckets_bound_their_durations() -> None:
    for milliseconds in (0.05, 0.1, 0.7, 1.0, 12.5, 800.0, 10_000.0):
        bucket = latency_bucket(milliseconds)
        assert bucket_bound(bucket) >= milliseconds
        assert bucket == 0 or bucket_bound(bucket - 1) < milliseconds


async def test_the_log_keeps_only_its_newest_entries(store: Any) -> None:
    log = RequestLog(store, keep=5)
    for number in range(12):
        log.record("GET", f"/route/{number}", 200, 0.001, "none")
    await log.flush()
    await log.prune()
    assert await logged_count(store) == 5
    assert [r.route for r in await recent_requests(store)] == [
        f"/route/{n}" for n in (11, 10, 9, 8, 7)]


async def test_closing_writes_what_is_still_recorded(store: Any) -> None:
    log = RequestLog(store, keep=100)
    await log.open()
    log.record("DELETE", "/rest/{collection}/{document_id}", 204, 0.003, "key")
    await log.close()
    assert [r.method for r in await recent_requests(store)] == ["DELETE"]


async def test_a_failing_write_is_logged_and_never_raises(
        store: Any, caplog: pytest.LogCaptureFixture) -> None:
    log = RequestLog(store, keep=100)
    await store.insert(ENTRIES_COLLECTION, [{"_id": "6b0aee485fe48a7845bea048", "at": 1}])
    log.record("GET", "/health", 200, 0.001, "none")
    original = log._documents

    def colliding(batch: list[Any]) -> Any:
        entries, tallies = original(batch)
        entries[0]["_id"] = "6b0aee485fe48a7845bea048"
        return entries, tallies

    log._documents = colliding  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, "docbase.requestlog"):
        assert await log.flush() == 0
    assert "request log: writing failed (1 request(s) not logged)" in caplog.text
    log._documents = original  # type: ignore[method-assign]
    log.record("GET", "/health", 200, 0.001, "none")
    assert await log.flush() == 1  # the next batch is written


async def test_a_store_that_does_not_answer_holds_a_bounded_buffer(store: Any) -> None:
    from docbase.core.requestlog import recorder

    log = RequestLog(store, keep=100)
    for _ in range(recorder.MAX_PENDING + 7):
        log.record("GET", "/health", 200, 0.001, "none")
    assert log.dropped == 7
    assert len(log._pending) == recorder.MAX_PENDING


@pytest.mark.parametrize("kind", ["sqlite-file", pytest.param("postgresql",
                                                               marks=pytest.mark.postgres)])
async def test_every_process_writes_into_one_log(kind: str, tmp_path: Any) -> None:
    async with (sql_url(kind, tmp_path) as url, sql_backend(url) as first,
                sql_backend(url) as second):
        logs = [RequestLog(first[0], keep=100), RequestLog(second[0], keep=100)]
        logs[0].pid, logs[1].pid = 101, 202  # two processes, as their ids tell them apart
        logs[0].record("GET", "/rest/{collection}", 200, 0.001, "key")
        logs[1].record("PUT", "/rest/{collection}/{document_id}", 200, 0.001, "token")
        for log in logs:
            await log.flush()
        for store, _ in (first, second):
            shown = await recent_requests(store)
            assert sorted((r.pid, r.method) for r in shown) == [(101, "GET"), (202, "PUT")]
            assert sum(f.requests for f in await per_minute(store, 2, now=time.time())) == 2


async def test_a_busy_second_lists_its_errors_and_counts_every_request(store: Any) -> None:
    from docbase.core.requestlog.recorder import LISTED

    log = RequestLog(store, keep=10 * LISTED)
    for _ in range(10):
        log.record("GET", "/rest/{collection}/{document_id}", 404, 0.001, "key")
    for _ in range(LISTED + 40):
        log.record("GET", "/rest/{collection}/{document_id}", 200, 0.001, "key")
    await log.flush()
    assert await logged_count(store) == LISTED
    listed = await recent_requests(store, limit=2 * LISTED)
    assert sum(r.status == 404 for r in listed) == 10
    figures = [f for f in await per_minute(store, 5) if f.requests]
    assert sum(f.requests for f in figures) == LISTED + 50
    assert sum(f.unlisted for f in figures) == 50
    assert sum(f.client_errors for f in figures) == 10
