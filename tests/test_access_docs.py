"""docs/access.md's notes app over HTTPS on every engine: the schema block of the page,
sent as written, then what the page says a signed-in user gets."""

from __future__ import annotations

import json
import re
from pathlib import Path

from docbase.http.testing import LiveDocbase
from tests.access_fixtures import bearer, user_token

PAGE = Path(__file__).resolve().parent.parent / "docs" / "access.md"


def notes_schema() -> dict[str, object]:
    block = PAGE.read_text().split("<!-- notes-schema:start -->")[1].split(
        "<!-- notes-schema:end -->")[0]
    match = re.search(r"```json\n(.*?)```", block, re.S)
    assert match, "docs/access.md: the notes schema block is missing"
    schema: dict[str, object] = json.loads(match.group(1))
    return schema


async def test_the_notes_app_of_the_docs_over_https(live: LiveDocbase) -> None:
    put = await live.client.put("/rest/notes/_meta", json=notes_schema(), headers=live.auth())
    assert put.status_code == 200, put.text
    ann = bearer(await user_token(live, "ann@example.com"))
    bob = bearer(await user_token(live, "bob@example.com"))
    mine = await live.client.post("/rest/notes", json={"title": "ann's plan"}, headers=ann)
    assert mine.status_code == 201, mine.text
    await live.client.post("/rest/notes", json={"title": "bob's list"}, headers=bob)
    note = mine.json()["_id"]
    paid = await live.client.put(f"/rest/notes/{note}", json={"salary": 5000},
                                 headers=live.auth())
    assert paid.status_code == 200, paid.text
    listed = await live.client.get("/rest/notes", headers=ann)
    assert [n["title"] for n in listed.json()] == ["ann's plan"]
    assert "salary" not in listed.json()[0]
    assert (await live.client.get(f"/rest/notes/{note}", headers=bob)).status_code == 404
    assert (await live.client.get("/rest/notes", headers=ann,
                                  params={"sort": "salary"})).status_code == 403
    refused = await live.client.put(f"/rest/notes/{note}", json={"salary": 1}, headers=ann)
    assert refused.status_code == 403, refused.text
    stored = await live.client.get(f"/rest/notes/{note}", headers=live.auth())
    assert stored.json()["salary"] == 5000
