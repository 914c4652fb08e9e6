"""The console's mail settings form and test mail over real HTTPS (issue 33).

Per engine (SQLite, PostgreSQL) a ``docbase serve`` with an administrator and a real
SMTP server on loopback (aiosmtpd, ``tests/smtp_capture.py``) that requires STARTTLS
and a login: the form stores typed settings (the password never shown again), a test
mail arrives at the SMTP server, and a refused login, a refused recipient or a value
the typed settings refuse are reported on the page.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.console_browser import CONSOLE_ENGINES, ConsoleServer, console_server
from tests.smtp_capture import REFUSED_DOMAIN, SmtpServer, smtp_server
from tests.test_console_security import signed_in

LOGIN, SECRET = "mailer", "s3cret-smtp-password"


class Mailing:
    """A served database and the SMTP server it is set up to send through."""

    def __init__(self, server: ConsoleServer, smtp: SmtpServer) -> None:
        self.server, self.smtp = server, smtp


@pytest.fixture(scope="module", params=CONSOLE_ENGINES)
def mailing(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mailing]:
    files = tmp_path_factory.mktemp(f"mail-{request.param}")
    with smtp_server(files, mode="starttls", users={LOGIN: SECRET}) as smtp, \
            console_server(request.param, files) as server:
        cacert = files / "smtp-ca.pem"
        cacert.write_text(smtp.cacert or "")
        server.cli("settings", "set-file", "mail.smtp.cacert", str(cacert))
        yield Mailing(server, smtp)


def _form(smtp: SmtpServer, **changes: str) -> dict[str, str]:
    return {"transport": "smtp", "from": "console@example.com", "host": smtp.host,
            "port": str(smtp.port), "security": "starttls", "username": LOGIN,
            "password": SECRET, "timeout": "5", **changes}


def _post(server: ConsoleServer, path: str, form: dict[str, str]) -> tuple[httpx.Response, str]:
    with signed_in(server.served) as (client, csrf):
        answer = client.post(path, data={"csrf": csrf, **form})
        page = client.get("/_/mail").text if answer.status_code == 303 else answer.text
    return answer, page


def _stored(server: ConsoleServer) -> dict[str, str]:
    """The ``mail.*`` settings ``docbase settings list`` prints (secrets as ``***``)."""
    lines = server.cli("settings", "list").splitlines()
    pairs = (line.partition(" = ") for line in lines if line.startswith("mail."))
    return {path: value for path, _, value in pairs}


def test_the_form_stores_typed_settings_and_never_shows_the_password(
        mailing: Mailing) -> None:
    answer, page = _post(mailing.server, "/_/mail", _form(mailing.smtp))
    assert answer.status_code == 303, page
    assert "Mail settings saved." in page
    assert SECRET not in page
    assert "one is stored; blank keeps it" in page
    assert f'value="{mailing.smtp.port}"' in page
    assert '<option value="starttls" selected>' in page
    stored = _stored(mailing.server)
    assert {k: stored[f"mail.smtp.{k}"] for k in ("port", "starttls", "tls", "username",
                                                    "password")} == {
        "port": str(mailing.smtp.port), "starttls": "true", "tls": "false",
        "username": f"\"{LOGIN}\"", "password": "***"}
    assert "mail.smtp.cacert" in stored  # kept: the form has no input for it


def test_a_refused_value_names_the_setting_and_changes_nothing(mailing: Mailing) -> None:
    before = _stored(mailing.server)
    answer, page = _post(mailing.server, "/_/mail", _form(mailing.smtp, port="many"))
    assert answer.status_code == 422, page
    assert "Not saved:" in page
    assert "mail.smtp.port" in page
    answer, page = _post(mailing.server, "/_/mail", _form(mailing.smtp, security="ssl3"))
    assert answer.status_code == 422, page
    assert _stored(mailing.server) == before


def test_a_test_mail_arrives_at_the_smtp_server(mailing: Mailing) -> None:
    # a blank password keeps the stored one, which the SMTP login then needs
    assert _post(mailing.server, "/_/mail", _form(mailing.smtp, password="")
                 )[0].status_code == 303
    answer, page = _post(mailing.server, "/_/mail/test", {"to": "ops@example.com"})
    assert answer.status_code == 303, page
    assert (f"Test mail to ops@example.com handed through SMTP "
            f"({mailing.smtp.host}:{mailing.smtp.port}).") in page
    [received] = [r for r in mailing.smtp.received if r.rcpt_tos == ["ops@example.com"]]
    assert (received.mail_from, received.login) == ("console@example.com", LOGIN)
    assert str(received.email["Subject"]) == "docbase test mail (docbase)"


def test_smtp_errors_are_reported_on_the_page(mailing: Mailing) -> None:
    before = len(mailing.smtp.received)
    refused = f"nobody{REFUSED_DOMAIN}"
    answer, page = _post(mailing.server, "/_/mail/test", {"to": refused})
    assert answer.status_code == 502, page
    assert "The test mail was not sent:" in page
    assert "no such mailbox here" in page
    assert _post(mailing.server, "/_/mail", _form(mailing.smtp, password="wrong")
                 )[0].status_code == 303
    answer, page = _post(mailing.server, "/_/mail/test", {"to": "ops@example.com"})
    assert answer.status_code == 502, page
    assert "The test mail was not sent:" in page
    answer, page = _post(mailing.server, "/_/mail/test", {"to": "not an address"})
    assert answer.status_code == 422, page
    assert len(mailing.smtp.received) == before


def test_without_smtp_the_outbox_keeps_the_test_mail(mailing: Mailing) -> None:
    assert _post(mailing.server, "/_/mail", _form(mailing.smtp, transport="outbox")
                 )[0].status_code == 303
    answer, page = _post(mailing.server, "/_/mail/test", {"to": "ops@example.com"})
    assert answer.status_code == 303, page
    assert "handed to the outbox, which keeps it and sends nothing" in page
