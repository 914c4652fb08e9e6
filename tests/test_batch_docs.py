"""The curl examples of docs/batch.md run against a real ``docbase serve``, as written."""

from __future__ import annotations

from pathlib import Path

from tests.test_portability_docs import curl_examples, run_curl_examples

PAGE = Path(__file__).resolve().parent.parent / "docs" / "batch.md"


def test_the_batch_page_s_curl_examples_print_what_it_says(tmp_path: Path) -> None:
    steps = curl_examples(PAGE)
    assert len(steps) >= 8
    run_curl_examples(steps, tmp_path)
