"""The world and the requests of the authorization property (``tests/authorization_model.py``).

:func:`seed` stores a few documents of each collection of the model, each field a unique
marker (``m-...`` texts, 9xxxx numbers), written by ann, bob or a key. A drawn request is
a :class:`Asked`: a kind (a read, a probe of hidden fields or lookups, a write, an
adversarial write), a collection, which stored document and which child collection it
names, and the body it sends. :func:`http_request` spells it as a URL, headers and body.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import msgspec
from hypothesis import strategies as st

from docbase import Database
from docbase.core.auth.principal import Principal
from docbase.core.hooks import Hook, ReadContext
from docbase.core.query import Projection
from docbase.core.schema import parse_schema
from tests.authorization_model import (
    CHILDREN,
    COLLECTIONS,
    EMAILS,
    FIELDS,
    KEY_AUTHOR,
    PARENT,
    ROLES,
    RULES,
)

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
GLOBS = ("/rest/public", "/rest/public/*", "/rest/public/**", "/rest/public/*/lines",
         "/rest/public/*/secret", "/rest/public/*/notes/*", "/rest/secret/**",
         "/rest/notes/**", "/rest/notes", "/rest/diary/**", "/rest/teams/*", "/rest/teams",
         "/rest/lines/**", "/rest/hooked/**", "/rest/*", "/rest/**")
READS = ("list", "get", "count", "totals", "groups", "aggregate", "ndjson", "csv",
         "children", "child_get", "fetchchildren")
PROBES = ("hidden_sort", "hidden_aggregate", "hidden_query", "hidden_group",
          "lookup_projection")
WRITES = ("post", "put", "patch", "delete", "post_child", "delete_query")
ADVERSARIAL = ("unset_lookup", "set_lookup", "smuggle_lookup")
KINDS = (*READS, *PROBES, *WRITES, *ADVERSARIAL)


def schema(name: str) -> dict[str, Any]:
    """The schema of a model collection, with its rules."""
    fields = []
    for field, kind in FIELDS[name].items():
        if kind.startswith("lookup:"):
            fields.append({"name": field, "type": "lookup", "collection": kind[7:]})
        elif kind == "unique":
            fields.append({"name": field, "type": "text", "unique": True})
        else:
            fields.append({"name": field, "type": kind})
    return {"fields": fields, **({"access": RULES[name]} if name in RULES else {})}


def hide_salary(db: Database) -> None:
    """The ``beforeGET`` hook of ``hooked``: every read but the system's leaves out
    ``salary`` (the test reads what is stored as the system)."""
    @db.hook("hooked", Hook.BEFORE_GET)
    async def hidden(ctx: ReadContext) -> None:
        if ctx.query is not None and ctx.principal.kind != "system":
            ctx.query = msgspec.structs.replace(
                ctx.query, projection=Projection((("salary",),), include=False))


async def seed(db: Database) -> None:
    """Store the world: of each author, a document of each collection and of each child
    collection under its ``public`` one."""
    for name in COLLECTIONS:
        await db.schemas.put(parse_schema(name, schema(name)))
    hide_salary(db)
    for n, author in enumerate((*EMAILS, KEY_AUTHOR)):
        def mark(prefix: str, n: int = n) -> str:
            return f"m-{prefix}{n}-"
        as_author = Principal(author=author)
        secret = await db.collection("secret", as_author).insert(
            {"title": mark("s"), "code": mark("code")})
        note = await db.collection("notes", as_author).insert(
            {"title": mark("n"), "salary": 90000 + n})
        await db.collection("diary", as_author).insert({"title": mark("d")})
        for team in ("red", "blue"):
            await db.collection("teams", as_author).insert({"title": mark("t" + team),
                                                             "team": team})
        await db.collection("hooked", as_author).insert({"title": mark("h"),
                                                         "salary": 91000 + n})
        public = await db.collection("public", as_author).insert(
            {"title": mark("p"), "owner": [secret["_id"]], "note": [note["_id"]]})
        for child in CHILDREN:
            await db.collection(PARENT, as_author).children(public["_id"], child).insert(
                {"title": mark("c" + child)})


@dataclass(frozen=True)
class Asked:
    """One drawn request: ``pick`` chooses the stored document, ``child`` the child
    collection, ``salary``/``team`` what a write sends besides a new title."""

    kind: str
    collection: str
    pick: int
    child: str
    salary: bool
    team: str

    def body(self, collection: str, number: int) -> dict[str, Any]:
        """What a write into ``collection`` sends: a new title marker, maybe more."""
        body: dict[str, Any] = {"title": f"m-new{number}-"}
        if self.salary and "salary" in FIELDS[collection]:
            body["salary"] = 95000 + number
        if collection == "teams":
            body["team"] = self.team
        return body


asked = st.builds(Asked, st.sampled_from(KINDS), st.sampled_from(COLLECTIONS),
                  st.integers(0, 20), st.sampled_from(CHILDREN), st.booleans(),
                  st.sampled_from(("red", "blue")))


@dataclass(frozen=True)
class Drawn:
    """A drawn principal: ``kind`` is ``full``, ``key`` or ``user``."""

    kind: str
    email: str
    roles: tuple[str, ...]
    paths: tuple[str, ...]
    methods: tuple[str, ...]


principals = st.one_of(
    st.just(Drawn("full", KEY_AUTHOR, (), (), ())),
    st.builds(Drawn, st.just("key"), st.just(KEY_AUTHOR),
              st.lists(st.sampled_from(ROLES), max_size=2, unique=True).map(tuple),
              st.lists(st.sampled_from(GLOBS), max_size=3, unique=True).map(tuple),
              st.lists(st.sampled_from(METHODS), max_size=3, unique=True).map(tuple)),
    st.builds(Drawn, st.just("user"), st.sampled_from(EMAILS),
              st.lists(st.sampled_from(ROLES), max_size=2, unique=True).map(tuple),
              st.just(()), st.just(())),
)


def http_request(request: Asked, target: str, parent: str, number: int,
                 stored_code: str) -> tuple[str, str, dict[str, str], Any]:
    """``(method, URL, headers, JSON body)`` of a drawn request on document ``target``
    of its collection, ``parent`` a stored ``public`` document."""
    base = f"/rest/{request.collection}"
    child = f"/rest/{PARENT}/{parent}/{request.child}"
    hint = {"lookup_projection": {"$fields": {"owner._id": 0, "note._id": 0}}}
    params = {"count": "count=true", "totals": "totals=true&max=1",
              "groups": "groupby=title", "aggregate": "aggregate=COUNT:title",
              "hidden_sort": "sort=salary&max=1", "hidden_aggregate": "aggregate=MAX:salary",
              "hidden_query": 'q={"salary":{"$gte":0}}', "hidden_group": "groupby=salary",
              "lookup_projection": "h=" + json.dumps(hint.get(request.kind))}
    accept = {"ndjson": "application/x-ndjson", "csv": "text/csv"}
    body = request.body(request.child if request.kind == "post_child" else request.collection,
                        number)
    if request.kind == "post_child" and request.child == "secret" and request.salary:
        body["code"] = stored_code  # a unique value the child collection holds: no oracle
    match request.kind:
        case "list" | "ndjson" | "csv":
            return "GET", base, {"accept": accept.get(request.kind, "application/json")}, None
        case "get":
            return "GET", f"{base}/{target}", {}, None
        case "children":
            return "GET", child, {}, None
        case "child_get":
            return "GET", f"{child}/{target}", {}, None
        case "fetchchildren":
            return "GET", f"/rest/{PARENT}/{parent}?fetchchildren=true", {}, None
        case "post":
            return "POST", base, {}, body
        case "post_child":
            return "POST", child, {}, body
        case "delete_query":
            return "DELETE", f"{base}/*?q=" + json.dumps({"_id": target}, separators=(",", ":")), \
                {}, None
        case "put" | "patch" | "delete":
            return request.kind.upper(), f"{base}/{target}", {}, (
                None if request.kind == "delete" else body)
        case "unset_lookup":
            return "PUT", f"/rest/{PARENT}/{parent}", {}, {"$unset": {"owner.0._id": ""}}
        case "set_lookup":
            return "PUT", f"/rest/{PARENT}/{parent}", {}, {"$set": {"owner": [target]}}
        case "smuggle_lookup":
            return "POST", f"/rest/{PARENT}", {}, {
                "title": f"m-new{number}-", "owner": [{"_id": target, "title": "m-forged-"}]}
    if request.kind == "lookup_projection":
        base = f"/rest/{PARENT}"
    return "GET", f"{base}?{params[request.kind]}", {}, None
