"""Roles on principals (issue 30): users', external tokens' and scoped keys' roles.

A user's roles are read from the stored user when each request arrives, so a change
reaches a token issued earlier; ``GET /auth/userinfo`` answers them. Library tests run
on every backend (``stores``); the command-line tests run ``docbase serve`` and the
CLI as separate processes on SQLite, PostgreSQL and the Mongo wire server (a memory
store cannot be shared between two processes).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest

from docbase import Database
from docbase.core import auth
from docbase.core.errors import InvalidQuery
from docbase.http.testing import LiveDocbase, live_docbase
from tests.served_engines import ENGINES, engine_storage
from tests.test_serve_harness import Served, run_cli, serving

PASSWORD = "correct horse battery"
IDP_SECRET = "the shared secret of the identity provider, long enough for HS384"


@pytest.fixture
async def live(stores: Any, tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    async with live_docbase({"main": Database(*stores, name="main")}, tmp_path) as running:
        yield running


async def _login(live: LiveDocbase, email: str) -> str:
    answer = await live.client.post("/auth/login", json={"email": email, "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["jwt"])


async def _roles(live: LiveDocbase, token: str) -> list[str]:
    answer = await live.client.get("/auth/userinfo", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text
    return list(answer.json()["roles"])


async def test_a_role_change_reaches_a_token_issued_before_it(live: LiveDocbase) -> None:
    await auth.create_user(live.db, "ed@example.com", PASSWORD, roles=["editor", "hr"])
    token = await _login(live, "ed@example.com")
    assert "roles" not in jwt.decode(token, options={"verify_signature": False})
    assert await _roles(live, token) == ["editor", "hr"]
    bearer = await auth.authenticate_token(live.db, token)
    principal = bearer.principal(await live.db.settings.load())
    assert principal.roles == ("editor", "hr")
    assert dict(principal.claims)["email"] == "ed@example.com"
    await auth.set_roles(live.db, "ED@example.com", ["viewer"])
    assert await _roles(live, token) == ["viewer"]  # the same token, at once
    await auth.set_roles(live.db, "ed@example.com", [])
    assert await _roles(live, token) == []


async def test_a_new_password_ends_login_tokens_over_https(live: LiveDocbase) -> None:
    await auth.create_user(live.db, "ed@example.com", PASSWORD, roles=["editor"])
    token = await _login(live, "ed@example.com")
    assert await _roles(live, token) == ["editor"]
    await auth.set_roles(live.db, "ed@example.com", ["hr"])  # roles alone: token lives on
    assert await _roles(live, token) == ["hr"]
    await auth.set_password(live.db, "ed@example.com", "another long password")
    refused = await live.client.get("/auth/userinfo",
                                    headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 401
    assert "log in again" in refused.json()["message"]


@pytest.mark.parametrize("bad", ["*", "@owner", "", "a b", "x" * 65, "-lead"])
async def test_malformed_roles_are_refused(live: LiveDocbase, bad: str) -> None:
    with pytest.raises(InvalidQuery, match="role"):
        await auth.create_user(live.db, "al@example.com", PASSWORD, roles=[bad])
    with pytest.raises(InvalidQuery, match="role"):
        await auth.create_key(live.db, paths=["/rest/**"], roles=[bad])
    assert await auth.list_users(live.db) == []


@pytest.mark.parametrize(("claims", "setting", "roles"), [
    ({"roles": ["editor", "hr"]}, None, ["editor", "hr"]),
    ({"roles": "editor"}, None, ["editor"]),
    ({"roles": ["editor", 3]}, None, []),
    ({"roles": {"editor": True}}, None, []),
    ({"roles": ["editor", "*", "@owner"]}, None, ["editor"]),
    ({}, None, []),
    ({"groups": ["staff"], "roles": ["x"]}, "groups", ["staff"]),
    ({"realm_access": {"roles": ["admin"]}}, "realm_access.roles", ["admin"]),
    ({"https://example.com/roles": ["hr"]}, "https://example.com/roles", ["hr"]),
])
async def test_external_token_roles_come_from_the_configured_claim(
        live: LiveDocbase, claims: dict[str, Any], setting: str | None,
        roles: list[str]) -> None:
    await live.db.settings.set("auth.jwt.secret", IDP_SECRET)
    if setting is not None:
        await live.db.settings.set("auth.jwt.roles_claim", setting)
    token = jwt.encode({"sub": "cy@example.com", "exp": int(time.time()) + 60, **claims},
                       IDP_SECRET, "HS384")
    assert await _roles(live, token) == roles


async def test_scoped_keys_carry_roles_and_full_access_keys_none(live: LiveDocbase) -> None:
    raw, key = await auth.create_key(live.db, paths=["/rest/notes/**"],
                                     roles=["editor", "editor", "hr"])
    assert key.roles == ("editor", "hr")
    assert (await auth.authenticate(live.db, raw)).roles == ("editor", "hr")
    raw_roles_only, only = await auth.create_key(live.db, roles=["hr"])
    assert not only.full_access  # roles make a key scoped: rules limit it
    assert (await auth.authenticate(live.db, raw_roles_only)).roles == ("hr",)
    with pytest.raises(InvalidQuery, match="full-access"):
        await auth.create_key(live.db, full_access=True, roles=["hr"])
    listed = {k.id: k.roles for k in await auth.list_keys(live.db)}
    assert listed[key.id] == ("editor", "hr")


# ------------------------------------------------------------ the command line, served

SHARED_ENGINES = [p for p in ENGINES if p.id != "memory"]


@pytest.fixture(params=SHARED_ENGINES)
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Served, str]]:
    with (engine_storage(request.param, tmp_path) as storage,
          serving(tmp_path, "--storage", storage) as server):
        yield server, storage


def _eventually(check: Any, timeout: float = 5.0) -> None:
    """Retry ``check()``: another process trusts its cached user for at most 1 s."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            check()
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_cli_roles_reach_the_next_request_of_a_served_database(
        served: tuple[Served, str], tmp_path: Path) -> None:
    server, storage = served
    run_cli(tmp_path, "users", "create", "--storage", storage, "--email", "ed@example.com",
            "--password", PASSWORD, "--roles", "editor, hr")
    login = server.request("POST", "/auth/login",
                           json={"email": "ed@example.com", "password": PASSWORD})
    assert login.status_code == 200, login.text
    headers = {"Authorization": f"Bearer {login.json()['jwt']}"}

    def roles() -> list[str]:
        answer = server.request("GET", "/auth/userinfo", headers=headers)
        assert answer.status_code == 200, answer.text
        return list(answer.json()["roles"])

    assert roles() == ["editor", "hr"]
    run_cli(tmp_path, "users", "set-roles", "--storage", storage,
            "--email", "ed@example.com", "--roles", "viewer")

    def changed() -> None:
        assert roles() == ["viewer"]

    _eventually(changed)
    listed = run_cli(tmp_path, "users", "list", "--storage", storage, "--json").stdout
    rows = [json.loads(line) for line in listed.splitlines()]
    assert [(r["email"], r["roles"]) for r in rows] == [("ed@example.com", ["viewer"])]
    assert "epoch" not in rows[0]
    bad = run_cli(tmp_path, "users", "set-roles", "--storage", storage,
                  "--email", "ed@example.com", "--roles", "@owner", check=False)
    assert bad.returncode != 0
    assert "role" in bad.stderr

    run_cli(tmp_path, "keys", "create", "--storage", storage, "--path", "/rest/notes/**",
            "--role", "editor", "--role", "hr", "--description", "app")
    keys = [json.loads(line) for line in run_cli(
        tmp_path, "keys", "list", "--storage", storage, "--json").stdout.splitlines()]
    assert {k["description"]: k["roles"] for k in keys} == {"admin": [], "app": ["editor", "hr"]}
    assert "role=editor role=hr" in run_cli(tmp_path, "keys", "list", "--storage", storage).stdout
    refused = run_cli(tmp_path, "keys", "create", "--storage", storage, "--full",
                      "--role", "hr", check=False)
    assert refused.returncode != 0
