"""The SMTP transport against a real SMTP server on loopback (aiosmtpd)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from docbase.adapters.smtp import SmtpMailer
from docbase.core.errors import MailDeliveryError, MailTransportDown
from docbase.core.ports import MailMessage
from docbase.core.settings.stored import SmtpSettings
from docbase.testing.contract import MailerContract
from docbase.testing.loopback import free_port
from tests.smtp_capture import SmtpServer, smtp_server

MESSAGE = MailMessage(to=("ann@example.com",), subject="Your order", html="<p>Ready</p>",
                      sender="shop@example.com", sendername="Support", company="Acme")


def mailer_for(server: SmtpServer, **extra: Any) -> SmtpMailer:
    return SmtpMailer(msgspec.convert(server.settings(**extra)["smtp"], SmtpSettings))


class TestSmtpMailer(MailerContract):
    """The SMTP transport keeps the Mailer contract; the far end is a real server."""

    @pytest.fixture
    def server(self) -> Iterator[SmtpServer]:
        with smtp_server() as server:
            yield server

    @pytest.fixture
    async def mailer(self, server: SmtpServer) -> AsyncIterator[SmtpMailer]:
        mailer = mailer_for(server)
        yield mailer
        await mailer.close()

    @pytest.fixture
    def delivered(self, server: SmtpServer) -> Any:
        async def received() -> list[dict[str, Any]]:
            return [{"to": r.rcpt_tos, "subject": str(r.email["Subject"])}
                    for r in server.received]

        return received


@pytest.mark.parametrize("mechanism", ["LOGIN", "PLAIN"])
async def test_starttls_with_self_signed_certificate_and_login(
    tmp_path: Path, mechanism: str
) -> None:
    with smtp_server(tmp_path, mode="starttls", users={"mailer": "s3cret"},
                     mechanisms=(mechanism,)) as server:
        mailer = mailer_for(server, username="mailer", password="s3cret")
        first = await mailer.send(MESSAGE)
        second = await mailer.send(msgspec.structs.replace(MESSAGE, subject="Second"))
        await mailer.close()
        assert server.capture.logins == [(mechanism, "mailer", True)]  # one connection
        assert [r.login for r in server.received] == ["mailer", "mailer"]
        assert [str(r.email["Message-ID"]) for r in server.received] == [first, second]
        assert server.received[0].parts() == {"text/plain": "Ready",
                                              "text/html": "<p>Ready</p>"}


async def test_implicit_tls(tmp_path: Path) -> None:
    with smtp_server(tmp_path, mode="tls") as server:
        mailer = mailer_for(server, tls=True, starttls=False)
        await mailer.send(MESSAGE)
        await mailer.close()
        assert server.capture.subjects() == ["Your order"]


async def test_untrusted_certificate_means_transport_down(tmp_path: Path) -> None:
    with smtp_server(tmp_path, mode="starttls") as server:
        mailer = mailer_for(server, cacert=None)  # the system's authorities only
        with pytest.raises(MailTransportDown, match="certificate verify failed"):
            await mailer.send(MESSAGE)
        assert server.received == []


async def test_wrong_password_means_transport_down(tmp_path: Path) -> None:
    with smtp_server(tmp_path, mode="starttls", users={"mailer": "s3cret"}) as server:
        mailer = mailer_for(server, username="mailer", password="wrong")
        with pytest.raises(MailTransportDown):
            await mailer.send(MESSAGE)
        assert server.received == []
        assert server.capture.logins
        assert not any(accepted for _, _, accepted in server.capture.logins)


async def test_no_server_means_transport_down() -> None:
    mailer = SmtpMailer(SmtpSettings(host="127.0.0.1", port=free_port(), starttls=False,
                                     timeout=2))
    with pytest.raises(MailTransportDown, match=r"127\.0\.0\.1"):
        await mailer.send(MESSAGE)


async def test_recipient_the_server_refuses_is_a_delivery_error() -> None:
    with smtp_server() as server:
        mailer = mailer_for(server)
        refused = msgspec.structs.replace(MESSAGE, to=("nobody@refused.example.com",))
        with pytest.raises(MailDeliveryError) as caught:
            await mailer.send(refused)
        assert not isinstance(caught.value, MailTransportDown)
        await mailer.send(MESSAGE)  # the connection still serves the next message
        await mailer.close()
        assert server.capture.subjects() == ["Your order"]
