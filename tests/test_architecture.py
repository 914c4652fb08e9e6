"""Layering rules of docs/architecture.md, enforced rather than remembered."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "docbase"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


@pytest.mark.parametrize("path", _modules("core"), ids=lambda p: p.name)
def test_core_imports_no_framework_or_driver(path: Path) -> None:
    drivers = ("litestar", "sqlalchemy", "pymongo", "bson", "aiosmtplib", "httpx",
               "prometheus_client")
    layers = ("docbase.http", "docbase.adapters")
    offending = {n for n in _imports(path) if n.split(".")[0] in drivers or
                 n.startswith(layers)}
    assert offending == set(), f"{path.name} imports {offending}"


def test_importing_core_loads_no_framework_or_driver() -> None:
    code = ("import sys, docbase, docbase.core.database, docbase.core.query, "
            "docbase.adapters.memory; "
            "print(sorted(m for m in ('litestar', 'sqlalchemy', 'pymongo', 'aiosmtplib') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_adapters_package_init_is_empty() -> None:
    assert (PACKAGE / "adapters" / "__init__.py").read_text().strip() == ""


@pytest.mark.parametrize("folder", ["adapters/memory", "adapters/sql", "adapters/mongo",
                                    "adapters/smtp", "adapters/webhook", "adapters/prometheus"])
def test_adapters_import_neither_http_nor_other_adapters(folder: str) -> None:
    own = "docbase." + folder.replace("/", ".")
    for path in _modules(folder):
        for name in _imports(path):
            assert not name.startswith("docbase.http"), f"{path} imports {name}"
            if name.startswith("docbase.adapters."):
                assert name.startswith(own), f"{path} imports {name}"
            assert name.split(".")[0] != "litestar", f"{path} imports {name}"


SQL = PACKAGE / "adapters" / "sql"
ENGINE_PACKAGES = ("docbase.adapters.sql.sqlite", "docbase.adapters.sql.postgresql")
ENGINE_PREFIXES = ("pg_", "sqlite_", "postgresql_")
"""How engine modules were named before they had packages (none may come back)."""
ENGINE_REGISTRY = "backend.py"
"""The one generic SQL module that names the engine packages: ``backend.ENGINES``, strings
imported on first use by ``dialect_for``."""


def _engine_references(path: Path) -> list[tuple[str, str]]:
    """What ``path`` imports of an engine package, or names of one in a string.

    Every ``import`` counts, at the top or inside a function, and ``from
    docbase.adapters.sql import sqlite`` too; a string naming an engine module counts
    (``lazy_module``, ``importlib``), so a lazy import cannot slip past.
    """
    found: list[tuple[str, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        how = "import"
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom):  # relative: from .sqlite import x
            names = [f"docbase.adapters.sql.{node.module or ''}".rstrip(".")] + [
                f"docbase.adapters.sql.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names, how = [node.value.partition(":")[0]], "string"
        else:
            continue
        found += [(how, name) for name in names if _names_engine_module(name)]
    return found


def _names_engine_module(name: str) -> bool:
    if any(name == p or name.startswith(p + ".") for p in ENGINE_PACKAGES):
        return True
    inside, _, module = name.partition("docbase.adapters.sql.")
    return inside == "" and module.startswith(ENGINE_PREFIXES)


@pytest.mark.parametrize("path", [p for p in sorted(SQL.glob("*.py"))
                                  if not p.name.startswith(ENGINE_PREFIXES)],
                         ids=lambda p: p.name)
def test_generic_sql_modules_reach_engines_only_through_the_engine_object(path: Path) -> None:
    """docs/sql-adapter.md ("Engine packages"): a generic module asks the engine object."""
    references = _engine_references(path)
    if path.name == ENGINE_REGISTRY:  # names the engine objects, imports none
        references = [(how, name) for how, name in references if how == "import"]
    assert references == [], f"{path.name} reaches into an engine package: {references}"


def test_engine_modules_live_in_their_packages() -> None:
    stray = sorted(p.name for p in SQL.glob("*.py")
                   if p.name.startswith(ENGINE_PREFIXES))
    assert stray == [], f"move these into adapters/sql/sqlite/ or adapters/sql/postgresql/: {stray}"


# The floors of docs/architecture.md ("Floors"): a core module imports only modules of
# its own floor or a lower one, and no module imports one that (through others) imports
# it back. Imports under ``TYPE_CHECKING`` count: an annotation is a dependency too.
# An entry names a module or a package (``pkg.__init__``: the package's own module);
# the longest entry that is the module or a package holding it decides its floor.
FLOORS: dict[int, tuple[str, ...]] = {
    0: ("errors", "ids", "names", "documents", "lifecycle", "chunks", "untrusted_json",
        "plugins", "settings.__init__", "settings.limits", "settings.stored",
        "settings.in_force", "auth.cache",
        "query.ast", "query.deadline", "processes"),
    1: ("query", "ordering", "projection", "grouping", "evaluate", "update", "versioning",
        "field_name_encoding", "parents", "paging"),
    2: ("ports", "blob_ports", "delivery_ports", "changes.signal", "auth.principal",
        "auth.scopes", "auth.decision", "events", "system_data", "access"),
    3: ("access.reading", "access.writing", "access.previous", "access.visible", "settings",
        "ratelimit", "auth", "relations", "reads", "listing", "hooks", "changes", "mail", "media",
        "webhooks", "schema", "metrics", "portability", "idempotency", "batch",
        "requestlog", "request_schemas"),
    4: ("pipeline", "collection", "collection_reads", "collection_views"),
    5: ("hooks.__init__", "hooks.context", "hooks.user", "hooks.scheduling",
        "mail.__init__", "mail.service", "media.__init__", "media.service",
        "media.uploading", "media.sweeping", "portability.backups"),
    6: ("database", "composition", "schemes", "server", "hooks.loading"),
}
FLOOR_NAMES = ("base", "query language and updates", "ports and access rules", "features",
               "pipeline and collections", "services on collections", "top")
TOP_IMPORTERS = ("docbase.http", "docbase.cli", "docbase.bootstrap", "docbase.connecting")
"""Outside core, who may import ``docbase.core.database`` (and the package ``__init__``)."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str) -> str | None:
    """The docbase module an imported name lives in (a module, else its package)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _import_graph() -> dict[str, set[str]]:
    """Each docbase module and the docbase modules it imports, annotations included."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        graph[module] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                target = _resolve(name) if name.startswith("docbase.") else None
                if target is not None and target != module:
                    graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root, imported in graph.items():
        if root in index:
            continue
        work = [(root, iter(sorted(imported)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _floor(module: str) -> int | None:
    """The floor of a ``docbase.core`` module (by its longest entry in FLOORS)."""
    name = module.removeprefix("docbase.core").lstrip(".")
    if MODULES[module].name == "__init__.py":
        name += ".__init__"
    found = [(len(entry), floor) for floor, entries in FLOORS.items() for entry in entries
             if name == entry or name.startswith(entry + ".")]
    return max(found)[1] if found else None


def test_no_import_cycle_among_docbase_modules() -> None:
    cycles = _cycles(_import_graph())
    assert cycles == [], "import cycles (annotations counted):\n" + "\n".join(
        f"{len(c)} modules: {', '.join(c)}" for c in cycles)


def test_every_core_module_has_a_floor() -> None:
    unplaced = [m for m in MODULES if m.startswith("docbase.core.") and _floor(m) is None]
    assert unplaced == [], f"add these to FLOORS (and docs/architecture.md): {unplaced}"


def test_core_imports_point_down_the_floors() -> None:
    upward = []
    for module, targets in _import_graph().items():
        floor = _floor(module)
        if floor is None:
            continue
        for target in sorted(targets):
            above = _floor(target)
            if above is not None and above > floor:
                upward.append(f"{module} ({FLOOR_NAMES[floor]}) -> {target} "
                              f"({FLOOR_NAMES[above]})")
    assert upward == [], f"{len(upward)} imports point up:\n" + "\n".join(upward)


def test_only_the_top_floor_imports_the_database() -> None:
    top = {f"docbase.core.{name}" for name in FLOORS[max(FLOORS)]} | {"docbase"}
    importers = sorted(m for m, targets in _import_graph().items()
                       if "docbase.core.database" in targets and m not in top
                       and not m.startswith(TOP_IMPORTERS))
    assert importers == [], f"import docbase.core.database below the top: {importers}"


def test_no_module_is_over_300_lines() -> None:
    long = sorted(f"{path.relative_to(PACKAGE.parent)}: {count}"
                  for path in PACKAGE.rglob("*.py")
                  if (count := len(path.read_text(encoding="utf-8").splitlines())) > 300)
    assert long == [], f"split these along a real seam: {long}"


@pytest.mark.parametrize("path", _modules("client"), ids=lambda p: p.name)
def test_the_client_imports_no_framework_and_of_http_only_its_status_table(path: Path) -> None:
    """The remote client is a top-level surface beside http and cli: httpx, never litestar;
    of the HTTP layer it reads only the one status table back (docs/client.md)."""
    names = _imports(path)
    assert {n for n in names if n.split(".")[0] == "litestar"} == set()
    assert {n for n in names if n.startswith("docbase.http")} <= {"docbase.http.statuses"}
    below = [n for n in names if n.split(".")[:2] in (["docbase", "adapters"], ["docbase", "cli"])
             or n.startswith("docbase.core.database")]
    assert below == [], f"{path.name} imports {below}"


def test_importing_the_client_loads_no_framework() -> None:
    code = ("import sys, docbase.client; "
            "print(sorted(m for m in ('litestar', 'sqlalchemy', 'pymongo', 'uvicorn') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
