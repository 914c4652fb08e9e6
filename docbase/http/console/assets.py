"""``GET /_/static/NAME``: the console's stylesheet, script and icon, shipped in the package.

Any other ``GET /_/...`` path answers the console's own 404 page, with its headers.

Only the files listed in :data:`ASSETS` are served (no path from the URL reaches the
file system); they hold no data and need no session. Nothing is fetched from the
network at run time.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from litestar import Response, get
from litestar.params import FromPath

from docbase.core.errors import NotFound
from docbase.http.console.guard import console_paths
from docbase.http.console.rendering import CONSOLE_HEADERS

ASSETS = {"console.css": "text/css", "console.js": "text/javascript",
          "favicon.svg": "image/svg+xml"}
"""The static files and their media types (``text/`` ones get ``; charset=utf-8``)."""


@cache
def _content(name: str) -> bytes:
    return files("docbase.http.console").joinpath("static", name).read_bytes()


@get(console_paths("/static/{name:str}"))
async def asset(name: FromPath[str]) -> Response[bytes]:
    """``GET /_/static/NAME``: one of :data:`ASSETS`, cached by the browser for an hour."""
    media_type = ASSETS.get(name)
    if media_type is None:
        raise NotFound(f"no console asset {name!r}")
    return Response(_content(name), media_type=media_type,
                    headers={**CONSOLE_HEADERS, "cache-control": "public, max-age=3600"})


@get(console_paths("/{unknown:path}"))
async def unknown_page(unknown: FromPath[str]) -> Response[bytes]:
    """``GET /_/ANYTHING-ELSE``: the console's 404 page (and headers), not the API's JSON."""
    raise NotFound(f"the console has no page {unknown!r}")
