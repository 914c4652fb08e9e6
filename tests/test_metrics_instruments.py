"""The instrumentation port and its Prometheus adapter, in one process.

The timed store keeps the whole DocumentStore contract (the suite of
``docbase/testing/contract.py`` runs on a timed SQLite store) and reports each
operation by kind and engine; the Prometheus instruments render what they were told in
the text format, by route template, never with anything of the request itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from docbase.adapters.prometheus import PrometheusInstruments, scrape
from docbase.adapters.sql import from_url
from docbase.core.metrics import NO_INSTRUMENTS
from docbase.core.metrics.state import StoreState
from docbase.core.metrics.timed_store import timed
from docbase.core.query import MATCH_ALL, Query
from docbase.testing.contract import DocumentStoreContract


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


class TestTimedStoreKeepsTheContract(DocumentStoreContract):
    """Every DocumentStore method through the timing wrapper, on SQLite."""

    @pytest.fixture
    async def store(self) -> AsyncIterator[Any]:
        inner, _blobs = from_url("sqlite://")
        async with timed(inner, "sqlite", PrometheusInstruments()) as store:
            yield store


async def test_timed_store_reports_each_operation_by_kind_and_engine() -> None:
    instruments = PrometheusInstruments()
    inner, _blobs = from_url("sqlite://")
    async with timed(inner, "sqlite", instruments) as store:
        await store.insert("notes", [{"_id": "0" * 24, "text": "secret-note-text"}])
        await store.get("notes", "0" * 24)
        await store.find("notes", Query())
        await store.count("notes", MATCH_ALL)
        assert hasattr(store, "find_encoded") == hasattr(inner, "find_encoded")
    found = samples(scrape(instruments, {}).decode())
    name = "docbase_store_operation_duration_seconds_count"
    for kind in ("insert", "get", "find", "count"):
        assert found[(name, (("engine", "sqlite"), ("kind", kind)))] == 1
    assert found[(name, (("engine", "sqlite"), ("kind", "update")))] == 0


def test_requests_are_counted_by_route_template_method_and_status_class() -> None:
    instruments = PrometheusInstruments()
    for status in (200, 201, 404, 503, 200):
        instruments.http_request("/rest/{collection}", "GET", status, 0.002)
    instruments.http_request("unmatched", "OTHER", 999, 0.001)
    state = {"docbase": StoreState(up=True, change_position=7, mail_queued=3,
                                   webhook_backlog=2, media_bytes=1024)}
    text = scrape(instruments, state).decode()
    found = samples(text)
    counted = "docbase_http_requests_total"
    route = ("route", "/rest/{collection}")
    assert found[(counted, (("method", "GET"), route, ("status", "2xx")))] == 3
    assert found[(counted, (("method", "GET"), route, ("status", "4xx")))] == 1
    assert found[(counted, (("method", "GET"), route, ("status", "5xx")))] == 1
    assert found[(counted, (("method", "OTHER"), ("route", "unmatched"),
                            ("status", "other")))] == 1
    latency = "docbase_http_request_duration_seconds_bucket"
    assert found[(latency, (("le", "0.0025"), ("method", "GET"), route))] == 5
    assert found[(latency, (("le", "0.001"), ("method", "GET"), route))] == 0
    assert found[("docbase_mail_queue_depth", (("database", "docbase"),))] == 3
    assert found[("docbase_change_feed_position", (("database", "docbase"),))] == 7
    assert found[("docbase_webhook_backlog", (("database", "docbase"),))] == 2
    assert found[("docbase_media_bytes_stored", (("database", "docbase"),))] == 1024
    assert found[("docbase_store_up", (("database", "docbase"),))] == 1


def test_core_events_are_counted() -> None:
    instruments = PrometheusInstruments()
    instruments.job_run("nightly", failed=False)
    instruments.job_run("nightly", failed=True)
    instruments.mail_failed()
    instruments.webhook_failed()
    instruments.webhook_failed()
    instruments.rate_limited("key")
    instruments.subscribers(+1)
    instruments.subscribers(+1)
    instruments.subscribers(-1)
    instruments.connection(+1)
    found = samples(scrape(instruments, {}).decode())
    assert found[("docbase_job_runs_total", (("job", "nightly"),))] == 2
    assert found[("docbase_job_failures_total", (("job", "nightly"),))] == 1
    assert found[("docbase_mail_failures_total", ())] == 1
    assert found[("docbase_webhook_failures_total", ())] == 2
    assert found[("docbase_rate_limit_refusals_total", (("limit", "key"),))] == 1
    assert found[("docbase_change_feed_subscribers", ())] == 1
    assert found[("docbase_http_connections_open", ())] == 1


def test_without_metrics_the_store_is_not_wrapped() -> None:
    from docbase.core.composition import DatabaseSpec, build_database

    database = build_database(DatabaseSpec("plain", "sqlite://"))
    assert "Timed" not in type(database.store).__name__
    assert NO_INSTRUMENTS.store_timer("get", "sqlite")(0.1) is None
