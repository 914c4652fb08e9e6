"""docs/client.md's first session runs as written against a freshly started server.

The block between ``<!-- client-session:start -->`` and ``<!-- client-session:end -->``
runs in a fresh interpreter in the directory where ``docbase serve`` was started; each
``print(...)  # text`` line must print ``text`` (``…`` matches anything). The only
change made to it: the address, when the test server did not get port 8443.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.test_readme_walkthrough import matches
from tests.test_serve_harness import serving

PAGE = Path(__file__).resolve().parent.parent / "docs" / "client.md"


def session() -> str:
    match = re.search(r"<!-- client-session:start -->\s*```python\n(.*?)```\s*"
                      r"<!-- client-session:end -->", PAGE.read_text(), re.DOTALL)
    assert match, "docs/client.md has no client-session block"
    return match.group(1)


def test_the_session_follows_the_readme_walkthrough() -> None:
    code = session()
    for spelled in ("insert_many", "$orderby", "$inc", "children(", "delete(",
                    'verify="docbase-data/cert.pem"', "expected_version"):
        assert spelled in code


def test_the_client_session_runs_as_written(tmp_path: Path) -> None:
    code = session()
    expected = [c.strip() for c in re.findall(r"print\(.*\)\s*#\s*(.*)$", code, re.M)]
    with serving(tmp_path) as served:
        code = code.replace('"https://127.0.0.1:8443"', f'"{served.url}"', 1)
        assert served.url in code
        result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path,
                                capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    printed = result.stdout.splitlines()
    assert len(printed) == len(expected) == 12, printed
    for want, got in zip(expected, printed, strict=True):
        assert matches(want, got), (want, got)
