"""Who may use the console: the session cookie, the CSRF token, the console's own URLs.

Every console route (but its sign-in page and static files) starts with
:func:`signed_in`: the request's database is found as for ``/rest`` (path prefix
``/db/<name>``, host name, else the default), its session cookie is looked up in the
database's session collection (:mod:`docbase.core.auth.sessions`), and a request that
changes anything must echo the session's CSRF token (form field ``csrf`` or header
``X-CSRF-Token``). Without a live session a page request is sent to the sign-in page
and anything else answers 401; without the CSRF token the answer is 403.

The cookie is scoped to the console's path (``/_`` or ``/db/<name>/_``), so the browser
never sends it to ``/rest``, and ``/rest`` never reads cookies anyway: a console
session is useless there. The console acts through the same collections, pipeline and
authorization as ``/rest``, as the signed-in administrator (a full-access principal
that writes as the administrator's email).
"""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.datastructures import Cookie

from docbase.core.auth import Principal
from docbase.core.auth.sessions import Session, find_session
from docbase.core.database import Database
from docbase.core.server import Server
from docbase.http.console.flash import Flash, taken
from docbase.http.console.rendering import console_cookie as base_cookie
from docbase.http.context import SERVER_STATE, route
from docbase.http.headers import header
from docbase.http.observe import DATABASE, PRINCIPAL

HttpRequest = Request[Any, Any, Any]
SESSION_COOKIE = "docbase_console"
"""The cookie holding the session token."""
SIGNIN_COOKIE = "docbase_console_signin"
"""The cookie holding the sign-in form's CSRF token, before any session exists."""
SAFE_METHODS = frozenset({"GET", "HEAD"})


class SignInRequired(Exception):
    """No live session: a page goes to the sign-in page, anything else answers 401."""

    def __init__(self, signin_url: str) -> None:
        super().__init__("sign in to the console first")
        self.signin_url = signin_url


class CsrfRefused(Exception):
    """A state-changing request without this session's CSRF token (403)."""


class Console:
    """One console request: its database, the console's base URL and the session."""

    __slots__ = ("base", "database", "database_name", "flash", "session")

    def __init__(self, database_name: str, database: Database, base: str,
                 session: Session | None) -> None:
        self.database_name = database_name
        self.database = database
        self.base = base
        """The console's URL path, ``/_`` or ``/db/<name>/_``, without a final slash."""
        self.session = session
        self.flash = Flash()
        """What this page says after the form that led here, shown once."""

    @property
    def principal(self) -> Principal:
        """The signed-in administrator, as the collections see it."""
        email = self.session.email if self.session else "console"
        return Principal(author=email, kind="user", full_access=True)

    @property
    def rest_base(self) -> str:
        """The database's ``/rest`` URL path."""
        return self.base[:-2] + "/rest"

    def page(self, **context: Any) -> dict[str, Any]:
        """The context every page template receives, plus ``context``."""
        return {"base": self.base, "session": self.session, "db": self.database_name,
                "flash": self.flash, **context}


def locate(request: HttpRequest) -> Console:
    """The database and console base URL of a request, without looking at its session.

    Raises:
        NotFound: the path prefix or host names no database of this server.

    """
    server: Server = request.app.state[SERVER_STATE]
    name, database, path = route(server, request)
    request.scope[DATABASE] = name  # type: ignore[literal-required]  # for the request log
    full = request.scope["path"]
    prefix = full[: len(full) - len(path)] if path and full.endswith(path) else ""
    return Console(name, database, prefix + "/_", None)


async def signed_in(request: HttpRequest, *, form: dict[str, Any] | None = None) -> Console:
    """The console request of a live session; a state change must carry its CSRF token.

    ``form`` is the request's parsed form, for a POST whose token is a form field.

    Raises:
        SignInRequired: no session cookie, or one whose session is over.
        CsrfRefused: a state-changing request without the session's CSRF token.

    """
    console = locate(request)
    await console.database.settings.follow_limits()  # as every /rest request does
    session = await find_session(console.database, request.cookies.get(SESSION_COOKIE))
    if session is None:
        raise SignInRequired(console.base + "/signin")
    request.scope[PRINCIPAL] = "console"  # type: ignore[literal-required]  # request log
    if request.method not in SAFE_METHODS:
        given = header(request, "x-csrf-token") or (form or {}).get("csrf")
        if not session.csrf_matches(given if isinstance(given, str) else None):
            raise CsrfRefused("this request lacks the console's CSRF token")
    console.session = session
    console.flash = taken(request)
    return console


def console_cookie(console: Console, name: str, value: str, *, max_age: int | None = None
                   ) -> Cookie:
    """A cookie for the console's path only: HttpOnly, Secure, SameSite=Strict."""
    return base_cookie(console.base, name, value, max_age=max_age)


def console_paths(path: str) -> list[str]:
    """``/_`` + ``path`` under the default/host-routed base URL and under ``/db/<name>``."""
    return ["/_" + path, "/db/{db_name:str}/_" + path]
