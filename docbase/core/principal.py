"""Who is calling: every facade call carries a :class:`Principal`."""

from __future__ import annotations

from typing import Literal

import msgspec


class Principal(msgspec.Struct, frozen=True):
    """The caller of a facade method.

    ``author`` is written into ``_createdby``/``_changedby`` (``"api"`` for API keys,
    the user's email for JWT callers). ``full_access`` allows destructive bulk
    operations such as delete-by-query.
    """

    author: str = "api"
    kind: Literal["system", "key", "user", "hook"] = "system"
    full_access: bool = True
    key_id: str | None = None


SYSTEM = Principal()
"""The embedding application itself: full access, writes as ``"api"``."""
