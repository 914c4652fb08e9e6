"""The Settings page's typed forms and restoring a listed backup, over real HTTPS (issue 33).

Per engine (SQLite, PostgreSQL) two ``docbase serve`` sharing one backup directory: a
``source`` with documents (its config file sets a limit) and an empty ``target``.
The typed forms store typed values that then rule ``/auth`` and ``/rest``, a refused
value is named beside its input and stores nothing, a secret is never shown again;
a backup taken on the source's Data page is restored, by its name, into the target.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.console_browser import ADMIN, CONSOLE_ENGINES, PASSWORD, ConsoleServer, console_server
from tests.test_console_data import Pair
from tests.test_console_security import signed_in
from tests.test_http_jwt import forge_hs256

BIRDS = [{"name": "wren", "wingspan": 15}, {"name": "kite", "wingspan": 160}]


@contextlib.contextmanager
def sharing_backups(engine: str, files: Path, max_page: int) -> Iterator[Pair]:
    """A source whose config file sets ``limits.max_page`` and an empty target, both
    serving ``engine`` and backing up to one directory."""
    backups, config = files / "backups", files / "source.toml"
    config.write_text(f"[limits]\nmax_page = {max_page}\n")
    shared = ("--backup-dir", str(backups))
    with contextlib.ExitStack() as stack:
        source, target = (stack.enter_context(console_server(
            engine, Path(tempfile.mkdtemp(dir=files)), *shared, *more))
            for more in (("--backup-keep", "3", "--config", str(config)), ()))
        yield Pair(source, target, files, backups)


@pytest.fixture(scope="module", params=CONSOLE_ENGINES)
def pair(request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    with sharing_backups(request.param, tmp_path_factory.mktemp(
            f"settings-{request.param}"), 50) as served:
        for bird in BIRDS:
            assert served.source.api("POST", "/rest/birds", json=bird).status_code == 201
        yield served


def _post(server: ConsoleServer, path: str, form: dict[str, str],
          page: str = "/_/settings") -> tuple[httpx.Response, str]:
    with signed_in(server.served) as (client, csrf):
        answer = client.post(path, data={"csrf": csrf, **form})
        shown = client.get(page).text if answer.status_code == 303 else answer.text
    return answer, shown


def _stored(server: ConsoleServer, prefix: str) -> dict[str, str]:
    """The settings ``docbase settings list`` prints under ``prefix`` (secrets ``***``)."""
    pairs = (line.partition(" = ") for line in server.cli("settings", "list").splitlines())
    return {path: value for path, _, value in pairs if path.startswith(prefix)}


def _login(server: ConsoleServer, password: str = PASSWORD,
           email: str = ADMIN) -> httpx.Response:
    return server.served.request("POST", "/auth/login",
                                 json={"email": email, "password": password})


def _claims(token: str) -> dict[str, int]:
    body = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


def test_the_page_has_a_form_per_group_and_shows_limits_and_backups(pair: Pair) -> None:
    with signed_in(pair.source.served) as (client, _):
        page = client.get("/_/settings").text
    for group in ("auth.jwt", "auth.login", "auth.users", "realtime", "schema", "media"):
        assert f'action="/_/settings/group/{group}"' in page, group
    # inputs and help come from the declarations in docbase/core/settings/stored.py
    assert 'id="setting-auth.login.max_failures" name="max_failures" value="5" type="number"' \
        in page
    assert "Failed logins for one email before further attempts are refused" in page
    assert re.search(r'id="setting-realtime.global" name="global"[^>]* checked', page)
    assert '<option value="strict">strict</option>' in page
    # the limits this server runs with: its config file's, and the defaults
    assert re.search(r"<code>limits.max_page</code></td><td>50</td>", page)
    assert re.search(r"<code>limits.max_bulk</code></td><td>1000</td>", page)
    assert "Largest ``max``" not in page
    assert "Largest max/$max a list read may ask for" in page
    assert re.search(r"<code>backup_keep</code></td><td>3</td>", page)
    assert f"<td>{pair.backups}</td>" in page


def test_an_auth_form_is_stored_typed_and_rules_logins(pair: Pair) -> None:
    form = {"lifetime": "90", "max_failures": "2", "lockout": "15m"}
    answer, page = _post(pair.source, "/_/settings/group/auth.login", form)
    assert (answer.status_code, answer.headers["location"]) == (303, "/_/settings"), page
    assert "Settings auth.login.* saved." in page
    assert _stored(pair.source, "auth.login.") == {
        "auth.login.lifetime": "90", "auth.login.max_failures": "2"}  # no default pinned
    token = _login(pair.source).json()["jwt"]
    claims = _claims(token)
    assert claims["exp"] - claims["iat"] == 90
    outsider = "nobody@example.com"
    assert [_login(pair.source, "wrong", outsider).status_code for _ in range(3)] == [
        401, 401, 429]


def test_a_refused_value_is_named_beside_its_input_and_stores_nothing(pair: Pair) -> None:
    before = _stored(pair.target, "")
    answer, page = _post(pair.target, "/_/settings/group/auth.login", {
        "lifetime": "1d", "max_failures": "many", "lockout": "15m",
        "secret": "typed-login-secret"})
    assert answer.status_code == 422, page
    assert "typed-login-secret" not in page  # what was typed stays, but never a secret
    assert "Not saved: setting &#39;auth.login.max_failures&#39;" in page
    assert re.search(r'name="max_failures" value="many"[^>]*aria-invalid="true"', page)
    answer, page = _post(pair.target, "/_/settings/group/auth.login",
                         {"lifetime": "soon", "max_failures": "3", "lockout": "15m"})
    assert answer.status_code == 422, page
    assert "auth.login.lifetime must be a positive number of seconds" in page
    answer, _ = _post(pair.target, "/_/settings/group/auth.users",
                      {"paths": "rest/**", "methods": "GET"})
    assert answer.status_code == 422
    assert _stored(pair.target, "") == before
    with signed_in(pair.target.served) as (client, csrf):
        assert client.post("/_/settings/group/nothing", data={"csrf": csrf}
                           ).status_code == 404
        assert client.post("/_/settings/group/auth.login", data={"lifetime": "9"}
                           ).status_code == 403  # no CSRF token
    assert _stored(pair.target, "") == before


def test_identity_provider_keys_are_never_shown_and_rule_bearer_tokens(pair: Pair) -> None:
    secret, issuer = "idp-shared-secret-42", "https://idp.example.com"
    form = {"secret": secret, "public_key": "", "issuer": issuer, "audience": "",
            "roles_claim": "roles"}
    answer, page = _post(pair.source, "/_/settings/group/auth.jwt", form)
    assert answer.status_code == 303, page
    assert secret not in page
    assert "one is stored; blank keeps it" in page
    # a blank secret keeps the stored one
    assert _post(pair.source, "/_/settings/group/auth.jwt", {**form, "secret": ""}
                 )[0].status_code == 303
    now = int(time.time())
    claims = {"sub": "ann", "iss": issuer, "iat": now, "exp": now + 60}
    read = pair.source.served.request(
        "GET", "/rest/birds", headers={"authorization": "Bearer " + forge_hs256(
            claims, secret.encode())})
    assert read.status_code == 200, read.text
    other = forge_hs256({**claims, "iss": "https://other.example"}, secret.encode())
    assert pair.source.served.request(
        "GET", "/rest/birds", headers={"authorization": f"Bearer {other}"}).status_code == 401
    assert _post(pair.source, "/_/settings/group/auth.jwt",
                 {**form, "secret": "", "forget_secret": "on"})[0].status_code == 303
    assert "auth.jwt.secret" not in _stored(pair.source, "auth.jwt.")


def test_the_realtime_form_turns_the_feed_off_and_on(pair: Pair) -> None:
    def feed() -> int:
        with pair.source.served.client.stream("GET", "/realtime", headers={
                "x-apikey": pair.source.key}) as answer:
            return answer.status_code

    assert _post(pair.source, "/_/settings/group/realtime", {})[0].status_code == 303
    assert _stored(pair.source, "realtime.") == {"realtime.global": "false"}
    assert feed() == 403
    assert _post(pair.source, "/_/settings/group/realtime", {"global": "on"}
                 )[0].status_code == 303
    assert feed() == 200


def test_a_listed_backup_is_restored_into_an_empty_database_only(pair: Pair) -> None:
    answer, _ = _post(pair.source, "/_/data/backups", {}, page="/_/data")
    assert answer.status_code == 303
    [written] = sorted(pair.backups.glob("docbase-*.tar.gz"))[-1:]
    restore = f"/_/data/backups/{written.name}/restore"
    with signed_in(pair.target.served) as (client, _):
        assert f'action="{restore}"' in client.get("/_/data").text
    answer, page = _post(pair.target, restore, {"confirm": "nope"}, page="/_/data")
    assert answer.status_code == 400, page
    assert "to confirm the restore. Nothing was restored." in page
    for name in ("..%2Fsource.toml", "other-1.tar.gz"):
        answer, page = _post(pair.target, f"/_/data/backups/{name}/restore",
                             {"confirm": "docbase"})
        assert answer.status_code == 404, page
    answer, page = _post(pair.source, restore, {"confirm": "docbase"}, page="/_/data")
    assert answer.status_code == 409, page
    assert "is not empty (it holds birds)" in page
    assert pair.target.api("GET", "/rest/birds").json() == []
    answer, page = _post(pair.target, restore, {"confirm": "docbase"}, page="/_/data")
    assert answer.status_code == 303, page
    assert "Restored the archive of database &#39;docbase&#39; into &#39;docbase&#39;" in page
    birds = pair.target.api("GET", "/rest/birds", params={"sort": "name"}).json()
    assert [(b["name"], b["wingspan"]) for b in birds] == [("kite", 160), ("wren", 15)]


def test_the_limits_form_lowers_a_limit_for_rest_at_once_never_raises_one(pair: Pair) -> None:
    source = pair.source
    with signed_in(source.served) as (client, _):
        page = client.get("/_/settings").text
    # the server's value is the box's placeholder: blank keeps it
    assert re.search(r'id="setting-limits.max_page" name="max_page" value="" '
                     r'placeholder="50"', page)
    assert "(blank: the server's, 50)" in page
    assert "Largest max/$max a list read may ask for" in page  # Limits' own docs
    answer, page = _post(source, "/_/settings/group/limits", {"max_page": "60"})
    assert answer.status_code == 422, page
    assert ("Not saved: setting &#39;limits.max_page&#39;: 60 is above this server&#39;s "
            "limit (50); a database may only lower its limits") in page
    assert re.search(r'name="max_page" value="60"[^>]*aria-invalid="true"', page)
    assert _stored(source, "limits.") == {}
    try:
        answer, page = _post(source, "/_/settings/group/limits",
                             {"max_page": "20", "max_bulk": ""})
        assert answer.status_code == 303, page
        assert "Settings limits.* saved." in page
        assert _stored(source, "limits.") == {"limits.max_page": "20"}  # blank: not pinned
        assert re.search(r"<code>limits.max_page</code></td><td>20 \(this database; "
                         r"the server&#39;s: 50\)</td>", page)
        assert source.api("GET", "/rest/birds", params={"max": 21}).status_code == 400
        assert source.api("GET", "/rest/birds", params={"max": 20}).status_code == 200
        # another process (the command line) lowers it again: the server follows
        source.cli("settings", "set", "limits.max_page", "5")
        deadline = time.monotonic() + 10
        while source.api("GET", "/rest/birds", params={"max": 6}).status_code != 400:
            assert time.monotonic() < deadline, "the server kept limits.max_page 20"
            time.sleep(0.1)
    finally:
        source.cli("settings", "unset", "limits.max_page")
    deadline = time.monotonic() + 10
    while source.api("GET", "/rest/birds", params={"max": 50}).status_code != 200:
        assert time.monotonic() < deadline, "the server's limit did not come back"
        time.sleep(0.1)
    assert source.api("GET", "/rest/birds", params={"max": 51}).status_code == 400


def test_the_backups_form_sets_this_database_s_schedule_and_count(pair: Pair) -> None:
    source = pair.source
    with signed_in(source.served) as (client, _):
        page = client.get("/_/settings").text
    assert re.search(r'id="setting-backups.keep" name="keep" value="" placeholder="3"', page)
    answer, page = _post(source, "/_/settings/group/backups",
                         {"schedule": "every night", "keep": "2"})
    assert answer.status_code == 422, page
    assert "Not saved: setting &#39;backups.schedule&#39;" in page
    assert _stored(source, "backups.") == {}
    try:
        answer, page = _post(source, "/_/settings/group/backups",
                             {"schedule": "30 4 * * *", "keep": "2"})
        assert answer.status_code == 303, page
        assert _stored(source, "backups.") == {"backups.schedule": '"30 4 * * *"',
                                               "backups.keep": "2"}
        for _ in range(3):  # Back up now keeps the database's count, not the server's 3
            assert _post(source, "/_/data/backups", {}, page="/_/data")[0].status_code == 303
        assert len(list(pair.backups.glob("docbase-*.tar.gz"))) == 2
    finally:
        source.cli("settings", "unset", "backups")
