"""Metrics exported with ``prometheus-client``: the instruments and the scrape.

:class:`PrometheusInstruments` implements the instrumentation port of
``docbase/core/metrics/``; ``docbase serve`` installs it in every worker when metrics
are configured. With ``PROMETHEUS_MULTIPROC_DIR`` set (``docbase serve`` sets it to a
private directory for its workers) every process writes its counts to files there and a
scrape adds them up (:func:`scrape`), so one scrape answers for all workers whichever
answers it. Install it with ``pip install 'docbase[server]'``.
"""

from __future__ import annotations

from docbase.core.errors import MissingDependencyError

try:
    import prometheus_client  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("prometheus-client", extra="server") from exc

from docbase.adapters.prometheus.exposition import CONTENT_TYPE, scrape
from docbase.adapters.prometheus.instruments import PrometheusInstruments

__all__ = ["CONTENT_TYPE", "PrometheusInstruments", "scrape"]
