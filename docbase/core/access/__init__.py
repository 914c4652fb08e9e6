"""Access rules of a collection (``access`` beside ``fields`` in its schema).

:mod:`.rules` is the typed rule set and how it is read from JSON; :mod:`.scope`
compiles it, for one principal, into what the stages enforce: the roles an operation
grants, the one read-scope :class:`~docbase.core.query.Filter` ANDed into every read,
the fields hidden from reads and writes. :mod:`.reading` and :mod:`.writing` are the
read and write stages (``docs/access.md``).
"""

from __future__ import annotations

from docbase.core.access.rules import AccessRules, FieldAccess, WhereRules, parse_access
from docbase.core.access.scope import Grant, grant, limited, read_scope

__all__ = ["AccessRules", "FieldAccess", "Grant", "WhereRules", "grant", "limited",
           "parse_access", "read_scope"]
