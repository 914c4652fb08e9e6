"""Logging in with email and password, and logging a bearer token out.

A wrong password and an unknown email answer the same ``InvalidCredentials`` message
after the same work: the throttle is read, a password hash is checked (a dummy one for
an unknown email, :func:`~docbase.core.auth.passwords.verify_password`) and the failure
is counted (:mod:`docbase.core.auth.throttle`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docbase.core.auth.passwords import verify_password
from docbase.core.auth.revocation import revoke_token
from docbase.core.auth.throttle import check_attempt, clear_failures, note_failure
from docbase.core.auth.tokens import Bearer, issue_login_token
from docbase.core.auth.users import User, find_user, normal_email
from docbase.core.errors import InvalidQuery, Unauthorized

if TYPE_CHECKING:
    from docbase.core.system_data import SettledSystemData

LOGIN_REFUSED = "wrong email or password"
"""The one message of a refused login, whatever was wrong."""


async def login(db: SettledSystemData, email: object, password: object) -> str:
    """Check ``email`` and ``password``; return a new login token.

    Raises:
        InvalidQuery: email or password missing or not strings.
        TooManyRequests: too many failed logins for this email lately.
        Unauthorized: no such user, or a wrong password (the same message for both).

    """
    return await issue_login_token(db, await check_credentials(db, email, password))


async def check_credentials(db: SettledSystemData, email: object, password: object) -> User:
    """Check ``email`` and ``password`` within the throttle; return the user.

    Raises:
        InvalidQuery: email or password missing or not strings.
        TooManyRequests: too many failed logins for this email lately.
        Unauthorized: no such user, or a wrong password (the same message for both).

    """
    email, password = _checked(email, password)
    settings = (await db.settings.load()).auth.login
    await check_attempt(db, email, settings)
    found = await find_user(db, email)
    if not await verify_password(found[1] if found else None, password) or found is None:
        await note_failure(db, email, settings)
        raise Unauthorized(LOGIN_REFUSED)
    await clear_failures(db, email)
    return found[0]


def refuse_login(email: object, password: object) -> Unauthorized:
    """What a database without users answers a login (one the server does not hold).

    Raises:
        InvalidQuery: email or password missing or not strings, as for any database.

    """
    _checked(email, password)
    return Unauthorized(LOGIN_REFUSED)


def _checked(email: object, password: object) -> tuple[str, str]:
    if not isinstance(email, str) or not isinstance(password, str) or not email:
        raise InvalidQuery("the body must hold an email and a password (strings)")
    try:
        normal_email(email)
    except InvalidQuery:
        raise Unauthorized(LOGIN_REFUSED) from None
    return email, password


async def logout(db: SettledSystemData, bearer: Bearer) -> None:
    """Revoke ``bearer`` until it expires, in every process sharing the storage."""
    await revoke_token(db, bearer.token_id, bearer.expires)
