"""Slowing down password guessing: failed logins counted per email, across processes.

The limit (``auth.login.max_failures``, default 5, and ``auth.login.lockout``, default
``"15m"``): after that many failed logins for one email, each more than ``lockout``
apart from the previous one at most, every login attempt for that email is refused
with ``TooManyRequests`` (429, ``Retry-After``) until ``lockout`` has passed since the
last failure; the right password does not help meanwhile. A successful login clears
the count. Unknown emails are counted like known ones, so the answer says nothing
about whether a user exists.

The counts live in the system collection :data:`FAILURES_COLLECTION`, one document
per email (its ``_id`` derived from the lower-cased email), so every process serving
the database counts together. Logins are rare enough that this is read on each
attempt, without a cache.
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import TYPE_CHECKING

from docbase.core.auth.signing import parse_duration
from docbase.core.auth.users import user_id
from docbase.core.documents import new_document
from docbase.core.errors import Conflict, NotFound, TooManyRequests
from docbase.core.settings import LoginSettings
from docbase.core.update import IncOp, SetOp, Update

if TYPE_CHECKING:
    from docbase.core.system_data import SystemData

FAILURES_COLLECTION = "_login_failures"
"""The system collection counting failed logins per email."""


async def check_attempt(db: SystemData, email: str, settings: LoginSettings) -> None:
    """Refuse a login attempt for ``email`` while it is locked out.

    Raises:
        TooManyRequests: ``max_failures`` failures, the last less than ``lockout`` ago.

    """
    try:
        stored = await db.store.get(FAILURES_COLLECTION, user_id(email))
    except NotFound:
        return
    lockout = parse_duration(settings.lockout, "auth.login.lockout")
    wait = stored["last"] + lockout - time.time()
    if stored["count"] >= settings.max_failures and wait > 0:
        raise TooManyRequests(f"too many failed logins for this email; try again in "
                              f"{math.ceil(wait)} s", retry_after=math.ceil(wait))


async def note_failure(db: SystemData, email: str, settings: LoginSettings) -> None:
    """Count one failed login for ``email`` (a count older than ``lockout`` restarts)."""
    uid, now = user_id(email), time.time()
    lockout = parse_duration(settings.lockout, "auth.login.lockout")
    try:
        stored = await db.store.get(FAILURES_COLLECTION, uid)
    except NotFound:
        try:
            document = new_document({}, "system")
            document.update(_id=uid, count=1, last=now)
            await db.store.insert(FAILURES_COLLECTION, [document])
            return
        except Conflict:  # another process counted a failure meanwhile
            stored = {"last": now}
    if stored["last"] + lockout < now:
        update = Update((SetOp(("count",), 1), SetOp(("last",), now)))
    else:
        update = Update((IncOp(("count",), 1), SetOp(("last",), now)))
    with contextlib.suppress(NotFound):  # cleared by a successful login meanwhile
        await db.store.update(FAILURES_COLLECTION, uid, update, stamp={})


async def clear_failures(db: SystemData, email: str) -> None:
    """Forget the failed logins of ``email`` (after a successful login)."""
    await db.store.delete(FAILURES_COLLECTION, [user_id(email)])
