"""What the reference model (``tests/authorization_model.py``) expects of one request.

:func:`expect` answers the statuses the product may give to a drawn request, and, for the
reads whose answer is a set of documents, exactly which documents (the caller's views);
:func:`normalized` brings an answer to that shape; :func:`leaks` lists the stored
markers an answer reveals that the caller may not learn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tests.authorization_model import PARENT, RULES, Model, matches
from tests.authorization_requests import Asked

LISTS = ("list", "ndjson", "csv", "count", "totals", "groups", "aggregate")
HIDDEN_PROBES = ("hidden_sort", "hidden_aggregate", "hidden_query", "hidden_group")


@dataclass
class Expected:
    """The statuses allowed, and the documents a read answers (``None``: not compared)."""

    statuses: set[int]
    documents: list[dict[str, Any]] | None = None


def _write_refused(model: Model, collection: str, body: dict[str, Any] | None,
                   result: dict[str, Any]) -> bool:
    """A field the caller may not write, or a resulting document ``where.write`` refuses."""
    if body is not None and model.unwritable(collection).intersection(body):
        return True
    where = RULES.get(collection, {}).get("where", {}).get("write")
    return model.limited() and where is not None and not matches(where, result, model.caller)


def _in_scope(model: Model, collection: str) -> list[dict[str, Any]]:
    return [model.view(d["_id"]) for d in model.documents(collection)
            if model.in_read_scope(collection, d)]


def expect(model: Model, request: Asked, method: str, url: str, target: str, parent: str,
           body: Any) -> Expected:
    """The reference's answer to ``request`` (``target``: the document it names)."""
    path = url.split("?", maxsplit=1)[0]
    child = request.kind in ("children", "child_get", "post_child")
    collection = request.child if child else (
        PARENT if request.kind in ("lookup_projection", "fetchchildren", "unset_lookup",
                                   "set_lookup", "smuggle_lookup") else request.collection)
    operation = {"GET": "read", "POST": "create", "DELETE": "delete"}.get(method, "update")
    if not model.url_allows(method, path) or model.grant(collection, operation) == "none":
        return Expected({403})
    documents = model.documents(collection)
    if request.kind == "delete_query":  # a full-access key's or a hook's alone
        return Expected({200} if not model.limited() else {403})
    if request.kind in LISTS:
        return Expected({200}, _in_scope(model, collection))
    if request.kind in HIDDEN_PROBES:
        return Expected({403} if "salary" in model.hidden(collection) else {200})
    if request.kind in ("lookup_projection", "fetchchildren"):
        return Expected({200})
    if request.kind == "children":
        return Expected({200}, [model.view(d["_id"]) for d in documents
                                if d.get("_parent_id") == parent
                                and model.in_read_scope(collection, d)])
    if request.kind in ("get", "child_get"):
        stored = model.stored[target]
        if not model.in_read_scope(collection, stored) or (
                child and stored.get("_parent_id") != parent):
            return Expected({404})
        return Expected({200}, [model.view(target, listed=False)])
    if request.kind == "unset_lookup":  # a lookup holds ids: its sub-paths are not fields
        return Expected({422})
    if request.kind in ("set_lookup", "smuggle_lookup"):
        return Expected({200} if method == "PUT" else {201})
    if method == "POST":
        if _write_refused(model, collection, body, body):
            return Expected({403})
        taken = {d.get("code") for d in documents}
        duplicate = "code" in body and body["code"] in taken
        return Expected({409} if duplicate else {201})
    stored = model.stored[target]
    result = {**stored, **(body or {})}
    refused = method != "DELETE" and _write_refused(model, collection, body, result)
    if not model.in_read_scope(collection, stored):
        # a field one may not write is refused whether or not the document exists
        return Expected({404, 403} if body is not None and
                        model.unwritable(collection).intersection(body) else {404})
    if model.grant(collection, operation) == "owned" and \
            stored.get("_createdby") != model.caller.author:
        return Expected({403})
    if refused:
        return Expected({403})
    return Expected({200})


def normalized(value: Any) -> Any:
    """An answer's documents with only ``_id`` and user fields (lookups likewise)."""
    if isinstance(value, list):
        return [normalized(v) for v in value]
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items() if k == "_id" or
                not k.startswith("_")}
    return value


def by_id(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted((normalized(d) for d in documents), key=lambda d: str(d["_id"]))


def leaks(model: Model, text: str, sent: Any = None, written: str | None = None) -> list[str]:
    """The markers in ``text`` that the caller may not learn (what it sent, it knows;
    the answer of a write of document ``written`` may show it)."""
    known = {str(v) for v in sent.values()} if isinstance(sent, dict) else set()
    if written is not None and written in model.stored:
        known |= model.written(written)
    return [secret for secret in model.secrets() - known
            if re.search(rf"(?<![0-9a-fA-F.]){re.escape(secret)}(?![0-9a-fA-F.])", text)]
