"""``GET /_/static/NAME``: the console's stylesheet and script, shipped in the package.

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

ASSETS = {"console.css": "text/css; charset=utf-8",
          "console.js": "text/javascript; charset=utf-8"}
"""The static files and their media types."""


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
