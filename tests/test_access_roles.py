"""Access rules decided by real roles over HTTPS (issue 30): the roles a user holds in
``_users`` and a scoped key's ``--role``s, read when each request arrives, drive the
notes schema of docs/access.md on every engine."""

from __future__ import annotations

import re
from pathlib import Path

from docbase.core import auth
from docbase.http.testing import LiveDocbase
from tests.access_fixtures import PASSWORD, bearer

DOCS = Path(__file__).resolve().parent.parent / "docs" / "access.md"


def notes_schema() -> str:
    """The notes schema exactly as docs/access.md shows it."""
    text = DOCS.read_text()
    block = re.search(r"<!-- notes-schema:start -->\n```json\n(.*?)```", text, re.S)
    assert block is not None
    return block.group(1)


async def login(live: LiveDocbase, email: str, *roles: str) -> dict[str, str]:
    await auth.create_user(live.db, email, PASSWORD, roles=roles)
    answer = await live.client.post("/auth/login", json={"email": email, "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return bearer(answer.json()["jwt"])


async def test_stored_roles_decide_the_notes_app_over_https(live: LiveDocbase) -> None:
    put = await live.client.put("/rest/notes/_meta", headers={
        **live.auth(), "content-type": "application/json"}, content=notes_schema())
    assert put.status_code == 200, put.text
    ann = await login(live, "ann@example.com")
    bob = await login(live, "bob@example.com")
    editor = await login(live, "ed@example.com", "editor")
    hr = await login(live, "hr@example.com", "hr")

    mine = await live.client.post("/rest/notes", headers=ann, json={"title": "ann's plan"})
    assert mine.status_code == 201, mine.text
    ann_id = mine.json()["_id"]
    assert (await live.client.post("/rest/notes", headers=bob,
                                   json={"title": "bob's list"})).status_code == 201
    refused = await live.client.put(f"/rest/notes/{ann_id}", headers=ann, json={"salary": 9})
    assert refused.status_code == 403, refused.text
    paid = await live.client.put(f"/rest/notes/{ann_id}", headers=hr, json={"salary": 5000})
    assert paid.status_code == 200, paid.text

    own = await live.client.get("/rest/notes", headers=ann)
    assert [n["title"] for n in own.json()] == ["ann's plan"]
    everyone = await live.client.get("/rest/notes", headers=editor)
    assert sorted(n["title"] for n in everyone.json()) == ["ann's plan", "bob's list"]
    assert all("salary" not in n for n in everyone.json())
    assert (await live.client.get(f"/rest/notes/{ann_id}", headers=bob)).status_code == 404
    assert (await live.client.get(f"/rest/notes/{ann_id}",
                                  headers=hr)).json()["salary"] == 5000
    by_salary = await live.client.get("/rest/notes", headers=editor, params={"sort": "salary"})
    assert by_salary.status_code == 403, by_salary.text
    assert (await live.client.get("/rest/notes", headers=hr,
                                  params={"sort": "salary"})).status_code == 200

    # a role given to bob applies to the token he holds already
    await auth.set_roles(live.db, "bob@example.com", ["editor"])
    now = await live.client.get("/rest/notes", headers=bob)
    assert sorted(n["title"] for n in now.json()) == ["ann's plan", "bob's list"]
    await auth.set_roles(live.db, "bob@example.com", [])
    again = await live.client.get("/rest/notes", headers=bob)
    assert [n["title"] for n in again.json()] == ["bob's list"]


async def test_a_scoped_keys_roles_meet_the_rules(live: LiveDocbase) -> None:
    schema = {"fields": [{"name": "title", "type": "text"}],
              "access": {"read": ["auditor"], "create": ["writer"]}}
    put = await live.client.put("/rest/ledger/_meta", headers=live.auth(), json=schema)
    assert put.status_code == 200, put.text
    stored = await live.client.post("/rest/ledger", headers=live.auth(), json={"title": "x"})
    assert stored.status_code == 201
    auditor = {"x-apikey": await live.key(paths=["/rest/**"], methods=["GET", "POST"],
                                          roles=["auditor"])}
    plain = {"x-apikey": await live.key(paths=["/rest/**"], methods=["GET", "POST"])}
    listed = await live.client.get("/rest/ledger", headers=auditor)
    assert listed.status_code == 200, listed.text
    assert [d["title"] for d in listed.json()] == ["x"]
    assert (await live.client.get("/rest/ledger", headers=plain)).status_code == 403
    create = await live.client.post("/rest/ledger", headers=auditor, json={"title": "y"})
    assert create.status_code == 403, create.text
    total = await live.client.get("/rest/ledger", headers=live.auth())
    assert [d["title"] for d in total.json()] == ["x"]
