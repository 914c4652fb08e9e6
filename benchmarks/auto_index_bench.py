"""What an automatic index costs to build, and what it holds up (a script).

For each size (default 10,000 and 100,000 small documents, the second being
``limits.auto_index_max_documents``) and each SQL store, it loads the documents, then
times what the background task of ``docbase/adapters/sql/auto_indexes.py`` does: the
count of the collection and ``ensure_index`` on one path. The build holds SQLite's
write lock (on PostgreSQL, the table's writes) for that long; the figure is what the
size cap bounds (``docs/sql-adapter.md``, "Automatic indexes").

    .venv/bin/python benchmarks/auto_index_bench.py [--sizes 10000,100000]
        [--backends sqlite,postgresql] [--postgresql URL]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from portability_bench import drop, store_url

from docbase.core.documents import new_document
from docbase.core.query import MATCH_ALL
from docbase.core.schemes import open_stores

BULK = 10_000


async def build(url: str, size: int) -> tuple[float, float]:
    """Seconds to count ``size`` documents, and to index one path of them."""
    store, _ = open_stores(url)
    async with store:
        for start in range(0, size, BULK):
            await store.insert("items", [
                new_document({"price": i * 0.37 % 100, "name": f"item {i}", "qty": i,
                              "tags": ["a", "b"]}, "api")
                for i in range(start, min(size, start + BULK))])
        began = time.perf_counter()
        await store.count("items", MATCH_ALL)
        counted = time.perf_counter() - began
        began = time.perf_counter()
        await store.ensure_index("items", ("price",))
        return counted, time.perf_counter() - began


def main() -> None:
    """Print one line per store and size."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--postgresql", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        for backend in args.backends.split(","):
            for size in (int(s) for s in args.sizes.split(",")):
                url = store_url(backend, Path(directory), f"{backend}{size}", args.postgresql)
                try:
                    counted, indexed = asyncio.run(build(url, size))
                finally:
                    drop(url, args.postgresql)
                print(f"{backend:10} {size:>8} documents: count {counted * 1000:7.1f} ms, "
                      f"index build {indexed * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
