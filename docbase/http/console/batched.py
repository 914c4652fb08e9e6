"""One write per ticked document, all of them as one batch: all or nothing.

The console's bulk edit and bulk delete (:mod:`~docbase.http.console.bulk_edit`,
:mod:`~docbase.http.console.bulk`) run their writes inside ``db.batch()``
(``docs/batch.md``): each write passes the collection's write pipeline as it would
alone, and the first one refused rolls every other back. A store without transactions
(MongoDB) cannot do that: there the writes run with ``atomic=False``, one after the
other, tagged with one batch id, and stop at the first refusal; what was written before
it stays written, and :attr:`Outcome.message` says so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from docbase.core.database import Database
from docbase.core.errors import DocbaseError, TransactionsUnsupported

Write = Callable[[str], Awaitable[object]]
"""The write of one document, given its id."""
NO_TRANSACTIONS = ("This database's store has no transactions (MongoDB), so the "
                   "documents were written one by one, not all or nothing.")


class _Refused(Exception):  # carries the refusal out of the batch, which rolls back
    def __init__(self, document_id: str, error: DocbaseError) -> None:
        super().__init__(document_id)
        self.document_id = document_id
        self.error = error


class Outcome:
    """What a batch did: the ids written, the one refused (and why), all or nothing."""

    __slots__ = ("atomic", "batch_id", "error", "refused", "written")

    def __init__(self, batch_id: str, *, atomic: bool) -> None:
        self.batch_id = batch_id
        self.atomic = atomic
        """The writes ran in one transaction: a refusal left nothing written."""
        self.written: list[str] = []
        """The documents written (and kept: none of them after a refused atomic batch)."""
        self.refused: str | None = None
        """The document whose write was refused, which ended the batch."""
        self.error: DocbaseError | None = None

    def message(self, done: str) -> str:
        """What to tell the user; ``done`` says what happened to the written documents."""
        if self.refused is None:
            text = f"{done} {len(self.written)} document(s) in one batch ({self.batch_id})."
            return text if self.atomic else f"{text} {NO_TRANSACTIONS}"
        assert self.error is not None, "a refusal has its error"
        why = f"document {self.refused} was refused: {self.error.message}"
        if self.atomic:
            return f"Nothing changed: {why}"
        return (f"{done} {len(self.written)} document(s) before {why}; the others were "
                f"not tried. {NO_TRANSACTIONS}")


async def in_one_batch(database: Database, ids: list[str], write: Write) -> Outcome:
    """``write`` each of ``ids`` inside one batch; atomic where the store has transactions."""
    try:
        return await _run(database, ids, write, atomic=True)
    except TransactionsUnsupported:  # raised before any write ran
        return await _run(database, ids, write, atomic=False)


async def _run(database: Database, ids: list[str], write: Write, *, atomic: bool) -> Outcome:
    written: list[str] = []
    try:
        async with database.batch(atomic=atomic) as unit:
            outcome = Outcome(unit.batch_id or "", atomic=atomic)
            for document_id in ids:
                try:
                    await write(document_id)
                except DocbaseError as exc:
                    raise _Refused(document_id, exc) from exc
                written.append(document_id)
    except _Refused as refused:
        outcome.refused, outcome.error = refused.document_id, refused.error
        outcome.written = [] if atomic else written
        return outcome
    outcome.written = written
    return outcome
