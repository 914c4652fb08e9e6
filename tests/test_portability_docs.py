"""The curl examples of docs/portability.md run against a real ``docbase serve``.

Each ``$ command`` line of a block between ``<!-- curl-example:start -->`` and
``<!-- curl-example:end -->`` runs in bash, in order, with ``DOCBASE``, ``KEY`` and
``CURL_CA_BUNDLE`` set as the page's ``export`` lines set them; what it prints must be
the lines written under it.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.test_serve_harness import launch

PAGE = Path(__file__).resolve().parent.parent / "docs" / "portability.md"


def curl_examples(page: Path = PAGE) -> list[tuple[str, list[str]]]:
    """Each command of the page's curl blocks with the output lines written under it."""
    steps: list[tuple[str, list[str]]] = []
    for block in re.findall(r"<!-- curl-example:start -->\n```console\n(.*?)```",
                            page.read_text(), re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
    return steps


def run_curl_examples(steps: list[tuple[str, list[str]]], tmp_path: Path) -> None:
    """Run ``steps`` in order against a new ``docbase serve``; check what each prints."""
    served = launch(tmp_path)
    try:
        env = dict(os.environ, DOCBASE=served.url, KEY=served.admin_key,
                   CURL_CA_BUNDLE=str(served.data_dir / "cert.pem"))
        for command, expected in steps:
            done = subprocess.run(["bash", "-c", command], env=env, cwd=tmp_path,
                                  capture_output=True, text=True, timeout=60, check=False)
            assert done.returncode == 0, (command, done.stderr)
            assert done.stdout.splitlines() == expected, command
    finally:
        served.stop()


def test_the_curl_examples_print_what_the_page_says(tmp_path: Path) -> None:
    steps = curl_examples()
    assert len(steps) >= 4
    run_curl_examples(steps, tmp_path)
