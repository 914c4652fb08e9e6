"""What may name a collection or a database."""

from __future__ import annotations

import re

from docbase.core.errors import ConfigurationError, InvalidQuery

_USER_COLLECTION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_DATABASE = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


def is_user_collection(name: str) -> bool:
    """Tell whether ``name`` names a user collection (system ones start with ``_``)."""
    return _USER_COLLECTION.fullmatch(name) is not None


def check_collection_name(name: str) -> str:
    """Return ``name`` if it may name a user collection, else raise ``InvalidQuery``."""
    if not is_user_collection(name):
        raise InvalidQuery(
            f"invalid collection name {name!r}: use letters, digits, '_' and '-', "
            "starting with a letter or digit, at most 64 characters"
        )
    return name


def check_database_name(name: str) -> str:
    """Return ``name`` if it may name a database (a DNS label), else raise."""
    if not _DATABASE.fullmatch(name):
        raise ConfigurationError(
            f"invalid database name {name!r}: use lowercase letters, digits and '-', "
            "at most 63 characters"
        )
    return name
