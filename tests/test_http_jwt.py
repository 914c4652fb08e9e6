"""/auth over real HTTPS on every backend: signing, login, userinfo, logout, access rules."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import argon2
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from docbase import Database
from docbase.adapters.memory import MemoryBlobStore, MemoryDocumentStore
from docbase.core import auth
from docbase.core.auth import passwords
from docbase.core.auth.users import find_user
from docbase.core.errors import ConfigurationError, InvalidQuery
from docbase.http.testing import LiveDocbase, live_docbase

EMAIL, PASSWORD = "Ann@Example.com", "correct horse battery"
APP_SECRET = "a shared secret of the application, long enough for HS512 tokens"
IDP_SECRET = "the shared secret of the identity provider, long enough for HS384"


def private_pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def public_pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> str:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
P256_KEY = ec.generate_private_key(ec.SECP256R1())
P384_KEY = ec.generate_private_key(ec.SECP384R1())


@pytest.fixture
async def live(stores: Any, tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    """"main" on the backend under test (with one user), "other" in memory."""
    async with MemoryDocumentStore() as other_store:
        databases = {"main": Database(*stores, name="main"),
                     "other": Database(other_store, MemoryBlobStore(), name="other")}
        async with live_docbase(databases, tmp_path) as running:
            yield running


@pytest.fixture
async def ann(live: LiveDocbase) -> auth.User:
    """A user of "main"."""
    return await auth.create_user(live.db, EMAIL, PASSWORD, displayname="Ann",
                                  image="https://example.com/ann.png")


async def log_in(live: LiveDocbase, email: str = "ann@example.COM",
                 password: str = PASSWORD, prefix: str = "") -> str:
    response = await live.client.post(f"{prefix}/auth/login",
                                      json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    token: str = response.json()["jwt"]
    return token


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_refused(response: Any, status: int = 401) -> None:
    assert response.status_code == status, response.text
    assert response.json()["status"] == status
    if status == 401:
        assert response.headers["www-authenticate"].startswith('Bearer realm="docbase"')


# ------------------------------------------------------------------------ POST /auth/jwt


@pytest.mark.parametrize(("given", "seconds"), [
    (90, 90), ("90", 90), ("30m", 1800), ("1h", 3600), ("1d", 86400), ("2 days", 172800),
])
def test_durations(given: object, seconds: int) -> None:
    assert auth.parse_duration(given, "expiresIn") == seconds


@pytest.mark.parametrize("given", [0, -5, True, "soon", "1y", 1.5, None])
def test_bad_durations_name_the_setting(given: object) -> None:
    with pytest.raises(InvalidQuery, match="expiresIn"):
        auth.parse_duration(given, "expiresIn")


async def test_generation_signs_with_each_algorithm(live: LiveDocbase) -> None:
    settings = live.db.settings
    await settings.set("app.secret", APP_SECRET)
    await settings.set("app.rsa", private_pem(RSA_KEY))
    await settings.set("app.p256", private_pem(P256_KEY))
    await settings.set("app.p384", private_pem(P384_KEY))
    cases = [("app.secret", a, APP_SECRET)
             for a in ("HS256", "HS384", "HS512")]
    cases += [("app.rsa", a, public_pem(RSA_KEY)) for a in ("RS256", "RS384", "RS512")]
    cases += [("app.p256", "ES256", public_pem(P256_KEY)),
              ("app.p384", "ES384", public_pem(P384_KEY))]
    seen_ids = set()
    for path, algorithm, verify_key in cases:
        before = int(time.time())
        response = await live.client.post("/auth/jwt", headers=live.auth(), json={
            "secret": path, "algorithm": algorithm, "payload": {"role": "reader"},
            "expiresIn": "1h", "issuer": "my-app", "audience": "my-api", "subject": "u1"})
        assert response.status_code == 201, (algorithm, response.text)
        token = response.json()["jwt"]
        assert jwt.get_unverified_header(token)["alg"] == algorithm
        claims = jwt.decode(token, verify_key, algorithms=[algorithm], audience="my-api",
                            issuer="my-app")
        assert claims["role"] == "reader"
        assert claims["sub"] == "u1"
        assert before <= claims["iat"] <= int(time.time())
        assert claims["exp"] == claims["iat"] + 3600
        seen_ids.add(claims["jti"])
    assert len(seen_ids) == len(cases)
    for path, algorithm in [("app.secret", "HS256"), ("app.rsa", "RS256"),
                            ("app.p256", "ES256"), ("app.p384", "ES384")]:
        response = await live.client.post("/auth/jwt", headers=live.auth(),
                                          json={"secret": path, "expiresIn": 90})
        assert response.status_code == 201, response.text
        assert jwt.get_unverified_header(response.json()["jwt"])["alg"] == algorithm


BAD_SIGNING_REQUESTS = [
    ({"secret": "no.such.secret"}, "no.such.secret"),
    ({"secret": "app.rsa", "algorithm": "HS256"}, "RSA"),
    ({"secret": "app.p256", "algorithm": "ES384"}, "ES256"),
    ({"secret": "app.secret", "algorithm": "RS256"}, "PEM"),
    ({"secret": "app.secret", "algorithm": "none"}, "none"),
    ({"secret": "app.secret", "payload": [1]}, "payload"),
    ({"secret": "app.secret", "payload": {"exp": "tomorrow"}}, "exp"),
    ({"secret": "app.secret", "expiresIn": "soon"}, "expiresIn"),
    ({"secret": "app"}, "'app'"),
    ({"payload": {}}, "secret"),
    ({"secret": "app.secret", "subject": 7}, "subject"),
]


async def test_generation_errors_are_400_naming_the_problem(live: LiveDocbase) -> None:
    await live.db.settings.set("app.secret", "s3cret")
    await live.db.settings.set("app.rsa", private_pem(RSA_KEY))
    await live.db.settings.set("app.p256", private_pem(P256_KEY))
    for body, named in BAD_SIGNING_REQUESTS:
        response = await live.client.post("/auth/jwt", headers=live.auth(), json=body)
        assert response.status_code == 400, (body, response.text)
        assert named in response.json()["message"], (body, response.text)
        assert "s3cret" not in response.text


@pytest.mark.usefixtures("ann")
async def test_generation_needs_a_full_access_key(live: LiveDocbase) -> None:
    await live.db.settings.set("app.secret", "s3cret")
    body = {"secret": "app.secret"}
    assert_refused(await live.client.post("/auth/jwt", json=body), 401)
    scoped = await live.key(paths=["/**"], methods=["POST"])
    assert_refused(await live.client.post("/auth/jwt", json=body,
                                          headers={"x-apikey": scoped}), 403)
    token = await log_in(live)
    assert_refused(await live.client.post("/auth/jwt", json=body, headers=bearer(token)), 403)


# --------------------------------------------------------------- login, userinfo, writes


@pytest.mark.usefixtures("ann")
async def test_login_userinfo_and_writes_stamped_with_the_email(live: LiveDocbase) -> None:
    token = await log_in(live)
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == 86400  # auth.login.lifetime defaults to 1 day
    assert claims["aud"] == "docbase:main"
    info = await live.client.get("/auth/userinfo", headers=bearer(token))
    assert info.json() == {"email": EMAIL, "displayname": "Ann",
                           "image": "https://example.com/ann.png", "roles": []}
    created = await live.client.post("/rest/notes", json={"text": "hi"}, headers=bearer(token))
    assert created.status_code == 201, created.text
    assert created.json()["_createdby"] == EMAIL
    note = created.json()["_id"]
    changed = await live.client.patch(f"/rest/notes/{note}", json={"text": "ho"},
                                      params={"jwt": token})
    assert changed.json()["_changedby"] == EMAIL
    listed = await live.client.get("/rest/notes", params={"jwt": token})
    assert [n["text"] for n in listed.json()] == ["ho"]


@pytest.mark.usefixtures("ann")
async def test_login_lifetime_is_a_setting(live: LiveDocbase) -> None:
    await live.db.settings.set("auth.login.lifetime", "30m")
    claims = jwt.decode(await log_in(live), options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == 1800


@pytest.mark.usefixtures("ann")
async def test_wrong_password_and_unknown_user_answer_alike(
        live: LiveDocbase, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both answers are the same, after the same work: an unknown email also has an argon2
    hash checked (a dummy one, of the same parameters), so its refusal comes no sooner."""
    checked: list[str] = []
    verify = argon2.PasswordHasher.verify

    def counted(hasher: argon2.PasswordHasher, stored: str, password: str) -> bool:
        checked.append(stored)
        return verify(hasher, stored, password)

    monkeypatch.setattr(argon2.PasswordHasher, "verify", counted)
    answers: dict[str, str] = {}
    for email in (EMAIL, "nobody@example.com"):
        response = await live.client.post("/auth/login",
                                          json={"email": email, "password": "wrong password"})
        assert_refused(response)
        answers[email] = response.text
    assert len(set(answers.values())) == 1
    found = await find_user(live.db, EMAIL)
    assert found is not None
    assert checked == [found[1], passwords.dummy_hash()]  # one check each, of its own hash
    assert (argon2.extract_parameters(checked[0])
            == argon2.extract_parameters(checked[1]))  # so each costs the same


@pytest.mark.usefixtures("ann")
async def test_repeated_failures_are_refused_with_429(live: LiveDocbase) -> None:
    await live.db.settings.set("auth.login.max_failures", 3)
    wrong = {"email": EMAIL, "password": "not the password"}
    for _ in range(3):
        assert_refused(await live.client.post("/auth/login", json=wrong))
    refused = await live.client.post("/auth/login", json={"email": EMAIL, "password": PASSWORD})
    assert_refused(refused, 429)
    assert refused.json()["name"] == "TooManyRequests"
    assert 800 < int(refused.headers["retry-after"]) <= 900  # auth.login.lockout: 15 min
    await live.client.post("/auth/login", json={"email": "x@example.com", "password": "12345678"})
    await live.db.settings.set("auth.login.lockout", 1)
    await asyncio.sleep(1.1)
    await log_in(live)  # the lockout has passed, and success clears the count
    assert_refused(await live.client.post("/auth/login", json=wrong))


async def test_login_body_errors_are_400(live: LiveDocbase) -> None:
    for body in ({}, {"email": EMAIL}, {"email": 1, "password": PASSWORD}):
        response = await live.client.post("/auth/login", json=body)
        assert response.status_code == 400, response.text


# ------------------------------------------------------------------------------ logout


@pytest.mark.usefixtures("ann")
async def test_logout_refuses_the_token_afterwards(live: LiveDocbase) -> None:
    token, other = await log_in(live), await log_in(live)
    out = await live.client.post("/auth/logout", headers=bearer(token))
    assert (out.status_code, out.json()) == (200, {"result": "ok"})
    assert_refused(await live.client.get("/rest/notes", headers=bearer(token)))
    assert_refused(await live.client.get("/auth/userinfo", headers=bearer(token)))
    assert_refused(await live.client.post("/auth/logout", headers=bearer(token)))
    assert (await live.client.get("/rest/notes", headers=bearer(other))).status_code == 200
    assert_refused(await live.client.get("/auth/userinfo"))
    assert_refused(await live.client.post("/auth/logout", headers=live.auth()), 401)


@pytest.mark.usefixtures("ann")
async def test_deleted_user_token_is_refused(live: LiveDocbase) -> None:
    token = await log_in(live)
    await auth.delete_user(live.db, EMAIL)
    assert_refused(await live.client.get("/rest/notes", headers=bearer(token)))


# ---------------------------------------------------------------------- hostile tokens


def forge_hs256(payload: dict[str, Any], secret: bytes) -> str:
    """An HS256 token signed with any bytes (pyjwt refuses a PEM key as HMAC secret)."""
    import base64
    import hashlib
    import hmac
    import json

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps(payload).encode())
    signature = hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(signature)}"


@pytest.mark.usefixtures("ann")
async def test_hostile_tokens_are_refused(live: LiveDocbase) -> None:
    await live.db.settings.set("auth.jwt.public_key", public_pem(RSA_KEY))
    await live.db.settings.set("auth.jwt.issuer", "https://idp.example.com")
    await live.db.settings.set("auth.jwt.audience", "docbase-app")
    genuine = await log_in(live)
    own = jwt.decode(genuine, options={"verify_signature": False})
    secret = (await live.db.settings.load()).auth.login.secret
    assert secret is not None
    now = int(time.time())
    idp = {"iss": "https://idp.example.com", "aud": "docbase-app", "email": "bo@example.com",
           "iat": now, "exp": now + 600}
    other_db_user = await auth.create_user(live.server.database("other"), EMAIL, PASSWORD)
    assert other_db_user.email == EMAIL
    hostile = {
        "expired": jwt.encode({**own, "exp": now - 60}, secret, "HS256"),
        "not yet valid": jwt.encode({**own, "nbf": now + 600}, secret, "HS256"),
        "wrong signature": jwt.encode(own, "y" * 64, "HS256"),
        "alg none": jwt.encode(own, "", "none"),
        "alg none, idp claims": jwt.encode(idp, "", "none"),
        "HS/RS confusion": forge_hs256(idp, public_pem(RSA_KEY).encode()),
        "wrong issuer": jwt.encode({**idp, "iss": "https://evil.example"}, RSA_KEY, "RS256"),
        "wrong audience": jwt.encode({**idp, "aud": "someone-else"}, RSA_KEY, "RS256"),
        "no expiry": jwt.encode({k: v for k, v in idp.items() if k != "exp"}, RSA_KEY,
                                "RS256"),
        "idp token with a foreign key": jwt.encode(
            idp, rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256"),
        "another database": await log_in(live, prefix="/db/other"),
        "tampered payload": genuine.split(".")[0] + "." + jwt.encode(
            {**own, "email": "boss@example.com"}, "x" * 64, "HS256").split(".")[1] + "."
            + genuine.split(".")[2],
        "malformed": "not-a-token",
        "malformed parts": "a.b.c",
    }
    accepted = jwt.encode(idp, RSA_KEY, "RS256")
    ok = await live.client.post("/rest/notes", json={}, headers=bearer(accepted))
    assert ok.status_code == 201, ok.text
    assert ok.json()["_createdby"] == "bo@example.com"
    let_in = []
    for name, token in hostile.items():
        for response in (await live.client.get("/rest/notes", headers=bearer(token)),
                         await live.client.get("/auth/userinfo", params={"jwt": token})):
            if response.status_code != 401 or "invalid_token" not in response.headers.get(
                    "www-authenticate", ""):
                let_in.append((name, response.status_code, response.text))
    assert let_in == []


async def test_external_hs_token_is_verified_with_the_secret_setting(live: LiveDocbase) -> None:
    await live.db.settings.set("auth.jwt.secret", IDP_SECRET)
    now = int(time.time())
    claims = {"sub": "cy@example.com", "exp": now + 60, "name": "Cy", "jti": "j-1"}
    token = jwt.encode(claims, IDP_SECRET, "HS384")
    info = await live.client.get("/auth/userinfo", headers=bearer(token))
    assert info.json() == {"email": "cy@example.com", "displayname": "Cy", "image": "",
                           "roles": []}
    assert (await live.client.post("/auth/logout", headers=bearer(token))).status_code == 200
    assert_refused(await live.client.get("/auth/userinfo", headers=bearer(token)))


# ------------------------------------------------------------------------ access rules


@pytest.mark.usefixtures("ann")
async def test_token_default_access_is_read_and_write_on_rest(live: LiveDocbase) -> None:
    token = await log_in(live)
    created = await live.client.post("/rest/notes", json=[{"n": 1}, {"n": 2}],
                                     headers=bearer(token))
    ids = [d["_id"] for d in created.json()]
    by_query = await live.client.delete("/rest/notes/*", params={"q": "{}"},
                                        headers=bearer(token))
    assert_refused(by_query, 403)
    assert (await live.client.delete(f"/rest/notes/{ids[0]}",
                                     headers=bearer(token))).json() == {"result": [ids[0]]}
    assert_refused(await live.client.get("/rest/_settings", headers=bearer(token)), 400)


@pytest.mark.usefixtures("ann")
async def test_token_access_rules_are_settings_unlike_a_scoped_key(live: LiveDocbase) -> None:
    await live.db.settings.set("auth.users.paths", ["/rest/notes/**"])
    await live.db.settings.set("auth.users.methods", ["GET"])
    token = await log_in(live)
    key = await live.key(paths=["/rest/orders/**"], methods=["GET", "POST"])
    assert (await live.client.get("/rest/notes", headers=bearer(token))).status_code == 200
    assert_refused(await live.client.post("/rest/notes", json={}, headers=bearer(token)), 403)
    assert_refused(await live.client.get("/rest/orders", headers=bearer(token)), 403)
    assert (await live.client.post("/rest/orders", json={},
                                   headers={"x-apikey": key})).status_code == 201
    assert_refused(await live.client.get("/rest/notes", headers={"x-apikey": key}), 403)
    with pytest.raises(ConfigurationError, match=r"auth\.users\.paths"):
        await live.db.settings.set("auth.users.paths", ["rest/**"])


@pytest.mark.usefixtures("ann")
async def test_settings_and_system_collections_never_leak(live: LiveDocbase) -> None:
    await live.db.settings.set("google.private_key", "TOP-SECRET-VALUE")
    token = await log_in(live)
    await live.client.post("/auth/logout", headers=bearer(await log_in(live)))
    secret = (await live.db.settings.load()).auth.login.secret
    assert secret is not None
    responses = []
    for credential in (live.auth(), bearer(token)):
        for name in ("_settings", "_users", "_revoked_tokens", "_login_failures", "_apikeys"):
            for path in (f"/rest/{name}", f"/db/main/rest/{name}", f"/rest/{name}/_meta"):
                response = await live.client.get(path, headers=credential)
                assert response.status_code in (400, 403), (path, response.text)
                responses.append(response)
        responses.append(await live.client.get("/rest/_meta", headers=credential))
        responses.append(await live.client.get("/auth/userinfo", headers=bearer(token)))
    for response in responses:
        for leaked in ("TOP-SECRET-VALUE", secret, "argon2", "_users", "_settings"):
            if response.request.url.path.endswith("_meta") and response.status_code == 200:
                assert leaked not in response.text
        assert "TOP-SECRET-VALUE" not in response.text
        assert secret not in response.text
        assert "$argon2" not in response.text
