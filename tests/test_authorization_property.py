"""Authorization as a property: a scoped credential is answered only what its scope allows.

Hypothesis draws a scope (path globs, methods) for an API key or for user tokens (the
``auth.users.*`` settings) and a few requests over the whole API: documents, children,
``fetchchildren``, counts (one by a password field, one inside a lookup), totals, groups
and aggregates, ``_meta``, media metadata, writes, and the change feed. Each answer is
checked against :class:`Policy`, a small reference written here without
:mod:`docbase.core.auth`:

- a request is answered (not 403) exactly when the policy allows its method and path,
  and for a child path (``/rest/orders/O/lines``) the same method in the child
  collection too (``/rest/lines``, ``/rest/lines/L``): the documents are stored there;
- an answer holds no document the policy would not let the credential read on some
  path of its own (a lookup it may not read is a bare ``{"_id"}``; an embedded child
  field it may not read is absent), and never a password hash;
- a query inside a lookup beyond its ids is a 400 for everyone (lookups store ids only);
- a refused write changes nothing.

The same property runs through the library with a scoped principal. It runs on every
engine; the example count follows the Hypothesis profile (``tests/hypothesis_profiles.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import tests.hypothesis_profiles  # noqa: F401 - registers and loads the settings profile
from docbase import Database, Forbidden, InvalidQuery
from docbase.core.auth import Principal, Scope, create_user, login
from docbase.core.media.receiving import Upload
from docbase.core.query import Aggregate, Query, ReadOptions
from docbase.core.schema import parse_schema
from docbase.core.settings import Limits
from docbase.http.testing import LiveDocbase, live_docbase
from docbase.testing.sse import open_events
from tests.backends import BACKENDS

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
GLOBS = (
    "/rest/orders", "/rest/orders/*", "/rest/orders/**", "/rest/orders/{O1}",
    "/rest/orders/{O1}/**", "/rest/orders/*/lines", "/rest/orders/*/lines/*",
    "/rest/customers", "/rest/customers/**", "/rest/customers/{C1}", "/rest/accounts/**",
    "/rest/notes/*", "/rest/lines/**", "/rest/*", "/rest/**", "/rest/?otes",
    "/media/**", "/media/*/meta", "/media/{M1}/meta",
)


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
class Policy:
    """What a credential limited to ``paths`` and ``methods`` may do (empty: no limit)."""

    paths: tuple[str, ...]
    methods: tuple[str, ...]

    def allows(self, method: str, path: str) -> bool:
        """A child path (``/rest/orders/O/lines[/L]``) is also the child collection's."""
        child = re.fullmatch(r"/rest/[^/]+/[^/]+/([^/]+)(/[^/]+)?", path)
        if child is not None and not self.allows(method, f"/rest/{child[1]}{child[2] or ''}"):
            return False
        if self.methods and method not in self.methods:
            return False
        return not self.paths or any(glob_matches(g, path) for g in self.paths)

    def reads(self, *paths: str) -> bool:
        return any(self.allows("GET", p) for p in paths)


class World:
    """The seeded documents, by symbol (``O1``...), and which paths read each."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}
        self.paths: dict[str, tuple[str, ...]] = {}  # id -> the paths that read it

    def add(self, symbol: str, document_id: str, *paths: str) -> None:
        self.ids[symbol] = document_id
        self.paths[document_id] = paths

    def glob(self, template: str) -> str:
        return template.format(**self.ids)


ORDERS = {"fields": [{"name": "buyer", "type": "lookup", "collection": "customers"},
                     {"name": "kind", "type": "text"}]}
ACCOUNTS = {"fields": [{"name": "login", "type": "text"}, {"name": "pw", "type": "password"},
                       {"name": "kind", "type": "text"}]}


async def seed(db: Database) -> World:
    world = World()
    await db.schemas.put(parse_schema("orders", ORDERS))
    await db.schemas.put(parse_schema("accounts", ACCOUNTS))
    for n in (1, 2):
        c = await db.collection("customers").insert({"name": f"c{n}", "kind": "vip"})
        world.add(f"C{n}", c["_id"], "/rest/customers", f"/rest/customers/{c['_id']}")
    for n in (1, 2):
        o = await db.collection("orders").insert({"buyer": world.ids[f"C{n}"], "kind": "o"})
        world.add(f"O{n}", o["_id"], "/rest/orders", f"/rest/orders/{o['_id']}")
        lines = db.collection("orders").children(o["_id"], "lines")
        for m in (1, 2):
            line = await lines.insert({"sku": f"s{n}{m}", "kind": "line"})
            base = f"/rest/orders/{o['_id']}/lines"
            world.add(f"L{n}{m}", line["_id"], "/rest/lines", f"/rest/lines/{line['_id']}",
                      base, f"{base}/{line['_id']}")
    a = await db.collection("accounts").insert({"login": "ann", "pw": "correct horse"})
    world.add("A1", a["_id"], "/rest/accounts", f"/rest/accounts/{a['_id']}")
    note = await db.collection("notes").insert({"text": "hi", "kind": "n"})
    world.add("N1", note["_id"], "/rest/notes", f"/rest/notes/{note['_id']}")
    [media_id] = (await db.media.upload([Upload("a.txt", b"hello\n")])).ids
    world.add("M1", media_id, f"/media/{media_id}/meta", "/media/*/meta")
    await create_user(db, "ann@example.com", "correct horse battery")
    return world


def check_revealed(answer: Any, world: World, policy: Policy) -> None:
    """Every document in ``answer`` is one the policy lets the credential read."""
    text = json.dumps(answer)
    assert "$argon2" not in text, text
    for found in documents_in(answer):
        paths = world.paths.get(found["_id"])
        if paths is not None and set(found) != {"_id"}:
            assert policy.reads(*paths), f"revealed {found} outside {policy}"
        for item in found.get("buyer", []) if isinstance(found.get("buyer"), list) else []:
            if isinstance(item, dict) and not policy.reads(*world.paths[item["_id"]]):
                assert item == {"_id": item["_id"]}, f"lookup {item} outside {policy}"


def documents_in(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        if isinstance(value.get("_id"), str):
            yield value
        for inner in value.values():
            yield from documents_in(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from documents_in(inner)


# ------------------------------------------------------------------ strategies


@st.composite
def policies(draw: st.DrawFn) -> tuple[tuple[str, ...], tuple[str, ...]]:
    paths = draw(st.lists(st.sampled_from(GLOBS), min_size=0, max_size=3, unique=True))
    methods = draw(st.lists(st.sampled_from(METHODS), min_size=0, max_size=3, unique=True))
    return tuple(paths), tuple(methods)


READ_KINDS = ("list", "get", "children", "child", "fetch_one", "fetch_list", "count",
              "count_password", "count_lookup", "totals", "groups", "aggregate", "meta",
              "media_meta", "media_find")
WRITE_KINDS = ("post", "post_child", "patch", "put", "delete")
request = st.tuples(
    st.sampled_from((*READ_KINDS, *WRITE_KINDS)),
    st.sampled_from(("orders", "customers", "accounts", "notes", "lines")),
    st.sampled_from(("1", "2")),
)
ALWAYS = (("fetch_one", "orders", "1"), ("fetch_list", "orders", "1"),
          ("count_password", "accounts", "1"), ("count_lookup", "orders", "1"))
"""Asked in every example besides the drawn ones: the reads that embed or count."""
requests = st.lists(request, min_size=1, max_size=4).map(lambda drawn: [*ALWAYS, *drawn])


def http_request(kind: str, collection: str, n: str, world: World,
                 fresh: str | None) -> tuple[str, str, str, Any]:
    """``(method, path the policy judges, URL, body)`` of one drawn request."""
    ids = world.ids
    order = ids[f"O{n}"]
    member = {"orders": f"O{n}", "customers": f"C{n}", "lines": f"L{n}1",
              "accounts": "A1", "notes": "N1"}[collection]
    base = f"/rest/{collection}"
    match kind:
        case "list":
            return "GET", base, base, None
        case "get":
            return "GET", f"{base}/{ids[member]}", f"{base}/{ids[member]}", None
        case "children":
            path = f"/rest/orders/{order}/lines"
            return "GET", path, path, None
        case "child":
            path = f"/rest/orders/{order}/lines/{ids[f'L{n}2']}"
            return "GET", path, path, None
        case "fetch_one":
            path = f"/rest/orders/{order}"
            return "GET", path, path + "?fetchchildren=true", None
        case "fetch_list":
            return "GET", "/rest/orders", "/rest/orders?fetchchildren=true", None
        case "count":
            return "GET", base, base + '?q={"kind":{"$exists":true}}&count=true', None
        case "count_password":
            return ("GET", "/rest/accounts",
                    '/rest/accounts?q={"pw":{"$regex":"^\\\\$argon2"}}&count=true', None)
        case "count_lookup":
            return ("GET", "/rest/orders",
                    '/rest/orders?q={"buyer.name":"c1"}&count=true', None)
        case "totals":
            return "GET", base, base + "?totals=true&max=1", None
        case "groups":
            return "GET", base, base + "?groupby=kind", None
        case "aggregate":
            return "GET", base, base + '?h={"$aggregate":["COUNT:kind"]}', None
        case "meta":
            return "GET", f"{base}/_meta", f"{base}/_meta", None
        case "media_meta":
            path = f"/media/{ids['M1']}/meta"
            return "GET", path, path, None
        case "media_find":
            return "GET", "/media/*/meta", "/media/*/meta", None
        case "post":
            return "POST", base, base, {"kind": "new"}
        case "post_child":
            path = f"/rest/orders/{order}/lines"
            return "POST", path, path, {"kind": "new"}
    assert fresh is not None
    method = {"patch": "PATCH", "put": "PUT", "delete": "DELETE"}[kind]
    return method, f"{base}/{fresh}", f"{base}/{fresh}", {"kind": "changed"}


async def footprint(db: Database, collection: str, fresh: str | None) -> Any:
    """What a refused write could have changed: the counts it could move, its target."""
    counts = [await db.collection(c).count() for c in (collection, "lines")]
    return counts, None if fresh is None else await db.collection(collection).get(fresh)


async def expected_answer(db: Database, kind: str, collection: str, n: str,
                          world: World) -> Any:
    """What the system itself reads for the request, to compare an allowed answer with."""
    if kind == "list":
        return sorted(d["_id"] for d in await db.collection(collection).find())
    if kind == "count":
        return await db.collection(collection).count({"kind": {"$exists": True}})
    if kind == "children":
        return sorted(d["_id"] for d in
                      await db.collection("orders").children(world.ids[f"O{n}"], "lines").find())
    return None


# ------------------------------------------------------------------ over HTTPS

ENGINES = ("memory", "sqlite-file", "postgresql", "mongo")
"""One store per engine (SQLite once: its in-memory variant runs the same SQL)."""


MARKS = {"postgresql": [pytest.mark.postgres], "mongo": [pytest.mark.mongo]}


@pytest.fixture(params=[pytest.param(name, marks=MARKS.get(name, [])) for name in ENGINES])
async def engine(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """An open, empty (DocumentStore, BlobStore) pair of each engine."""
    async with BACKENDS[request.param](request) as pair:
        yield pair


@pytest.fixture
async def served(engine: Any, tmp_path: Path) -> AsyncIterator[tuple[LiveDocbase, World, str]]:
    db = Database(*engine, name="main",
                  limits=Limits(change_poll_interval=0.02, realtime_ping_interval=0.2))
    await db.settings.set("realtime.global", True)
    async with live_docbase({"main": db}, tmp_path) as live:
        world = await seed(db)
        token = await login(db, "ann@example.com", "correct horse battery")
        yield live, world, token
        await db.changes.close()


PROPERTY = settings(suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
EXAMPLES = settings.default.max_examples
"""The profile's example count: the library property runs it, the HTTPS ones a share
(an HTTPS example is several requests, about 0.2 s on PostgreSQL; a feed example waits
for its events, about 0.5 s), so that the "ci" profile runs more examples than "dev" and
stays about a minute per engine."""


@settings(PROPERTY, max_examples=max(20, EXAMPLES // 3))
@given(scope=policies(), token=st.booleans(),
       asked=requests)
async def test_http_answers_only_what_the_scope_allows(
    served: tuple[LiveDocbase, World, str], scope: tuple[tuple[str, ...], tuple[str, ...]],
    token: bool, asked: list[tuple[str, str, str]],
) -> None:
    live, world, jwt = served
    db = live.db
    paths = tuple(world.glob(p) for p in scope[0])
    policy = Policy(paths, scope[1])
    if token:
        await db.settings.set("auth.users.paths", list(paths) or ["/rest/**", "/media/**"])
        await db.settings.set("auth.users.methods", list(scope[1]) or list(METHODS))
        policy = Policy(paths or ("/rest/**", "/media/**"), scope[1] or METHODS)
        headers = {"authorization": f"Bearer {jwt}"}
    else:
        headers = {"x-apikey": await live.key(full_access=False, paths=paths,
                                              methods=scope[1])}
    for kind, collection, n in asked:
        fresh = None
        if kind in ("patch", "put", "delete"):
            fresh = (await db.collection(collection).insert({"kind": "fresh"}))["_id"]
        method, judged, url, body = http_request(kind, collection, n, world, fresh)
        event(f"{kind} {'allowed' if policy.allows(method, judged) else 'refused'}")
        before = await footprint(db, collection, fresh) if method != "GET" else None
        response = await live.client.request(method, url, headers=headers,
                                             json=body if method != "GET" else None)
        allowed = policy.allows(method, judged)
        if not allowed:
            assert response.status_code == 403, (kind, url, policy, response.text)
            if before is not None:
                assert await footprint(db, collection, fresh) == before, (kind, url, policy)
            continue
        if kind in ("count_password", "count_lookup"):  # lookups store ids only
            assert response.status_code == 400, response.text
            continue
        assert response.status_code in (200, 201), (kind, url, policy, response.text)
        answer = response.json()
        check_revealed(answer, world, policy)
        expected = await expected_answer(db, kind, collection, n, world)
        if kind in ("list", "children"):
            assert sorted(d["_id"] for d in answer) == expected
        elif kind == "count":
            assert answer["totals"]["count"] == expected
        elif kind == "fetch_one":
            check_children(answer, world, policy)
        elif kind == "fetch_list":
            for order in answer:
                check_children(order, world, policy)


def check_children(order: dict[str, Any], world: World, policy: Policy) -> None:
    """Children are embedded exactly when the policy reads them under this parent."""
    readable = policy.reads(f"/rest/orders/{order['_id']}/lines")
    assert ("lines" in order) == readable, (order, policy)


@settings(PROPERTY, max_examples=max(5, EXAMPLES // 25))
@given(scope=policies())
async def test_the_change_feed_sends_only_collections_the_scope_reads(
    served: tuple[LiveDocbase, World, str], scope: tuple[tuple[str, ...], tuple[str, ...]],
) -> None:
    live, world, _ = served
    db = live.db
    paths = tuple(world.glob(p) for p in scope[0])
    policy = Policy(paths, scope[1])
    key = await live.key(full_access=False, paths=paths, methods=scope[1])
    async with open_events(live.client, "/realtime", params={"apikey": key}) as stream:
        assert (await stream.next()).name == "ping"
        for collection in ("customers", "notes", "accounts"):
            await db.collection(collection).insert({"kind": "feed"})
        await db.collection("orders").insert({"kind": "feed", "buyer": world.ids["C1"]})
        await db.collection("orders").children(world.ids["O1"], "lines").insert(
            {"kind": "feed"})
        await db.changes.publish_custom("end", None, author="test")
        seen = []
        while (sse := await stream.next(skip_pings=True)).name != "end":
            seen.append(sse.json())
    event(f"feed: {len(seen)} events")
    assert sorted({e["collection"] for e in seen}) == sorted(
        c for c in ("customers", "notes", "accounts", "orders", "lines")
        if policy.allows("GET", f"/rest/{c}"))
    for sent in seen:
        check_revealed(sent["data"], world, policy)


# ------------------------------------------------------------------ through the library


@pytest.fixture
async def library(engine: Any) -> AsyncIterator[tuple[Database, World]]:
    async with Database(*engine) as db:
        yield db, await seed(db)


async def library_call(db: Database, principal: Principal, kind: str, collection: str,
                       n: str, world: World, fresh: str | None) -> Any:
    ids = world.ids
    order = ids[f"O{n}"]
    handle = db.collection(collection, principal)
    member = {"orders": f"O{n}", "customers": f"C{n}", "lines": f"L{n}1",
              "accounts": "A1", "notes": "N1"}[collection]
    lines = db.collection("orders", principal).children(order, "lines")
    match kind:
        case "list" | "meta":
            return await handle.find()
        case "get":
            return await handle.get(ids[member])
        case "children":
            return await lines.find()
        case "child":
            return await lines.get(ids[f"L{n}2"])
        case "fetch_one":
            return await db.collection("orders", principal).get(order, fetchchildren=True)
        case "fetch_list":
            return await db.collection("orders", principal).read(
                Query(), ReadOptions(fetchchildren=True))
        case "count":
            return await handle.count({"kind": {"$exists": True}})
        case "count_password":
            return await db.collection("accounts", principal).count(
                {"pw": {"$regex": "^\\$argon2"}})
        case "count_lookup":
            return await db.collection("orders", principal).count({"buyer.name": "c1"})
        case "totals":
            return await handle.read(Query(limit=1), ReadOptions(totals=True))
        case "groups":
            return await handle.read(Query(groupby=(("kind",),)), ReadOptions())
        case "aggregate":
            return await handle.read(Query(aggregates=(Aggregate("COUNT", "kind"),)))
        case "media_meta":
            return await db.media.meta(ids["M1"], principal=principal)
        case "media_find":
            return await db.media.find(principal=principal)
        case "post":
            return await handle.insert({"kind": "new"})
        case "post_child":
            return await lines.insert({"kind": "new"})
        case "patch" | "put":
            assert fresh is not None
            return await (handle.patch if kind == "patch" else handle.update)(
                fresh, {"kind": "changed"})
    assert fresh is not None
    return await handle.delete(fresh)


@PROPERTY
@given(scope=policies(), asked=requests)
async def test_the_library_answers_a_scoped_principal_only_what_its_scope_allows(
    library: tuple[Database, World], scope: tuple[tuple[str, ...], tuple[str, ...]],
    asked: list[tuple[str, str, str]],
) -> None:
    db, world = library
    paths = tuple(world.glob(p) for p in scope[0])
    policy = Policy(paths, scope[1])
    principal = Principal(kind="key", full_access=False, scope=Scope(paths, scope[1]))
    for kind, collection, n in asked:
        fresh = None
        if kind in ("patch", "put", "delete"):
            fresh = (await db.collection(collection).insert({"kind": "fresh"}))["_id"]
        method, judged, _, _ = http_request(kind, collection, n, world, fresh)
        if kind == "meta":  # the library's _meta is not a read of documents: list instead
            judged = f"/rest/{collection}"
        event(f"{kind} {'allowed' if policy.allows(method, judged) else 'refused'}")
        before = await footprint(db, collection, fresh) if method != "GET" else None
        try:
            answer = await library_call(db, principal, kind, collection, n, world, fresh)
        except Forbidden:
            assert not policy.allows(method, judged), (kind, judged, policy)
            if before is not None:
                assert await footprint(db, collection, fresh) == before, (kind, judged, policy)
            continue
        except InvalidQuery:
            assert kind in ("count_password", "count_lookup")
            assert policy.allows(method, judged)
            continue
        assert policy.allows(method, judged), (kind, judged, policy, answer)
        assert kind not in ("count_password", "count_lookup"), answer
        check_revealed(answer, world, policy)
        if kind == "fetch_one":
            check_children(answer, world, policy)
        elif kind == "fetch_list":
            for order in answer:
                check_children(order, world, policy)
