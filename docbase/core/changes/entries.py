"""One entry of the durable change log: what changed, as readers receive it.

An entry is stored as a document of the system collection :data:`CHANGES_COLLECTION`
whose ``_id`` is its sequence number written as 24 hexadecimal digits, so the store's
own ``_id`` order (and index) is sequence order on every adapter, and a sequence can
never be stored twice.
"""

from __future__ import annotations

from typing import Any

import msgspec

from docbase.core.documents import Document
from docbase.core.events import ChangeEvent, Operation

CHANGES_COLLECTION = "_changes"
"""The system collection of the change log."""

EVENT_NAMES = {Operation.INSERT: "post", Operation.UPDATE: "put", Operation.DELETE: "delete"}
"""The realtime event each write sends (the original's names; PATCH sends ``put`` too)."""


class Change(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of the change log.

    ``event`` is ``post``, ``put`` or ``delete`` for a write of ``collection``
    (``documents`` holds what a post or put stored, ``ids`` what it wrote or deleted),
    or the name of a custom event (``POST /realtime``), whose ``collection`` is
    ``None`` and whose ``data`` is what was published. ``seq`` orders the log;
    ``time`` is when the entry was written. ``previous`` holds the documents before an
    update or delete of a collection with access rules, for deciding who may hear of it
    (:mod:`docbase.core.changes.readable`); no subscriber receives them. ``batch`` is
    the id of the batch the write belongs to (every write of one batch carries it).
    """

    seq: int
    event: str
    collection: str | None = None
    ids: tuple[str, ...] = ()
    documents: tuple[Document, ...] = ()
    data: Any = None
    method: str | None = None
    author: str = "api"
    time: str = ""
    previous: tuple[Document, ...] = ()
    batch: str | None = None

    @property
    def custom(self) -> bool:
        """Tell whether this is a custom event rather than a write."""
        return self.collection is None


def entry_id(seq: int) -> str:
    """The ``_id`` of the entry numbered ``seq``: 24 hex digits, ordered like ``seq``."""
    return f"{seq:024x}"


def change_from(event: ChangeEvent, seq: int, time: str) -> Change:
    """The entry recording the committed write ``event``."""
    return Change(seq=seq, event=EVENT_NAMES[event.operation], collection=event.collection,
                  ids=event.ids, documents=event.documents, method=event.method,
                  author=event.author, time=time, previous=event.previous,
                  batch=event.batch)


def to_document(change: Change) -> Document:
    """The stored form of an entry."""
    stored: Document = msgspec.to_builtins(change)
    stored["_id"] = entry_id(change.seq)
    return stored


def from_document(document: Document) -> Change:
    """The entry a stored document holds (system fields are ignored)."""
    fields = {k: v for k, v in document.items() if not k.startswith("_")}
    return msgspec.convert(fields, Change)
