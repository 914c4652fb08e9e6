"""Signing in to the console and out of it.

- ``GET /_/signin``: the form, with a CSRF token also set in a short-lived cookie
  (a sign-in form has no session yet to hold the token).
- ``POST /_/signin``: email and password, checked like ``POST /auth/login``
  (argon2 hashes, the same failed-login throttle, the same message for a wrong email or
  password); the user must be an administrator of the database. A session is opened
  and its token set in the session cookie; then the overview.
- ``POST /_/signout``: the session is deleted from the store (so every worker refuses
  its cookie from then on) and the cookie cleared.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Any

from litestar import Response, get, post
from litestar.response import Redirect

from docbase.core.auth.login import check_credentials
from docbase.core.auth.sessions import close_session, open_session
from docbase.core.errors import TooManyRequests, Unauthorized
from docbase.http.console.guard import (
    SESSION_COOKIE,
    SIGNIN_COOKIE,
    Console,
    HttpRequest,
    console_cookie,
    console_paths,
    locate,
    signed_in,
)
from docbase.http.console.rendering import CONSOLE_HEADERS, render

SIGNIN_FORM_SECONDS = 3600
"""How long a sign-in form stays usable."""


def _form_page(console: Console, error: str = "", email: str = "",
               status: int = 200, after: str = "") -> Response[str]:
    token = secrets.token_urlsafe(24)
    response = render("signin.html", status, **console.page(
        csrf=token, error=error, email=email, title="Sign in", next=after))
    response.set_cookie(console_cookie(console, SIGNIN_COOKIE, token,
                                       max_age=SIGNIN_FORM_SECONDS))
    return response


@get(console_paths("/signin"))
async def signin_page(request: HttpRequest) -> Response[str]:
    """``GET /_/signin``: the sign-in form (``next``: the console page to go on to)."""
    console = locate(request)
    return _form_page(console, after=_after(console, request.query_params.get("next")))


def _after(console: Console, given: Any) -> str:
    """``given`` if it is a page of this console (no other site, no other database)."""
    if not isinstance(given, str) or not given.startswith(console.base + "/"):
        return ""
    rest = given[len(console.base):]
    return given if "//" not in rest and "\\" not in rest and rest.isprintable() else ""


@post(console_paths("/signin"), status_code=303)
async def sign_in(request: HttpRequest) -> Response[Any]:
    """``POST /_/signin``: open a session for an administrator's email and password."""
    console = locate(request)
    form = await request.form()
    email, password = form.get("email"), form.get("password")
    after = _after(console, form.get("next"))
    expected, given = request.cookies.get(SIGNIN_COOKIE), form.get("csrf")
    if not (isinstance(expected, str) and isinstance(given, str)
            and hmac.compare_digest(expected.encode(), given.encode())):
        return _form_page(console, "The form expired; please sign in again.", status=403,
                          after=after)
    shown = email if isinstance(email, str) else ""
    try:
        user = await check_credentials(console.database, email, password)
    except TooManyRequests as exc:
        return _form_page(console, exc.message, shown, 429, after)
    except Unauthorized as exc:
        return _form_page(console, exc.message, shown, 401, after)
    if not user.admin:
        return _form_page(console, f"{user.email} is not an administrator of this database.",
                          shown, 403, after)
    token, _ = await open_session(console.database, user)
    response: Redirect = Redirect(after or console.base + "/", status_code=303,
                                  headers=dict(CONSOLE_HEADERS))
    response.set_cookie(console_cookie(console, SESSION_COOKIE, token))
    response.delete_cookie(SIGNIN_COOKIE, path=console.base)
    return response


@post(console_paths("/signout"), status_code=303)
async def sign_out(request: HttpRequest) -> Redirect:
    """``POST /_/signout``: end the session everywhere and clear its cookie."""
    console = await signed_in(request, form=dict(await request.form()))
    assert console.session is not None, "signed_in returns a session"
    await close_session(console.database, console.session.id)
    response = Redirect(console.base + "/signin", status_code=303,
                        headers=dict(CONSOLE_HEADERS))
    response.delete_cookie(SESSION_COOKIE, path=console.base)
    return response


SIGNIN_HANDLERS = [signin_page, sign_in, sign_out]
