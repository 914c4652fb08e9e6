"""Each request on documents is authorized once, for the collection holding them.

The read and write pipelines decide method and path for the stored collection
(``docs/access.md``); the HTTP layer asks only the origin. The decisions a real HTTPS
request causes are counted where they are asked (the HTTP layer and the pipelines'
authorize stages), around the real decision: none may be asked twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase import Database
from docbase.core.auth import Action, Principal, authorize
from docbase.core.pipeline import stages
from docbase.http import context
from docbase.http.testing import LiveDocbase, live_docbase


@pytest.fixture
async def live(stores: Any, tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    async with live_docbase({"main": Database(*stores, name="main")}, tmp_path) as running:
        yield running


@pytest.fixture
def decisions(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[str, str]]:
    """Count the (method, path) of every decision the HTTP layer and the pipelines ask."""
    asked: Counter[tuple[str, str]] = Counter()

    def counted(principal: Principal, action: Action) -> None:
        asked[action.method, action.path] += 1
        authorize(principal, action)

    monkeypatch.setattr(context, "authorize", counted)
    monkeypatch.setattr(stages, "authorize", counted)
    return asked


async def test_a_get_a_create_and_a_patch_are_each_decided_once(
    live: LiveDocbase, decisions: Counter[tuple[str, str]]
) -> None:
    key = {"x-apikey": await live.key(paths=["/rest/people/**", "/rest/people"],
                                      methods=["GET", "POST", "PATCH"])}
    created = await live.client.post("/rest/people", json={"name": "Ada"}, headers=key)
    assert created.status_code == 201, created.text
    doc = created.json()["_id"]
    assert decisions == {("POST", "/rest/people"): 1}
    decisions.clear()
    assert (await live.client.get(f"/rest/people/{doc}", headers=key)).status_code == 200
    assert decisions == {("GET", f"/rest/people/{doc}"): 1}
    decisions.clear()
    patched = await live.client.patch(f"/rest/people/{doc}", json={"age": 36}, headers=key)
    assert patched.status_code == 200, patched.text
    assert decisions == {("PATCH", f"/rest/people/{doc}"): 1}


async def test_a_child_read_is_decided_for_the_parent_path_and_the_child_collection(
    live: LiveDocbase, decisions: Counter[tuple[str, str]]
) -> None:
    parent = (await live.client.post("/rest/people", json={"name": "Ada"},
                                     headers=live.auth())).json()["_id"]
    decisions.clear()
    answer = await live.client.get(f"/rest/people/{parent}/kids", headers=live.auth())
    assert answer.status_code == 200, answer.text
    assert decisions == {("GET", f"/rest/people/{parent}/kids"): 1, ("GET", "/rest/kids"): 1}


async def test_a_key_refused_by_the_pipeline_is_still_refused_over_https(
    live: LiveDocbase, decisions: Counter[tuple[str, str]]
) -> None:
    key = {"x-apikey": await live.key(paths=["/rest/people"], methods=["GET"])}
    doc = (await live.client.post("/rest/pets", json={"n": 1},
                                  headers=live.auth())).json()["_id"]
    for method, path in [("GET", f"/rest/pets/{doc}"), ("PATCH", f"/rest/pets/{doc}"),
                         ("POST", "/rest/people"), ("GET", f"/rest/pets/{doc}/kids"),
                         ("GET", f"/rest/pets/{'0' * 24}/kids")]:
        answer = await live.client.request(method, path, json={"n": 2}, headers=key)
        assert answer.status_code == 403, (method, path, answer.text)
    assert decisions, "the refusals came from the counted decision"


async def test_an_origin_the_key_does_not_allow_is_refused_before_any_read(
    live: LiveDocbase, decisions: Counter[tuple[str, str]]
) -> None:
    key = {"x-apikey": await live.key(paths=["/rest/**"], methods=["GET"],
                                      origins=["https://app.example"]),
           "origin": "https://evil.example"}
    answer = await live.client.get("/rest/people", headers=key)
    assert answer.status_code == 403, answer.text
    assert "origin" in answer.json()["message"]
    assert not decisions
