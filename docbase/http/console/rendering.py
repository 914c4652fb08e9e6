"""Pages of the console: Jinja2 templates shipped in the package, and the headers they carry.

The templates live in ``templates/`` next to this module and are rendered with
autoescaping on for every template, so a value from a document, a field name or a file
name reaches the browser as text, whatever characters it holds. Jinja2 is used directly
rather than through the application's template configuration, so an application that
embeds docbase next to its own templates keeps its own engine.

Every console response carries :data:`CONSOLE_HEADERS`: a Content-Security-Policy that
lets the page load scripts, styles and images from this origin only (no inline script,
no ``eval``), forbids framing, and keeps pages out of caches.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from litestar import Response
from litestar.datastructures import Cookie

from docbase.core.plugins import lazy_module

if TYPE_CHECKING:
    import jinja2
else:  # imported on the first page: a worker serving only the API never needs it
    jinja2 = lazy_module("jinja2")

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""What a console page may load: its own origin's scripts and styles, nothing inline."""

CONSOLE_HEADERS: dict[str, str] = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}
"""The headers of every console response (static assets replace ``cache-control``)."""

INVISIBLE = re.compile("[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f"
                       "\u2028-\u202e\u2060-\u2069\ufeff]")
"""Control and format characters that reorder or hide text (right-to-left override...)."""


def visible(value: Any) -> str:
    r"""``value`` as text with each control or bidi format character written ``\uXXXX``.

    A name such as ``invoice_\u202Efdp.exe`` then reads as what it holds rather than as
    ``invoice_exe.pdf``. In JSON text the escape is valid JSON for the same character,
    so the document editor saves what it was given.
    """
    return INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", str(value))


@functools.cache
def _environment() -> jinja2.Environment:
    """The console's template engine, made on the first page rendered."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("docbase.http.console", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["visible"] = visible
    return environment


FLASH_COOKIE = "docbase_console_flash"
"""The cookie carrying what the next page says (:mod:`~docbase.http.console.flash`)."""


def console_cookie(base: str, name: str, value: str, *, max_age: int | None = None
                   ) -> Cookie:
    """A cookie for the console's path ``base`` only: HttpOnly, Secure, SameSite=Strict."""
    return Cookie(key=name, value=value, path=base, httponly=True, secure=True,
                  samesite="strict", max_age=max_age)


def render(template: str, status: int = 200, **context: Any) -> Response[str]:
    """Render ``template`` with ``context`` as an HTML response with the console headers.

    A page that shows a flash (``context["flash"]``) clears its cookie: shown once.
    """
    html = _environment().get_template(template).render(**context)
    response = Response(html, status_code=status, media_type="text/html",
                        headers=dict(CONSOLE_HEADERS))
    flash = context.get("flash")
    if flash is not None and (flash.message or flash.secret):
        response.delete_cookie(FLASH_COOKIE, path=context["base"])
    return response
