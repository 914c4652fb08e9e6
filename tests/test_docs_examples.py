"""Every example block of docs/*.md runs as written and prints what its comments say.

A block between ``<!-- example:start -->`` and ``<!-- example:end -->`` is run in a
fresh interpreter in an empty directory; each ``print(...)  # text`` line must print
``text``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _examples() -> list[tuple[str, str]]:
    found = []
    for page in sorted(DOCS.glob("*.md")):
        blocks = page.read_text().split("<!-- example:start -->")[1:]
        for number, block in enumerate(blocks, 1):
            match = re.search(r"```python\n(.*?)```", block.split("<!-- example:end -->")[0],
                              re.S)
            assert match, f"{page.name}: example {number} has no python block"
            found.append((f"{page.name}#{number}", match.group(1)))
    return found


EXAMPLES = _examples()


def test_the_docs_have_examples() -> None:
    assert "embedding.md#1" in [name for name, _ in EXAMPLES]


def run_example(code: str, cwd: Path) -> list[str]:
    """Run ``code`` in ``cwd``; check that it prints what its ``print(...)  # comments``
    say, line by line; return those lines."""
    expected = [c.strip() for c in re.findall(r"print\(.*\)\s*#\s*(.*)$", code, re.M)]
    result = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected
    return expected


@pytest.mark.parametrize(("name", "code"), EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_docs_example_runs_and_prints_its_comments(name: str, code: str,
                                                   tmp_path: Path) -> None:
    assert run_example(code, tmp_path), f"{name} prints nothing to check"
