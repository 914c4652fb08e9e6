"""The console: a web UI at ``/_/`` of each database's base URL (``docs/console.md``).

Server-rendered pages (Jinja2 templates in ``templates/``, autoescaped) and one small
script (``static/console.js``) for live updates; no build step, nothing fetched from
the network. An administrator signs in with email and password
(:mod:`~docbase.http.console.signin`); the session and CSRF checks are in
:mod:`~docbase.http.console.guard`. Pages call the same collections and auth functions
as ``/rest`` and the CLI: the console adds no other road to the store.

:func:`console_router` builds the router :class:`~docbase.http.app.DocbasePlugin`
adds; its errors answer as HTML pages rather than JSON bodies.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlencode

from litestar import Request, Response, Router
from litestar.exceptions import HTTPException
from litestar.response import Redirect
from litestar.types import ExceptionHandlersMap

from docbase.core.errors import DocbaseError
from docbase.http.console.admin import ADMIN_HANDLERS
from docbase.http.console.assets import action_page, asset, unknown_page
from docbase.http.console.browse import open_collection, overview
from docbase.http.console.data import DATA_HANDLERS
from docbase.http.console.delivery import DELIVERY_HANDLERS
from docbase.http.console.documents import DOCUMENT_HANDLERS
from docbase.http.console.events import console_events
from docbase.http.console.guard import CsrfRefused, SignInRequired, locate
from docbase.http.console.logs import LOG_HANDLERS
from docbase.http.console.mail_settings import MAIL_HANDLERS
from docbase.http.console.media import MEDIA_HANDLERS
from docbase.http.console.pickers import PICKER_HANDLERS
from docbase.http.console.preview import PREVIEW_HANDLERS
from docbase.http.console.rendering import CONSOLE_HEADERS, render
from docbase.http.console.restore import RESTORE_HANDLERS
from docbase.http.console.rows import ROW_HANDLERS
from docbase.http.console.schema import SCHEMA_HANDLERS
from docbase.http.console.settings_forms import SETTINGS_HANDLERS
from docbase.http.console.signin import SIGNIN_HANDLERS
from docbase.http.errors import answer_for

HttpRequest = Request[Any, Any, Any]
logger = logging.getLogger("docbase.http")
MAX_BODY_BYTES = 16 * 1024 * 1024
"""The largest form the console takes (a document's JSON, a key's scope)."""


def _page(request: HttpRequest, title: str, message: str, status: int) -> Response[Any]:
    try:
        console = locate(request)
        base, name = console.base, console.database_name
    except DocbaseError:  # an unknown database
        base, name = "/_", ""
    return render("error.html", status, title=title, message=message, base=base, db=name,
                  session=None)


def _sign_in_first(request: HttpRequest, exc: SignInRequired) -> Response[Any]:
    """Send a page to the sign-in form, which comes back to it afterwards.

    So is a document saved after the session ended: its page then restores the edit.
    """
    path = request.scope["path"]
    if request.method == "GET" and exc.signin_url.startswith(path.rstrip("/") + "/signin"):
        return Redirect(exc.signin_url, status_code=303, headers=dict(CONSOLE_HEADERS))
    if request.method == "GET" and not path.endswith("/events"):
        after = path + (f"?{request.url.query}" if request.url.query else "")
    elif request.method == "POST" and "/_/c/" in path:
        after = path + "?draft=1"
    else:
        return _page(request, "Sign in first", str(exc), 401)
    return Redirect(f"{exc.signin_url}?{urlencode({'next': after})}", status_code=303,
                    headers=dict(CONSOLE_HEADERS))


def _csrf_refused(request: HttpRequest, exc: CsrfRefused) -> Response[Any]:
    return _page(request, "Refused", str(exc), 403)


def _error_page(request: HttpRequest, exc: DocbaseError) -> Response[Any]:
    status = answer_for(type(exc)).status
    if status >= 500:
        return _unexpected(request, exc)
    return _page(request, "Error", exc.message, status)


def _http_error(request: HttpRequest, exc: HTTPException) -> Response[Any]:
    if exc.status_code >= 500:
        return _unexpected(request, exc)
    return _page(request, "Error", exc.detail, exc.status_code)


def _unexpected(request: HttpRequest, exc: Exception) -> Response[Any]:
    logger.error("console: %s %s failed", request.method, request.url.path, exc_info=exc)
    return _page(request, "Error", "the server failed to answer this request", 500)


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    SignInRequired: _sign_in_first,
    CsrfRefused: _csrf_refused,
    DocbaseError: _error_page,
    HTTPException: _http_error,
    Exception: _unexpected,
}


def console_router() -> Router:
    """The console's routes, under ``/_`` and ``/db/<name>/_``."""
    return Router(
        path="/",
        route_handlers=[overview, open_collection, *DOCUMENT_HANDLERS, *SIGNIN_HANDLERS,
                        *ADMIN_HANDLERS, *SCHEMA_HANDLERS, *MEDIA_HANDLERS,
                        *DELIVERY_HANDLERS, *DATA_HANDLERS, *ROW_HANDLERS, *RESTORE_HANDLERS,
                        *MAIL_HANDLERS, *LOG_HANDLERS, *SETTINGS_HANDLERS,
                        *PREVIEW_HANDLERS, *PICKER_HANDLERS,
                        console_events, asset, action_page,
                        unknown_page],
        exception_handlers=EXCEPTION_HANDLERS,
        request_max_body_size=MAX_BODY_BYTES,
        include_in_schema=False,
    )


__all__ = ["console_router"]
