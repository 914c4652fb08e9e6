"""What the next page says after a form: a message, and once a new secret (POST/redirect/GET).

A form that changes something answers ``303 See Other`` to a page the browser then
GETs, so reloading that page repeats nothing. What that page must say ("User created.",
or a new API key or webhook secret, shown once) travels in a short-lived cookie of the
console's path (``HttpOnly``, ``Secure``, ``SameSite=Strict``, one minute); the page
that shows it clears it, so a reload shows it no more. Nothing is kept in the server
process, so any worker can answer the redirected request.
"""

from __future__ import annotations

import base64
from typing import Any

import msgspec
from litestar import Request
from litestar.response import Redirect

from docbase.http.console.rendering import CONSOLE_HEADERS, FLASH_COOKIE, console_cookie

FLASH_SECONDS = 60


class Flash(msgspec.Struct, frozen=True):
    """A message for the next page, and a secret to show once."""

    message: str = ""
    secret: str = ""


def go(base: str, url: str, message: str = "", secret: str = "") -> Redirect:
    """``303`` to ``url``, a console page (under ``base``) that shows ``message``, ``secret``."""
    response = Redirect(url, status_code=303, headers=dict(CONSOLE_HEADERS))
    if message or secret:
        value = base64.urlsafe_b64encode(msgspec.json.encode(Flash(message, secret)))
        response.set_cookie(console_cookie(base, FLASH_COOKIE, value.decode(),
                                           max_age=FLASH_SECONDS))
    return response


def taken(request: Request[Any, Any, Any]) -> Flash:
    """The flash the request's cookie carries (empty without one, or a broken one)."""
    raw = request.cookies.get(FLASH_COOKIE)
    if not raw:
        return Flash()
    try:
        return msgspec.json.decode(base64.urlsafe_b64decode(raw.encode()), type=Flash)
    except (ValueError, msgspec.DecodeError):
        return Flash()
