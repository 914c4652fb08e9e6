"""The console's Data page over real HTTPS: export, import and backups (issue 33).

Two ``docbase serve`` processes per engine (SQLite, PostgreSQL), each with an
administrator: the source exports through the page, the target imports the archive
through the page (and has a backup directory and a small upload limit). What the page
downloads is read back by ``docbase import``/``export``; what it imports is read back
over ``/rest``.
"""

from __future__ import annotations

import json
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.console_browser import CONSOLE_ENGINES, ConsoleServer, console_server
from tests.test_console_security import signed_in
from tests.test_serve_harness import run_cli

UPLOAD_LIMIT = 200_000
BIRDS = [{"name": "wren", "wingspan": 15}, {"name": "kite", "wingspan": "wide"},
         {"name": "owl", "wingspan": 95, "seen": {"where": "barn", "when": ["dusk"]}}]
WINGSPAN_FIELDS = {"fields": [{"name": "name", "type": "text"},
                              {"name": "wingspan", "type": "number"}]}


class Pair:
    """A source and a target server of one engine, and a directory for files."""

    def __init__(self, source: ConsoleServer, target: ConsoleServer, files: Path,
                 backups: Path) -> None:
        self.source, self.target, self.files, self.backups = source, target, files, backups


@pytest.fixture(scope="module", params=CONSOLE_ENGINES)
def pair(request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    files = tmp_path_factory.mktemp(f"data-{request.param}")
    backups = files / "backups"
    config = files / "target.toml"
    config.write_text(f"[limits]\nmax_upload_bytes = {UPLOAD_LIMIT}\n")
    for side in ("source", "target"):
        (files / side).mkdir()
    with console_server(request.param, files / "source") as source, \
            console_server(request.param, files / "target", "--backup-dir", str(backups),
                           "--config", str(config)) as target:
        for bird in BIRDS:
            created = source.api("POST", "/rest/birds", json=bird)
            assert created.status_code == 201, created.text
        yield Pair(source, target, files, backups)


def _export(server: ConsoleServer, out: Path, **form: str) -> httpx.Response:
    with signed_in(server.served) as (client, csrf):
        answer = client.post("/_/data/export", data={"csrf": csrf, **form})
    out.write_bytes(answer.content)
    return answer


def _manifest(archive: Path) -> dict[str, Any]:
    with tarfile.open(archive, "r|*") as tar:
        first = tar.next()
        assert first is not None
        assert first.name == "manifest.json"
        content = tar.extractfile(first)
        assert content is not None
        manifest: dict[str, Any] = json.loads(content.read())
        return manifest


def _import(server: ConsoleServer, archive: Path | None, mode: str = "insert",
            *, csrf: bool = True, content: bytes | None = None) -> tuple[httpx.Response, str]:
    """Upload through the page; the answer and the page it leads to (or shows)."""
    with signed_in(server.served) as (client, token):
        data = {"mode": mode, **({"csrf": token} if csrf else {})}
        body = content if content is not None else (archive.read_bytes() if archive else b"")
        files = {"archive": ((archive.name if archive else ""), body, "application/gzip")}
        answer = client.post("/_/data/import", data=data, files=files)
        page = client.get("/_/data").text if answer.status_code == 303 else answer.text
    return answer, page


def _birds(server: ConsoleServer) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = server.api("GET", "/rest/birds",
                                             params={"sort": "_id"}).json()
    return found


def test_the_page_is_linked_and_offers_the_import_modes(pair: Pair) -> None:
    with signed_in(pair.source.served) as (client, _):
        overview = client.get("/_/").text
        assert 'href="/_/data">Data</a>' in overview
        page = client.get("/_/data")
        assert page.status_code == 200, page.text
        for mode in ("insert", "skip", "upsert"):
            assert f'<option value="{mode}">' in page.text
        assert "Back up now" not in page.text  # the source has no backup directory


def test_an_export_downloads_an_archive_the_cli_reads_back_identical(pair: Pair) -> None:
    archive = pair.files / "download.tar.gz"
    answer = _export(pair.source, archive)
    assert answer.status_code == 200, answer.text
    disposition = answer.headers["content-disposition"]
    assert re.fullmatch(r'attachment; filename="docbase-\d{8}T\d{6}Z\.tar\.gz"',
                        disposition), disposition
    manifest = _manifest(archive)
    assert manifest["secrets"] is False
    fresh = pair.files / "fresh.db"
    run_cli(pair.files, "import", str(archive), "--storage", f"sqlite:///{fresh}")
    again = pair.files / "again.tar"
    run_cli(pair.files, "export", "--out", str(again), "--storage", f"sqlite:///{fresh}")
    assert ({c["name"]: (c["count"], c["sha256"]) for c in _manifest(again)["collections"]}
            == {c["name"]: (c["count"], c["sha256"]) for c in manifest["collections"]})
    assert {c["name"]: c["count"] for c in manifest["collections"]}["birds"] == 3
    with_secrets = pair.files / "secrets.tar.gz"
    assert _export(pair.source, with_secrets, secrets="on").status_code == 200
    assert _manifest(with_secrets)["secrets"] is True


def test_an_uploaded_archive_is_imported_and_read_back_over_rest(pair: Pair) -> None:
    archive = pair.files / "whole.tar.gz"
    assert _export(pair.source, archive).status_code == 200
    assert _birds(pair.target) == []
    # the target's own administrator is stored under the same email: keep that one
    answer, page = _import(pair.target, archive, "skip")
    assert answer.status_code == 303, answer.text
    assert "Imported the archive of database &#39;docbase&#39;:" in page
    assert re.search(r"\d+ collection\(s\), \d+ document\(s\), 0 media file\(s\)", page)
    assert _birds(pair.target) == _birds(pair.source)


def test_a_refused_import_changes_nothing_and_names_the_document(pair: Pair) -> None:
    only_birds = pair.files / "birds.tar"
    pair.source.cli("export", "--out", str(only_birds), "--collections", "birds")
    pair.target.apply_schema(_schema_file(pair, "birds"))
    pair.target.api("DELETE", "/rest/birds/*", params={"q": "{}"})
    answer, page = _import(pair.target, only_birds)
    assert answer.status_code == 422, page
    assert "collection &#39;birds&#39;, line 2: does not fit the schema (wingspan:" in page
    assert "Nothing was imported." in page
    assert _birds(pair.target) == []


def test_a_refusal_after_stored_batches_says_they_stay(pair: Pair) -> None:
    """The import keeps the batches before a refusal (docs/portability.md): say so."""
    for bird in BIRDS:
        assert pair.source.api("POST", "/rest/zebras", json=bird).status_code == 201
    archive = pair.files / "birds-and-zebras.tar"
    pair.source.cli("export", "--out", str(archive), "--collections", "birds,zebras")
    pair.target.apply_schema(_schema_file(pair, "zebras"), "--force")
    pair.target.api("DELETE", "/rest/birds/*", params={"q": "{}"})
    answer, page = _import(pair.target, archive)
    assert answer.status_code == 422, page
    assert "collection &#39;zebras&#39;, line 2:" in page
    assert "The 3 document(s) before it were imported" in page
    assert _birds(pair.target) == _birds(pair.source)
    assert pair.target.api("GET", "/rest/zebras").json() == []
    pair.target.api("DELETE", "/rest/birds/*", params={"q": "{}"})


def _schema_file(pair: Pair, collection: str) -> str:
    path = pair.files / f"schema-{collection}.json"
    path.write_text(json.dumps({"collections": {collection: WINGSPAN_FIELDS}}))
    return str(path)


def test_bad_uploads_answer_a_message_and_change_nothing(pair: Pair) -> None:
    before = _birds(pair.target)
    not_archive = pair.files / "notes.tar.gz"
    not_archive.write_bytes(b"these are notes, not an archive")
    answer, page = _import(pair.target, not_archive)
    assert (answer.status_code, "Import refused: cannot read archive" in page) == (400, True)
    answer, page = _import(pair.target, None)
    assert (answer.status_code, "Choose an archive file" in page) == (400, True)
    answer, page = _import(pair.target, not_archive, content=b"x" * (UPLOAD_LIMIT + 1))
    assert answer.status_code == 413, page
    assert "limits.max_upload_bytes" in page
    answer, page = _import(pair.target, not_archive, mode="merge")
    assert (answer.status_code, "Unknown import mode" in page) == (400, True)
    assert _birds(pair.target) == before


def test_an_import_without_the_csrf_token_imports_nothing(pair: Pair) -> None:
    archive = pair.files / "csrf.tar"
    pair.source.cli("export", "--out", str(archive), "--collections", "birds")
    pair.target.api("DELETE", "/rest/birds/*", params={"q": "{}"})
    answer, _ = _import(pair.target, archive, "upsert", csrf=False)
    assert answer.status_code == 403
    assert _birds(pair.target) == []


def test_back_up_now_lists_the_backup_and_downloads_it(pair: Pair) -> None:
    with signed_in(pair.target.served) as (client, csrf):
        assert "No backup yet." in client.get("/_/data").text
        done = client.post("/_/data/backups", data={"csrf": csrf})
        assert (done.status_code, done.headers["location"]) == (303, "/_/data")
        page = client.get("/_/data").text
        [written] = list(pair.backups.glob("docbase-*.tar.gz"))
        assert f"Backed up to {written.name}:" in page
        link = f'href="/_/data/backups/{written.name}"'
        assert link in page
        assert f"{written.stat().st_size:,} bytes" in page
        download = client.get(f"/_/data/backups/{written.name}")
        assert download.status_code == 200
        assert download.content == written.read_bytes()
        assert _manifest(written)["secrets"] is True  # as the scheduled job writes them
        assert client.get("/_/data/backups/..%2Ftarget.toml").status_code == 404
        assert client.get("/_/data/backups/other-1.tar.gz").status_code == 404
