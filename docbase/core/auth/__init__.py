"""Authentication and authorization: principals, scopes, API keys, the one decision."""

from __future__ import annotations

from docbase.core.auth.decision import Action, authorize
from docbase.core.auth.principal import SYSTEM, Principal
from docbase.core.auth.scopes import METHODS, Scope

__all__ = ["METHODS", "SYSTEM", "Action", "Principal", "Scope", "authorize"]
