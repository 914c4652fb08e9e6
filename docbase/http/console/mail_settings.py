"""The mail settings as a typed form, and a test mail, in the console (``docs/mail.md``).

- ``GET /_/mail``: the ``mail.*`` settings as inputs: the transport (outbox or SMTP),
  the sender address, the SMTP host, port, security (STARTTLS, implicit TLS or none),
  login, password (never shown; left blank it stays as stored) and timeout.
- ``POST /_/mail``: store them in one write of the ``mail`` object, checked against the
  typed settings (:class:`~docbase.core.settings.stored.MailSettings`) as ``docbase
  settings set mail ...`` is; a refused value changes nothing and the page names it.
  Stored keys the form has no input for (``mail.smtp.cacert``) are kept.
- ``POST /_/mail/test``: send one message to the address typed, through ``db.mail``
  (the road of ``POST /mail``: the outbound log, then the transport); the page says
  which transport took it, or the transport's error (an SMTP refusal, a failed login).
"""

from __future__ import annotations

import copy
from typing import Any

from litestar import Response, get, post

from docbase.core.errors import DocbaseError
from docbase.http.console.flash import go
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import render
from docbase.http.errors import answer_for

SECURITY = {"starttls": "STARTTLS (port 587)", "tls": "implicit TLS (port 465)",
            "none": "none (port 25, trusted networks only)"}
"""The form's choices of connection security, by value."""


async def mail_page(console: Console, *, error: str = "", status: int = 200) -> Response[str]:
    """The mail settings page, with ``error`` above the forms when given."""
    mail = (await console.database.settings.load()).mail
    security = "tls" if mail.smtp.tls else "starttls" if mail.smtp.starttls else "none"
    return render("mail.html", status, **console.page(
        title="Mail", mail=mail, security=security, choices=SECURITY, error=error))


@get(console_paths("/mail"))
async def mail_settings(request: HttpRequest) -> Response[str]:
    """``GET /_/mail``."""
    return await mail_page(await signed_in(request))


def _number(text: str) -> Any:
    """A number typed in the form; other text as it is, for the typed check to name."""
    try:
        return float(text) if "." in text else int(text)
    except ValueError:
        return text


def mail_tree(stored: dict[str, Any], form: dict[str, Any]) -> dict[str, Any]:
    """The ``mail`` object ``form`` makes of the ``stored`` one (keys it lacks kept)."""
    mail = copy.deepcopy(stored) if isinstance(stored, dict) else {}
    smtp = mail.setdefault("smtp", {})
    if not isinstance(smtp, dict):
        smtp = mail["smtp"] = {}
    text = {name: str(form.get(name, "")).strip() for name in (
        "transport", "from", "host", "port", "security", "username", "timeout")}
    mail.update(transport=text["transport"], **{"from": text["from"]})
    smtp.update(host=text["host"], port=_number(text["port"]),
                tls=text["security"] == "tls", starttls=text["security"] == "starttls",
                username=text["username"] or None)
    if text["timeout"]:
        smtp["timeout"] = _number(text["timeout"])
    password = str(form.get("password", ""))
    if form.get("forget_password") == "on":
        smtp["password"] = None
    elif password:
        smtp["password"] = password
    return mail


@post(console_paths("/mail"), status_code=303)
async def save_mail(request: HttpRequest) -> Response[Any]:
    """``POST /_/mail``: store the form's mail settings, all at once."""
    form = dict(await request.form())
    console = await signed_in(request, form=form)
    if str(form.get("security", "")) not in SECURITY:
        return await mail_page(console, error="Choose the connection's security.",
                               status=422)
    settings = console.database.settings
    try:
        await settings.set("mail", mail_tree((await settings.tree()).get("mail", {}), form))
    except DocbaseError as exc:
        return await mail_page(console, error=f"Not saved: {exc.message}", status=422)
    return go(console.base, console.base + "/mail", "Mail settings saved.")


def trial_message(database: str) -> dict[str, Any]:
    """The body of the test mail, as ``POST /mail`` takes it."""
    return {"to": "", "subject": f"docbase test mail ({database})",
            "html": f"<p>This is a test mail from the console of database "
                    f"<b>{database}</b>: its mail settings work.</p>"}


@post(console_paths("/mail/test"), status_code=303)
async def send_test(request: HttpRequest) -> Response[Any]:
    """``POST /_/mail/test``: one message to the typed address; what became of it."""
    form = dict(await request.form())
    console = await signed_in(request, form=form)
    database, to = console.database, str(form.get("to", "")).strip()
    database.auth_cache.clear()  # the settings as stored now, maybe by another worker
    body = {**trial_message(console.database_name), "to": to}
    try:
        await database.mail.send(body, console.principal)
    except DocbaseError as exc:
        status = answer_for(type(exc)).status
        return await mail_page(console, error=f"The test mail was not sent: {exc.message}",
                               status=status if status < 500 else 502)
    mail = (await database.settings.load()).mail
    how = (f"through SMTP ({mail.smtp.host}:{mail.smtp.port})" if mail.transport == "smtp"
           else "to the outbox, which keeps it and sends nothing (choose SMTP to send)")
    return go(console.base, console.base + "/mail", f"Test mail to {to} handed {how}.")


MAIL_HANDLERS = [mail_settings, save_mail, send_test]
