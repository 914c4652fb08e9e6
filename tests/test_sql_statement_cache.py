"""List statements are built once per query shape; equal-looking operands stay apart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa

from docbase.adapters.sql import from_url
from docbase.adapters.sql.driver_rows import DriverStatements
from docbase.adapters.sql.executors import ThreadExecutor
from docbase.core.query import Eq, In, Query, SortKey


async def test_true_one_and_one_point_oh_are_different_queries(tmp_path: Path) -> None:
    store, _ = from_url(f"sqlite:///{tmp_path}/cache.db")
    async with store:
        await store.insert("c", [{"_id": f"{n:024x}", "_version": 0, "a": value}
                                 for n, value in enumerate([True, 1, 2.5, "1"])])

        async def matching(value: object) -> list[object]:
            found = await store.find("c", Query(filter=Eq(("a",), value)))  # type: ignore[arg-type]
            return [d["a"] for d in found]

        for _ in range(2):  # the second round is answered by cached statements
            assert await matching(1) == [1]
            assert await matching(True) == [True]
            assert await matching(1.0) == [1]
            assert await matching(2.5) == [2.5]
            assert await matching("1") == ["1"]
        assert len(store._find_statements) == 5


async def test_list_reads_on_the_driver_answer_as_sqlalchemy_does(tmp_path: Path) -> None:
    store, _ = from_url(f"sqlite:///{tmp_path}/driver.db")
    async with store:
        await store.insert("c", [{"_id": f"{n:024x}", "_version": 0, "n": n, "s": f"v{n % 3}"}
                                 for n in range(30)])
        queries = [Query(limit=5), Query(filter=Eq(("s",), "v1"), skip=2, limit=4),
                   Query(filter=In(("n",), (3, 4, 29)), limit=None),
                   Query(sort=(SortKey(("n",), -1),), limit=3)]
        backend = store.backend
        for query in queries:
            bodies = await store._find_bodies("c", query, ("_version",))
            number = backend.cached_number("c")
            assert number is not None
            statement = store._find_statement(number, query, ("_version",))

            def by_sqlalchemy(conn: Any, statement: Any = statement) -> list[str]:
                return list(conn.execute(statement).scalars())

            assert bodies == await backend.run(by_sqlalchemy, write=False)
            assert bodies
            assert all('"_version"' not in body for body in bodies)
        executor = backend.executor
        assert isinstance(executor, ThreadExecutor)
        assert executor.driver is not None
        compiled = executor.driver._compiled
        assert sum(entry is not None for entry in compiled.values()) >= 3  # on the driver
        assert await store.count("c", Eq(("s",), "v1")) == 10


def test_statements_differing_only_in_values_are_compiled_once(tmp_path: Path) -> None:
    """A filter's values are in the statement the store builds, not in SQLAlchemy's
    cache key: statements that differ only in them share one compiled form, and each
    still runs with its own values (compiling cost more than building a statement)."""
    engine = sa.create_engine(f"sqlite:///{tmp_path}/shapes.db")
    table = sa.table("t", sa.column("id", sa.Text), sa.column("n", sa.Integer))
    driver = DriverStatements(engine)
    compiles = []
    original = engine.dialect.statement_compiler

    def counted(*args: Any, **kwargs: Any) -> Any:
        compiles.append(args[1])
        return original(*args, **kwargs)

    engine.dialect.statement_compiler = counted  # type: ignore[assignment]
    try:
        first = driver.compiled(sa.select(table.c.id).where(table.c.n == 1))
        second = driver.compiled(sa.select(table.c.id).where(table.c.n == 2))
        other = driver.compiled(sa.select(table.c.id).where(table.c.id == "x"))
    finally:
        engine.dialect.statement_compiler = original
        engine.dispose()
    assert first is not None
    assert second is not None
    assert other is not None
    assert first[0] == second[0] != other[0]
    assert (first[1], second[1], other[1]) == ((1,), (2,), ("x",))
    assert len(compiles) == 2
