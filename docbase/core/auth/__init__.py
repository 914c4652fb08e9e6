"""Authentication and authorization: principals, scopes, API keys, the one decision."""

from __future__ import annotations

from docbase.core.auth.authentication import (
    LAST_USED_SECONDS,
    authenticate,
    authenticate_key,
    keys_for_origin,
)
from docbase.core.auth.cache import CACHE_SECONDS, Namespace, SystemCache
from docbase.core.auth.decision import Action, authorize
from docbase.core.auth.keys import (
    KEYS_COLLECTION,
    ApiKey,
    create_key,
    ensure_key,
    hash_key,
    list_keys,
    revoke_key,
)
from docbase.core.auth.principal import SYSTEM, Principal
from docbase.core.auth.scopes import METHODS, Scope, parse_scope

__all__ = [
    "CACHE_SECONDS",
    "KEYS_COLLECTION",
    "LAST_USED_SECONDS",
    "METHODS",
    "SYSTEM",
    "Action",
    "ApiKey",
    "Namespace",
    "Principal",
    "Scope",
    "SystemCache",
    "authenticate",
    "authenticate_key",
    "authorize",
    "create_key",
    "ensure_key",
    "hash_key",
    "keys_for_origin",
    "list_keys",
    "parse_scope",
    "revoke_key",
]
