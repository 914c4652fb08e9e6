"""The console's Data page over real HTTPS: CSV and NDJSON rows, and restoring (issue 33).

Per engine (SQLite, PostgreSQL) a server with data and a fresh one, each with an
administrator. Rows are uploaded through the page and read back over ``/rest``; an
export of the first is restored into the fresh one through the page, which refuses a
database holding data and a restore whose confirmation is not the database's name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.console_browser import CONSOLE_ENGINES, ConsoleServer, console_server
from tests.test_console_data import WINGSPAN_FIELDS
from tests.test_console_security import signed_in


class Servers:
    """A server holding data, a fresh one, and a directory for files."""

    def __init__(self, full: ConsoleServer, fresh: ConsoleServer, files: Path) -> None:
        self.full, self.fresh, self.files = full, fresh, files


@pytest.fixture(scope="module", params=CONSOLE_ENGINES)
def servers(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    files = tmp_path_factory.mktemp(f"rows-{request.param}")
    for side in ("full", "fresh"):
        (files / side).mkdir()
    with console_server(request.param, files / "full") as full, \
            console_server(request.param, files / "fresh") as fresh:
        schema = files / "finches.json"
        schema.write_text(json.dumps({"collections": {"finches": WINGSPAN_FIELDS}}))
        full.apply_schema(str(schema))
        yield Servers(full, fresh, files)


def _post(server: ConsoleServer, path: str, files: dict[str, Any], *, csrf: bool = True,
          **form: str) -> tuple[httpx.Response, str]:
    """A form with a file to ``path``; the answer and the page it leads to (or shows)."""
    with signed_in(server.served) as (client, token):
        data = {**form, **({"csrf": token} if csrf else {})}
        answer = client.post(path, data=data, files=files)
        page = client.get("/_/data").text if answer.status_code == 303 else answer.text
    return answer, page


def _rows(server: ConsoleServer, name: str, body: bytes, collection: str = "finches",
          mode: str = "all", **form: Any) -> tuple[httpx.Response, str]:
    return _post(server, "/_/data/rows", {"rows": (name, body, "text/plain")},
                 collection=collection, mode=mode, **form)


def _finches(server: ConsoleServer) -> list[tuple[str, Any]]:
    found = server.api("GET", "/rest/finches", params={"sort": "name"}).json()
    return [(f["name"], f.get("wingspan")) for f in found]


CSV = b"name,wingspan\r\nzebra finch,10\r\nbullfinch,wide\r\ngoldfinch,\r\n"


def test_the_page_offers_the_row_import_with_the_collections(servers: Servers) -> None:
    assert servers.full.api("POST", "/rest/sparrows", json={"n": 1}).status_code == 201
    with signed_in(servers.full.served) as (client, _):
        page = client.get("/_/data").text
    assert 'action="/_/data/rows"' in page
    assert '<datalist id="rows-collections"><option value="sparrows">' in page
    assert '<option value="all">all or nothing' in page
    assert '<option value="each">store the rows that fit' in page


def test_a_refused_row_stores_nothing_all_or_nothing(servers: Servers) -> None:
    answer, page = _rows(servers.full, "finches.csv", CSV)
    assert answer.status_code == 422, page
    assert "Import refused:" in page
    assert "line 3.wingspan:" in page
    assert "Nothing was imported." in page
    assert _finches(servers.full) == []


def test_each_stores_the_rows_that_fit_and_names_the_refused(servers: Servers) -> None:
    answer, page = _rows(servers.full, "finches.csv", CSV, mode="each")
    assert answer.status_code == 303, page
    assert "Imported 2 of 3 row(s) from finches.csv into &#39;finches&#39;." in page
    assert "Refused 1, nothing stored for them: line 3:" in page
    assert _finches(servers.full) == [("goldfinch", None), ("zebra finch", 10)]
    servers.full.api("DELETE", "/rest/finches/*", params={"q": "{}"})


def test_many_refused_rows_are_counted_beyond_the_first_ten(servers: Servers) -> None:
    body = "name,wingspan\n" + "".join(f"bird {n},{'x' * 300}\n" for n in range(15))
    answer, page = _rows(servers.full, "many.csv", body.encode(), mode="each")
    assert answer.status_code == 303, page
    assert "Imported 0 of 15 row(s)" in page
    assert "line 11:" in page
    assert "line 12:" not in page
    assert "; and 5 more." in page
    assert _finches(servers.full) == []


def test_an_ndjson_file_is_imported_whole_through_the_write_pipeline(servers: Servers) -> None:
    body = b'{"name": "siskin", "wingspan": 8}\n\n{"name": "linnet", "wingspan": "9"}\n'
    answer, page = _rows(servers.full, "finches.ndjson", body)
    assert answer.status_code == 303, page
    assert "Imported 2 document(s) from finches.ndjson into &#39;finches&#39;." in page
    assert _finches(servers.full) == [("linnet", 9), ("siskin", 8)]


def test_unreadable_files_and_forms_say_why_and_store_nothing(servers: Servers) -> None:
    before = _finches(servers.full)
    cases = [(("notes.txt", b"a,b\n"), {}, 400, "is neither .csv nor .ndjson"),
             (("bad.ndjson", b'{"name": "x"}\n[1]\n'), {}, 400, "line 2: is not a JSON object"),
             (("f.csv", CSV), {"collection": "bad name!"}, 400, "Import refused:"),
             (("f.csv", CSV), {"mode": "merge"}, 400, "Unknown mode"),
             (("", b""), {}, 400, "Choose a CSV or NDJSON file.")]
    for (name, body), form, status, said in cases:
        answer, page = _rows(servers.full, name, body, **form)
        assert (answer.status_code, said in page) == (status, True), (name, page)
    answer, _ = _rows(servers.full, "f.ndjson", b'{"name": "x"}\n', csrf=False)
    assert answer.status_code == 403
    assert _finches(servers.full) == before


def _export(server: ConsoleServer, out: Path) -> Path:
    with signed_in(server.served) as (client, csrf):
        answer = client.post("/_/data/export", data={"csrf": csrf})
    assert answer.status_code == 200, answer.text
    out.write_bytes(answer.content)
    return out


def _restore(server: ConsoleServer, archive: Path, confirm: str
             ) -> tuple[httpx.Response, str]:
    return _post(server, "/_/data/restore",
                 {"archive": (archive.name, archive.read_bytes(), "application/gzip")},
                 confirm=confirm)


def test_a_database_holding_data_refuses_a_restore(servers: Servers) -> None:
    archive = _export(servers.full, servers.files / "full.tar.gz")
    answer, page = _restore(servers.full, archive, "docbase")
    assert answer.status_code == 409, page
    assert "Restore refused: database &#39;docbase&#39; is not empty (it holds" in page
    assert "finches" in page


def test_a_restore_needs_the_database_name_typed_again(servers: Servers) -> None:
    archive = _export(servers.full, servers.files / "full.tar.gz")
    answer, page = _restore(servers.fresh, archive, "yes")
    assert answer.status_code == 400, page
    assert "Type the database&#39;s name, docbase, to confirm" in page
    assert servers.fresh.api("GET", "/rest/finches").json() == []


def test_an_export_is_restored_into_a_fresh_database(servers: Servers) -> None:
    archive = _export(servers.full, servers.files / "full.tar.gz")
    answer, page = _restore(servers.fresh, archive, "docbase")
    assert answer.status_code == 303, page
    assert "Restored the archive of database &#39;docbase&#39; into &#39;docbase&#39;:" in page
    assert _finches(servers.fresh) == _finches(servers.full)
    refused = servers.fresh.api("POST", "/rest/finches", json={"name": "x", "wingspan": "y"})
    assert refused.status_code == 422, refused.text  # the schema came with the archive
    again, page = _restore(servers.fresh, archive, "docbase")
    assert again.status_code == 409, page
