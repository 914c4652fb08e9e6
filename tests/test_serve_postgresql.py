"""``docbase serve`` on PostgreSQL: several servers share one database and its keys."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.test_serve_harness import run_cli, serving

pytestmark = pytest.mark.postgres


def test_two_servers_on_one_postgresql_share_documents_and_keys(
    tmp_path: Path, schema_url: str
) -> None:
    first_dir, second_dir = tmp_path / "a", tmp_path / "b"
    first_dir.mkdir()
    second_dir.mkdir()
    with serving(first_dir, "--storage", schema_url) as first:
        admin = first.admin_key
        # a second host's first start finds the keys there: it writes no admin.key
        with serving(second_dir, "--storage", schema_url, "--workers", "2") as second:
            assert not (second_dir / "docbase-data" / "admin.key").exists()
            created = first.request("POST", "/rest/people", key=admin, json={"name": "Ann"})
            assert created.status_code == 201, created.text
            listed = second.request("GET", "/rest/people", key=admin).json()
            assert [d["name"] for d in listed] == ["Ann"]

            scoped = run_cli(second_dir, "keys", "create", "--storage", schema_url,
                             "--path", "/rest/people/**", "--method", "GET").stdout.strip()
            assert first.request("GET", "/rest/people", key=scoped).status_code == 200
            run_cli(first_dir, "keys", "revoke", "--storage", schema_url, scoped)
            deadline = time.monotonic() + 5
            while second.request("GET", "/rest/people", key=scoped).status_code != 401:
                assert time.monotonic() < deadline, "revocation not seen by the other server"
                time.sleep(0.2)


def test_database_created_on_postgresql_is_served_by_prefix(
    tmp_path: Path, schema_url: str
) -> None:
    key = run_cli(tmp_path, "db", "create", "shop", "--storage", schema_url).stdout.strip()
    listed = run_cli(tmp_path, "db", "list").stdout
    assert "shop" in listed
    assert "postgresql://" in listed
    with serving(tmp_path) as served:
        created = served.request("POST", "/db/shop/rest/orders", key=key, json={"n": 1})
        assert created.status_code == 201, created.text
        assert served.request("GET", "/rest/orders", key=served.admin_key).json() == []
