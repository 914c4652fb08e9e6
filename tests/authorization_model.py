"""The reference policy of the authorization property, over storage rather than URLs.

Given the stored documents (each with its collection, creator and parent), the schema's
``access`` rules as written here, and a caller (a full-access key, a scoped key with path
globs, methods and roles, or a user with an email and roles), :class:`Model` says what the
caller may see and do: which documents exist for it, which of their fields it may read,
what a lookup resolves to, and which writes it may make. It is written again from
docs/access.md, docs/auth.md and docs/hooks.md, importing nothing of docbase, so that it
does not share the product's blind spots:

- a document is judged in the collection that stores it, whatever URL reached it: a child
  path (``/rest/public/P/secret``) is also a read or write of the child collection;
- a key's path globs and methods are judged on the URL and on the child collection's path;
- rules: roles per operation (``*``, ``@owner``), ``private``, ``where`` with ``$user``
  values, per-field read/write roles; hook-hidden fields and lookups (stored as ids,
  resolved for the reader through the target collection) come on top.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

ROLES = ("editor", "hr", "red", "blue")
EMAILS = ("ann@example.com", "bob@example.com")
KEY_AUTHOR = "api"
"""What a full-access key writes as ``_createdby`` (docs/access.md), and the owner the
drawn scoped keys are created with (``owner=``): the identity ``@owner`` compares."""

RULES: dict[str, dict[str, Any]] = {
    "notes": {"read": ["editor", "@owner"], "create": ["*"], "update": ["editor", "@owner"],
              "delete": ["@owner"], "fields": {"salary": {"read": ["hr"], "write": ["hr"]}}},
    "diary": {"read": ["*"], "create": ["*"], "update": ["*"], "delete": ["*"],
              "private": True},
    "teams": {"read": ["*"], "create": ["*"], "update": ["*"], "delete": ["editor"],
              "where": {"read": {"team": {"$in": "$user.roles"}},
                        "write": {"team": {"$in": "$user.roles"}}}},
}
"""The ``access`` of each collection that has rules (the others have none)."""
TEXT = ("title",)
FIELDS: dict[str, dict[str, str]] = {
    "public": {"title": "text", "owner": "lookup:secret", "note": "lookup:notes"},
    "secret": {"title": "text", "code": "unique"},
    "notes": {"title": "text", "salary": "number"},
    "diary": {"title": "text"},
    "teams": {"title": "text", "team": "text"},
    "hooked": {"title": "text", "salary": "number"},
    "lines": {"title": "text"},
}
COLLECTIONS = tuple(FIELDS)
HOOK_HIDDEN = {"hooked": frozenset({"salary"})}
"""Fields a ``beforeGET`` hook leaves out of every read of the collection."""
PARENT = "public"
CHILDREN = ("lines", "secret", "notes", "diary")
"""Child collections a child path of ``public`` may name (all but ``lines`` adversarial)."""
METHOD_OF = {"read": "GET", "create": "POST", "update": "PUT", "delete": "DELETE"}


def glob_matches(glob: str, path: str) -> bool:
    """The glob rule of docs/auth.md, written again: ``*`` one segment, ``**`` any."""
    glob, path = glob.rstrip("/") or "/", path.rstrip("/") or "/"
    if glob.endswith("/**") and path == glob[:-3]:
        return True
    pattern = "".join(".*" if part == "**" else "[^/]*" if part == "*" else
                      "[^/]" if part == "?" else re.escape(part)
                      for part in re.split(r"(\*\*|\*|\?)", glob))
    return re.fullmatch(pattern, path) is not None


@dataclass(frozen=True)
class Caller:
    """Who asks: ``kind`` is ``full`` (a full-access key), ``key`` or ``user``."""

    kind: str
    author: str = KEY_AUTHOR
    roles: frozenset[str] = frozenset()
    paths: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()

    def path_allows(self, method: str, path: str) -> bool:
        """The key's (or the users' setting's) globs and methods; empty: no limit."""
        if self.kind == "full":
            return True
        if self.methods and method not in self.methods:
            return False
        return not self.paths or any(glob_matches(g, path) for g in self.paths)


def matches(where: Mapping[str, Any], document: Mapping[str, Any], caller: Caller) -> bool:
    """The ``where`` filters of :data:`RULES` (equality and ``$in``), with ``$user``."""
    def value(v: Any) -> Any:
        if v == "$user.roles":
            return sorted(caller.roles)
        return caller.author if v == "$user.email" else v
    for name, condition in where.items():
        held = document.get(name)
        if isinstance(condition, dict) and "$in" in condition:
            allowed = value(condition["$in"])
            if held not in (allowed if isinstance(allowed, list) else [allowed]):
                return False
        elif held != value(condition):
            return False
    return True


@dataclass
class Model:
    """The stored documents by id and what ``caller`` may see and do with them."""

    caller: Caller
    stored: dict[str, dict[str, Any]] = field(default_factory=dict)
    collection_of: dict[str, str] = field(default_factory=dict)

    def load(self, collection: str, documents: Iterable[Mapping[str, Any]]) -> None:
        for document in documents:  # as stored: a lookup read resolved is its ids
            self.stored[str(document["_id"])] = {
                name: [i["_id"] if isinstance(i, dict) else i for i in value]
                if FIELDS[collection].get(name, "").startswith("lookup:")
                and isinstance(value, list) else value
                for name, value in document.items()}
            self.collection_of[str(document["_id"])] = collection

    def documents(self, collection: str) -> list[dict[str, Any]]:
        return [d for i, d in self.stored.items() if self.collection_of[i] == collection]

    # ---------------------------------------------------------------- rules

    def limited(self) -> bool:
        return self.caller.kind != "full"

    def grant(self, collection: str, operation: str) -> str:
        """``all``, ``owned`` or ``none``: how far the rules grant ``operation``."""
        rules = RULES.get(collection)
        if rules is None or not self.limited():
            return "all"
        listed = rules.get(operation, [])
        if "*" in listed or self.caller.roles.intersection(listed):
            return "all"
        return "owned" if "@owner" in listed else "none"

    def in_read_scope(self, collection: str, document: Mapping[str, Any]) -> bool:
        """Whether ``document`` exists for the caller (rules only, not paths)."""
        rules = RULES.get(collection)
        if rules is None or not self.limited():
            return True
        grant = self.grant(collection, "read")
        if grant == "none":
            return False
        if (grant == "owned" or rules.get("private")) and \
                document.get("_createdby") != self.caller.author:
            return False
        where = rules.get("where", {}).get("read")
        return where is None or matches(where, document, self.caller)

    def hidden(self, collection: str, listed: bool = True) -> frozenset[str]:
        """The fields the caller never sees nor names in a query of ``collection``
        (the hook hides fields from lists only: it shapes list queries)."""
        hidden = set(HOOK_HIDDEN.get(collection, ()) if listed else ())
        if self.limited():
            for name, rule in RULES.get(collection, {}).get("fields", {}).items():
                if "read" in rule and not self.caller.roles.intersection(rule["read"]):
                    hidden.add(name)
        return frozenset(hidden)

    def unwritable(self, collection: str) -> frozenset[str]:
        if not self.limited():
            return frozenset()
        return frozenset(name for name, rule in RULES.get(collection, {}).get("fields", {})
                         .items() if "write" in rule
                         and not self.caller.roles.intersection(rule["write"]))

    # ---------------------------------------------------------------- paths of storage

    def paths_of(self, document_id: str) -> tuple[str, ...]:
        """The URL paths that read a stored document (its collection's, its parent's)."""
        collection = self.collection_of[document_id]
        paths = [f"/rest/{collection}", f"/rest/{collection}/{document_id}"]
        parent = self.stored[document_id].get("_parent_id")
        if parent is not None:
            base = f"/rest/{PARENT}/{parent}/{collection}"
            paths += [base, f"{base}/{document_id}"]
        return tuple(paths)

    def readable(self, document_id: str) -> bool:
        """Whether the caller may read this stored document on some path of its own."""
        collection = self.collection_of[document_id]
        return (any(self.url_allows("GET", p) for p in self.paths_of(document_id))
                and self.in_read_scope(collection, self.stored[document_id]))

    def url_allows(self, method: str, path: str) -> bool:
        """The caller's globs on ``path``, and on the child collection's for a child path."""
        child = re.fullmatch(r"/rest/[^/]+/[^/]+/([^/]+)(/[^/]+)?", path)
        if child is not None and not self.url_allows(method, f"/rest/{child[1]}{child[2] or ''}"):
            return False
        return self.caller.path_allows(method, path)

    # ---------------------------------------------------------------- what is seen

    def view(self, document_id: str, listed: bool = True) -> dict[str, Any]:
        """The caller's view of a stored document: user fields, lookups resolved."""
        collection = self.collection_of[document_id]
        stored = self.stored[document_id]
        hidden = self.hidden(collection, listed)
        seen: dict[str, Any] = {"_id": document_id}
        for name, kind in FIELDS[collection].items():
            if name in hidden or name not in stored:
                continue
            if kind.startswith("lookup:"):
                seen[name] = [self.view(i, listed) if i in self.stored and self.readable(i)
                              else {"_id": i} for i in stored[name]]
            else:
                seen[name] = stored[name]
        return seen

    def written(self, document_id: str) -> set[str]:
        """What a write's answer may show of the document it wrote: what a get shows
        (docs/access.md "The answer to a write"); nothing, to a caller that may write it
        but not read it (its ``_id`` and system fields hold no marker)."""
        if not self.readable(document_id):
            return set()
        hidden = self.hidden(self.collection_of[document_id], listed=False)
        return {str(v) for k, v in self.stored[document_id].items() if k not in hidden}

    def secrets(self) -> set[str]:
        """The stored values this caller may not learn (unique markers; see the seed)."""
        shown = set()
        for document_id, document in self.stored.items():
            if self.readable(document_id):
                collection = self.collection_of[document_id]
                hidden = self.hidden(collection, listed=False)  # a get shows them
                shown |= {str(v) for k, v in document.items()
                          if k in FIELDS[collection] and k not in hidden}
        every = {str(v) for d in self.stored.values() for v in d.values() if marker(v)}
        return every - shown


def marker(value: Any) -> bool:
    """Whether a stored value is one of the seed's unique markers (``m-...``, 9xxxx)."""
    return (isinstance(value, str) and value.startswith("m-")) or (
        isinstance(value, int) and not isinstance(value, bool) and 90000 <= value < 100000)
