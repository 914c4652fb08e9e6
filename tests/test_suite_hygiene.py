"""The suite's own rules hold: a test that leaves a resource open fails (docs/testing.md).

It runs pytest, with this repository's configuration (``pyproject.toml``: warnings are
errors), on tests that each leave something open, and checks that each fails and says
what it left open.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LEAKS = {
    "subprocess": ("import subprocess, sys\n"
                   "def test_leaves_it_running():\n"
                   "    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3)'])\n",
                   "Popen.__del__"),
    "socket": ("import socket\n"
               "def test_leaves_it_open():\n"
               "    socket.socket().bind(('127.0.0.1', 0))\n",
               "<socket.socket fd="),
    "file": ("def test_leaves_it_open(tmp_path):\n"
             "    (tmp_path / 'f').touch()\n"
             "    open(tmp_path / 'f').readline()\n",
             "<_io.FileIO name="),
}


def test_a_test_leaving_a_resource_open_fails(tmp_path: Path) -> None:
    for leak, (source, _message) in LEAKS.items():
        (tmp_path / f"test_{leak}.py").write_text(source)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "-n", "0",
         "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "COLUMNS": "1000"})  # summary lines in full
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{len(LEAKS)} failed" in result.stdout, result.stdout
    for leak, (_source, message) in LEAKS.items():
        failure = next(line for line in result.stdout.splitlines()
                       if line.startswith(f"FAILED test_{leak}.py"))
        assert message in failure, result.stdout
