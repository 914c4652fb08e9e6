"""One scrape: every worker's counts added up, and the state every worker shares.

With ``PROMETHEUS_MULTIPROC_DIR`` set, the counts come from the files every worker
writes there (``prometheus_client.multiprocess``): counters and histograms of workers
that have exited stay counted (a respawned worker must not make a counter go back),
and the ``livesum`` gauges of dead workers are dropped with ``mark_process_dead``
before each scrape, so open connections and subscribers are the live workers' only.
Without it (an app embedded in another server), this process's own registry is read.

The shared state (:class:`~docbase.core.metrics.state.StoreState` per database) is read
by the caller from the store and exported as gauges labelled with the database's name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from docbase.adapters.prometheus.instruments import PrometheusInstruments
from docbase.core.metrics import MULTIPROC_ENV
from docbase.core.metrics.state import StoreState
from docbase.core.processes import process_exists

CONTENT_TYPE = CONTENT_TYPE_LATEST
"""The media type of the text exposition format."""

_LIVE_FILE = re.compile(r"gauge_live\w+?_(\d+)\.db")

_STATE_GAUGES = (
    ("docbase_store_up", "1 when the database's store answered the scrape's queries, else 0",
     lambda state: int(state.up)),
    ("docbase_change_feed_position", "Sequence number of the last change in the change log",
     lambda state: state.change_position),
    ("docbase_mail_queue_depth", "Outbound mail queued or being sent",
     lambda state: state.mail_queued),
    ("docbase_webhook_backlog", "Changes the enabled webhooks have yet to deliver, added up",
     lambda state: state.webhook_backlog),
    ("docbase_media_bytes_stored", "Bytes of stored media files (originals)",
     lambda state: state.media_bytes),
)


def scrape(instruments: PrometheusInstruments, states: Mapping[str, StoreState]) -> bytes:
    """Render every metric in the Prometheus text format."""
    instruments.flush()  # this worker's counts up to now; the others' are a second old
    registry = CollectorRegistry(auto_describe=False)
    directory = os.environ.get(MULTIPROC_ENV)
    if directory:
        forget_dead_workers(Path(directory))
        MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
    else:
        registry.register(_Own(instruments.registry))
    registry.register(_SharedState(states))
    return generate_latest(registry)


def forget_dead_workers(directory: Path) -> list[int]:
    """Drop the live gauges of processes that are gone; return their ids."""
    dead = set()
    for path in directory.glob("gauge_live*.db"):
        found = _LIVE_FILE.fullmatch(path.name)
        if found and not process_exists(int(found.group(1))):
            dead.add(int(found.group(1)))
    for pid in dead:
        mark_process_dead(pid, str(directory))  # type: ignore[no-untyped-call]
    return sorted(dead)


class _Own:
    """The registry of this process, as a collector of the scrape's registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Metric]:
        return iter(self.registry.collect())


class _SharedState:
    """The gauges of :class:`StoreState`, one sample per database."""

    def __init__(self, states: Mapping[str, StoreState]) -> None:
        self.states = states

    def collect(self) -> Iterator[Metric]:
        for name, documentation, value in _STATE_GAUGES:
            family = GaugeMetricFamily(name, documentation, labels=("database",))
            for database, state in sorted(self.states.items()):
                family.add_metric((database,), value(state))
            yield family
