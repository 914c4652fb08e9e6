"""What a SQL backend asks of the way its work runs (:mod:`.executors` has the ways).

The backend hands every store operation to an :class:`Executor` as *work*: a plain
function of a synchronous SQLAlchemy ``Connection``, run in one transaction. Besides
that, an executor may know short ways around it for the commonest reads (a body by
key, a page of keys, a table's number), each answering ``None`` when it cannot, so
that the caller goes the usual way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

import sqlalchemy as sa

from docbase.adapters.sql.held import Held

T = TypeVar("T")
Work = Callable[[sa.Connection], T]
"""One store operation, as a function of a connection in one transaction."""
Rows = list[tuple[str]]
Params = Mapping[str, Any]


class Executor(Protocol):
    """Runs a backend's work, and the short ways its engine has around that."""

    async def run(self, work: Work[T], *, write: bool) -> T:
        """Run ``work`` in one transaction (a write) or autocommitting (a read)."""

    def scalars(self, conn: sa.Connection, statement: sa.Select[Any],
                params: Params | None = None) -> list[Any]:
        """The first column of ``statement``'s rows (``params``: values it leaves open)."""

    def scalars_now(self, number: int, statement: sa.Select[Any],
                    params: Params | None = None) -> list[Any] | None:
        """As :meth:`scalars` on this thread; ``None``: ask with :meth:`run`."""

    def body_now(self, number: int, document_id: str) -> Rows | None:
        """The body row of a document of table ``number`` on this thread, or ``None``."""

    def number_now(self, collection: str) -> int | None:
        """``collection``'s committed table number here (``NO_TABLE``: none), or ``None``."""

    async def body_soon(self, number: int, document_id: str) -> Rows | None:
        """As :meth:`body_now`, or by a short way of the engine's own; ``None``: not here."""

    async def scalars_soon(self, statement: sa.Select[Any], params: Params | None,
                           forget: Callable[[], None]) -> list[Any] | None:
        """As :meth:`scalars` by the engine's short way (``forget``: table gone), or ``None``."""

    async def hold(self) -> Held:
        """Begin a transaction that the works of several operations share (:mod:`.held`)."""

    async def close(self) -> None:
        """Release the engine's connections and the executor's threads."""
