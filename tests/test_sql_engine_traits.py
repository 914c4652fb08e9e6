"""Every declared :class:`~docbase.adapters.sql.engines.EngineTraits` holds on its database.

Each test states what a trait claims and shows it on a real SQLite file, in-memory
SQLite and PostgreSQL, so a trait declared wrong fails here, not as a slow or broken
store somewhere else. Traits about two sessions of one database use two connections of
their own (the driver's, past the store), so they run on a file and on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import msgspec
import pytest
import sqlalchemy as sa

from docbase.adapters.sql import SqlDocumentStore
from docbase.adapters.sql import schema as layout
from docbase.adapters.sql.dialects import swap_sql
from docbase.adapters.sql.driver_rows import DriverStatements
from docbase.adapters.sql.engines import EngineTraits
from docbase.core.documents import new_document
from docbase.core.query import Eq, Query
from tests.backends import POSTGRESQL_URL, sql_backend, sql_url


@pytest.fixture(params=["sqlite-file", "sqlite-memory", "postgresql"])
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with sql_url(request.param, tmp_path) as opened:
        yield opened


@pytest.fixture
async def store(url: str) -> AsyncIterator[Any]:
    async with sql_backend(url) as (opened, _):
        yield opened


class Session:
    """A connection of its own to the store's database, past the store and its pool."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    async def rows(self, sql: str) -> list[tuple[Any, ...]]:
        if isinstance(self.raw, sqlite3.Connection):
            return self.raw.execute(sql).fetchall()
        return [tuple(row) for row in await self.raw.fetch(sql)]


@pytest.fixture(params=["sqlite-file", "postgresql"])
async def shared(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """A store and a factory of sessions of their own on its database."""
    async with (sql_url(request.param, tmp_path) as url, sql_backend(url) as (opened, _),
                contextlib.AsyncExitStack() as stack):
        async def session() -> Session:
            if request.param == "sqlite-file":
                # no statement cache: a plan asked twice is planned twice
                raw: Any = sqlite3.connect(urlsplit(url).path[1:], timeout=0,
                                           isolation_level=None, cached_statements=0)
                stack.callback(raw.close)
                return Session(raw)
            import asyncpg

            schema = parse_qs(urlsplit(url).query)["schema"][0]
            raw = await asyncpg.connect(POSTGRESQL_URL, server_settings={"search_path": schema})
            stack.push_async_callback(raw.close)
            return Session(raw)

        yield opened, session


async def _collection(store: SqlDocumentStore, ids: list[str]) -> str:
    """Store documents with ``ids`` in a new collection; the name of its table."""
    await store.insert("things", [{**new_document({"n": n}, "api"), "_id": i}
                                  for n, i in enumerate(ids)])
    number = await store.backend.run(lambda conn: store.backend.number(conn, "things"),
                                     write=False)
    return layout.table_name(number)


def traits_of(store: SqlDocumentStore) -> EngineTraits:
    traits = store.dialect.traits
    engine = store.engine if isinstance(store.engine, sa.Engine) else store.engine.sync_engine
    assert traits.name == engine.dialect.name  # picked from the engine
    return traits


async def test_upsert_inserts_or_updates_in_one_statement(store: SqlDocumentStore) -> None:
    upsert = traits_of(store).upsert(layout.blobs)

    def work(conn: sa.Connection) -> list[Any]:
        for size in (1, 2):
            row = {"blob_id": "b", "size": size, "content_type": "t", "chunk_size": 1}
            conn.execute(upsert.values(key="k", **row)
                         .on_conflict_do_update(index_elements=["key"], set_=row))
        conn.execute(upsert.values(key="k", blob_id="c", size=3, content_type="t",
                                   chunk_size=1).on_conflict_do_nothing(index_elements=["key"]))
        return list(conn.execute(sa.select(layout.blobs.c.blob_id, layout.blobs.c.size)))

    assert await store.backend.run(work, write=True) == [("b", 2)]


async def test_explain_prefix_asks_for_the_plan(store: SqlDocumentStore) -> None:
    table = await _collection(store, ["a"])
    prefix = traits_of(store).explain_prefix

    def plan(conn: sa.Connection) -> str:
        rows = conn.exec_driver_sql(f"{prefix}SELECT body FROM {table}")
        return "\n".join(str(row[-1]) for row in rows)

    assert table in await store.backend.run(plan, write=False)  # a plan names its table


async def test_ids_order_by_code_point(store: SqlDocumentStore) -> None:
    ids = ["b", "B", "_", "a", "Z", "é", "~", "10", "9", "a b"]
    table = await _collection(store, ids)
    traits = traits_of(store)

    def ordered(conn: sa.Connection) -> list[str]:
        return list(conn.exec_driver_sql(f"SELECT id FROM {table} ORDER BY id").scalars())

    assert await store.backend.run(ordered, write=False) == sorted(ids)
    # PostgreSQL's default collation is the database's, chosen when it was made (this
    # test database's may order by code point by itself): the column needs its own.
    # SQLite's default, BINARY, is SQLite's and compares code points everywhere.
    if store.dialect.name == "postgresql":
        collation = await store.backend.run(lambda conn: conn.execute(sa.text(
            "SELECT collation_name FROM information_schema.columns WHERE table_name = "
            ":t AND column_name = 'id' AND table_schema = current_schema()"),
            {"t": table}).scalar(), write=False)
        assert collation is not None
        assert collation == traits.id_collation


async def test_generated_jsonb_column(store: SqlDocumentStore) -> None:
    table = await _collection(store, ["a"])

    def columns(conn: sa.Connection) -> set[str]:
        return {column["name"] for column in sa.inspect(conn).get_columns(table)}

    generated = traits_of(store).generated_jsonb
    assert ("doc" in await store.backend.run(columns, write=False)) == generated
    # and the dialect's conditions read it exactly where the tables have it
    number = store.backend.cached_number("things")
    assert number is not None
    fast = store.dialect.root(store.backend.table_clause(number), exact=False)
    engine = store.engine if isinstance(store.engine, sa.Engine) else store.engine.sync_engine
    condition = sa.select(fast.walk(("n",)).key()).compile(dialect=engine.dialect)
    assert (f"{table}.doc" in str(condition)) == generated


async def test_server_functions_live_in_the_database(shared: Any) -> None:
    store, session = shared
    await _collection(store, ["a"])
    call = ("SELECT docbase_key('1'::json)" if store.dialect.name == "postgresql"
            else "SELECT docbase_path_values('[1]', '[]')")
    # the store's connections reach the functions its SQL calls, wherever they live...
    assert await store.backend.run(lambda conn: conn.exec_driver_sql(call).scalar(),
                                   write=False) is not None
    other = await session()  # ...and a session that registered nothing, only in the database
    try:
        await other.rows(call)
        found = True
    except Exception:  # no such function: SQLite's are each connection's own
        found = False
    assert found == traits_of(store).server_functions


async def test_migration_lock_serialises_migrations(shared: Any) -> None:
    store, session = shared
    traits = traits_of(store)
    first, second = await session(), await session()
    await first.rows("BEGIN")
    await first.rows(traits.migration_lock or "INSERT INTO docbase_layout VALUES (0)")
    if traits.migration_lock is not None:
        await second.rows("SET lock_timeout = '200ms'")
        with pytest.raises(Exception, match="lock timeout"):
            await second.rows(traits.migration_lock)
    else:  # the write transaction alone holds the database
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            await second.rows("INSERT INTO docbase_layout VALUES (0)")
    await first.rows("ROLLBACK")


async def test_one_writer_holds_the_whole_database(shared: Any) -> None:
    store, session = shared
    table = await _collection(store, ["a", "b"])
    first, second = await session(), await session()
    await first.rows("BEGIN")
    await first.rows(f"UPDATE {table} SET version = 1 WHERE id = 'a'")
    try:
        await second.rows(f"UPDATE {table} SET version = 1 WHERE id = 'b'")
        alone = False
    except sqlite3.OperationalError as exc:  # "database is locked" at once (timeout=0)
        alone = "locked" in str(exc)
    await first.rows("ROLLBACK")
    assert alone == traits_of(store).one_writer


async def test_row_locks(shared: Any) -> None:
    store, session = shared
    table = await _collection(store, ["a"])
    first, second = await session(), await session()
    await first.rows("BEGIN")
    try:
        await first.rows(f"SELECT id FROM {table} WHERE id = 'a' FOR UPDATE")
    except sqlite3.OperationalError:  # a syntax error: no row locks at all
        locks = False
    else:
        with pytest.raises(Exception, match="could not obtain lock"):
            await second.rows(f"SELECT id FROM {table} WHERE id = 'a' FOR UPDATE NOWAIT")
        locks = True
    await first.rows("ROLLBACK")
    assert locks == traits_of(store).supports_row_locks


async def test_plans_may_miss_an_index_made_elsewhere(shared: Any) -> None:
    store, session = shared
    table = await _collection(store, [f"{n:04}" for n in range(200)])
    planner, maker = await session(), await session()
    prefix = traits_of(store).explain_prefix
    query = f"SELECT id FROM {table} WHERE version = 7"
    if store.dialect.name == "postgresql":
        await planner.rows("SET enable_seqscan = off")
    assert "version_idx" not in str(await planner.rows(prefix + query))
    await maker.rows(f"CREATE INDEX version_idx ON {table} (version)")
    stale = "version_idx" not in str(await planner.rows(prefix + query + " AND 1 = 1"))
    assert stale == traits_of(store).explain_sees_stale_schema
    await planner.rows(f"SELECT count(*) FROM {table}")  # what explain() reads first
    assert "version_idx" in str(await planner.rows(prefix + query + " AND 2 = 2"))


async def test_expression_indexes_want_statistics(shared: Any) -> None:
    store, session = shared
    table = await _collection(store, [f"{n:04}" for n in range(200)])
    other = await session()
    await other.rows(f"CREATE INDEX n_idx ON {table} ((length(id) + version))")
    stats = ("SELECT count(*) FROM pg_stats WHERE tablename = 'n_idx'"
             if store.dialect.name == "postgresql" else
             "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'")
    assert (await other.rows(stats))[0][0] == 0
    if traits_of(store).analyze_after_index:  # nothing is known of the expression until
        await other.rows(f"ANALYZE {table}")
        assert (await other.rows(stats))[0][0] > 0
    else:  # SQLite plans with no statistics at all, and picks the index at once
        plan = await other.rows(f"EXPLAIN QUERY PLAN SELECT id FROM {table} "
                                "WHERE length(id) + version = 4")
        assert "n_idx" in str(plan)


async def test_unique_index_serves_queries(store: SqlDocumentStore) -> None:
    await store.insert("people", [new_document({"email": f"u{n}@x", "age": n % 9}, "api")
                                  for n in range(2000)])
    await store.ensure_index("people", ("email",), unique=True)
    plan = await store.explain("people", Eq(("email",), "u7@x"))
    number = store.backend.cached_number("people")
    assert f"c_{number}_u" in plan or f"c_{number}_k" in plan, plan
    assert (f"c_{number}_u" in plan) == traits_of(store).unique_index_serves_queries, plan


async def test_updates_on_driver(store: SqlDocumentStore) -> None:
    table = await _collection(store, ["a"])
    row = ("a", '{"_id": "a"}', None, 1, None, None, "[]")

    def swap(conn: sa.Connection) -> int:  # as driver_updates.py writes a row
        driver = conn.connection.driver_connection
        assert driver is not None
        written = driver.execute(swap_sql(table, "?"), (*row, 0))
        if asyncio.iscoroutine(written):  # asyncpg's: not a statement of this transaction
            written.close()
            raise TypeError("the driver answers in coroutines")
        return int(written.rowcount)

    try:
        swapped = await store.backend.run(swap, write=True) == 1
    except Exception:  # "?" is no parameter there, or the driver answers in coroutines
        swapped = False
    assert swapped == traits_of(store).updates_on_driver
    if swapped:  # and only from the version read
        assert await store.backend.run(swap, write=True) == 0
    else:  # the update has its other road (postgresql/inserts.py)
        assert store._inserter is not None


async def test_rows_on_driver(store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch) -> None:
    table = await _collection(store, ["a", "b"])
    statement = sa.select(sa.column("id")).select_from(sa.table(table)).order_by("id")
    engine = store.engine if isinstance(store.engine, sa.Engine) else store.engine.sync_engine
    driver = DriverStatements(engine)

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("SQLAlchemy was asked")

    def past_sqlalchemy(conn: sa.Connection) -> list[Any] | None:
        with monkeypatch.context() as patched:
            patched.setattr(sa.Connection, "execute", refuse)
            try:
                return driver.scalars(conn, statement)
            except RuntimeError:
                return None

    rows = await store.backend.run(past_sqlalchemy, write=False)
    assert (rows == ["a", "b"]) == traits_of(store).rows_on_driver, rows


async def test_prepared_connections(store: SqlDocumentStore) -> None:
    def prepared(conn: sa.Connection) -> Any:
        if store.dialect.name == "postgresql":
            return conn.exec_driver_sql("SHOW jit").scalar()
        return conn.exec_driver_sql("SELECT docbase_path_values('[1]', '[]')").scalar()

    assert await store.backend.run(prepared, write=False) in ("off", "[[1]]")


async def test_notifies_changes(shared: Any) -> None:
    store, session = shared
    listener, sender = await session(), await session()
    heard = asyncio.Event()
    try:
        await listener.raw.add_listener("docbase_traits", lambda *_: heard.set())
    except AttributeError:  # SQLite's connection: no LISTEN, nor any other push
        with pytest.raises(sqlite3.OperationalError, match="syntax error"):
            await listener.rows("LISTEN docbase_traits")
        notifies = False
    else:
        await sender.rows("NOTIFY docbase_traits")
        async with asyncio.timeout(10):
            await heard.wait()
        notifies = True
    assert notifies == traits_of(store).notifies_changes
    assert (store.change_signal() is not None) == notifies  # and the store listens


async def test_the_store_signal_wakes_another_process(url: str, store: SqlDocumentStore) -> None:
    signal = store.change_signal()
    if signal is None:  # SQLite's readers poll (the trait is shown above)
        assert not traits_of(store).notifies_changes
        return
    async with sql_backend(url) as (other, _):  # another process, as far as LISTEN knows
        seen = await signal.wait(0, 5.0)  # listening now
        await other.change_signal().notify()
        assert await signal.wait(seen, 5.0) > seen


async def test_fields_are_dropped_in_sql_where_the_dialect_can(
        store: SqlDocumentStore, monkeypatch: pytest.MonkeyPatch) -> None:
    await _collection(store, [f"{n:02}" for n in range(10)])
    # SQLite's json_remove drops a member from the text; PostgreSQL's json has no such
    # function, so the dialect offers none and the worker drops the fields
    in_sql = store.dialect.name == "sqlite"
    assert (store.dialect.without_fields(sa.column("body"), ["n"]) is not None) == in_sql
    assert store.dialect.drops_fields == in_sql
    asked: list[Any] = []
    real = store._find_bodies

    async def find_bodies(collection: str, query: Query, hide: Any) -> list[str]:
        asked.append(tuple(hide))
        return await real(collection, query, hide)

    monkeypatch.setattr(store, "_find_bodies", find_bodies)
    found = await store.find_encoded("things", Query(skip=9), hide=["n"])
    assert [msgspec.json.decode(raw)["_id"] for raw in found] == ["09"]
    assert all("n" not in msgspec.json.decode(raw) for raw in found)
    assert asked == ([("n",)] if in_sql else [()])


async def test_fields_dropped_in_sql_leave_the_rest_of_the_text_as_stored(
        store: SqlDocumentStore) -> None:
    values = {"big": 1e100, "tenth": 0.1, "int": 12345678901234567890, "neg": -0.0,
              "text": "é \u2028 \"q\" \\ /", "nested": {"b": [1.5, None, True], "a": {}}}
    await store.insert("spelt", [{**new_document({"n": 1, **values}, "api"), "_id": "x"}])
    whole, = await store.find_encoded("spelt", Query(), hide=[])
    without, = await store.find_encoded("spelt", Query(), hide=["n"])
    expected = {key: value for key, value in msgspec.json.decode(whole).items() if key != "n"}
    # the same text as the worker would write, byte for byte, whichever drops the field
    assert bytes(without) == msgspec.json.encode(expected)
    assert msgspec.json.decode(without)["big"] == 1e100
