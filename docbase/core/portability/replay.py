"""The writes an export's copy may have missed, read back from the change log.

While an export copies collections one page at a time, writes go on; each is logged
(:mod:`.capture` makes sure). :func:`changes_between` reads the log from the position
recorded before the copy up to the position reached after it, waiting for numbers taken
but not yet stored (the gap-aware :class:`~docbase.core.changes.reader.LogReader`), and
keeps, per collection and id, the last state the log gives: the stored document, or
``None`` when it was deleted. An export writes those states over what it copied, so
every document stands where it stood at the end position. Memory is proportional to
the number of documents written during the export, not to the database.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection

from docbase.core.changes.log import ChangeLog
from docbase.core.changes.reader import LogReader
from docbase.core.documents import Document
from docbase.core.errors import DocbaseError

Changed = dict[str, dict[str, Document | None]]
"""Per collection, per ``_id``: the document as of the end position, or ``None`` (deleted)."""

POLL_SECONDS = 0.05


async def changes_between(log: ChangeLog, start: int, end: int, *, grace: float,
                          only: Collection[str] | None = None) -> Changed:
    """The last state of each document written between log positions ``start`` and ``end``.

    ``only`` restricts it to those collections.

    Raises:
        ExportOverrun: the log was pruned past ``start`` meanwhile (more writes during
            the export than ``limits.change_max_entries``): the archive could not be
            made consistent.
        BackendError: the store failed.

    """
    changed: Changed = {}
    reader = LogReader(log, start, grace=grace)
    while reader.position < end:
        entries = await reader.read()
        if not entries:
            await asyncio.sleep(POLL_SECONDS)
        for entry in entries:
            if entry.seq > end:
                break
            if entry.collection is None or (only is not None and entry.collection not in only):
                continue
            states = changed.setdefault(entry.collection, {})
            if entry.event == "delete":
                states.update(dict.fromkeys(entry.ids))
            else:
                states.update((str(d["_id"]), d) for d in entry.documents)
    if (await log.state())[1] > start:
        raise ExportOverrun("the change log was pruned while the export copied (more "
                            "writes than limits.change_max_entries): export again, or "
                            "raise that limit")
    return changed


class ExportOverrun(DocbaseError):
    """The writes made during an export outran the change log's retention."""
