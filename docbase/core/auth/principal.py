"""Who is calling: every facade call carries a :class:`Principal`."""

from __future__ import annotations

from typing import Literal

import msgspec

from docbase.core.auth.scopes import Scope


class Principal(msgspec.Struct, frozen=True):
    """The caller of a facade method.

    ``author`` is written into ``_createdby``/``_changedby`` (``"api"`` for API keys,
    the user's email for JWT callers). ``full_access`` allows destructive bulk
    operations such as delete-by-query. ``scope`` limits a scoped credential to some
    paths, methods and origins (``None``: no limit); :func:`~docbase.core.auth.authorize`
    reads it.
    """

    author: str = "api"
    kind: Literal["system", "key", "user", "hook"] = "system"
    full_access: bool = True
    key_id: str | None = None
    scope: Scope | None = None


SYSTEM = Principal()
"""The embedding application itself: full access, writes as ``"api"``."""
