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
from typing import TYPE_CHECKING, Any

from litestar import Response

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

@functools.cache
def _environment() -> jinja2.Environment:
    """The console's template engine, made on the first page rendered."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("docbase.http.console", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(template: str, status: int = 200, **context: Any) -> Response[str]:
    """Render ``template`` with ``context`` as an HTML response with the console headers."""
    html = _environment().get_template(template).render(**context)
    return Response(html, status_code=status, media_type="text/html; charset=utf-8",
                    headers=dict(CONSOLE_HEADERS))
