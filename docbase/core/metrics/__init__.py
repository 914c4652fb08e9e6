"""Instrumentation: what core features report, and nothing of how it is exported.

A feature that has something worth counting (a store operation's latency, a job run, a
failed mail, a refused request) calls the process's :class:`Instruments` through
:func:`instruments`. Until a server installs an exporter (:func:`install`; ``docbase
serve`` installs the Prometheus adapter of ``docbase/adapters/prometheus/`` when metrics
are configured), every call goes to :data:`NO_INSTRUMENTS`, which does nothing.

Instruments are per process by nature: each worker counts what it did, and the
exporter adds the workers' counts up. State that every process shares (the change
feed's position, the mail queue) is read from the store when metrics are scraped
(:mod:`.state`), never counted here. Labels are a closed set of words (operation
kinds, engine names, route templates, job names): never an id, a key or user data.
"""

from __future__ import annotations

from docbase.core.metrics.instruments import NO_INSTRUMENTS, Instruments, NoInstruments, Observe

__all__ = ["MULTIPROC_ENV", "NO_INSTRUMENTS", "Instruments", "NoInstruments", "Observe",
           "install", "instruments"]

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
"""The environment variable naming the directory where every process of a server writes
its counts for the exporter to add up (prometheus-client's multiprocess mode).

Declared here, below both of its users: the supervisor of ``docbase serve`` sets it before
any worker starts (``docbase/http/launch.py``, which does not import the exporter), and
the exporter reads it at a scrape (``docbase/adapters/prometheus/exposition.py``).
"""

_installed: list[Instruments] = [NO_INSTRUMENTS]


def install(chosen: Instruments) -> None:
    """Make ``chosen`` the instruments every feature of this process reports to."""
    _installed[0] = chosen


def instruments() -> Instruments:
    """The instruments of this process (:data:`NO_INSTRUMENTS` until one is installed)."""
    return _installed[0]
