"""The change feed: committed writes, published to subscribers and kept in a durable log."""

from __future__ import annotations

from docbase.core.changes.bus import ChangeBus, Subscriber
from docbase.core.changes.entries import CHANGES_COLLECTION, Change
from docbase.core.changes.fanout import Subscription
from docbase.core.changes.feed import ChangeFeed

__all__ = ["CHANGES_COLLECTION", "Change", "ChangeBus", "ChangeFeed", "Subscriber",
           "Subscription"]
