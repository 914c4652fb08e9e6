"""The instrumentation port: the events core features report, one method each.

Every method is cheap and never raises: a metric must not fail the operation it
measures. Arguments are labels from a closed set (see :mod:`docbase.core.metrics`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

Observe = Callable[[float], None]
"""Records one measurement, in seconds."""


class Instruments(Protocol):
    """What a metrics exporter receives from core features and the HTTP server."""

    def http_request(self, route: str, method: str, status: int, seconds: float) -> None:
        """A request of the route template ``route`` was answered ``status`` in ``seconds``."""

    def connection(self, change: int) -> None:
        """A client connection of this process opened (``+1``) or closed (``-1``)."""

    def store_timer(self, kind: str, engine: str) -> Observe:
        """Return what records the seconds of one store call of ``kind`` on ``engine``.

        ``kind`` is ``get``, ``find``, ...; ``engine`` is ``sqlite``, ``postgresql``, ...
        It is asked once per kind, so that a call itself allocates nothing.
        """

    def job_run(self, job: str, *, failed: bool) -> None:
        """The scheduled job ``job`` ran one tick in this process, and whether it failed."""

    def mail_failed(self) -> None:
        """Sending one outbound mail failed (it stays ``failed`` in the outbound log)."""

    def webhook_failed(self) -> None:
        """One webhook delivery failed (it is retried later, or the webhook disabled)."""

    def rate_limited(self, limit: str) -> None:
        """A request was refused by ``limit``: ``key``, ``address``, ``failed_credentials``."""

    def subscribers(self, change: int) -> None:
        """Change-feed subscribers of this process: ``+1`` on attach, ``-1`` on detach."""


def _ignore(seconds: float) -> None:
    """Record nothing."""


class NoInstruments:
    """Instruments that record nothing: the default, and ``docbase serve`` without metrics."""

    def http_request(self, route: str, method: str, status: int, seconds: float) -> None:
        """Record nothing."""

    def connection(self, change: int) -> None:
        """Record nothing."""

    def store_timer(self, kind: str, engine: str) -> Observe:
        """Return an observer that records nothing."""
        return _ignore

    def job_run(self, job: str, *, failed: bool) -> None:
        """Record nothing."""

    def mail_failed(self) -> None:
        """Record nothing."""

    def webhook_failed(self) -> None:
        """Record nothing."""

    def rate_limited(self, limit: str) -> None:
        """Record nothing."""

    def subscribers(self, change: int) -> None:
        """Record nothing."""


NO_INSTRUMENTS: Instruments = NoInstruments()
"""The instruments that record nothing."""
