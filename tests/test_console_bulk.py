"""Bulk edit and bulk delete of ticked documents in the console, over real HTTPS.

The console changes or deletes the ticked documents in one batch of the database
(``docs/console.md``): exactly those documents, each through the write pipeline, with
one batch id in the change feed, and none when one of them is refused. On MongoDB (no
transactions) they are written one by one, and the page says so.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from docbase.testing.sse import open_events
from tests.console_browser import prepare_console
from tests.served_batches import client_of
from tests.served_engines import engine_storage
from tests.test_console_security import signed_in
from tests.test_serve_harness import Served, serving

SCHEMA = {"fields": [{"name": "title", "type": "text"}, {"name": "pages", "type": "number"},
                     {"name": "code", "type": "text", "unique": True}]}
TRANSACTIONAL = [pytest.param("sqlite", id="sqlite"),
                 pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres)]
Console = tuple[Served, httpx.Client, str]


def _console(engine: str, tmp_path: Path) -> Iterator[Console]:
    """One process serving ``engine`` (a schema is seen at once), realtime on."""
    with engine_storage(engine, tmp_path) as storage:
        prepare_console(storage)
        with serving(tmp_path, "--storage", storage) as served:
            assert _realtime_on(served)
            with signed_in(served) as (client, csrf):
                yield served, client, csrf


def _realtime_on(served: Served) -> bool:
    with served.client.stream("GET", "/realtime",
                              headers={"x-apikey": served.admin_key}) as answer:
        return answer.status_code == 200


@pytest.fixture(params=TRANSACTIONAL)
def console(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Console]:
    yield from _console(request.param, tmp_path)


@pytest.fixture
def mongo_console(tmp_path: Path) -> Iterator[Console]:
    yield from _console("mongo", tmp_path)


def _books(served: Served, count: int) -> list[str]:
    assert served.request("PUT", "/rest/books/_meta", key=served.admin_key,
                          json=SCHEMA).status_code == 200
    made = served.request("POST", "/rest/books", key=served.admin_key, json=[
        {"title": f"b{n}", "pages": n, "code": f"c{n}"} for n in range(count)])
    assert made.status_code == 201, made.text
    return [document["_id"] for document in made.json()]


def _stored(served: Served) -> dict[str, dict[str, Any]]:
    answer = served.request("GET", "/rest/books", key=served.admin_key)
    return {d["_id"]: {k: v for k, v in d.items() if not k.startswith("_")}
            for d in answer.json()}


def _edit(client: httpx.Client, csrf: str, ids: list[str], field: str, value: str,
          op: str = "set") -> httpx.Response:
    form = {"ids": ids, "field": field, "op": op, "value": value}
    confirm = client.get("/_/c/books/_edit", params=form)
    assert confirm.status_code == 200, confirm.text
    assert f"<strong>{len(ids)}</strong> of the {len(ids)} ticked" in confirm.text
    return client.post("/_/c/books/_edit", data={**form, "csrf": csrf})


async def _puts(served: Served, count: int) -> list[dict[str, Any]]:
    async with (client_of(served) as client,
                open_events(client, "/realtime", headers={"Last-Event-ID": "1"}) as stream):
        events = [event.json() for event in await stream.take(count)]
    return [e for e in events if e.get("event") == "put"]


def test_a_bulk_edit_changes_exactly_the_ticked_documents_in_one_batch(
        console: Console) -> None:
    served, client, csrf = console
    ids = _books(served, 4)
    before = _stored(served)
    form = client.get("/_/c/books/_edit", params={"ids": ids[:3]})
    assert "3 documents ticked" in form.text
    changed = _edit(client, csrf, ids[:3], "pages", "70")
    assert changed.status_code == 303, changed.text
    flash = client.get(changed.headers["location"]).text
    batch = re.search(r"Set pages on 3 document\(s\) in one batch \((\w+)\)\.", flash)
    assert batch is not None, flash
    after = _stored(served)
    assert [after[i]["pages"] for i in ids] == [70, 70, 70, before[ids[3]]["pages"]]
    assert {i: {**d, "pages": None} for i, d in after.items()} == \
        {i: {**d, "pages": None} for i, d in before.items()}
    puts = asyncio.run(_puts(served, 3))
    assert sorted(e["data"] for e in puts) == sorted(ids[:3])
    assert {e["batch"] for e in puts} == {batch.group(1)}
    removed = _edit(client, csrf, ids[1:3], "title", "", op="remove")
    assert removed.status_code == 303, removed.text
    assert ["title" in d for d in _stored(served).values()] == [True, False, False, True]


def test_one_refused_document_leaves_every_ticked_one_unchanged_and_is_named(
        console: Console) -> None:
    served, client, csrf = console
    ids = _books(served, 3)
    before = _stored(served)
    duplicate = _edit(client, csrf, ids, "code", "same")
    assert duplicate.status_code == 409, duplicate.text
    assert f"Nothing changed: document {ids[1]} was refused" in duplicate.text
    assert "duplicate value for unique field" in duplicate.text
    invalid = _edit(client, csrf, ids, "pages", "many")
    assert invalid.status_code == 422, invalid.text
    assert f"Nothing changed: document {ids[0]} was refused" in invalid.text
    assert "pages: must be a number" in invalid.text
    unread = {"ids": ids, "field": "state", "op": "set", "value": "done"}
    not_json = client.get("/_/c/books/_edit", params=unread)
    assert not_json.status_code == 400, not_json.text
    assert "is not JSON" in not_json.text
    system = client.get("/_/c/books/_edit", params={**unread, "field": "_id", "value": "1"})
    assert (system.status_code, "is a system field" in system.text) == (400, True)
    no_token = client.post("/_/c/books/_edit", data={**unread, "value": '"done"'})
    assert no_token.status_code == 403, no_token.text
    assert _stored(served) == before


def test_ticked_documents_are_deleted_in_one_batch_all_or_nothing(console: Console) -> None:
    served, client, csrf = console
    ids = _books(served, 4)
    served.request("DELETE", f"/rest/books/{ids[2]}", key=served.admin_key)
    refused = client.post("/_/c/books/_delete", data={"csrf": csrf, "ids": ids[:3]})
    assert refused.status_code == 404, refused.text
    assert f"Nothing changed: document {ids[2]} was refused" in refused.text
    assert sorted(_stored(served)) == sorted([ids[0], ids[1], ids[3]])
    deleted = client.post("/_/c/books/_delete", data={"csrf": csrf, "ids": ids[:2]})
    assert deleted.status_code == 303, deleted.text
    assert "Deleted 2 document(s) in one batch" in client.get(deleted.headers["location"]).text
    assert list(_stored(served)) == [ids[3]]


@pytest.mark.mongo
def test_on_mongodb_the_ticked_documents_are_written_one_by_one_and_the_page_says_so(
        mongo_console: Console) -> None:
    served, client, csrf = mongo_console
    ids = _books(served, 3)
    changed = _edit(client, csrf, ids, "pages", "70")
    assert changed.status_code == 303, changed.text
    flash = client.get(changed.headers["location"]).text
    assert "Set pages on 3 document(s) in one batch" in flash
    assert "no transactions (MongoDB)" in flash
    served.request("DELETE", f"/rest/books/{ids[1]}", key=served.admin_key)
    refused = client.post("/_/c/books/_edit", data={"csrf": csrf, "ids": ids, "field": "pages",
                                                    "op": "set", "value": "5"})
    assert refused.status_code == 404, refused.text
    assert f"Set pages on 1 document(s) before document {ids[1]} was refused" in refused.text
    assert "no transactions (MongoDB)" in refused.text
    assert [d["pages"] for d in _stored(served).values()] == [5, 70]
