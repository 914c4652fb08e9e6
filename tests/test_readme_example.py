"""The README's embedded example runs as written and prints what its comments say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def _example() -> str:
    text = README.read_text()
    block = text.split("<!-- example:start -->", 1)[1].split("<!-- example:end -->", 1)[0]
    match = re.search(r"```python\n(.*?)```", block, re.S)
    assert match, "README example block not found"
    return match.group(1)


def test_readme_example_runs_and_prints_its_comments(tmp_path: Path) -> None:
    code = _example()
    expected = [c.strip() for c in re.findall(r"print\(.*\)\s*#\s*(.*)$", code, re.M)]
    assert len(expected) == 5
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected
    assert (tmp_path / "app.db").exists()
