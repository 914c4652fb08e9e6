"""What the database sends out: webhooks and the outbound mail log, in the console.

- ``GET /_/delivery``: every webhook (URL, state, collections, methods, last error;
  never its secret), the newest messages of the outbound mail log
  (``email_outbound``: recipients, subject, status, attempts, error) and the newest
  entries of the hook log (``_hooklog``: job runs and failed after-hooks).
- ``POST /_/delivery/webhooks``: add a webhook; the answer shows its signing secret,
  once.
- ``POST /_/delivery/webhooks/enable``, ``.../remove``: by the form's ``id``.
- ``POST /_/delivery/mail/retry``: send the failed messages again (``docbase mail retry``).

Each action calls what the ``docbase webhooks`` and ``docbase mail`` commands call; the
mail log is read through its collection as the administrator (``GET /rest/email_outbound``
with a full-access key reads the same).
"""

from __future__ import annotations

from typing import Any

from litestar import Response, get, post
from litestar.params import FromPath

from docbase.core.errors import DocbaseError, NotFound
from docbase.core.hooks.calling import HOOK_LOG
from docbase.core.mail import OUTBOUND_COLLECTION, Status
from docbase.core.query import Query, SortKey
from docbase.http.console.flash import go
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import render
from docbase.http.errors import answer_for

SHOWN_MESSAGES = 50


async def _page(console: Console, *, notice: str = "", error: str = "",
                status: int = 200) -> Response[str]:
    database = console.database
    outbound = database.collection(OUTBOUND_COLLECTION, console.principal)
    messages = await outbound.find(query=Query(sort=(SortKey(("_created",), -1),),
                                               limit=SHOWN_MESSAGES))
    hook_log = database.system_collection(HOOK_LOG, console.principal)
    runs = await hook_log.find(query=Query(sort=(SortKey(("_created",), -1),),
                                           limit=SHOWN_MESSAGES))
    return render("delivery.html", status, **console.page(
        title="Webhooks and mail", webhooks=await database.webhooks.find(),
        messages=messages, runs=runs, secret=console.flash.secret, notice=notice, error=error))


@get(console_paths("/delivery"))
async def delivery_page(request: HttpRequest) -> Response[str]:
    """``GET /_/delivery``."""
    return await _page(await signed_in(request))


def _lines(value: Any) -> list[str]:
    text = value if isinstance(value, str) else ""
    return [part.strip() for part in text.replace(",", " ").split() if part.strip()]


@post(console_paths("/delivery/{action:path}"), status_code=200)
async def change_delivery(request: HttpRequest, action: FromPath[str]) -> Response[Any]:
    """``POST /_/delivery/webhooks[/enable|/remove]`` or ``/_/delivery/mail/retry``."""
    form = await request.form()
    console = await signed_in(request, form=dict(form))
    database, webhook_id = console.database, str(form.get("id", ""))
    try:
        if action == "/webhooks":
            webhook = await database.webhooks.add(
                str(form.get("url", "")).strip(), collections=_lines(form.get("collections")),
                methods=form.getall("methods", []) or ())
            return go(console.base, console.base + "/delivery", "Webhook added.",
                      secret=webhook.secret)
        if action == "/webhooks/enable":
            await database.webhooks.enable(webhook_id)
            done = "Webhook enabled."
        elif action == "/webhooks/remove":
            if not await database.webhooks.remove(webhook_id):
                raise NotFound(f"no webhook {webhook_id!r}")
            done = "Webhook removed."
        elif action == "/mail/retry":
            outcomes = await database.mail.retry([Status.FAILED])
            sent = sum(o.status == Status.SENT for o in outcomes)
            return await _page(console, notice=f"{len(outcomes)} message(s) retried, "
                                               f"{sent} sent.")
        else:
            raise NotFound(f"no delivery action {action!r}")
    except DocbaseError as exc:
        return await _page(console, error=exc.message, status=answer_for(type(exc)).status)
    return go(console.base, console.base + "/delivery", done)


DELIVERY_HANDLERS = [delivery_page, change_delivery]
