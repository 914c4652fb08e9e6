"""Each scoped API key owns what it writes (docs/access.md "Owners of keys"): a key
writes ``_createdby`` of its own owner name (``key:<serial>``, or the ``owner`` it was
created with), so ``@owner`` and ``private`` tell keys apart; full-access keys write
``api`` as before, and a key stored before owners existed writes ``api`` still, so the
documents it wrote stay its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import docbase
from docbase import Database, InvalidQuery
from docbase.core import auth
from docbase.core.auth.keys import KEYS_COLLECTION, forget_cached_keys
from docbase.core.schema import parse_schema
from docbase.core.update import UnsetOp, Update
from docbase.http.testing import LiveDocbase
from tests.access_fixtures import NOTES
from tests.test_serve_harness import run_cli

PRIVATE = {**NOTES, "access": {"read": ["*"], "create": ["*"], "update": ["@owner"],
                               "delete": ["@owner"], "private": True}}


async def titles(live: LiveDocbase, key: str) -> list[str]:
    response = await live.client.get("/rest/notes", headers={"x-apikey": key})
    assert response.status_code == 200, response.text
    return sorted(d["title"] for d in response.json())


async def test_each_scoped_key_owns_what_it_writes(live: LiveDocbase) -> None:
    await live.db.schemas.put(parse_schema("notes", PRIVATE))
    raw_a, key_a = await auth.create_key(live.db, paths=["/rest/**"])
    raw_b, key_b = await auth.create_key(live.db, paths=["/rest/**"])
    assert key_a.owner.startswith("key:")
    assert key_a.owner != key_b.owner
    a, b = {"x-apikey": raw_a}, {"x-apikey": raw_b}
    created = await live.client.post("/rest/notes", json={"title": "a's"}, headers=a)
    assert created.status_code == 201, created.text
    assert created.json()["_createdby"] == key_a.owner
    note = created.json()["_id"]
    await live.client.post("/rest/notes", json={"title": "b's"}, headers=b)
    assert await titles(live, raw_a) == ["a's"]
    assert await titles(live, raw_b) == ["b's"]
    for method in ("GET", "PUT", "DELETE"):
        answer = await live.client.request(method, f"/rest/notes/{note}", headers=b,
                                           json={"title": "x"} if method == "PUT" else None)
        assert answer.status_code == 404, (method, answer.text)
    admin = await live.client.post("/rest/notes", json={"title": "admin's"},
                                   headers=live.auth())
    assert admin.json()["_createdby"] == "api"  # full-access keys write as before
    # a key created with a's owner name (a rotation) owns what a wrote
    raw_c, _key_c = await auth.create_key(live.db, paths=["/rest/**"], owner=key_a.owner)
    assert await titles(live, raw_c) == ["a's"]
    await auth.revoke_key(live.db, raw_a)
    renamed = await live.client.put(f"/rest/notes/{note}", json={"title": "c's"},
                                    headers={"x-apikey": raw_c})
    assert renamed.status_code == 200, renamed.text


async def test_a_key_stored_before_owners_writes_and_reads_as_api(live: LiveDocbase) -> None:
    await live.db.schemas.put(parse_schema("notes", PRIVATE))
    old_raw, old = await auth.create_key(live.db, paths=["/rest/**"])
    await live.db.store.update(KEYS_COLLECTION, old.id, Update((UnsetOp(("owner",)),)),
                               stamp={})
    forget_cached_keys(live.db)
    assert [k.owner for k in await auth.list_keys(live.db) if k.id == old.id] == ["api"]
    await live.db.collection("notes").insert({"title": "written with a key before"})
    created = await live.client.post("/rest/notes", json={"title": "old key's"},
                                     headers={"x-apikey": old_raw})
    assert created.json()["_createdby"] == "api"
    assert await titles(live, old_raw) == ["old key's", "written with a key before"]
    new_raw, _ = await auth.create_key(live.db, paths=["/rest/**"])
    assert await titles(live, new_raw) == []


async def test_a_key_owner_is_a_name_and_only_for_scoped_keys(stores: Any) -> None:
    async with Database(*stores) as db:
        for owner in ("ann@example.com", "*", "@owner", "", "x" * 65):
            with pytest.raises(InvalidQuery, match="owner"):
                await auth.create_key(db, paths=["/rest/**"], owner=owner)
        with pytest.raises(InvalidQuery, match="owner"):
            await auth.create_key(db, full_access=True, owner="shop")
        _, key = await auth.create_key(db, methods=["GET"], owner="shop-frontend")
        assert (key.owner, key.principal().author) == ("shop-frontend", "shop-frontend")
        _, full = await auth.create_key(db)
        assert (full.owner, full.principal().author) == ("api", "api")


async def test_keys_create_takes_an_owner_on_the_command_line(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path}/owners.sqlite"
    async with await docbase.connect(storage, name="docbase"):
        pass  # the database exists, as after a first 'docbase serve'
    run_cli(tmp_path, "keys", "create", "--storage", storage, "--path", "/rest/**",
            "--owner", "shop-frontend", "--description", "shop")
    run_cli(tmp_path, "keys", "create", "--storage", storage, "--path", "/rest/**",
            "--description", "own")
    keys = {k["description"]: k["owner"] for k in map(json.loads, run_cli(
        tmp_path, "keys", "list", "--storage", storage, "--json").stdout.splitlines())}
    assert keys["shop"] == "shop-frontend"
    assert keys["own"].startswith("key:")
    refused = run_cli(tmp_path, "keys", "create", "--storage", storage, "--full",
                      "--owner", "shop", check=False)
    assert refused.returncode != 0
    assert "owner" in refused.stderr
