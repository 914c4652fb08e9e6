"""Two ``docbase serve`` processes racing for unique values: exactly one writer wins each.

The servers share one SQLite file, one PostgreSQL schema or one database of the Mongo
wire server (which enforces no unique secondary index itself, so this is the claims of
``docbase/core/schema/uniqueness.py`` holding).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.served_engines import ENGINES, engine_storage
from tests.test_serve_harness import Served, serving

VALUES = 8
ATTEMPTS_PER_SERVER = 3


@pytest.fixture(params=[p for p in ENGINES if p.values[0] != "memory"])  # shared storage
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with engine_storage(request.param, tmp_path) as url:
        yield url


def post(server: Served, key: str, body: dict[str, str]) -> int:
    return server.request("POST", "/rest/people", key=key, json=body).status_code


def test_two_servers_racing_store_each_unique_value_once(tmp_path: Path, storage: str) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with serving(tmp_path / "a", "--storage", storage) as first:
        key = first.admin_key
        defined = first.request("PUT", "/rest/people/_meta", key=key, json={"fields": [
            {"name": "email", "type": "email", "unique": True}]})
        assert defined.status_code == 200, defined.text
        with serving(tmp_path / "b", "--storage", storage) as second:
            jobs = [(server, {"email": f"user{n}@example.com"})
                    for n in range(VALUES) for _ in range(ATTEMPTS_PER_SERVER)
                    for server in (first, second)]
            with ThreadPoolExecutor(max_workers=12) as pool:
                statuses = list(pool.map(lambda job: post(job[0], key, job[1]), jobs))
            assert sorted(set(statuses)) == [201, 409], statuses
            assert statuses.count(201) == VALUES
            stored = second.request("GET", "/rest/people", key=key).json()
            assert sorted(d["email"] for d in stored) == sorted(
                f"user{n}@example.com" for n in range(VALUES))

            # two documents racing to take one new value: one update wins
            ids = [d["_id"] for d in stored[:2]]
            with ThreadPoolExecutor(max_workers=2) as pool:
                answers = list(pool.map(
                    lambda pair: pair[0].request("PATCH", f"/rest/people/{pair[1]}", key=key,
                                                 json={"email": "taken@example.com"}
                                                 ).status_code,
                    [(first, ids[0]), (second, ids[1])]))
            assert sorted(answers) == [200, 409]
            # the loser's old value is still its own; the winner's old one is free again
            assert post(first, key, {"email": "taken@example.com"}) == 409
            freed = [d["email"] for d in stored[:2]][answers.index(200)]
            assert post(second, key, {"email": freed}) == 201
