"""How ``docbase serve`` sets metrics up (``docs/operations.md``).

The supervisor gives its workers a private directory for prometheus-client's
multiprocess mode (:func:`docbase.http.launch.metrics_directory`); each worker installs
its Prometheus instruments before its stores are built, so they are timed (:func:`install_metrics`),
and serves ``GET /metrics`` to the configured token and addresses
(:func:`metrics_access`). Without a metrics token or address none of it happens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docbase.config import Deployment
from docbase.core.metrics import install
from docbase.core.plugins import lazy_module
from docbase.http.probes import MetricsAccess

if TYPE_CHECKING:
    from docbase.adapters import prometheus
    from docbase.adapters.prometheus import PrometheusInstruments
else:  # imported when metrics are on: a worker without them never loads prometheus-client
    prometheus = lazy_module("docbase.adapters.prometheus")


def install_metrics(deployment: Deployment) -> PrometheusInstruments | None:
    """Install this worker's Prometheus instruments if metrics are configured."""
    if not deployment.metrics:
        return None
    chosen = prometheus.PrometheusInstruments()
    install(chosen)
    return chosen


def metrics_access(deployment: Deployment, instruments: PrometheusInstruments | None,
                   ) -> MetricsAccess | None:
    """``GET /metrics`` as the deployment configures it (``None``: no metrics)."""
    if instruments is None:
        return None
    return MetricsAccess(lambda states: prometheus.scrape(instruments, states),
                         prometheus.CONTENT_TYPE,
                         token=deployment.metrics_token,
                         addresses=deployment.metrics_addresses)


