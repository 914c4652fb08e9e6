"""ruff and mypy --strict hold on the package (run as part of the test suite)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# one worker runs both mypy tests, one after the other, on one cache (ROOT/.mypy_cache):
# the second checks docbase from the first's cache in ~1 s instead of ~17 s
pytestmark = pytest.mark.xdist_group("mypy")

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> list[str]:
    local = Path(sys.executable).parent / name
    return [str(local)] if local.exists() else [shutil.which(name) or name]


def test_ruff_is_clean() -> None:
    result = subprocess.run([*_tool("ruff"), "check", "docbase", "tests", "benchmarks"],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = subprocess.run([*_tool("mypy"), "docbase"], cwd=ROOT, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
