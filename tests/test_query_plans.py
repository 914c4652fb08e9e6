"""Each query shape users send is served by an index: its plan seeks, never scans.

The shapes are ``docbase/testing/query_shapes.py``'s (the query-shape benchmark's),
on :data:`SIZE` documents with the fields they query indexed (``ensure_index``, what
``index: true`` and the automatic indexes make). The check reads the database's own
plan (``EXPLAIN QUERY PLAN``, ``EXPLAIN``) through ``store.explain``, never a timing.
It fails when a plan reads the whole table or walks a whole index testing a
condition on each row, on SQLite and PostgreSQL. The shapes that query inside arrays
(an array element, a lookup's ``_id``) are served by item indexes
(``docbase/adapters/sql/item_indexes.py``), which ``ensure_index`` makes for a path
that meets arrays; a shape marked ``scans=True`` (none now) would be left out.

:data:`SIZE` is 20,000: PostgreSQL chooses from its statistics (``ANALYZE`` after each
index), whose proportions are those of 100,000 or 1,000,000 documents of this shape
(0.2 % per status, one in 1,000 per owner), and SQLite from fixed estimates without
statistics; both plans were the same at 100,000 (``benchmarks/query_shapes.py
--plans``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from docbase.adapters.sql import from_url
from docbase.core.documents import new_document
from docbase.core.query import MATCH_ALL
from docbase.testing.query_shapes import INDEXED, Shape, body, owner, shapes
from tests.backends import POSTGRESQL_URL

SIZE = 20_000
COLLECTION = "people"
SHAPES = [shape for shape in shapes(SIZE) if not shape.scans]


async def _fill(url: str) -> None:
    store, _ = from_url(url)
    async with store:
        for start in range(0, SIZE, 10_000):
            await store.insert(COLLECTION, [new_document(body(i), owner(i))
                                            for i in range(start, start + 10_000)])
        for path in INDEXED:
            await store.ensure_index(COLLECTION, tuple(path.split(".")))  # (and ANALYZE)


async def _admin(statement: str) -> None:
    engine = create_async_engine(POSTGRESQL_URL.replace("postgresql://", "postgresql+asyncpg://",
                                                        1), poolclass=NullPool)
    try:
        async with engine.begin() as conn:
            await conn.execute(sa.text(statement))
    finally:
        await engine.dispose()


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql",
                                                               marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[str]:
    """A database holding the documents, filled once per module and engine."""
    if request.param == "sqlite":
        directory: Path = tmp_path_factory.mktemp("plans")
        url = f"sqlite:///{directory}/docbase.db"
        asyncio.run(_fill(url))
        yield url
        return
    schema = f"docbase_plans_{id(request)}"
    try:
        asyncio.run(_admin(f'CREATE SCHEMA "{schema}"'))
    except (OSError, sa.exc.DBAPIError) as exc:
        pytest.skip(f"PostgreSQL at {POSTGRESQL_URL} is unreachable: {exc}")
    try:
        url = f"{POSTGRESQL_URL}?schema={schema}"
        asyncio.run(_fill(url))
        yield url
    finally:
        asyncio.run(_admin(f'DROP SCHEMA "{schema}" CASCADE'))


def sqlite_scans(plan: str, *, ordered: bool) -> list[str]:
    """The steps of a SQLite plan that read a whole table or index of the collection.

    ``SCAN c_1`` reads the table; ``SCAN c_1 USING INDEX`` walks a whole index, allowed
    only where the order is all a shape asks (``ordered``: the walk stops after the page).
    """
    scans = [line.strip() for line in plan.splitlines()
             if re.match(r"\s*SCAN c_\d+(_items)?\b", line)]
    return [line for line in scans if not (ordered and re.fullmatch(
        r"SCAN c_\d+ USING INDEX c_\d+_k\d+", line))]


def postgresql_scans(plan: str, *, ordered: bool) -> list[str]:
    """The steps of a PostgreSQL plan that read a whole table or index of the collection.

    A ``Seq Scan`` reads the table; an index scan without an ``Index Cond`` walks the
    whole index, allowed only where the order is all a shape asks (``ordered``).
    """
    lines = plan.splitlines()
    found = []
    for number, line in enumerate(lines):
        if re.search(r"Seq Scan on c_\d+", line):
            found.append(line.strip())
        scan = re.search(r"(Index Scan|Index Scan Backward|Index Only Scan|Bitmap Index Scan)"
                         r" (using|on) c_\d+", line)
        if scan is None:
            continue
        indent = len(line) - len(line.lstrip())
        details = []
        for later in lines[number + 1:]:
            if len(later) - len(later.lstrip()) <= indent or later.lstrip().startswith("->"):
                break
            details.append(later)
        if not any("Index Cond:" in detail for detail in details) and not ordered:
            found.append(line.strip())
    return found


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.name for shape in SHAPES])
async def test_each_shape_is_served_by_an_index(url: str, shape: Shape) -> None:
    store, _ = from_url(url)
    async with store:
        query = shape.query
        plan = await store.explain(COLLECTION, query if shape.kind == "find" else query.filter)
        ordered = query.filter == MATCH_ALL and bool(query.sort)  # newest first
        scans = (sqlite_scans if url.startswith("sqlite") else postgresql_scans)(
            plan, ordered=ordered)
        assert not scans, f"{shape.name} scans: {scans}\n{plan}"
        if "array element" in shape.name or "lookup" in shape.name:
            # the item index drives: a fanout index here lists every document
            assert re.search(r"c_\d+_(items|g\d+)", plan), plan
            assert not re.search(r"(INDEX|Scan on|using) c_\d+_f\d+", plan), plan
        # (an index of the collection: key, unique, fanout, composite, GIN, side table)
        assert re.search(r"c_\d+_([kufcg]\d+|items)", plan), plan


def test_the_check_tells_a_scan_from_a_seek() -> None:
    # the plans of the same find before an index and after (SQLite, then PostgreSQL)
    assert sqlite_scans("SCAN c_1\nUSE TEMP B-TREE FOR ORDER BY", ordered=False) == ["SCAN c_1"]
    assert sqlite_scans("SCAN c_1_items", ordered=False)  # (an item index read whole)
    assert not sqlite_scans("SEARCH c_1_items USING PRIMARY KEY (path=? AND key=?)",
                            ordered=False)
    assert sqlite_scans("SCAN c_1 USING INDEX c_1_k2", ordered=False)
    assert not sqlite_scans("SCAN c_1 USING INDEX c_1_k2", ordered=True)
    assert not sqlite_scans("SEARCH c_1 USING INDEX c_1_k1 (<expr>=?)", ordered=False)
    walked = ("Limit\n  ->  Index Scan Backward using c_2_k4 on c_2\n"
              "        Filter: (x IS NOT TRUE)")
    assert postgresql_scans(walked, ordered=False)
    assert not postgresql_scans(walked, ordered=True)
    assert postgresql_scans("Limit\n  ->  Seq Scan on c_2\n        Filter: (x)", ordered=True)
    assert not postgresql_scans("Index Scan using c_2_k4 on c_2\n  Index Cond: (x = 1)\n"
                                "  Filter: (y)", ordered=False)
