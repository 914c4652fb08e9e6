"""Authorization as a property: a principal is answered only what storage lets it see.

Hypothesis draws a principal (a full-access key; a scoped key with path globs, methods
and roles; a user, ann or bob, with roles) and a few requests (tests/authorization_requests.py):
lists, gets, counts, totals, groups, aggregates, NDJSON and CSV exports, children of
``public`` in its own and in other collections, ``fetchchildren``; probes of hidden fields
(sort so a cursor, aggregate, query, group) and of lookups (``$fields`` ``owner._id: 0``);
writes (create, update, patch, delete, delete by query, child creates naming other
collections, one with a unique value the other collection holds) and adversarial writes
(``$unset owner.0._id``, ``$set`` of a lookup, a lookup item smuggling fields). Each
answer is compared with the reference model (tests/authorization_model.py, written
without docbase.core.auth or docbase.core.access, over the stored documents, the
schema's rules and the principal):

- the status (403 refused, 404 outside the read scope, 422, 409 only where allowed);
- the documents of lists, exports, counts, totals, children and gets, field by field
  (lookups resolved exactly where the target may be read, else a bare ``{"_id"}``);
- no stored marker the principal may not learn in the body, the headers or the cursor;
- a refused write changes nothing; a delete by query deletes what it names alone;
- the answer to a write shows the document only to a caller that may read it.

The change feed is checked against the same model: a subscriber hears ``post``, ``put``
and ``delete`` of exactly the documents it may read, and an update that takes a
document out of its read scope as a ``delete``.

The same requests run through the library (tests/authorization_library.py). Both run on
memory, SQLite, PostgreSQL and the Mongo wire server; the example count follows the
Hypothesis profile (tests/hypothesis_profiles.py).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import tests.hypothesis_profiles  # noqa: F401 - registers and loads the settings profile
from docbase import Database
from docbase.core.auth import Principal, create_user, login, set_roles
from docbase.core.documents import SYSTEM_FIELDS
from docbase.core.query import parse_cursor
from docbase.core.settings import Limits
from docbase.http.testing import LiveDocbase, live_docbase
from docbase.testing.sse import open_events
from tests.authorization_judge import Expected, by_id, expect, leaks
from tests.authorization_library import library_answer, principal_of
from tests.authorization_model import COLLECTIONS, EMAILS, FIELDS, PARENT, Caller, Model
from tests.authorization_requests import Asked, Drawn, asked, http_request, principals, seed
from tests.backends import BACKENDS

ENGINES = ("memory", "sqlite-file", "postgresql", "mongo")
MARKS = {"postgresql": [pytest.mark.postgres], "mongo": [pytest.mark.mongo]}
PASSWORD = "correct horse battery"
NUMBERS = itertools.count()
"""Numbers the markers of written values, unique across examples (the store persists)."""


@pytest.fixture(params=[pytest.param(name, marks=MARKS.get(name, [])) for name in ENGINES])
async def engine(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """An open, empty (DocumentStore, BlobStore) pair of each engine."""
    async with BACKENDS[request.param](request) as pair:
        yield pair


async def stored(db: Database, caller: Caller) -> Model:
    """The model of what is stored now, for ``caller`` (read as the system); a
    collection the drawn deletes emptied gets a document again."""
    model = Model(caller)
    for name in COLLECTIONS:
        documents = await db.collection(name).find()
        if not documents:
            documents = [await db.collection(name, Principal(author=EMAILS[0])).insert(
                {"title": f"m-again{next(NUMBERS)}-", **({"team": "red"} if name == "teams"
                                                           else {})})]
        model.load(name, documents)
    return model


def caller_of(drawn: Drawn) -> Caller:
    return Caller(drawn.kind, drawn.email, frozenset(drawn.roles), drawn.paths, drawn.methods)


def pick(model: Model, request: Asked) -> tuple[str, str]:
    """The stored document a request names, and the ``public`` parent it uses."""
    parents = model.documents(PARENT)
    parent = str(parents[request.pick % len(parents)]["_id"])
    collection = {"set_lookup": "secret", "smuggle_lookup": "secret"}.get(
        request.kind, request.child if request.kind == "child_get" else request.collection)
    documents = model.documents(collection)
    if request.kind == "child_get" and request.pick % 2 == 0:  # one under the parent
        documents = [d for d in documents if d.get("_parent_id") == parent] or documents
    return str(documents[request.pick % len(documents)]["_id"]), parent


def check_documents(expected: Expected, answer: Any, kind: str, text: str) -> None:
    """The documents (or their count) are exactly the reference's."""
    if expected.documents is None:
        return
    want = by_id(expected.documents)
    if kind in ("count", "totals"):
        totals = answer["totals"]
        assert totals["count" if kind == "count" else "total"] == len(want), (totals, want)
    elif kind == "ndjson":
        assert by_id([json.loads(line) for line in text.splitlines() if line]) == want
    elif kind == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert sorted(r["_id"] for r in rows) == [d["_id"] for d in want], (rows, want)
    elif kind in ("get", "child_get"):
        assert by_id([answer]) == want, (answer, want)
    elif kind in ("list", "children"):
        got = by_id(answer)
        assert got == want, [(a, b) for a, b in zip(got, want, strict=False) if a != b] or (
            got, want)


def check_write_answer(model: Model, request: Asked, target: str, status: int,
                       answer: Any) -> None:
    """An update's answer to a caller that may not read the document holds its ``_id``
    and system fields alone (docs/access.md "The answer to a write")."""
    if request.kind in ("put", "patch") and status == 200 and not model.readable(target):
        assert set(answer) <= SYSTEM_FIELDS, (request, answer)


def check_storage(before: Model, after: Model, status: int,
                  queried: str | None = None) -> None:
    """A refused write changes nothing (a copy smuggled into a lookup is a leak, found
    by the markers of every later read); a delete by query of ``queried`` (its ``_id``)
    deleted that document and its children alone."""
    if status >= 400:
        assert after.stored == before.stored, status
    elif queried is not None:
        gone = set(before.stored) - set(after.stored)
        assert gone == {queried} | {i for i, d in before.stored.items()
                                    if d.get("_parent_id") == queried}, gone


@pytest.fixture
async def served(engine: Any, tmp_path: Path) -> AsyncIterator[tuple[LiveDocbase, dict[str, str]]]:
    db = Database(*engine, name="main", limits=Limits(change_poll_interval=0.02,
                                                              realtime_ping_interval=0.2))
    async with live_docbase({"main": db}, tmp_path) as live:
        await seed(db)
        tokens = {}
        for email in EMAILS:
            await create_user(db, email, PASSWORD)
            tokens[email] = await login(db, email, PASSWORD)
        yield live, tokens
        await db.changes.close()


PROPERTY = settings(suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
EXAMPLES = settings.default.max_examples
"""The profile's example count; an HTTPS example is up to five requests, each compared
with a fresh model of storage (about 0.3 s on PostgreSQL), so the HTTPS property runs a
share of it and stays about a minute per engine under the "ci" profile."""


@settings(PROPERTY, max_examples=max(20, EXAMPLES // 4))
@given(drawn=principals, requests=st.lists(asked, min_size=1, max_size=5))
async def test_https_answers_only_what_storage_lets_the_principal_see(
    served: tuple[LiveDocbase, dict[str, str]], drawn: Drawn, requests: list[Asked],
) -> None:
    live, tokens = served
    db = live.db
    if drawn.kind == "full":
        headers = live.auth()
    elif drawn.kind == "key":
        headers = {"x-apikey": await live.key(full_access=False, paths=drawn.paths,
                                              methods=drawn.methods, roles=drawn.roles,
                                              owner=drawn.email)}
    else:
        await set_roles(db, drawn.email, drawn.roles)
        headers = {"authorization": f"Bearer {tokens[drawn.email]}"}
    for request in requests:
        number = next(NUMBERS)
        model = await stored(db, caller_of(drawn))
        target, parent = pick(model, request)
        code = next((str(d["code"]) for d in model.documents("secret") if "code" in d), "")
        method, url, extra, body = http_request(request, target, parent, number, code)
        expected = expect(model, request, method, url, target, parent, body)
        written = parent if "lookup" in request.kind else target if method != "GET" else None
        response = await live.client.request(method, url, headers={**headers, **extra},
                                             json=body)
        event(f"{drawn.kind} {request.kind} {response.status_code}")
        assert response.status_code in expected.statuses, (
            drawn, request, url, body, expected, response.text)
        text = response.text + json.dumps(dict(response.headers))
        if (cursor := response.headers.get("x-next-cursor")) is not None:
            text += json.dumps(msgspec.to_builtins(parse_cursor(cursor)))
        found = leaks(model, text, body, written)
        assert not found, (drawn, request, url, found, text)
        if method != "GET":
            check_storage(model, await stored(db, model.caller), response.status_code,
                          target if request.kind == "delete_query" else None)
            check_write_answer(model, request, target, response.status_code,
                               response.json() if response.status_code < 300 else None)
        elif response.status_code == 200:
            answer = None if request.kind in ("ndjson", "csv") else response.json()
            check_documents(expected, answer, request.kind, response.text)


@pytest.fixture
async def library(engine: Any) -> AsyncIterator[Database]:
    async with Database(*engine) as db:
        await seed(db)
        yield db


@settings(PROPERTY, max_examples=max(20, EXAMPLES // 2))
@given(drawn=principals, requests=st.lists(asked, min_size=1, max_size=5))
async def test_the_library_answers_only_what_storage_lets_the_principal_see(
    library: Database, drawn: Drawn, requests: list[Asked],
) -> None:
    db = library
    principal = principal_of(drawn)
    for request in requests:
        number = next(NUMBERS)
        model = await stored(db, caller_of(drawn))
        target, parent = pick(model, request)
        code = next((str(d["code"]) for d in model.documents("secret") if "code" in d), "")
        method, url, _, body = http_request(request, target, parent, number, code)
        expected = expect(model, request, method, url, target, parent, body)
        written = parent if "lookup" in request.kind else target if method != "GET" else None
        status, answer = await library_answer(db, principal, request, target, parent, body)
        event(f"{drawn.kind} {request.kind} {status}")
        assert status in expected.statuses, (drawn, request, url, body, expected, answer)
        text = json.dumps(msgspec.to_builtins(answer))
        found = leaks(model, text, body, written)
        assert not found, (drawn, request, url, found, text)
        if method != "GET":
            check_storage(model, await stored(db, model.caller), status,
                          target if request.kind == "delete_query" else None)
            check_write_answer(model, request, target, status, answer)
        elif status == 200 and request.kind != "totals":
            kind = "list" if request.kind in ("ndjson", "csv") else request.kind
            check_documents(expected, answer, kind, text)


@settings(PROPERTY, max_examples=max(5, EXAMPLES // 25))
@given(drawn=principals.filter(lambda d: d.kind != "full"))
async def test_the_change_feed_sends_only_documents_the_principal_may_read(
    served: tuple[LiveDocbase, dict[str, str]], drawn: Drawn,
) -> None:
    live, tokens = served
    db = live.db
    if not (await db.settings.load()).realtime.enabled:  # switching it on waits for every
        await db.settings.set("realtime.global", True)  # process (core/changes/demand.py)
    if drawn.kind == "key":
        params = {"apikey": await live.key(full_access=False, paths=drawn.paths,
                                           methods=drawn.methods, roles=drawn.roles,
                                           owner=drawn.email)}
    else:
        await set_roles(db, drawn.email, drawn.roles)
        params = {"jwt": tokens[drawn.email]}
    written = Model(caller_of(drawn))

    def sees(document_id: str) -> bool:
        name = written.collection_of[document_id]
        return written.url_allows("GET", f"/rest/{name}") and written.in_read_scope(
            name, written.stored[document_id])

    want: dict[str, set[str]] = {"post": set(), "put": set(), "delete": set()}
    async with open_events(live.client, "/realtime", params=params) as stream:
        assert (await stream.next()).name == "ping"
        for author in (*EMAILS, "api"):
            for number, name in enumerate(COLLECTIONS):
                handle = db.collection(name, Principal(author=author))
                body = {"title": f"m-feed{next(NUMBERS)}-", "team": "red", "salary": 96000}
                document = await handle.insert({k: v for k, v in body.items()
                                                if k in FIELDS[name]})
                document_id = str(document["_id"])
                written.load(name, [document])
                if sees(document_id):
                    want["post"].add(document_id)
                saw = sees(document_id)
                if number % 3 == 1:  # an update; in teams one that leaves the red team
                    change = {"title": f"m-feed{next(NUMBERS)}-",
                              **({"team": "blue"} if name == "teams" else {})}
                    written.load(name, [await handle.update(document_id, change)])
                    if sees(document_id):
                        want["put"].add(document_id)
                    elif saw:  # out of the read scope: a delete
                        want["delete"].add(document_id)
                elif number % 3 == 2:
                    await handle.delete(document_id)
                    if saw:
                        want["delete"].add(document_id)
        await db.changes.publish_custom("end", None, author="test")
        seen = []
        while (sse := await stream.next(skip_pings=True)).name != "end":
            seen.append(sse.json())
    event(f"feed: {len(seen)} events")
    got: dict[str, set[str]] = {"post": set(), "put": set(), "delete": set()}
    for sent in seen:
        data = sent["data"]
        got[sent["event"]] |= ({data["_id"]} if sent["event"] == "post" else
                               {data} if sent["event"] == "put" else set(data))
    assert got == want, (drawn, seen)
    found = leaks(written, json.dumps(seen))
    assert not found, (drawn, found, seen)
