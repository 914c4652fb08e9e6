"""``docbase keys|users|export|import --url https://... --apikey K --cacert F`` against a
served database: the operator needs no shell on the machine holding the data.

Each test runs the real ``docbase`` command against a real ``docbase serve`` (SQLite),
from another directory than the server's, and checks the result over HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_serve_harness import Served, run_cli, serving


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("remote-cli")) as server:
        yield server


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """An operator's directory with no data of its own."""
    return tmp_path


def remote(served: Served, key: str | None = None) -> list[str]:
    return ["--url", served.url, "--apikey", key or served.admin_key,
            "--cacert", str(served.data_dir / "cert.pem")]


def test_keys_create_list_and_revoke_over_https(served: Served, elsewhere: Path) -> None:
    created = run_cli(elsewhere, "keys", "create", "--path", "/rest/notes/**",
                      "--method", "GET", "--description", "reader", *remote(served))
    key = created.stdout.strip()
    assert served.request("GET", "/rest/notes", key=key).status_code == 200
    assert served.request("POST", "/rest/notes", key=key, json={}).status_code == 403

    listed = run_cli(elsewhere, "keys", "list", "--json", *remote(served)).stdout
    rows = [json.loads(line) for line in listed.splitlines()]
    mine = [r for r in rows if r["description"] == "reader"]
    assert len(mine) == 1
    assert (mine[0]["paths"], mine[0]["methods"], mine[0]["status"]) == (
        ["/rest/notes/**"], ["GET"], "active")

    run_cli(elsewhere, "keys", "revoke", mine[0]["id"], *remote(served))
    assert served.request("GET", "/rest/notes", key=key).status_code == 401
    assert not (elsewhere / "docbase-data").exists()


def test_users_create_list_and_delete_over_https(served: Served, elsewhere: Path) -> None:
    run_cli(elsewhere, "users", "create", "--email", "ann@example.com",
            "--password", "correct horse battery", "--displayname", "Ann", *remote(served))
    login = served.request("POST", "/auth/login", json={
        "email": "ann@example.com", "password": "correct horse battery"})
    assert login.status_code == 200, login.text

    listed = run_cli(elsewhere, "users", "list", "--json", *remote(served)).stdout
    assert [(u["email"], u["displayname"]) for u in map(json.loads, listed.splitlines())] == [
        ("ann@example.com", "Ann")]

    run_cli(elsewhere, "users", "delete", "--email", "ann@example.com", *remote(served))
    assert served.request("POST", "/auth/login", json={
        "email": "ann@example.com", "password": "correct horse battery"}).status_code == 401


def test_export_then_import_over_https(served: Served, elsewhere: Path) -> None:
    made = served.request("POST", "/rest/books", key=served.admin_key,
                          json=[{"title": "Dune"}, {"title": "Emma"}])
    assert made.status_code == 201, made.text
    archive = elsewhere / "books.tar"
    run_cli(elsewhere, "export", "--out", str(archive), "--collections", "books",
            *remote(served))
    assert archive.stat().st_size > 0

    ids = [d["_id"] for d in made.json()]
    deleted = served.request("DELETE", "/rest/books/*", key=served.admin_key, json=ids)
    assert deleted.status_code == 200, deleted.text
    imported = run_cli(elsewhere, "import", str(archive), *remote(served))
    assert "imported 1 collection(s), 2 document(s)" in imported.stderr
    books = served.request("GET", "/rest/books", key=served.admin_key).json()
    assert sorted((b["_id"], b["title"]) for b in books) == sorted(
        zip(ids, ["Dune", "Emma"], strict=True))


def test_a_scoped_key_or_no_key_is_refused(served: Served, elsewhere: Path) -> None:
    scoped = run_cli(elsewhere, "keys", "create", "--path", "/rest/**",
                     *remote(served)).stdout.strip()
    refused = run_cli(elsewhere, "keys", "list", *remote(served, scoped), check=False)
    assert refused.returncode != 0
    assert "full-access" in refused.stderr
    missing = run_cli(elsewhere, "keys", "list", "--url", served.url, check=False)
    assert missing.returncode == 2
    assert "--apikey" in missing.stderr


def test_a_command_that_cannot_act_remotely_says_so(served: Served, elsewhere: Path) -> None:
    result = run_cli(elsewhere, "settings", "set", "mail.from", "a@x.no", *remote(served),
                     check=False)
    assert result.returncode == 2
    assert "does not take --url" in result.stderr


def test_schema_apply_and_show_over_https(served: Served, elsewhere: Path) -> None:
    schema_file = elsewhere / "schema.json"
    schema_file.write_text(json.dumps({"collections": {"members": {"fields": [
        {"name": "name", "type": "text", "required": True}]}}}))
    dry = run_cli(elsewhere, "schema", "apply", str(schema_file), "--dry-run", *remote(served))
    assert dry.stdout.startswith("+ members")
    assert served.request("POST", "/rest/members", key=served.admin_key,
                          json={}).status_code == 201  # not applied yet

    run_cli(elsewhere, "schema", "apply", str(schema_file), *remote(served))
    refused = served.request("POST", "/rest/members", key=served.admin_key, json={})
    assert refused.status_code == 422, refused.text
    again = run_cli(elsewhere, "schema", "apply", str(schema_file), *remote(served))
    assert again.stdout.strip() == "no changes"

    shown = json.loads(run_cli(elsewhere, "schema", "show", *remote(served)).stdout)
    assert [f["name"] for f in shown["collections"]["members"]["fields"]] == ["name"]

    schema_file.write_text(json.dumps({"collections": {}}))
    destructive = run_cli(elsewhere, "schema", "apply", str(schema_file), *remote(served),
                          check=False)
    assert destructive.returncode == 1
    assert "refusing destructive changes" in destructive.stderr
    assert served.request("POST", "/rest/members", key=served.admin_key,
                          json={}).status_code == 422
