"""Principals, a notes collection and user tokens shared by the access-rule tests."""

from __future__ import annotations

from docbase import Database
from docbase.core import auth
from docbase.core.auth import Principal
from docbase.http.testing import LiveDocbase

NOTES = {"fields": [{"name": "title", "type": "text"}, {"name": "team", "type": "text"},
                    {"name": "salary", "type": "number"}]}
"""The notes collection of docs/access.md, without its rules."""
PASSWORD = "correct horse battery"


def user(email: str, *roles: str) -> Principal:
    """The principal of a login token of ``email`` with ``roles``."""
    return Principal(author=email, kind="user", full_access=False, roles=roles)


ANN = user("ann@example.com")
BOB = user("bob@example.com")
EDITOR = user("ed@example.com", "editor")
HR = user("hr@example.com", "hr")


async def seed_notes(db: Database) -> dict[str, str]:
    """Two notes of ann (team red, blue), one of bob (red), written as them; ids by title."""
    ids = {}
    for owner, title, team in [(ANN, "ann 1", "red"), (ANN, "ann 2", "blue"),
                               (BOB, "bob 1", "red")]:
        stored = await db.collection("notes", Principal(author=owner.author)).insert(
            {"title": title, "team": team, "salary": 100})
        ids[title] = str(stored["_id"])
    return ids


async def user_token(live: LiveDocbase, email: str) -> str:
    """A login token of a new user ``email`` of the live database."""
    await auth.create_user(live.db, email, PASSWORD)
    response = await live.client.post("/auth/login", json={"email": email,
                                                           "password": PASSWORD})
    assert response.status_code == 200, response.text
    token: str = response.json()["jwt"]
    return token


def bearer(token: str) -> dict[str, str]:
    """The headers of a request with ``token``."""
    return {"Authorization": f"Bearer {token}"}
