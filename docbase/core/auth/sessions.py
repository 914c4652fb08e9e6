"""Console sessions: an administrator signed in to the web console of one database.

A session is one document of the system collection :data:`SESSIONS_COLLECTION`. Its
``_id`` is derived from the random session token the browser holds in its cookie (the
token itself is never stored), and it carries the user's id and email, the session's
CSRF token and when it was last used. Every process reads it from the store on each
console request, so signing out (the document is deleted) ends the session in every
worker at once, and a session idle for longer than :data:`IDLE_SECONDS` is refused
(and deleted) wherever it is next presented. A session also ends when its user's
``epoch`` changes (a new password, the admin flag taken away: giving the flag back
revives no older session). ``seen`` is written again at most every
:data:`TOUCH_SECONDS`, so browsing costs one read per request, not a write.

A session proves only "this browser signed in as an administrator": the HTTP layer
accepts it on the console's routes alone (``docbase/http/console``), never on ``/rest``.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import secrets
import time
from typing import TYPE_CHECKING

import msgspec

from docbase.core.auth.users import cached_user
from docbase.core.documents import new_document
from docbase.core.errors import NotFound
from docbase.core.query import Lte
from docbase.core.update import SetOp, Update

if TYPE_CHECKING:
    from docbase.core.auth.users import User
    from docbase.core.system_data import SystemData

SESSIONS_COLLECTION = "_console_sessions"
"""The system collection of console sessions."""
IDLE_SECONDS = 30 * 60
"""A session unused for this long (seconds) is over."""
TOUCH_SECONDS = 60
"""How stale ``seen`` may get before a request writes it again."""


class Session(msgspec.Struct, frozen=True):
    """A live console session: who signed in and the token forms must echo."""

    id: str
    user_id: str
    email: str
    csrf: str

    def csrf_matches(self, given: str | None) -> bool:
        """Tell, in constant time, whether ``given`` is this session's CSRF token."""
        return given is not None and hmac.compare_digest(given.encode(), self.csrf.encode())


def session_id(token: str) -> str:
    """The ``_id`` of the session whose cookie holds ``token``."""
    return hashlib.sha256(token.encode()).hexdigest()[:24]


async def open_session(db: SystemData, user: User) -> tuple[str, Session]:
    """Start a session for ``user`` (an administrator); return ``(cookie token, session)``.

    Sessions idle past their time are deleted on the way.
    """
    token = secrets.token_urlsafe(32)
    now = time.time()
    session = Session(id=session_id(token), user_id=user.id, email=user.email,
                      csrf=secrets.token_urlsafe(24))
    document = new_document({}, "system")
    document.update(_id=session.id, user=user.id, email=user.email, csrf=session.csrf,
                    seen=now, epoch=user.epoch)
    await db.store.insert(SESSIONS_COLLECTION, [document])
    await db.store.delete_where(SESSIONS_COLLECTION, Lte(("seen",), now - IDLE_SECONDS))
    return token, session


async def find_session(db: SystemData, token: str | None) -> Session | None:
    """Return the live session of a cookie token, else ``None``.

    A session is refused when idle too long, when its user was deleted or is no
    longer an administrator, or when the user's password changed or admin flag was
    taken away since it began (another epoch).
    """
    if not token or len(token) > 200:
        return None
    sid = session_id(token)
    try:
        stored = await db.store.get(SESSIONS_COLLECTION, sid)
    except NotFound:
        return None
    now = time.time()
    if stored["seen"] + IDLE_SECONDS < now:
        await close_session(db, sid)
        return None
    user = await cached_user(db, stored["user"])
    if user is None or not user.admin or stored.get("epoch", "") != user.epoch:
        return None
    if stored["seen"] + TOUCH_SECONDS < now:
        with contextlib.suppress(NotFound):  # signed out meanwhile
            await db.store.update(SESSIONS_COLLECTION, sid,
                                  Update((SetOp(("seen",), now),)), stamp={})
    return Session(id=sid, user_id=stored["user"], email=stored["email"], csrf=stored["csrf"])


async def close_session(db: SystemData, sid: str) -> None:
    """End the session with this id (signing out), for every process."""
    await db.store.delete(SESSIONS_COLLECTION, [sid])
