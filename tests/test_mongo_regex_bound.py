"""A catastrophic ``$regex`` is bounded on MongoDB too, whatever the server does.

MongoDB stops PCRE at its match limit and honours ``maxTimeMS``; the CongoDB wire
server runs Node's backtracking engine and honours neither: ``^(a+)+$`` over forty
``a`` and a ``!`` keeps it busy for minutes. docbase bounds every Mongo operation on
the client (pymongo's client-side operation timeout, ``limits.query_timeout``), so the
request answers ``400 QueryTimeout`` at that time and the worker serves other requests
meanwhile. The wire server here is private to this test and killed at its end: Node
stays busy long after docbase has given up.
"""

from __future__ import annotations

import concurrent.futures
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from docbase.config import admin_key_path
from docbase.testing.mongo_wire import (
    MongoWireServer,
    MongoWireServerError,
    node_available,
    start_mongo_wire_server,
)
from tests.backends import mongo_url, service_missing
from tests.test_serve_harness import Served, serving

pytestmark = pytest.mark.mongo

QUERY_TIMEOUT = 0.5
ANSWER_WITHIN = 3.0
"""Seconds the regex request may take: the 0.5 s bound, plus a loaded machine."""
PROMPT = 1.0
"""Seconds a simple request may take while the regex request is running."""
VICTIM = "a" * 40 + "!"


@pytest.fixture
def wire_server() -> Iterator[MongoWireServer]:
    if not node_available():
        service_missing("the Mongo wire test server needs Node.js (node and npm)")
    try:
        server = start_mongo_wire_server()
    except MongoWireServerError as exc:
        service_missing(f"the Mongo wire test server did not start: {exc}")
    try:
        yield server
    finally:
        server.kill()  # busy with the regex for minutes: SIGTERM would wait for it


def test_a_catastrophic_regex_answers_query_timeout_and_the_worker_goes_on(
    tmp_path: Path, wire_server: MongoWireServer
) -> None:
    (tmp_path / "docbase.toml").write_text(
        f'storage = "{mongo_url(wire_server.url, "regex_bound")}"\n'
        f"[limits]\nquery_timeout = {QUERY_TIMEOUT}\n"
        f'[databases.side]\nstorage = "sqlite:///{tmp_path / "side.db"}"\n')
    with serving(tmp_path, "--config", "docbase.toml") as served:
        key = served.admin_key
        side_key = admin_key_path(served.data_dir, "side").read_text().strip()
        for name in ("Ann", VICTIM):
            assert served.request("POST", "/rest/people", key=key,
                                  json={"name": name}).status_code == 201
        query = json.dumps({"name": {"$regex": "^(a+)+$"}})

        def regex_request() -> tuple[float, httpx.Response]:
            with httpx.Client(base_url=served.url, verify=served.ssl_context(),
                              timeout=60) as client:
                started = time.monotonic()
                answer = client.get("/rest/people", params={"q": query},
                                    headers={"x-apikey": key})
                return time.monotonic() - started, answer

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            running = pool.submit(regex_request)
            time.sleep(0.15)  # the query is on the wire server by now
            assert not running.done()
            meanwhile = simple_requests(served, side_key)
            took, answer = running.result()
    assert answer.status_code == 400, answer.text
    assert answer.json()["name"] == "QueryTimeout"
    assert "query_timeout" in answer.json()["message"]
    assert took < ANSWER_WITHIN, took
    for what, seconds in meanwhile.items():
        assert seconds < PROMPT, (what, seconds)
    print(f"\nMongo wire server regex: QueryTimeout after {took:.2f} s; meanwhile "
          + ", ".join(f"{what} {seconds * 1000:.0f} ms" for what, seconds in meanwhile.items()))


def simple_requests(served: Served, side_key: str) -> dict[str, float]:
    """Time ``/health`` and a write and a read on the SQLite database, on new connections."""
    timings = {}
    with httpx.Client(base_url=served.url, verify=served.ssl_context(), timeout=30) as client:
        for what, method, path, key, body in (
                ("health", "GET", "/health", None, None),
                ("side create", "POST", "/db/side/rest/notes", side_key, {"n": 1}),
                ("side list", "GET", "/db/side/rest/notes", side_key, None)):
            started = time.monotonic()
            answer = client.request(method, path, json=body,
                                    headers={"x-apikey": key} if key else {})
            timings[what] = time.monotonic() - started
            assert answer.status_code in (200, 201), answer.text
    return timings
