"""Every console route refuses a request without a session, or without the CSRF token.

The routes are read from the console's router itself, so a route added later is
covered without editing this file. Only the sign-in page and the static assets (a
stylesheet and a script, no data) answer without a session.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import httpx
import pytest

from docbase.http.console import console_router
from docbase.http.console.rendering import CONTENT_SECURITY_POLICY
from tests.console_browser import ADMIN, PASSWORD
from tests.test_serve_harness import Served, run_cli, serving

PUBLIC = {"/_/signin", "/_/static/{name:str}", "/_/{unknown:path}"}
"""Routes that answer without a session (the sign-in POST has its own CSRF check; an
unknown page answers 404)."""
SAMPLES = {"target": "people/_new", "name": "console.css", "action": "create",
           "group": "realtime", "kind": "image",
           "collection": "people",
           "db_name": "docbase"}


def console_routes() -> list[tuple[str, str]]:
    """Every (method, path) of the console, its path parameters filled in."""
    found = []
    for route in console_router().routes:
        for method in sorted(route.methods - {"OPTIONS", "HEAD"}):
            if route.path.replace("/db/{db_name:str}", "") in PUBLIC:
                continue
            path = re.sub(r"\{(\w+):\w+\}", lambda m: SAMPLES[m.group(1)], route.path)
            found.append((method, path))
    return found


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    cwd = tmp_path_factory.mktemp("console-security")
    with serving(cwd) as server:
        run_cli(cwd, "users", "create", "--email", ADMIN, "--password", PASSWORD, "--admin")
        yield server


@contextlib.contextmanager
def signed_in(served: Served) -> Iterator[tuple[httpx.Client, str]]:
    """A client holding a session cookie, and the session's CSRF token."""
    with httpx.Client(base_url=served.url, verify=served.ssl_context(), timeout=10) as client:
        yield client, _sign_in(client)


def _sign_in(client: httpx.Client) -> str:
    form = client.get("/_/signin")
    token = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert token is not None, form.text
    answer = client.post("/_/signin", data={"csrf": token.group(1), "email": ADMIN,
                                            "password": PASSWORD})
    assert answer.status_code == 303, answer.text
    overview = client.get("/_/")
    csrf = re.search(r'name="csrf" value="([^"]+)"', overview.text)
    assert csrf is not None, overview.text
    return csrf.group(1)


def test_the_banner_names_the_console_and_how_to_create_its_first_administrator(
        served: Served) -> None:
    output = served.output()
    assert f"console of 'docbase': {served.url}/_/" in output
    assert "docbase users create --email you@example.com --admin" in output


def test_every_console_route_without_a_session_redirects_to_sign_in_or_answers_401(
        served: Served) -> None:
    routes = console_routes()
    assert len(routes) >= 10
    for method, path in routes:
        for headers in ({}, {"x-apikey": served.admin_key},
                        {"cookie": "docbase_console=forged"}):
            answer = served.client.request(method, path, headers=headers,
                                           data={"csrf": "x", "document": "{}"})
            prefix = path.split("/_")[0]
            if answer.status_code == 303:
                location = answer.headers["location"]
                assert location.split("?")[0] == f"{prefix}/_/signin", (method, path)
            else:
                assert answer.status_code == 401, (method, path, answer.status_code)
    assert served.request("GET", "/rest/people", key=served.admin_key).json() == []


def test_every_state_changing_console_route_refuses_a_request_without_the_csrf_token(
        served: Served) -> None:
    with signed_in(served) as (client, csrf):
        posts = [path for method, path in console_routes()
                 if method == "POST" and path.startswith("/_/")]  # where the cookie goes
        assert len(posts) >= 5
        for path in posts:
            wrong = csrf[:-1] + ("y" if csrf.endswith("x") else "x")  # never the token
            for data in ({"document": "{}"}, {"document": "{}", "csrf": wrong}):
                answer = client.post(path, data=data)
                assert answer.status_code == 403, (path, answer.status_code, answer.text)
        assert served.request("GET", "/rest/people", key=served.admin_key).json() == []
        assert client.get("/_/").status_code == 200  # still signed in: nothing signed out
        created = client.post("/_/c/people/_new", data={"document": '{"a": 1}', "csrf": csrf})
        assert created.status_code == 303, created.text
    forged = served.client.post("/_/signin", data={"csrf": "guess", "email": ADMIN,
                                                    "password": PASSWORD})
    assert forged.status_code == 403
    assert "docbase_console=" not in forged.headers.get("set-cookie", "")


def test_console_answers_carry_the_content_security_policy(served: Served) -> None:
    with signed_in(served) as (client, _):
        for path in ("/_/signin", "/_/", "/_/keys", "/_/c/people", "/_/static/console.js"):
            headers = client.get(path).headers
            assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
            assert headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert "unsafe" not in CONTENT_SECURITY_POLICY


def test_a_console_session_is_refused_on_the_api(served: Served) -> None:
    with signed_in(served) as (client, _):
        token = client.cookies.get("docbase_console")
        assert token
        for path in ("/rest/people", "/auth/userinfo", "/realtime"):
            answer = served.client.get(path, headers={"cookie": f"docbase_console={token}"})
            assert answer.status_code == 401, (path, answer.status_code)



def test_the_users_page_shows_and_edits_roles(served: Served) -> None:
    with signed_in(served) as (client, csrf):
        created = client.post("/_/users/create", data={
            "csrf": csrf, "email": "ed@example.com", "password": "long enough",
            "roles": "editor, hr"})
        assert created.status_code == 303, created.text
        page = client.get("/_/users").text
        assert 'value="editor,hr"' in page
        forged = client.post("/_/users/roles", data={"email": "ed@example.com",
                                                     "roles": "admin"})
        assert forged.status_code == 403
        changed = client.post("/_/users/roles", data={"csrf": csrf, "email": "ed@example.com",
                                                      "roles": "viewer"})
        assert changed.status_code == 303, changed.text
        refused = client.post("/_/users/roles", data={"csrf": csrf, "email": "ed@example.com",
                                                      "roles": "@owner"})
        assert refused.status_code == 400
        assert "role" in refused.text
    login = served.request("POST", "/auth/login", json={"email": "ed@example.com",
                                                        "password": "long enough"})
    info = served.request("GET", "/auth/userinfo",
                          headers={"Authorization": f"Bearer {login.json()['jwt']}"})
    assert info.json()["roles"] == ["viewer"]


def test_a_new_password_or_a_lost_admin_flag_ends_open_console_sessions(
        served: Served) -> None:
    """Issue 30: a changed password, or a lost and regained admin flag, left sessions open."""
    other, password = "bo@example.com", "bo's long password"
    # (signed in again with the old password below: the flag change left it as it was)
    run_cli(served.cwd, "users", "create", "--email", other, "--password", password,
            "--admin")
    def bo_signs_in(bo: httpx.Client) -> None:
        form = bo.get("/_/signin")
        token = re.search(r'name="csrf" value="([^"]+)"', form.text)
        assert token is not None
        assert bo.post("/_/signin", data={"csrf": token.group(1), "email": other,
                                          "password": password}).status_code == 303
        assert bo.get("/_/users").status_code == 200

    with (httpx.Client(base_url=served.url, verify=served.ssl_context(), timeout=10) as bo,
          signed_in(served) as (client, csrf)):
        bo_signs_in(bo)
        client.post("/_/users/admin", data={"csrf": csrf, "email": other})  # revoke
        client.post("/_/users/admin", data={"csrf": csrf, "email": other, "admin": "on"})
        assert bo.get("/_/users").status_code == 303  # sent to sign in again
        bo_signs_in(bo)
        changed = client.post("/_/users/password", data={"csrf": csrf, "email": other,
                                                         "password": "a new long one"})
        assert changed.status_code == 303
        assert bo.get("/_/users").status_code == 303
        assert client.get("/_/users").status_code == 200  # the changer's own: untouched
