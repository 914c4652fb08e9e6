"""Users of one database: email, display name, image and an argon2id password hash.

The service contract calls it "the system collection ``users``" (``docs/auth.md``,
"Users"); it is stored as ``_users``, so
that, like every system collection, it is unreachable through ``/rest`` (a collection
name starting with ``_`` is refused there). A user's ``_id`` is derived from the
lower-cased email, so the email is unique case-insensitively on every adapter by the
primary key alone, and finding a user by email is one lookup by id. The hash never
leaves this module: :class:`User` does not carry it.

A user carries ``roles`` (what collection access rules grant to, ``docs/access.md``)
and an ``epoch``: a random value that changes when the password changes or the admin
flag is taken away. Login tokens and console sessions remember the epoch they were
made in and are refused once it changed, so such a change signs the user out
everywhere (at once in the changing process, within one second in others, which read
users through the auth cache: :data:`~docbase.core.auth.cache.CACHE_SECONDS`).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import msgspec

from docbase.core.auth.cache import Namespace
from docbase.core.auth.passwords import check_password, hash_password
from docbase.core.auth.principal import check_roles
from docbase.core.documents import new_document
from docbase.core.errors import Conflict, InvalidQuery, NotFound
from docbase.core.query import Eq, Query, SortKey
from docbase.core.update import SetOp, Update

if TYPE_CHECKING:
    from docbase.core.system_data import SystemData

USERS_COLLECTION = "_users"
"""The system collection holding a database's users (the contract's ``users``)."""
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")


class User(msgspec.Struct, frozen=True):
    """What may be shown of a user: never the password hash."""

    id: str
    email: str
    displayname: str = ""
    image: str = ""
    created: str = ""
    admin: bool = False
    roles: tuple[str, ...] = ()
    epoch: str = ""
    """Changes with the password or a lost admin flag; ends older tokens and sessions."""

    def info(self) -> dict[str, Any]:
        """The ``GET /auth/userinfo`` answer."""
        return {"email": self.email, "displayname": self.displayname, "image": self.image,
                "roles": list(self.roles)}


USER_BY_ID: Namespace[User | None] = Namespace("user-by-id")
"""Cached users by id (``None``: no such user), for checking login tokens."""


def normal_email(email: object) -> str:
    """Return ``email`` trimmed and lower-cased.

    Raises:
        InvalidQuery: not a string that looks like ``name@domain``.

    """
    if not isinstance(email, str) or not _EMAIL.fullmatch(email.strip()) or len(email) > 254:
        raise InvalidQuery(f"email {email!r} is not an email address")
    return email.strip().lower()


def user_id(email: str) -> str:
    """The ``_id`` of the user with this email (any case)."""
    return hashlib.sha256(normal_email(email).encode()).hexdigest()[:24]


def _from_stored(document: dict[str, Any]) -> User:
    return User(id=document["_id"], email=document["email"],
                displayname=document.get("displayname") or "",
                image=document.get("image") or "", created=document.get("_created", ""),
                admin=document.get("admin") is True,
                roles=tuple(r for r in document.get("roles") or () if isinstance(r, str)),
                epoch=str(document.get("epoch") or ""))


async def create_user(db: SystemData, email: str, password: str, *,
                      displayname: str = "", image: str = "", admin: bool = False,
                      roles: Iterable[str] = ()) -> User:
    """Create a user; the email keeps its case for display but is unique in any case.

    An ``admin`` user may also sign in to the console (``docs/console.md``).

    Raises:
        InvalidQuery: a malformed email, a password that is too short or too long, or
            a malformed role.
        Conflict: a user with this email exists already.

    """
    normal_email(email)
    document = new_document({}, "system")
    document.update(_id=user_id(email), email=email.strip(), displayname=displayname,
                    image=image, admin=admin, roles=list(check_roles(roles)),
                    password=await hash_password(check_password(password)))
    try:
        await db.store.insert(USERS_COLLECTION, [document])
    except Conflict:
        raise Conflict(f"a user with email {email.strip()!r} exists already") from None
    db.auth_cache.invalidate(USER_BY_ID)
    return _from_stored(document)


async def find_user(db: SystemData, email: str) -> tuple[User, str] | None:
    """Return the user with this email and its password hash, else ``None`` (no cache).

    Raises:
        InvalidQuery: a malformed email.

    """
    try:
        document = await db.store.get(USERS_COLLECTION, user_id(email))
    except NotFound:
        return None
    return _from_stored(document), document["password"]


async def cached_user(db: SystemData, uid: str) -> User | None:
    """The user with id ``uid``, read at most once per cache lifetime, else ``None``."""
    async def load() -> User | None:
        try:
            return _from_stored(await db.store.get(USERS_COLLECTION, uid))
        except NotFound:
            return None

    return await db.auth_cache.fetch(USER_BY_ID, uid, load)


async def list_users(db: SystemData) -> list[User]:
    """Every user, oldest first."""
    rows = await db.store.find(USERS_COLLECTION, Query(sort=(SortKey(("_created",)),),
                                                       limit=None))
    return [_from_stored(row) for row in rows]


async def delete_user(db: SystemData, email: str) -> User:
    """Delete the user with this email; its login tokens are refused from then on.

    Raises:
        NotFound: no such user.
        InvalidQuery: a malformed email.

    """
    found = await find_user(db, email)
    if found is None:
        raise NotFound(f"no user with email {email!r}")
    await db.store.delete(USERS_COLLECTION, [found[0].id])
    db.auth_cache.invalidate(USER_BY_ID)
    return found[0]


async def set_password(db: SystemData, email: str, password: str) -> User:
    """Give the user with this email a new password; their tokens and sessions end.

    Raises:
        NotFound: no such user.
        InvalidQuery: a malformed email or an unacceptable password.

    """
    hashed = await hash_password(check_password(password))
    return await _change(db, email, SetOp(("password",), hashed), _new_epoch())


async def set_admin(db: SystemData, email: str, admin: bool) -> User:
    """Make the user with this email an administrator of the database, or no longer one.

    Taking the flag away ends the user's console sessions and login tokens (giving it
    back revives none of them).

    Raises:
        NotFound: no such user.
        InvalidQuery: a malformed email.

    """
    ends = () if admin else (_new_epoch(),)
    return await _change(db, email, SetOp(("admin",), admin), *ends)


async def set_roles(db: SystemData, email: str, roles: Iterable[str]) -> User:
    """Give the user with this email these roles (replacing theirs).

    Their next request, with a token they hold already, has the new roles: at once in
    this process, within :data:`~docbase.core.auth.cache.CACHE_SECONDS` in others.

    Raises:
        NotFound: no such user.
        InvalidQuery: a malformed email or role.

    """
    return await _change(db, email, SetOp(("roles",), list(check_roles(roles))))


def _new_epoch() -> SetOp:
    return SetOp(("epoch",), secrets.token_urlsafe(12))


async def _change(db: SystemData, email: str, *changes: SetOp) -> User:
    try:
        stored = await db.store.update(USERS_COLLECTION, user_id(email), Update(changes),
                                       stamp={})
    except NotFound:
        raise NotFound(f"no user with email {email!r}") from None
    db.auth_cache.invalidate(USER_BY_ID)
    return _from_stored(stored)


async def any_admin(db: SystemData) -> bool:
    """Tell whether the database has at least one administrator."""
    return bool(await db.store.find(USERS_COLLECTION, Query(
        filter=Eq(("admin",), True), limit=1)))
