"""The Logs page over HTTPS: two servers on one database, each logging what it serves.

Two ``docbase serve`` processes share one SQLite file or PostgreSQL schema, as the
workers of one server do: each records the requests it serves and writes them in
batches to the database's request log, and the Logs page of either shows them all,
with route templates, statuses and kinds of credential, and never a key or a path.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.console_browser import ADMIN
from tests.served_engines import engine_storage
from tests.test_console_security import signed_in
from tests.test_serve_harness import Served, eventually, run_cli, serving

SECRET_QUERY = "apikey=not-a-real-key-but-secret-looking-0123"


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql",
                                                               marks=pytest.mark.postgres)])
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
         ) -> Iterator[tuple[Served, Served, str]]:
    """Two servers on one database, the first with an administrator; the full-access key."""
    first_dir = tmp_path_factory.mktemp(f"logs-a-{request.param}")
    second_dir = tmp_path_factory.mktemp(f"logs-b-{request.param}")
    with (engine_storage(request.param, first_dir) as storage,
          serving(first_dir, "--storage", storage) as first):
        run_cli(first_dir, "users", "create", "--email", ADMIN, "--password",
                "correct horse battery", "--admin", "--storage", storage)
        with serving(second_dir, "--storage", storage, "--data-dir",
                     str(second_dir / "data"), data_dir=second_dir / "data") as second:
            yield first, second, first.admin_key


def _rows(page: str) -> list[list[str]]:
    body = page.split('id="requests"', 1)[1].split("</table>", 1)[0]
    return [[re.sub(r"<[^>]+>", "", cell).strip()
             for cell in re.findall(r"<td>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]


def test_the_logs_page_shows_what_every_server_served(pair: tuple[Served, Served, str]
                                                      ) -> None:
    first, second, key = pair
    created = first.request("POST", "/rest/birds", key=key, json={"name": "wren"})
    assert created.status_code == 201, created.text
    bird = created.json()["_id"]
    assert second.request("GET", f"/rest/birds/{bird}", key=key).status_code == 200
    assert second.request("GET", f"/rest/birds/{bird}?{SECRET_QUERY}").status_code == 401
    assert first.request("GET", "/rest/birds/000000000000000000000000",
                         key=key).status_code == 404
    assert second.request("GET", "/no/such/route").status_code == 404
    with signed_in(first) as (client, _csrf):
        # kept over every look: each look adds a row of its own, and on a loaded
        # machine fifty of them push the servers' rows off page 1
        seen: set[tuple[str, ...]] = set()
        processes: set[str] = set()

        def logged() -> bool:
            rows = [row for row in _rows(client.get("/_/logs").text) if len(row) == 7]
            seen.update((row[1], row[2], row[3], row[5]) for row in rows)
            processes.update(row[6] for row in rows if row[2] != "/_/logs")
            return {("GET", "/rest/{collection}/{document_id}", "200", "API key (full access)"),
                    ("GET", "/rest/{collection}/{document_id}", "401", "anonymous"),
                    ("GET", "/rest/{collection}/{document_id}", "404", "API key (full access)"),
                    ("POST", "/rest/{collection}", "201", "API key (full access)"),
                    ("GET", "unmatched", "404", "anonymous"),
                    ("GET", "/_/logs", "200", "console session")} <= seen

        eventually(logged, "the requests of both servers in the log")
        page = client.get("/_/logs")
        assert len(processes) >= 2, processes  # a worker of each server
        assert bird not in page.text
        assert "not-a-real-key" not in page.text
        assert key not in page.text
        assert page.text.count("<svg") == 3
        assert "<polyline" in page.text
        assert "Requests per minute" in page.text
        assert "answers 4xx" in page.text
        later = client.get("/_/logs?page=2&hours=24")
        assert later.status_code == 200
        assert '<strong aria-current="page">Last 24 h</strong>' in later.text


def test_a_request_served_just_before_a_shutdown_is_kept(tmp_path: Path,
                                                         pair: tuple[Served, Served, str]
                                                         ) -> None:
    first, _, key = pair
    storage = re.search(r"--storage (\S+)", " ".join(first.process.args)).group(1)  # type: ignore[arg-type, union-attr]
    with serving(tmp_path, "--storage", storage) as third:  # stopped at once after
        assert third.request("DELETE", "/rest/last-words/000000000000000000000000",
                             key=key).status_code == 404
    with signed_in(first) as (client, _csrf):  # no waiting: the stop wrote it
        rows = _rows(client.get("/_/logs").text)
        assert ["DELETE", "/rest/{collection}/{document_id}", "404"] in [
            row[1:4] for row in rows if len(row) == 7]


def test_only_a_signed_in_administrator_reads_the_logs(pair: tuple[Served, Served, str]
                                                       ) -> None:
    first, _, key = pair
    anonymous = first.request("GET", "/_/logs", follow_redirects=False)
    assert anonymous.status_code == 303
    assert anonymous.headers["location"].startswith("/_/signin")
    with_key = first.request("GET", "/_/logs", key=key, follow_redirects=False)
    assert with_key.status_code == 303  # an API key never opens the console


def _logged_routes(database: Path) -> list[str]:
    with sqlite3.connect(database) as connection:
        found = connection.execute(
            "select id from docbase_collections where name = '_requestlog'").fetchone()
        if found is None:
            return []
        return [json.loads(body)["route"]
                for (body,) in connection.execute(f"select body from c_{found[0]}")]


def test_a_stuck_log_write_holds_no_request(tmp_path: Path) -> None:
    database = tmp_path / "stuck.db"
    with serving(tmp_path, "--storage", f"sqlite:///{database}") as server:
        eventually(lambda: "/health" in _logged_routes(database), "the first entries")
        before = len(_logged_routes(database))
        # the server may hold the write lock for a moment (the log's own write each
        # second): wait for it, as a second process would (timeout 0 failed CI once)
        blocker = sqlite3.connect(database, timeout=30, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # every writer, the log's too, now waits
        try:
            for _ in range(25):  # over more than two of the log's write attempts
                answer = server.request("GET", "/rest/birds", timeout=10)
                assert answer.status_code == 401  # answered, not held by the waiting write
                time.sleep(0.1)
            assert len(_logged_routes(database)) == before  # the log's write is stuck
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        eventually(lambda: _logged_routes(database).count("/rest/{collection}") >= 25,
                   "the held requests written once the lock went")
