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
from litestar.response import Redirect

from docbase.core.errors import NotFound
from docbase.http.console.guard import HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import CONSOLE_HEADERS

ASSETS = {"console.css": "text/css", "console.js": "text/javascript",
          "pickers.js": "text/javascript", "favicon.svg": "image/svg+xml"}
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


ACTIONS = ("/users/{action:str}", "/keys/revoke", "/delivery/{action:path}",
           "/media/delete", "/signout")
"""The form actions (POST only) whose URL a browser may be left on, after an error page."""


@get([path for action in ACTIONS for path in console_paths(action)])
async def action_page(request: HttpRequest) -> Redirect:
    """``GET`` of a form's action (a reload of its error page): back to the page it is on."""
    console = await signed_in(request)
    page = request.scope["path"][len(console.base):].split("/")[1]
    return Redirect(f"{console.base}/{'' if page == 'signout' else page}", status_code=303,
                    headers=dict(CONSOLE_HEADERS))


@get(console_paths("/{unknown:path}"))
async def unknown_page(unknown: FromPath[str]) -> Response[bytes]:
    """``GET /_/ANYTHING-ELSE``: the console's 404 page (and headers), not the API's JSON."""
    raise NotFound(f"the console has no page {unknown!r}")
