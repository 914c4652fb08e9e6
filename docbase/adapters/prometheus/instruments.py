"""The instrumentation port implemented with ``prometheus-client`` metrics.

Every metric's label children are made once per label combination and kept, with a
:class:`~docbase.adapters.prometheus.tallies.Tally` each for the hot path (a request, a
store call): one dict look-up and a few additions, no allocation, flushed to the
metrics every second by :meth:`PrometheusInstruments.flush_every` and before a scrape.
Gauges that a worker holds for itself (open connections, change-feed subscribers) are
``livesum`` gauges: a scrape adds up the live workers' values and forgets the dead
ones' (:func:`~docbase.adapters.prometheus.exposition.scrape`).
"""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from docbase.adapters.prometheus.tallies import Tally
from docbase.core.metrics import Observe

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
                   2.5, 5.0, 10.0)
"""Seconds: from a half-millisecond get by id to a ten-second query timeout."""
FLUSH_SECONDS = 1.0
"""How often a worker adds its tallied requests and store calls to the shared metrics."""


class PrometheusInstruments:
    """The metrics of one process, registered in a private registry.

    In multiprocess mode the registry only holds the metric objects (their values live
    in the shared directory); otherwise :func:`scrape` reads it directly.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "docbase_http_requests", "HTTP requests answered, by route template, method "
            "and status class", ("route", "method", "status"), registry=r)
        self.request_seconds = Histogram(
            "docbase_http_request_duration_seconds", "Time from a request's arrival to "
            "the end of its answer", ("route", "method"), buckets=LATENCY_BUCKETS, registry=r)
        self.connections = Gauge(
            "docbase_http_connections_open", "Client connections open",
            multiprocess_mode="livesum", registry=r)
        self.store_seconds = Histogram(
            "docbase_store_operation_duration_seconds", "Time of one store operation, by "
            "kind and engine", ("kind", "engine"), buckets=LATENCY_BUCKETS, registry=r)
        self.subscriber_count = Gauge(
            "docbase_change_feed_subscribers", "Change-feed subscribers (GET /realtime "
            "streams, db.changes readers) connected", multiprocess_mode="livesum", registry=r)
        self.job_runs = Counter("docbase_job_runs", "Scheduled job ticks run, by job",
                                ("job",), registry=r)
        self.job_failures = Counter("docbase_job_failures", "Scheduled job ticks that "
                                    "failed, by job", ("job",), registry=r)
        self.mail_failures = Counter("docbase_mail_failures", "Outbound mail sends that "
                                     "failed", registry=r)
        self.webhook_failures = Counter("docbase_webhook_failures", "Webhook deliveries "
                                        "that failed", registry=r)
        self.refusals = Counter("docbase_rate_limit_refusals", "Requests refused by a rate "
                                "limit, by limit", ("limit",), registry=r)
        self._requests: dict[tuple[str, str, int], Tally] = {}
        self._stores: list[Tally] = []

    def http_request(self, route: str, method: str, status: int, seconds: float) -> None:
        """Count one answered request and its duration (in this process until a flush)."""
        status_class = status // 100 if 1 <= status // 100 <= 5 else 0
        tally = self._requests.get((route, method, status_class))
        if tally is None:
            tally = self._requests[(route, method, status_class)] = Tally(
                self.request_seconds.labels(route, method),
                self.requests.labels(route, method, _STATUS_CLASSES[status_class]))
        tally.observe(seconds)

    def flush(self) -> None:
        """Add what this process tallied since the last flush to the metrics."""
        for tally in self._requests.values():
            tally.flush()
        for tally in self._stores:
            tally.flush()

    async def flush_every(self, seconds: float = FLUSH_SECONDS) -> None:
        """Flush every ``seconds`` until cancelled, then once more."""
        try:
            while True:
                await asyncio.sleep(seconds)
                self.flush()
        finally:
            self.flush()

    def connection(self, change: int) -> None:
        """A client connection opened (``+1``) or closed (``-1``)."""
        self.connections.inc(change)

    def store_timer(self, kind: str, engine: str) -> Observe:
        """The observer of store operations of ``kind`` on ``engine`` (tallied, flushed)."""
        tally = Tally(self.store_seconds.labels(kind, engine))
        self._stores.append(tally)
        return tally.observe

    def job_run(self, job: str, *, failed: bool) -> None:
        """Count one job tick, and its failure."""
        self.job_runs.labels(job).inc()
        if failed:
            self.job_failures.labels(job).inc()

    def mail_failed(self) -> None:
        """Count one failed mail send."""
        self.mail_failures.inc()

    def webhook_failed(self) -> None:
        """Count one failed webhook delivery."""
        self.webhook_failures.inc()

    def rate_limited(self, limit: str) -> None:
        """Count one refusal by ``limit``."""
        self.refusals.labels(limit).inc()

    def subscribers(self, change: int) -> None:
        """A change-feed subscriber attached (``+1``) or left (``-1``)."""
        self.subscriber_count.inc(change)


_STATUS_CLASSES = ("other", "1xx", "2xx", "3xx", "4xx", "5xx")
