"""Password hashes: argon2id, computed off the event loop, compared in constant time.

A stored hash is the PHC string of ``argon2-cffi`` (``$argon2id$v=19$m=...``), which
carries its own salt and parameters, so stronger parameters later still verify old
hashes. Hashing takes tens of milliseconds of CPU on purpose; it runs in a worker
thread so that other requests go on meanwhile.

:func:`verify_password` of an unknown user still hashes: it checks the password
against :func:`dummy_hash`, a hash made once per process with the same parameters, so
that a wrong password and an unknown email cost the same time.
"""

from __future__ import annotations

import asyncio
import functools
import secrets
from typing import TYPE_CHECKING

from docbase.core.errors import InvalidQuery
from docbase.core.plugins import lazy_module

if TYPE_CHECKING:
    import argon2
    import argon2.exceptions
else:  # imported on the first password: a worker serving API keys only never needs it
    argon2 = lazy_module("argon2")

MIN_PASSWORD_LENGTH = 8
"""The shortest password a user may have."""
MAX_PASSWORD_LENGTH = 1024
"""The longest one (hashing a huge string would cost the server dearly)."""


@functools.cache
def _hasher() -> argon2.PasswordHasher:
    # argon2id at OWASP's recommended minimum (19 MiB, 2 passes, 1 lane): tens of ms
    return argon2.PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


def check_password(password: object) -> str:
    """Return ``password`` if it may be a user's password.

    Raises:
        InvalidQuery: not a string, or shorter than :data:`MIN_PASSWORD_LENGTH` or
            longer than :data:`MAX_PASSWORD_LENGTH` characters.

    """
    if not isinstance(password, str):
        raise InvalidQuery("password must be a string")
    if not MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH:
        raise InvalidQuery(f"password must be {MIN_PASSWORD_LENGTH} to "
                           f"{MAX_PASSWORD_LENGTH} characters long")
    return password


async def hash_password(password: str) -> str:
    """Return the argon2id hash of ``password`` (computed in a worker thread)."""
    return await asyncio.to_thread(_hasher().hash, password)


@functools.cache
def dummy_hash() -> str:
    """A hash of a random password, checked instead when the user does not exist."""
    return _hasher().hash(secrets.token_hex(16))


def _verify(stored: str | None, password: str) -> bool:
    if stored is None:
        _verify(dummy_hash(), password)
        return False
    try:
        return _hasher().verify(stored, password)
    except (argon2.exceptions.VerificationError, argon2.exceptions.InvalidHashError):
        return False


async def verify_password(stored: str | None, password: str) -> bool:
    """Tell whether ``password`` matches ``stored``; ``None`` checks a dummy hash (false)."""
    return await asyncio.to_thread(_verify, stored, password)
