"""Bearer tokens: docbase's own login tokens, an identity provider's, and their principal.

**Own tokens** (``POST /auth/login``) are HS256, signed with the database's
``auth.login.secret`` (32 random bytes, generated and stored on first use), with
``iss`` ``"docbase"``, ``aud`` ``"docbase:<database name>"``, ``sub`` the user's id,
``email``, ``iat``, ``exp`` (``auth.login.lifetime``), a random ``jti`` and the
user's ``epoch``. Each database has its own secret and audience, so a token of one
database is refused by every other. The user is looked up on every request through
the auth cache (trusted for at most :data:`~docbase.core.auth.cache.CACHE_SECONDS`
in other processes, invalidated at once in the process that changed it): a token of
a deleted user, or one made before the user's password changed or admin flag was
taken away (another ``epoch``), is refused, and the token's roles are the user's
roles as stored now, never baked into the token.

**External tokens** (any other ``iss``) are verified with ``auth.jwt.secret`` for
HS256/384/512 or ``auth.jwt.public_key`` for RS*/PS*/ES*, the candidate algorithms
fixed by which key is configured, never by the token alone: an RS public key is never
tried as an HMAC secret, and ``alg: none`` is never accepted. ``auth.jwt.issuer`` and
``auth.jwt.audience`` are required when set. The user is the ``email`` claim, else
``sub``; the roles are the claim named by ``auth.jwt.roles_claim``
(:func:`~docbase.core.auth.principal.claimed_roles`).

Every token must carry ``exp``; an expired, not-yet-valid (``nbf``), badly signed,
malformed or revoked (:mod:`docbase.core.auth.revocation`) one raises
:class:`~docbase.core.errors.InvalidToken`. A token holder acts with the scope of
``auth.users`` (default: GET, POST, PUT, PATCH and DELETE on ``/rest/**``) and never
has full access, so :func:`~docbase.core.auth.authorize` refuses it a delete by query.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import TYPE_CHECKING, Any

import msgspec

from docbase.core.auth.principal import Principal, claimed_roles
from docbase.core.auth.revocation import is_revoked
from docbase.core.auth.scopes import parse_scope
from docbase.core.auth.signing import HMAC_ALGORITHMS, parse_duration, short_hmac_keys_allowed
from docbase.core.auth.users import User, cached_user
from docbase.core.errors import InvalidToken
from docbase.core.plugins import lazy_module
from docbase.core.settings import DatabaseSettings

if TYPE_CHECKING:
    import jwt

    from docbase.core.system_data import SettledSystemData
else:  # imported on first use: a process serving API keys only never needs it
    jwt = lazy_module("jwt")

OWN_ISSUER = "docbase"
"""The ``iss`` of docbase's own login tokens."""
LOGIN_SECRET = "auth.login.secret"
"""The setting holding the HMAC secret of login tokens."""
ASYMMETRIC_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
                         "ES256", "ES384", "ES512")
"""What an identity provider's token may be signed with when ``auth.jwt.public_key`` is set."""
LEEWAY_SECONDS = 5
NOT_OURS = "the bearer token is invalid for this database"
"""The refusal of a token this database cannot verify."""
"""Clock skew tolerated on ``exp``, ``nbf`` and ``iat``."""


def own_audience(database: str) -> str:
    """The ``aud`` of login tokens of ``database``."""
    return f"docbase:{database}"


class Bearer(msgspec.Struct, frozen=True):
    """A verified bearer token: who it speaks for and how to revoke it."""

    email: str
    token_id: str
    """The ``jti``, else the SHA-256 of the token: what a logout revokes."""
    expires: float
    own: bool
    claims: dict[str, Any]
    user: User | None = None

    def roles(self, settings: DatabaseSettings) -> tuple[str, ...]:
        """The user's stored roles, else those of the ``auth.jwt.roles_claim`` claim."""
        if self.user is not None:
            return self.user.roles
        return claimed_roles(self.claims, settings.auth.jwt.roles_claim)

    def principal(self, settings: DatabaseSettings) -> Principal:
        """The principal of requests with this token, scoped by ``auth.users``."""
        access = settings.auth.users
        return Principal(author=self.email, kind="user", full_access=False,
                         scope=parse_scope(access.paths, access.methods, ()),
                         roles=self.roles(settings), claims=tuple(self.claims.items()))

    def info(self, settings: DatabaseSettings) -> dict[str, Any]:
        """The ``GET /auth/userinfo`` answer: the user's record, else the token's claims."""
        if self.user is not None:
            return self.user.info()
        name = self.claims.get("displayname") or self.claims.get("name") or ""
        image = self.claims.get("image") or self.claims.get("picture") or ""
        return {"email": self.email, "displayname": str(name), "image": str(image),
                "roles": list(self.roles(settings))}


async def login_secret(db: SettledSystemData) -> str:
    """The database's login-token secret, generated and stored on first use."""
    secret = (await db.settings.load()).auth.login.secret
    if secret is None:
        await db.settings.set(LOGIN_SECRET, secrets.token_urlsafe(32))
        secret = (await db.settings.load()).lookup(LOGIN_SECRET)
    return str(secret)


async def issue_login_token(db: SettledSystemData, user: User) -> str:
    """Sign a login token for ``user`` living ``auth.login.lifetime``.

    Raises:
        InvalidQuery: the stored lifetime is not a duration.

    """
    settings = await db.settings.load()
    now = int(time.time())
    lifetime = parse_duration(settings.auth.login.lifetime, "auth.login.lifetime")
    claims = {**_lasting_claims(db.name, user), "iat": now, "exp": now + lifetime,
              "jti": secrets.token_urlsafe(18)}
    return jwt.encode(claims, await login_secret(db), algorithm="HS256")


def _lasting_claims(database: str, user: User) -> dict[str, Any]:
    """The claims of every login token of ``user``, whenever it was made."""
    return {"iss": OWN_ISSUER, "aud": own_audience(database), "sub": user.id,
            "email": user.email, "epoch": user.epoch}


def login_principal(database: str, user: User, settings: DatabaseSettings) -> Principal:
    """The principal a login token of ``user`` stands for now, without making a token.

    The same :meth:`Bearer.principal` as a request with the token: the user's stored
    roles, the ``auth.users`` scope, and the token's claims for ``$user.<claim>`` (all
    but the time-bound ``iat``, ``exp`` and ``jti``). The console's "view as user"
    preview reads with it.
    """
    claims = _lasting_claims(database, user)
    return Bearer(email=user.email, token_id="", expires=0.0, own=True, claims=claims,
                  user=user).principal(settings)


def provider_principal(email: str, roles: tuple[str, ...],
                       settings: DatabaseSettings) -> Principal:
    """The principal of an identity provider's token for ``email`` claiming ``roles``.

    The same :meth:`Bearer.principal` as a request with such a token, for an email that
    is no stored user: ``roles`` stand in the ``auth.jwt.roles_claim`` claim. The
    console's "view as user" preview reads with it.
    """
    claims = {"email": email, settings.auth.jwt.roles_claim: list(roles)}
    return Bearer(email=email, token_id="", expires=0.0, own=False,
                  claims=claims).principal(settings)


def _verify(token: str, key: Any, algorithms: list[str], *, issuer: str | None,
            audience: str | None) -> dict[str, Any]:
    try:
        with short_hmac_keys_allowed():
            claims: dict[str, Any] = jwt.decode(
                token, key, algorithms=algorithms, issuer=issuer, audience=audience,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp"], "verify_aud": audience is not None})
    except jwt.ExpiredSignatureError:
        raise InvalidToken("the bearer token has expired") from None
    except jwt.ImmatureSignatureError:
        raise InvalidToken("the bearer token is not valid yet") from None
    except (jwt.PyJWTError, ValueError, TypeError):
        raise InvalidToken(NOT_OURS) from None
    return claims


def _unverified(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    try:
        return (jwt.get_unverified_header(token),
                jwt.decode(token, options={"verify_signature": False}))
    except jwt.PyJWTError:
        raise InvalidToken("the bearer token is malformed") from None


def refuse_token(token: str) -> InvalidToken:
    """What a database that can verify no token answers ``token``: malformed or invalid."""
    try:
        _unverified(token)
    except InvalidToken as malformed:
        return malformed
    return InvalidToken(NOT_OURS)


async def authenticate_token(db: SettledSystemData, token: str) -> Bearer:
    """Verify a bearer token for ``db``.

    Raises:
        InvalidToken: malformed, wrongly signed, of another issuer, audience or
            database, expired, not yet valid, of a deleted user, or revoked.

    """
    header, unverified = _unverified(token)
    settings = await db.settings.load()
    algorithm = header.get("alg")
    if unverified.get("iss") == OWN_ISSUER:
        secret = settings.auth.login.secret
        if secret is None:  # made by another process within the last second, or never
            secret = DatabaseSettings.from_tree(await db.settings.tree()).auth.login.secret
        if secret is None:  # nobody has logged in here yet: no token can be ours
            raise InvalidToken(NOT_OURS)
        claims = _verify(token, secret, ["HS256"], issuer=OWN_ISSUER,
                         audience=own_audience(db.name))
        user = await cached_user(db, str(claims.get("sub")))
        if user is None:
            raise InvalidToken("the user of this bearer token no longer exists")
        if claims.get("epoch", "") != user.epoch:
            raise InvalidToken("the bearer token was made before the user's password "
                               "changed or admin flag was taken away: log in again")
        bearer = _bearer(token, claims, user.email, own=True, user=user)
    else:
        jwt_settings = settings.auth.jwt
        if algorithm in HMAC_ALGORITHMS and jwt_settings.secret:
            key, algorithms = jwt_settings.secret.encode(), list(HMAC_ALGORITHMS)
        elif algorithm in ASYMMETRIC_ALGORITHMS and jwt_settings.public_key:
            key, algorithms = jwt_settings.public_key.encode(), list(ASYMMETRIC_ALGORITHMS)
        else:
            raise InvalidToken(NOT_OURS)
        claims = _verify(token, key, algorithms, issuer=jwt_settings.issuer,
                         audience=jwt_settings.audience)
        email = claims.get("email") or claims.get("sub")
        if not isinstance(email, str) or not email:
            raise InvalidToken("the bearer token names no user (no email or sub claim)")
        bearer = _bearer(token, claims, email, own=False, user=None)
    if await is_revoked(db, bearer.token_id):
        raise InvalidToken("the bearer token has been revoked (logged out)")
    return bearer


def _bearer(token: str, claims: dict[str, Any], email: str, *, own: bool,
            user: User | None) -> Bearer:
    jti = claims.get("jti")
    token_id = jti if isinstance(jti, str) and jti else hashlib.sha256(
        token.encode()).hexdigest()
    return Bearer(email=email, token_id=token_id, expires=float(claims["exp"]), own=own,
                  claims=claims, user=user)
