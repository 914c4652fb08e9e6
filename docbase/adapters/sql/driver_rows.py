"""Cached read statements run on SQLite's own cursor, without SQLAlchemy's result layer.

A list read runs one cached ``SELECT`` (one per query shape, see ``store.py``) and
takes the first column of up to a page of rows. SQLAlchemy's execute path and its
result objects cost ~50-60 µs for a page of 100 rows against ~25 µs for SQLite's own
cursor (``docs/benchmarks.md``). :class:`DriverStatements` compiles such a statement
once, keeps its SQL text and parameters, and runs it straight on the ``sqlite3``
connection underneath the SQLAlchemy one, so the time limit of the operation (the
progress handler the backend set on that connection) still applies.

A driver error is wrapped as SQLAlchemy would have wrapped it
(:meth:`~sqlalchemy.exc.DBAPIError.instance`), so :mod:`.errors` translates it alike.
A typed bind's value goes through its type's bind processor, as SQLAlchemy passes it
(a ``TEXT[]`` path, a boolean); a statement whose text SQLAlchemy writes at each run
(expanding ``IN`` lists) keeps going through SQLAlchemy.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

_CACHED = 512  # compiled statements kept (all dropped when full)
Params = Mapping[str, Any]


class _Template(NamedTuple):
    sql: str
    names: tuple[str, ...]
    values: tuple[Any, ...]  # as compiled: the statement's own bound values, processed
    processors: tuple[Callable[[Any], Any] | None, ...]  # each name's type's, or none


_Compiled = tuple[str, tuple[Any, ...]] | None  # None: SQLAlchemy runs it


class DriverStatements:
    """First-column reads of cached statements on a SQLite engine's driver connections.

    A statement may leave values to bind at each run (``params``, as keyset paging
    does, :mod:`.keyset`): it is compiled once all the same, and they fill its slots.
    """

    def __init__(self, engine: sa.Engine) -> None:
        self.dialect = engine.dialect
        # keyed by the statement itself: the key keeps it alive, so no identity is reused
        self._compiled: dict[sa.Select[Any], _Template | None] = {}
        self._shapes: dict[Any, Any] = {}  # SQLAlchemy cache key -> its compiled form

    def scalars(self, conn: sa.Connection, statement: sa.Select[Any],
                params: Params | None = None) -> list[Any]:
        """The first column of every row ``statement`` returns, in order."""
        compiled = self.compiled(statement, params)
        driver = conn.connection.driver_connection
        if compiled is None or not isinstance(driver, sqlite3.Connection):
            return list(conn.execute(statement, dict(params or {})).scalars())
        sql, parameters = compiled
        try:
            rows = driver.execute(sql, parameters).fetchall()
        except sqlite3.Error as exc:
            raise sa_exc.DBAPIError.instance(sql, parameters, exc, sqlite3.Error) from exc
        return [row[0] for row in rows]

    def compiled(self, statement: sa.Select[Any], params: Params | None = None) -> _Compiled:
        """The SQL text and parameters of ``statement``, or ``None``: SQLAlchemy runs it."""
        if statement in self._compiled:
            template = self._compiled[statement]
        else:
            template = self._compile(statement, params)
            if len(self._compiled) >= _CACHED:
                self._compiled.clear()
            self._compiled[statement] = template
        if template is None:
            return None
        if not params:
            return template.sql, template.values
        values = tuple(value if name not in params else
                       params[name] if process is None else process(params[name])
                       for name, value, process in zip(template.names, template.values,
                                                       template.processors, strict=True))
        return template.sql, values

    def _compile(self, statement: sa.Select[Any], params: Params | None) -> _Template | None:
        """Compile ``statement``, or reuse the compiled form of one of its shape.

        A filter's values are part of the statement the store builds (one per query),
        but not of SQLAlchemy's cache key, which abstracts bound values: statements
        differing only in them share one compiled form (compiling cost ~1-2 ms a
        statement, the key ~0.1), and each takes its own values from its key.
        """
        key = statement._generate_cache_key()
        compiled: Any
        extracted = None
        if key is None:
            compiled = statement.compile(dialect=self.dialect)
        else:
            compiled = self._shapes.get(key.key)
            if compiled is None:
                if len(self._shapes) >= _CACHED:
                    self._shapes.clear()
                compiled = self._shapes[key.key] = self.dialect.statement_compiler(
                    self.dialect, statement, cache_key=key)
            extracted = key.bindparams
        try:
            values = compiled.construct_params(dict(params) if params else None,
                                               extracted_parameters=extracted)
        except sa_exc.InvalidRequestError:  # a value to bind at each run is missing
            return None
        plain = (compiled.positional and compiled.positiontup is not None
                 and not compiled.literal_execute_params and not compiled.post_compile_params
                 and all(values[name] is not None for name in compiled.positiontup))
        result: _Template | None = None
        if plain:
            assert compiled.positiontup is not None
            names = tuple(compiled.positiontup)
            # what SQLAlchemy's execution does with a typed bind's value (_init_compiled)
            processors = tuple(compiled._bind_processors.get(name) for name in names)
            result = _Template(compiled.string, names, tuple(
                values[name] if process is None else process(values[name])
                for name, process in zip(names, processors, strict=True)), processors)
        return result
