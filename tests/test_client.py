"""The remote client over real HTTPS: errors, credentials, routing, transport, features.

The calls of the embedded API are proven on the client by tests/test_database.py (the
``db`` fixture runs it remotely too); this module holds what is the client's own, and
the differential test: the embedded and the remote API, asked the same calls of the
same served database, answer the same documents and raise the same exception types.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

import docbase
from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore, OutboxMailer
from docbase.client import RemoteDatabase, Retries
from docbase.client.errors import error_from_answer
from docbase.core.auth.users import create_user
from docbase.core.database import Database
from docbase.core.errors import (
    BackendError,
    DocbaseError,
    FieldError,
    Forbidden,
    HookFailed,
    InvalidId,
    MissingDependencyError,
    NotFound,
    RangeNotSatisfiable,
    TooManyRequests,
    Unauthorized,
    ValidationFailed,
)
from docbase.core.media import Upload
from docbase.core.query import Query, ReadOptions, parse_filter, parse_list_params
from docbase.http.errors import error_body, error_headers
from docbase.http.statuses import ERROR_STATUSES
from docbase.http.testing import LiveDocbase, live_docbase
from tests.media_samples import png
from tests.remote_backends import served

MISSING = "5f0c0c0c0c0c0c0c0c0c0c0c"


def _example(cls: type[DocbaseError]) -> DocbaseError:
    if issubclass(cls, ValidationFailed):
        return cls("bad", [FieldError("email", ("must be a valid email address",))])
    if issubclass(cls, TooManyRequests):
        return cls("slow down", 7)
    if issubclass(cls, RangeNotSatisfiable):
        return cls("outside", 1234)
    if issubclass(cls, HookFailed):
        return cls("hook broke", "on_post")
    if issubclass(cls, MissingDependencyError):
        return cls("asyncpg", "postgresql")
    return cls(f"a {cls.__name__}")


@pytest.mark.parametrize("cls", [*ERROR_STATUSES, InvalidId, MissingDependencyError],
                         ids=lambda c: c.__name__)
def test_every_error_body_reads_back_into_the_class_that_answered_it(
    cls: type[DocbaseError],
) -> None:
    raised = _example(cls)
    body = error_body(raised)
    back = error_from_answer(body["status"], msgspec.json.encode(body), error_headers(raised))
    # a missing driver on the server is a configuration error there, not a package to
    # install here
    assert type(back) is (docbase.ConfigurationError if cls is MissingDependencyError
                          else cls)
    assert back.message == raised.message
    if isinstance(raised, ValidationFailed):
        assert isinstance(back, ValidationFailed)
        assert back.fields == raised.fields
    if isinstance(raised, TooManyRequests):
        assert isinstance(back, TooManyRequests)
        assert back.retry_after == 7
    if isinstance(raised, RangeNotSatisfiable):
        assert isinstance(back, RangeNotSatisfiable)
        assert back.size == 1234


def test_an_answer_without_a_docbase_body_falls_back_to_its_status() -> None:
    assert type(error_from_answer(404, b"<html>gone</html>", {})) is NotFound
    assert type(error_from_answer(403, b'{"name": "HTTPSRequired", "message": "m"}',
                                  {})) is Forbidden
    assert type(error_from_answer(418, b"", {})) is DocbaseError


# ---------------------------------------------------------------------------- served


HANG_SECONDS = 60
"""How long an event of the change feed may take: a deadline only a hang misses (a full
run on a loaded machine once took more than 10 s to hand over a resumed stream's first
event)."""

@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    async with (Database(MemoryDocumentStore(), MemoryBlobStore(), name="main",
                         mailer=OutboxMailer()) as main,
                Database(MemoryDocumentStore(), MemoryBlobStore(), name="second") as second,
                live_docbase({"main": main, "second": second}, tmp_path) as running):
        yield running


@contextlib.asynccontextmanager
async def client(live: LiveDocbase, path: str = "", **options: Any,
                 ) -> AsyncIterator[RemoteDatabase]:
    options.setdefault("apikey", live.admin_keys["main"])
    db = await docbase.connect(live.base_url + path, verify=live.certfile, **options)
    assert isinstance(db, RemoteDatabase)
    async with db:
        yield db


async def test_a_path_routed_database_is_reached_under_db_name(live: LiveDocbase) -> None:
    async with client(live, "/db/second", apikey=live.admin_keys["second"]) as second:
        assert second.name == "second"
        made = await second.collection("notes").insert({"n": 1})
    assert (await live.server.database("second").collection("notes").get(made["_id"]))["n"] == 1
    assert await live.db.collection("notes").count() == 0


async def test_login_signs_in_and_writes_as_the_user(live: LiveDocbase) -> None:
    await create_user(live.db, "ann@example.com", "correct horse battery")
    async with client(live, apikey=None, login=("ann@example.com", "correct horse battery")
                      ) as db:
        made = await db.collection("notes").insert({"n": 1})
    assert made["_createdby"] == "ann@example.com"
    with pytest.raises(Unauthorized):
        async with client(live, apikey=None, login=("ann@example.com", "wrong")):
            pass


async def test_no_or_a_wrong_credential_raises_unauthorized(live: LiveDocbase) -> None:
    async with client(live, apikey="not-a-key") as db:
        with pytest.raises(Unauthorized):
            await db.collection("notes").find()


async def test_tls_is_verified_by_default(live: LiveDocbase) -> None:
    db = await docbase.connect(live.base_url, apikey=live.admin_keys["main"],
                               retries=Retries(attempts=1))
    async with db:
        with pytest.raises(BackendError, match="CERTIFICATE_VERIFY_FAILED"):
            await db.collection("notes").find()


async def test_reads_and_keyed_writes_are_sent_again_after_a_connection_failure() -> None:
    """A listener that drops every connection counts how often each request came: a
    read and a document write (it carries an ``Idempotency-Key``) thrice, a write of a
    route that does not honour the key once, and any write once without ``retry_writes``."""
    connections = 0

    async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()

    listener = await asyncio.start_server(drop, "127.0.0.1", 0)
    url = f"https://127.0.0.1:{listener.sockets[0].getsockname()[1]}"
    async with listener:
        async with await docbase.connect(url, apikey="k",
                                         retries=Retries(attempts=3, backoff=0.01)) as db:
            with pytest.raises(BackendError, match="cannot reach"):
                await db.collection("notes").find()
            assert connections == 3
            with pytest.raises(BackendError):
                await db.collection("notes").insert({"n": 1})
            assert connections == 6
            with pytest.raises(BackendError):
                await db.publish("ping")
            assert connections == 7
        async with await docbase.connect(url, apikey="k", retries=Retries(
                attempts=3, backoff=0.01, retry_writes=False)) as db:
            with pytest.raises(BackendError):
                await db.collection("notes").insert({"n": 1})
            assert connections == 8


async def test_schema_validation_fails_with_the_field_list(live: LiveDocbase) -> None:
    async with client(live) as db:
        await db.put_schema("people", {"fields": [
            {"name": "name", "type": "text", "required": True},
            {"name": "email", "type": "email", "unique": True}]})
        with pytest.raises(ValidationFailed) as refused:
            await db.collection("people").insert({"email": "nope"})
        assert refused.value.fields == (
            FieldError("name", ("is required",)),
            FieldError("email", ("must be a valid email address",)))
        await db.collection("people").insert({"name": "Ann", "email": "a@x.no"})
        with pytest.raises(docbase.Conflict):
            await db.collection("people").insert({"name": "Bo", "email": "a@x.no"})
        each = await db.collection("people").insert_each(
            [{"name": "Cy", "email": "c@x.no"}, {"name": "Di", "email": "a@x.no"},
             {"email": "bad"}], validate=False)
        assert each[0]["name"] == "Cy"  # type: ignore[index]
        assert isinstance(each[1], docbase.Conflict)
        assert each[2]["email"] == "bad"  # type: ignore[index]
        checked = await db.collection("people").insert_each([{"name": "Ed"}, {"age": 1}])
        assert [type(r).__name__ for r in checked] == ["dict", "ValidationFailed"]
        assert [f["name"] for f in (await db.collection("people").meta())["fields"]] == [
            "name", "email"]
        assert "people" in await db.collections()


async def test_media_upload_read_meta_and_delete(live: LiveDocbase) -> None:
    picture = png(300, 200)
    async with client(live) as db:
        uploaded = await db.media.upload([Upload("cat.png", picture),
                                          Upload("notes.txt", b"hello")])
        cat, notes = uploaded.ids
        assert await db.media.read(cat) == picture
        assert await db.media.read("notes.txt") == b"hello"
        assert len(await db.media.read(cat, "t")) > 0
        meta = await db.media.meta(cat)
        assert (meta["origname"], meta["width"], meta["height"]) == ("cat.png", 300, 200)
        assert [m["_id"] for m in await db.media.find_ids([notes, cat])] == [notes, cat]
        assert await db.media.delete(cat) == [cat]
        with pytest.raises(NotFound):
            await db.media.meta(cat)


async def test_mail_is_sent_through_the_servers_transport(live: LiveDocbase) -> None:
    async with client(live) as db:
        ids = await db.send_mail([{"to": "a@x.no", "subject": "Hi", "html": "<p>1</p>"},
                                  {"to": "b@x.no", "subject": "Yo", "html": "<p>2</p>"}])
        assert len(ids) == 2
        with pytest.raises(ValidationFailed):
            await db.send_mail({"to": "not an address", "subject": "x", "html": "x"})
    sent = live.db.mailer.sent  # type: ignore[attr-defined]
    assert sorted(m.subject for _, m in sent) == ["Hi", "Yo"]


async def test_the_change_feed_follows_and_resumes_after_an_event(live: LiveDocbase) -> None:
    await live.db.settings.set("realtime.global", True)
    async with client(live) as db:
        notes = db.collection("notes")
        # from the start of the log (no write yet), so the first event is the insert
        # below however long the stream takes to open on a loaded machine
        feed = notes.changes(since=0)
        first = asyncio.ensure_future(anext(feed))
        made = await notes.insert({"n": 1})
        change = await asyncio.wait_for(first, HANG_SECONDS)
        assert (change.event, change.collection, change.data["_id"]) == (
            "post", "notes", made["_id"])
        await notes.patch(made["_id"], {"n": 2})
        await notes.delete(made["_id"])
        later = await asyncio.wait_for(anext(feed), HANG_SECONDS)
        assert (later.event, later.data) == ("put", made["_id"])
        await feed.aclose()
        assert change.id is not None
        resumed = db.changes(since=change.id)
        again = [await asyncio.wait_for(anext(resumed), HANG_SECONDS) for _ in range(2)]
        await resumed.aclose()
    assert [(c.event, c.data) for c in again] == [("put", made["_id"]),
                                                  ("delete", [made["_id"]])]


# ---------------------------------------------------------------------------- differential

Call = Callable[[Any], Awaitable[Any]]


def _calls(ids: dict[str, str]) -> list[tuple[str, Call]]:
    """The same calls, made of the embedded and of the remote API."""
    joe, ann = ids["Joe"], ids["Ann"]
    return [
        ("get", lambda db: db.collection("people").get(joe)),
        ("get bare", lambda db: db.collection("people").get(ann, metafields=False)),
        ("find q h", lambda db: db.collection("people").find(
            {"age": {"$gte": 18}}, {"$orderby": {"age": -1}, "$fields": {"name": 1}})),
        ("find all", lambda db: db.collection("people").find()),
        ("count", lambda db: db.collection("people").count({"city": "Oslo"})),
        ("read totals", lambda db: db.collection("people").read(
            Query(skip=1, limit=2), ReadOptions(totals=True))),
        ("read grouped", lambda db: db.collection("people").read(
            *parse_list_params({"groupby": ["city"], "aggregate": ["SUM:age"]}))),
        ("read filtered", lambda db: db.collection("people").read(*parse_list_params(
            {"q": ['{"$or": [{"name": {"$regex": "^j", "$options": "i"}},'
                   ' {"age": {"$bt": [40, 50]}}], "tags": {"$elemMatch": {"$in": ["x"]}}}'],
             "sort": ["name"], "dir": ["-1"]}))),
        ("find query", lambda db: db.collection("people").find(query=parse_list_params(
            {"q": ['{"tags": "x"}'], "sort": ["age"], "dir": ["-1"], "max": ["1"],
             "h": ['{"$fields": {"name": 1, "age": 1}}']})[0])),
        ("count filter", lambda db: db.collection("people").count(parse_filter(
            {"age": {"$not": {"$lt": 20}}, "name": {"$exists": True}}))),
        ("children", lambda db: db.collection("people").children(joe, "orders").find()),
        ("get children", lambda db: db.collection("people").get(joe, fetchchildren=True)),
        ("bad id", lambda db: db.collection("people").get("nope")),
        ("missing", lambda db: db.collection("people").get(MISSING)),
        ("bad query", lambda db: db.collection("people").find({"age": {"$where": 1}})),
        ("bad page", lambda db: db.collection("people").find(h={"$max": 10_001})),
        ("stale update", lambda db: db.collection("people").update(
            joe, {"age": 1}, expected_version=9)),
        ("stale delete", lambda db: db.collection("people").delete(joe, expected_version=9)),
        ("conflict", lambda db: db.collection("people").update(joe, {"$inc": {"name": 1}})),
        ("missing update", lambda db: db.collection("people").patch(MISSING, {"a": 1})),
        ("bad collection", lambda db: db.collection("$bad").find()),
        ("orphan child", lambda db: db.collection("people").children(
            MISSING, "orders").insert({"x": 1})),
    ]


async def _answer(db: Any, call: Call) -> tuple[str, Any]:
    try:
        return "answer", await call(db)
    except DocbaseError as exc:
        return "raises", type(exc).__name__


@pytest.mark.parametrize("engine", ["sqlite-file",
                                    pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_embedded_and_remote_answer_the_same(request: pytest.FixtureRequest,
                                                   tmp_path: Path, engine: str) -> None:
    async with (served(request, engine, tmp_path) as (live, embedded),
                client(live) as remote):
        made = await embedded.collection("people").insert_many([
            {"name": "Joe", "age": 17, "city": "Oslo", "tags": ["x", "y"]},
            {"name": "Jane", "age": 30, "city": "Bergen", "tags": []},
            {"name": "Ann", "age": 45, "city": "Oslo", "tags": ["x"]}])
        ids = {d["name"]: d["_id"] for d in made}
        await remote.collection("people").children(ids["Joe"], "orders").insert({"item": "pen"})
        raised = 0
        for name, call in _calls(ids):
            local, there = await _answer(embedded, call), await _answer(remote, call)
            assert there == local, name
            raised += local[0] == "raises"
        assert raised == 10


async def test_a_server_that_never_answers_times_out_as_a_backend_error() -> None:
    """A listener that accepts and stays silent: the ``timeout`` option ends the wait."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    listener = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    async with listener, await docbase.connect(
            f"https://127.0.0.1:{port}", apikey="k", timeout=0.3,
            retries=Retries(attempts=2, backoff=0.01)) as db:
        with pytest.raises(BackendError, match="Timeout"):
            await db.collection("notes").find()
    assert len(held) == 2  # a read is sent again after a timeout
    for writer in held:  # closed before the test's event loop ends, not left to it
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
