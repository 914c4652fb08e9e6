"""``docbase.connect`` is typed for what it opens: mypy sees a ``RemoteDatabase`` when the
call carries a remote credential (``apikey``, ``jwt``, ``login``), else a ``Database``.

mypy --strict checks a small program of ``assert_type`` calls; one of them is wrong on
purpose, and must be the only error.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.test_quality import ROOT, _tool

# one worker runs both mypy tests, one after the other, on one cache (ROOT/.mypy_cache):
# the second checks docbase from the first's cache in ~1 s instead of ~17 s
pytestmark = pytest.mark.xdist_group("mypy")

PROGRAM = '''
from typing import assert_type

import docbase
from docbase.client import RemoteDatabase
from docbase.core.database import Database


async def main() -> None:
    assert_type(await docbase.connect("https://h:8443", apikey="k"), RemoteDatabase)
    assert_type(await docbase.connect("https://h:8443", jwt="t", timeout=5.0), RemoteDatabase)
    assert_type(await docbase.connect("https://h:8443", login=("a@b.c", "pw"),
                                      verify="docbase-data/cert.pem"), RemoteDatabase)
    assert_type(await docbase.connect("sqlite:///app.db"), Database)
    assert_type(await docbase.connect(), Database)
    assert_type(await docbase.connect("memory://", name="x"), Database)
    assert_type(await docbase.connect("sqlite:///app.db"), RemoteDatabase)  # wrong
'''


def test_mypy_sees_the_remote_or_the_embedded_database(tmp_path: Path) -> None:
    program = tmp_path / "typed_connect.py"
    program.write_text(PROGRAM)
    result = subprocess.run([*_tool("mypy"), "--strict", "--no-error-summary", str(program)],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    wrong = PROGRAM.splitlines().index(
        '    assert_type(await docbase.connect("sqlite:///app.db"), RemoteDatabase)  # wrong')
    assert len(errors) == 1, result.stdout + result.stderr
    assert f"typed_connect.py:{wrong + 1}: error: Expression is of type" in errors[0]
