"""Console sessions in the store: idle expiry, sign-out and lost admin rights, on every adapter."""

from __future__ import annotations

from typing import Any

import pytest

from docbase import Database
from docbase.core import auth
from docbase.core.auth.sessions import (
    IDLE_SECONDS,
    SESSIONS_COLLECTION,
    close_session,
    find_session,
    open_session,
)
from docbase.core.errors import InvalidToken
from docbase.core.query import Query
from docbase.core.update import IncOp, Update


async def _admin(stores: Any) -> tuple[Database, auth.User]:
    db = Database(*stores)
    await db.open()
    return db, await auth.create_user(db, "ann@example.com", "long enough", admin=True)


async def test_a_session_is_found_by_its_token_and_only_by_it(stores: Any) -> None:
    db, user = await _admin(stores)
    token, session = await open_session(db, user)
    found = await find_session(db, token)
    assert found is not None
    assert (found.email, found.csrf) == ("ann@example.com", session.csrf)
    assert found.csrf_matches(session.csrf)
    assert not found.csrf_matches(session.csrf + "x")
    assert await find_session(db, token + "x") is None
    assert await find_session(db, None) is None
    assert token not in str(await db.store.get(SESSIONS_COLLECTION, session.id))
    await db.close()


async def test_a_session_idle_too_long_is_refused_and_removed(stores: Any) -> None:
    db, user = await _admin(stores)
    token, session = await open_session(db, user)
    await db.store.update(SESSIONS_COLLECTION, session.id,
                          Update((IncOp(("seen",), -IDLE_SECONDS - 1),)), stamp={})
    assert await find_session(db, token) is None
    assert await db.store.find(SESSIONS_COLLECTION, Query(limit=None)) == []
    await db.close()


async def test_signing_out_or_losing_admin_rights_ends_the_session(stores: Any) -> None:
    db, user = await _admin(stores)
    token, session = await open_session(db, user)
    other, _ = await open_session(db, user)
    await close_session(db, session.id)
    assert await find_session(db, token) is None
    assert await find_session(db, other) is not None
    await auth.set_admin(db, "ann@example.com", False)
    assert await find_session(db, other) is None
    await db.close()


async def test_a_new_password_ends_sessions_and_login_tokens(stores: Any) -> None:
    db, user = await _admin(stores)
    cookie, _ = await open_session(db, user)
    token = await auth.login(db, "ann@example.com", "long enough")
    await auth.authenticate_token(db, token)  # cached as it was before the change
    await auth.set_password(db, "ann@example.com", "another long one")
    assert await find_session(db, cookie) is None
    with pytest.raises(InvalidToken, match="log in again"):
        await auth.authenticate_token(db, token)
    fresh = await auth.login(db, "ann@example.com", "another long one")
    assert (await auth.authenticate_token(db, fresh)).email == "ann@example.com"
    reopened, _ = await open_session(db, (await auth.list_users(db))[0])
    assert await find_session(db, reopened) is not None
    await db.close()


async def test_giving_the_admin_flag_back_revives_no_session(stores: Any) -> None:
    db, user = await _admin(stores)
    cookie, _ = await open_session(db, user)
    token = await auth.login(db, "ann@example.com", "long enough")
    await auth.set_admin(db, "ann@example.com", False)
    await auth.set_admin(db, "ann@example.com", True)
    assert await find_session(db, cookie) is None
    with pytest.raises(InvalidToken):
        await auth.authenticate_token(db, token)
    granted = await auth.set_admin(db, "ann@example.com", True)  # already one: no change
    still, _ = await open_session(db, granted)
    assert await find_session(db, still) is not None
    await db.close()
