"""Signing tokens for an application (``POST /auth/jwt``) and reading durations.

The key is a stored setting named by its dotted path (``google.private_key``): a
string used as an HMAC secret, or a PEM private key (RSA or EC). The algorithm is the
request's, else the key's own: HS256 for a secret, RS256 for RSA, ES256/ES384 for an
EC key on P-256/P-384. A key that does not fit the algorithm is refused here, before
pyjwt sees it; in particular a PEM key is never used as an HMAC secret.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import time
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from docbase.core.errors import InvalidQuery
from docbase.core.plugins import lazy_module
from docbase.core.settings import DatabaseSettings

if TYPE_CHECKING:
    import jwt
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
else:  # imported on first use: most processes never sign a request
    jwt = lazy_module("jwt")
    ec = lazy_module("cryptography.hazmat.primitives.asymmetric.ec")
    rsa = lazy_module("cryptography.hazmat.primitives.asymmetric.rsa")
    serialization = lazy_module("cryptography.hazmat.primitives.serialization")

HMAC_ALGORITHMS = ("HS256", "HS384", "HS512")
RSA_ALGORITHMS = ("RS256", "RS384", "RS512")
EC_ALGORITHMS = {"ES256": "secp256r1", "ES384": "secp384r1"}
"""The EC algorithms and the curve each needs."""
ALGORITHMS = (*HMAC_ALGORITHMS, *RSA_ALGORITHMS, *EC_ALGORITHMS)
"""Every algorithm ``POST /auth/jwt`` signs with."""

_DURATION = re.compile(r"\s*(\d+)\s*([a-z]*)\s*")
_UNITS = {"": 1, "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
          "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
          "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
          "d": 86400, "day": 86400, "days": 86400, "w": 604800, "week": 604800,
          "weeks": 604800}


def parse_duration(value: object, name: str) -> int:
    """Return seconds from ``3600``, ``"3600"``, ``"30m"``, ``"1h"``, ``"1d"`` or ``"2 days"``.

    Raises:
        InvalidQuery: anything else, or not a positive duration; ``name`` is named.

    """
    seconds = None
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    elif isinstance(value, str) and (match := _DURATION.fullmatch(value.lower())):
        unit = _UNITS.get(match.group(2))
        seconds = None if unit is None else int(match.group(1)) * unit
    if seconds is None or seconds <= 0:
        raise InvalidQuery(f"{name} must be a positive number of seconds or a duration "
                           f"like \"30m\", \"1h\" or \"1d\", not {value!r}")
    return seconds


def signing_key(settings: DatabaseSettings, path: str, algorithm: str | None) -> tuple[Any, str]:
    """Return the key stored at ``path`` and the algorithm to sign with.

    Raises:
        InvalidQuery: nothing is stored at ``path``, it is not a key, the algorithm is
            unknown, or the key does not fit it.

    """
    if algorithm is not None and algorithm not in ALGORITHMS:
        raise InvalidQuery(f"algorithm {algorithm!r} is not supported; use one of "
                           f"{', '.join(ALGORITHMS)}")
    try:
        value = settings.lookup(path)
    except KeyError:
        raise InvalidQuery(f"no secret is stored at {path!r} (docbase settings set)") from None
    if not isinstance(value, str) or not value:
        raise InvalidQuery(f"the setting at {path!r} holds no secret or key")
    if "-----BEGIN" not in value:
        if algorithm not in (None, *HMAC_ALGORITHMS):
            raise InvalidQuery(f"the secret at {path!r} is not a PEM private key; "
                               f"{algorithm} needs one (an HMAC secret signs HS256/384/512)")
        return value.encode(), algorithm or "HS256"
    try:
        key = serialization.load_pem_private_key(value.encode(), password=None)
    except (ValueError, TypeError) as exc:
        raise InvalidQuery(f"the setting at {path!r} is not an unencrypted PEM private "
                           f"key: {exc}") from None
    if isinstance(key, rsa.RSAPrivateKey):
        if algorithm not in (None, *RSA_ALGORITHMS):
            raise InvalidQuery(f"the key at {path!r} is an RSA key; it signs RS256/384/512, "
                               f"not {algorithm}")
        return key, algorithm or "RS256"
    if isinstance(key, ec.EllipticCurvePrivateKey):
        fitting = [a for a, curve in EC_ALGORITHMS.items() if curve == key.curve.name]
        if not fitting:
            raise InvalidQuery(f"the key at {path!r} is on curve {key.curve.name}; "
                               "ES256 needs P-256 and ES384 needs P-384")
        if algorithm not in (None, fitting[0]):
            raise InvalidQuery(f"the key at {path!r} is an EC key on {key.curve.name}; "
                               f"it signs {fitting[0]}, not {algorithm}")
        return key, fitting[0]
    raise InvalidQuery(f"the key at {path!r} is neither an RSA nor an EC private key")


@contextlib.contextmanager
def short_hmac_keys_allowed() -> Iterator[None]:
    """Let pyjwt sign and verify with an HMAC secret shorter than RFC 7518 recommends.

    The secrets are the operator's (or an identity provider's) choice; docs/auth.md
    recommends at least 64 random bytes. pyjwt warns about shorter ones, which would
    otherwise become an error wherever warnings are errors.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The HMAC key is .* bytes long")
        yield


def _string(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise InvalidQuery(f"{name} must be a string")
    return value


def _check_claims(payload: dict[str, Any]) -> None:
    for claim in ("exp", "nbf", "iat"):
        value = payload.get(claim)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise InvalidQuery(f"payload claim {claim!r} must be a number (seconds since 1970)")
    for claim in ("iss", "sub", "jti"):
        if claim in payload and not isinstance(payload[claim], str):
            raise InvalidQuery(f"payload claim {claim!r} must be a string")
    aud = payload.get("aud")
    if aud is not None and not (isinstance(aud, str) or (
            isinstance(aud, list) and all(isinstance(a, str) for a in aud))):
        raise InvalidQuery("payload claim 'aud' must be a string or an array of strings")


def sign_request(settings: DatabaseSettings, body: dict[str, Any]) -> str:
    """Sign the token a ``POST /auth/jwt`` body describes; return it.

    ``iat`` and a fresh random ``jti`` are always set; ``expiresIn``, ``issuer``,
    ``audience`` and ``subject`` set ``exp``, ``iss``, ``aud`` and ``sub`` over the
    payload's own.

    Raises:
        InvalidQuery: a missing or unknown secret path, a key that does not fit the
            algorithm, or a malformed payload or option; the message names it.

    """
    unknown = set(body) - {"secret", "payload", "algorithm", "expiresIn", "issuer",
                           "audience", "subject"}
    if unknown:
        raise InvalidQuery(f"unknown field {sorted(unknown)[0]!r} in the request body")
    path = _string(body, "secret")
    if not path:
        raise InvalidQuery("secret is required: the dotted path of a stored setting")
    payload = body.get("payload", {})
    if not isinstance(payload, dict):
        raise InvalidQuery("payload must be a JSON object")
    key, algorithm = signing_key(settings, path, _string(body, "algorithm"))
    claims = dict(payload)
    now = int(time.time())
    claims.update(iat=now, jti=secrets.token_urlsafe(18))
    if body.get("expiresIn") is not None:
        claims["exp"] = now + parse_duration(body["expiresIn"], "expiresIn")
    for option, claim in (("issuer", "iss"), ("subject", "sub")):
        if (value := _string(body, option)) is not None:
            claims[claim] = value
    if body.get("audience") is not None:
        claims["aud"] = body["audience"]
    _check_claims(claims)
    try:
        with short_hmac_keys_allowed():
            return jwt.encode(claims, key, algorithm=algorithm)
    except (jwt.PyJWTError, TypeError, ValueError) as exc:
        raise InvalidQuery(f"the token could not be signed: {exc}") from None
