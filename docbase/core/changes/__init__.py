"""The change feed: committed writes, published to subscribers."""

from __future__ import annotations

from docbase.core.changes.bus import ChangeBus, Subscriber

__all__ = ["ChangeBus", "Subscriber"]
