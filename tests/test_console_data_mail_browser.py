"""Journeys of the Data and Mail pages in Chromium (issue 33), on SQLite and PostgreSQL.

A server with a backup directory serves two databases: the primary and ``fresh``,
made by ``docbase db create`` before the server starts, each with the administrator.
CSV rows are imported and seen in the collection's table; a backup of the primary is
taken, downloaded and restored into ``fresh`` through its own console
(``/db/fresh/_/``). The mail settings are typed into their form and a test mail
arrives at a real SMTP server on loopback (aiosmtpd). Every page fails the test on a
dialog, a script error, a CSP violation or an axe-core finding
(``tests/console_browser.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.console_browser import (
    ADMIN,
    PASSWORD,
    ConsoleServer,
    chromium,
    console_server,
    open_page,
    screenshot,
    sign_in,
)
from tests.smtp_capture import smtp_server
from tests.test_serve_harness import run_cli

expect = pytest.importorskip("playwright.sync_api").expect
CSV = "name,wingspan\nringed plover,50\nkilldeer,48\n"


@pytest.fixture(scope="module", params=[
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
])
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleServer]:
    cwd = tmp_path_factory.mktemp(f"data-browser-{request.param}")
    run_cli(cwd, "db", "create", "fresh")
    run_cli(cwd, "users", "create", "--db", "fresh", "--email", ADMIN, "--password",
            PASSWORD, "--admin")
    with console_server(request.param, cwd, "--backup-dir", str(cwd / "backups")) as served:
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as running:
        yield running


def _import_rows(page: Any, csv: Path, collection: str) -> None:
    page.get_by_role("link", name="Data").click()
    page.get_by_label("CSV or NDJSON file (.csv, .ndjson, .jsonl)").set_input_files(str(csv))
    page.get_by_label("Collection", exact=True).fill(collection)
    page.get_by_role("button", name="Import rows").click()


def test_a_csv_file_is_imported_and_its_rows_are_in_the_collection_table(
        server: ConsoleServer, browser: Any, tmp_path: Path) -> None:
    csv = tmp_path / "plovers.csv"
    csv.write_text(CSV)
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        _import_rows(page, csv, "plovers")
        expect(page.get_by_role("status").first).to_contain_text(
            "Imported 2 document(s) from plovers.csv into 'plovers'.")
        page.goto(server.url + "/_/c/plovers")
        table = page.locator("table").first
        expect(table).to_contain_text("ringed plover")
        expect(table).to_contain_text("killdeer")
        broken = tmp_path / "broken.ndjson"
        broken.write_text('{"name": "dotterel"}\nnot json\n')
        _import_rows(page, broken, "plovers")
        expect(page.get_by_role("alert")).to_contain_text("line 2:")
        expect(page.get_by_role("alert")).to_contain_text("Nothing was imported.")
    names = sorted(p["name"] for p in server.api("GET", "/rest/plovers").json())
    assert names == ["killdeer", "ringed plover"]


def test_a_backup_is_taken_and_restored_into_a_fresh_database(
        server: ConsoleServer, browser: Any, tmp_path: Path) -> None:
    assert server.api("POST", "/rest/avocets", json={"name": "pied"}).status_code == 201
    with open_page(browser) as watched:
        page = watched.page
        sign_in(page, server)
        page.get_by_role("link", name="Data").click()
        page.get_by_role("button", name="Back up now").click()
        expect(page.get_by_role("status").first).to_contain_text("Backed up to docbase-")
        with page.expect_download() as started:
            page.locator("#backups a").first.click()
        backup = tmp_path / started.value.suggested_filename
        started.value.save_as(backup)
        page.goto(server.url + "/db/fresh/_/")
        page.get_by_label("Email").fill(ADMIN)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_role("link", name="Data").click()
        page.get_by_text("Restore an archive…").click()
        page.get_by_label("Archive to restore (.tar or .tar.gz)").set_input_files(str(backup))
        page.get_by_label("Type the database's name, fresh, to confirm").fill("fresh")
        screenshot(page, server, "restore")
        page.get_by_role("button", name="Confirm: restore into fresh").click()
        expect(page.get_by_role("status").first).to_contain_text(
            "Restored the archive of database 'docbase' into 'fresh'")
        page.goto(server.url + "/db/fresh/_/c/avocets")
        expect(page.locator("table").first).to_contain_text("pied")
        page.get_by_role("link", name="Data").click()
        page.get_by_text("Restore an archive…").click()
        page.get_by_label("Archive to restore (.tar or .tar.gz)").set_input_files(str(backup))
        page.get_by_label("Type the database's name, fresh, to confirm").fill("fresh")
        page.get_by_role("button", name="Confirm: restore into fresh").click()
        expect(page.get_by_role("alert")).to_contain_text(
            "Restore refused: database 'fresh' is not empty")


def test_smtp_is_set_up_in_the_form_and_a_test_mail_arrives(
        server: ConsoleServer, browser: Any, tmp_path: Path) -> None:
    with smtp_server(tmp_path, mode="starttls", users={"mailer": "letmein"}) as smtp, \
            open_page(browser) as watched:
        cacert = tmp_path / "smtp-ca.pem"  # its self-signed certificate, for STARTTLS
        cacert.write_text(smtp.cacert or "")
        server.cli("settings", "set-file", "mail.smtp.cacert", str(cacert))
        page = watched.page
        sign_in(page, server)
        page.get_by_role("link", name="Mail", exact=True).click()
        page.get_by_label("Transport").select_option("smtp")
        page.get_by_label("From address").fill("console@example.com")
        page.get_by_label("SMTP host").fill(smtp.host)
        page.get_by_label("SMTP port").fill(str(smtp.port))
        page.get_by_label("Connection security").select_option("starttls")
        page.get_by_label("SMTP login (blank: no login)").fill("mailer")
        page.get_by_label("SMTP password (none is stored)").fill("letmein")
        page.get_by_role("button", name="Save mail settings").click()
        expect(page.get_by_role("status").first).to_contain_text("Mail settings saved.")
        expect(page.get_by_label("SMTP password (one is stored; blank keeps it)")
               ).to_have_value("")
        page.get_by_label("To", exact=True).fill("ops@example.com")
        screenshot(page, server, "mail")
        page.get_by_role("button", name="Send a test mail").click()
        expect(page.get_by_role("status").first).to_contain_text(
            f"Test mail to ops@example.com handed through SMTP ({smtp.host}:{smtp.port}).")
        [received] = smtp.received
        assert (received.rcpt_tos, received.login) == (["ops@example.com"], "mailer")
        assert str(received.email["Subject"]) == "docbase test mail (docbase)"
