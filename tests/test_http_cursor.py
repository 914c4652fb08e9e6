"""Cursor paging over real HTTPS, on every storage backend (docs/http.md, "Reading lists")."""

from __future__ import annotations

import base64
from typing import Any

import msgspec

from docbase.http.testing import LiveDocbase

# ties (equal "n"), a missing and a null "n", numbers, strings, an array, booleans
PEOPLE: list[dict[str, Any]] = [
    {"name": "a", "n": 2}, {"name": "b", "n": "x"}, {"name": "c"}, {"name": "d", "n": 2},
    {"name": "e", "n": None}, {"name": "f", "n": [5, 0]}, {"name": "g", "n": True},
    {"name": "h", "n": 2}, {"name": "i", "n": -1.5}, {"name": "j", "n": "x"},
]


async def _load(live: LiveDocbase) -> None:
    response = await live.client.post("/rest/people", json=PEOPLE, headers=live.auth())
    assert response.status_code == 201, response.text


async def _get(live: LiveDocbase, path: str, **params: Any) -> Any:
    return await live.client.get(path, params=params, headers=live.auth())


def _names(documents: list[dict[str, Any]]) -> list[str]:
    return [d["name"] for d in documents]


async def test_following_next_links_reads_every_document_once_in_order(
        live: LiveDocbase) -> None:
    await _load(live)
    h = '{"$orderby": {"n": -1, "name": 1}}'
    whole = (await _get(live, "/rest/people", h=h)).json()
    assert len(whole) == len(PEOPLE)
    response = await _get(live, "/rest/people", h=h, max=3)
    pages = [response.json()]
    while "link" in response.headers:
        link = response.headers["link"]
        assert link.endswith('>; rel="next"')
        assert link.startswith("</rest/people?")
        assert response.headers["x-next-cursor"] in link
        response = await live.client.get(link[1:link.index(">")], headers=live.auth())
        assert response.status_code == 200, response.text
        pages.append(response.json())
    assert [len(page) for page in pages] == [3, 3, 3, 1]
    assert [d for page in pages for d in page] == whole
    assert "x-next-cursor" not in response.headers


async def test_after_hint_and_totals_answer_carry_the_cursor(live: LiveDocbase) -> None:
    await _load(live)
    first = await _get(live, "/rest/people", sort="n", totals="true", max=4)
    body = first.json()
    assert body["totals"] == {"total": 10, "count": 4, "skip": 0, "max": 4}
    assert body["next"] == first.headers["x-next-cursor"]
    second = (await _get(live, "/rest/people", h=msgspec.json.encode(
        {"$orderby": {"n": 1}, "$after": body["next"], "$max": 4}).decode())).json()
    by_url = (await _get(live, "/rest/people", sort="n", after=body["next"], max=4)).json()
    whole = (await _get(live, "/rest/people", sort="n")).json()
    assert second == by_url == whole[4:8]
    # missing and null first, then numbers (the array by its smallest element), strings
    assert _names(whole[:4]) == ["c", "e", "i", "f"]
    last = (await _get(live, "/rest/people", sort="n", totals="true", after=body["next"],
                       skip=4)).json()
    assert _names(last["data"]) == _names(whole[8:])
    assert last["next"] is None


async def test_skip_keeps_working_beside_cursors(live: LiveDocbase) -> None:
    await _load(live)
    whole = _names((await _get(live, "/rest/people", sort="name")).json())
    assert _names((await _get(live, "/rest/people", sort="name", skip=7, max=2)).json()) \
        == whole[7:9]


async def test_cursor_of_a_sort_the_answer_hides_or_projects_away(live: LiveDocbase) -> None:
    await _load(live)
    for hidden, params in (("_created", {"h": '{"$orderby": {"_created": -1}}'}),
                           ("n", {"h": '{"$orderby": {"n": 1}, "$fields": {"name": 1}}'}),
                           ("n", {"h": '{"$orderby": {"n": 1}, "$fields": {"n": 0}}'})):
        whole = (await _get(live, "/rest/people", **params)).json()
        first = await _get(live, "/rest/people", **params, max=5)
        rest = await _get(live, "/rest/people", **params, after=first.headers["x-next-cursor"])
        assert first.json() + rest.json() == whole, params
        assert not any(hidden in d for d in whole)


async def test_a_cursor_for_another_order_is_refused(live: LiveDocbase) -> None:
    await _load(live)
    cursor = (await _get(live, "/rest/people", sort="n", max=2)).headers["x-next-cursor"]
    response = await _get(live, "/rest/people", sort="name", after=cursor)
    assert response.status_code == 400
    error = response.json()
    assert error["name"] == "InvalidQuery"
    assert '{"n":1}' in error["message"]
    assert '{"name":1}' in error["message"]


async def test_a_tampered_cursor_is_a_clear_400(live: LiveDocbase) -> None:
    await _load(live)
    cursor = (await _get(live, "/rest/people", max=2)).headers["x-next-cursor"]
    decoded = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    forged = [cursor[:-3], "not a cursor", "%%%", cursor + "A",
              base64.urlsafe_b64encode(decoded.replace(b'"i"', b'"x"')).decode(),
              base64.urlsafe_b64encode(b'{"s": [], "v": [1], "i": "a"}').decode(),
              base64.urlsafe_b64encode(b"[" * 100 + b"]" * 100).decode()]
    for text in forged:
        response = await _get(live, "/rest/people", after=text)
        assert response.status_code == 400, (text, response.text)
        assert response.json()["name"] == "InvalidQuery"
    response = await _get(live, "/rest/people", h='{"$after": 12}')
    assert response.status_code == 400
    assert "$after" in response.json()["message"]
