"""The README's embedded example runs as written and prints what its comments say."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_docs_examples import run_example

README = Path(__file__).resolve().parent.parent / "README.md"


def _example() -> str:
    text = README.read_text()
    block = text.split("<!-- example:start -->", 1)[1].split("<!-- example:end -->", 1)[0]
    match = re.search(r"```python\n(.*?)```", block, re.S)
    assert match, "README example block not found"
    return match.group(1)


def test_readme_example_runs_and_prints_its_comments(tmp_path: Path) -> None:
    assert len(run_example(_example(), tmp_path)) == 5
    assert (tmp_path / "app.db").exists()
