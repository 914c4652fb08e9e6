"""Authentication and authorization: principals, scopes, API keys, users, tokens, the decision."""

from __future__ import annotations

from docbase.core.auth.authentication import (
    LAST_USED_SECONDS,
    UNKNOWN_KEY,
    authenticate,
    authenticate_key,
    keys_for_origin,
)
from docbase.core.auth.cache import CACHE_SECONDS, Namespace, SystemCache
from docbase.core.auth.decision import Action, authorize, authorize_origin
from docbase.core.auth.keys import (
    KEYS_COLLECTION,
    ApiKey,
    create_key,
    ensure_key,
    hash_key,
    list_keys,
    revoke_key,
)
from docbase.core.auth.login import login, logout
from docbase.core.auth.principal import SYSTEM, Principal
from docbase.core.auth.revocation import REVOKED_COLLECTION
from docbase.core.auth.scopes import METHODS, Scope, parse_scope
from docbase.core.auth.signing import ALGORITHMS, parse_duration, sign_request
from docbase.core.auth.throttle import FAILURES_COLLECTION
from docbase.core.auth.tokens import Bearer, authenticate_token, issue_login_token
from docbase.core.auth.users import (
    USERS_COLLECTION,
    User,
    any_admin,
    create_user,
    delete_user,
    list_users,
    set_admin,
    set_password,
    set_roles,
)

__all__ = [
    "ALGORITHMS",
    "CACHE_SECONDS",
    "FAILURES_COLLECTION",
    "KEYS_COLLECTION",
    "LAST_USED_SECONDS",
    "METHODS",
    "REVOKED_COLLECTION",
    "SYSTEM",
    "UNKNOWN_KEY",
    "USERS_COLLECTION",
    "Action",
    "ApiKey",
    "Bearer",
    "Namespace",
    "Principal",
    "Scope",
    "SystemCache",
    "User",
    "any_admin",
    "authenticate",
    "authenticate_key",
    "authenticate_token",
    "authorize",
    "authorize_origin",
    "create_key",
    "create_user",
    "delete_user",
    "ensure_key",
    "hash_key",
    "issue_login_token",
    "keys_for_origin",
    "list_keys",
    "list_users",
    "login",
    "logout",
    "parse_duration",
    "parse_scope",
    "revoke_key",
    "set_admin",
    "set_password",
    "set_roles",
    "sign_request",
]
