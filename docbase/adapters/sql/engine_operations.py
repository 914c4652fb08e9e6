"""What the generic SQL modules ask of an engine besides its SQL: :class:`EngineOperations`.

Each database docbase runs on has one package (``sqlite/``, ``postgresql/``) holding its
modules and one *engine object*, a :class:`~.dialects.Dialect` that is also an
:class:`EngineOperations`: it spells the SQL that differs (:mod:`.dialects`), declares
its traits (:mod:`.engines`) and does the few things only that database does, listed
here: open a SQLAlchemy engine for a URL, set up each new connection, install docbase's
SQL functions, and hand out the short ways around SQLAlchemy that it has (PostgreSQL's
asyncpg point reads and writes). Generic modules call these methods and never import an
engine package; ``tests/test_architecture.py`` checks it, and :mod:`.engines` is the
one place that names the packages.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import sqlalchemy as sa

if TYPE_CHECKING:  # imported where used: it brings SQLAlchemy's ORM (~7 MiB per process)
    from sqlalchemy.ext.asyncio import AsyncEngine

Rows = list[tuple[str]]
HeldWay = tuple[Callable[[], Any], Callable[[str], int | None]]
"""The transaction the task holds (a :class:`~.held.Held`, or ``None``) and the table
numbers to use in it."""


class PointReader(Protocol):
    """Reads by primary key and short lists past SQLAlchemy (``None``: ask the usual way)."""

    async def body(self, number: int, document_id: str) -> Rows | None:
        """The body row of a document of table ``number`` (``[]``: none)."""

    async def scalars(self, sql: str, arguments: Sequence[Any],
                      forget: Callable[[], None]) -> list[Any] | None:
        """The first column of a compiled statement's rows (``forget``: table gone)."""

    async def close(self) -> None:
        """Release the reader's connections."""


class Inserter(Protocol):
    """One-statement writes past SQLAlchemy (``None``/``False``: do it the usual way)."""

    async def insert(self, collection: str, rows: Sequence[Any], *,
                     held_back_into: int | None = None) -> bool:
        """Insert rows of :data:`~.dialects.Row`; ``False``: not done, insert the usual way."""

    async def swap(self, collection: str, row: Any, version: int) -> bool | None:
        """Write ``row`` if still at ``version`` (``None``: no short way now)."""

    async def read(self, collection: str, document_id: str) -> Rows | None:
        """The body row an update starts from (``[]``: none; ``None``: no short way)."""

    async def close(self) -> None:
        """Release the inserter's connections."""


class EngineOperations(abc.ABC):
    """What one database does its own way; the defaults are "no such way here"."""

    @abc.abstractmethod
    def create_engine(self, url: str, *, query_timeout: float) -> AsyncEngine | sa.Engine:
        """A SQLAlchemy engine for ``url`` (synchronous, or ``AsyncEngine``).

        Raises:
            MissingDependencyError: the database's driver is not installed.

        """

    @abc.abstractmethod
    def prepare(self, engine: sa.Engine, *, in_memory: bool) -> None:
        """Set up each new connection of ``engine`` (``in_memory``: SQLite's ``:memory:``)."""

    def function_statements(self) -> list[str]:
        """The DDL of docbase's SQL functions kept in the database (migrations run it)."""
        return []

    def point_reader(self, engine: Any) -> PointReader | None:
        """The short way of ``engine``'s point reads, or ``None`` when it has none."""
        return None

    def inserter(self, engine: Any, number: Callable[[str], int | None],
                 forget: Callable[[str], None], *, held: HeldWay) -> Inserter | None:
        """The short way of ``engine``'s one-statement writes, or ``None``.

        ``number`` gives a collection's cached table number, ``forget`` drops it (table
        gone); ``held`` gives the transaction the task holds (:mod:`.held`).
        """
        return None
