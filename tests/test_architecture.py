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
