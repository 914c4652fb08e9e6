"""The read road: documents reach a principal through their own collection's read stages.

Whatever hands documents to a principal passes the read pipeline of the collection they
belong to (:class:`ReadRoad`).
"""

from __future__ import annotations

from docbase.core.reads.road import UNREADABLE, ReadRoad

__all__ = ["UNREADABLE", "ReadRoad"]
