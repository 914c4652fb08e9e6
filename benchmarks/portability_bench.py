"""Export and import throughput and peak memory on SQLite and PostgreSQL (a script).

For each database it loads N documents (default 1,000,000) with the store's own bulk
insert path (``DocumentStore.insert`` in calls of 10,000 documents: the reference),
exports them with ``export_archive``, imports the archive into an empty store with
``import_archive`` (schema checks on, unique claims, batches all or nothing), and then
loads the same documents with the bulk path once more, so the reference is measured
twice around the import on a machine whose load moves. Each phase runs in its own
process, so its peak resident memory (``ru_maxrss`` of that process) is its own.

    .venv/bin/python benchmarks/portability_bench.py [--documents 1000000]
        [--backends sqlite,postgresql] [--postgresql URL] [--json]

With ``--versus PYTHON`` it measures only the export on SQLite, this tree against the
docbase that interpreter imports (another checkout's venv), interleaved for
``--rounds`` rounds on one loaded database: wall documents/s and the CPU seconds of
each export (all its threads, the interpreter's start left out), with the load average.
Each export includes the capture lease's fixed wait (about 1.2 s, docs/portability.md).

Targets (issue 24): import at least 0.8x the bulk insert path, export at least 150,000
documents/s on SQLite, peak resident memory under 150 MiB whatever the size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from docbase.core.database import Database
from docbase.core.documents import Document, new_document
from docbase.core.portability import export_archive, import_archive
from docbase.core.schemes import open_stores

COLLECTION = "items"
BULK = 10_000


def make_documents(start: int, stop: int) -> list[Document]:
    """Documents of 7 fields (like benchmarks/sql_bench.py): string, numbers, array, object."""
    return [new_document({"email": f"user{i}@example.com", "nick": f"nick-{i % 977}",
                          "n": i, "price": (i * 37) % 1000 / 10, "tags": [i % 7, "x"],
                          "address": {"city": f"city-{i % 101}", "zip": f"{i % 99999:05d}"},
                          "active": i % 2 == 0}, "bench") for i in range(start, stop)]


async def _bulk(url: str, count: int) -> float:
    store, _ = open_stores(url)
    async with store:
        began = time.perf_counter()
        for start in range(0, count, BULK):
            await store.insert(COLLECTION, make_documents(start, min(start + BULK, count)))
        return time.perf_counter() - began


async def _export(url: str, archive: str) -> float:
    store, blobs = open_stores(url)
    async with Database(store, blobs) as db:
        began = time.perf_counter()
        await export_archive(db, Path(archive))
        return time.perf_counter() - began


async def _import(url: str, archive: str) -> float:
    store, blobs = open_stores(url)
    async with Database(store, blobs) as db:
        began = time.perf_counter()
        await import_archive(db, Path(archive))
        return time.perf_counter() - began


def phase(name: str, *args: str, python: str = sys.executable) -> dict[str, float]:
    """Run one phase in a child process: its seconds, its CPU seconds (every thread's,
    imports left out) and the process's peak resident memory (MiB)."""
    child = subprocess.Popen([python, __file__, "--phase", name, *args],
                             stdout=subprocess.PIPE)
    assert child.stdout is not None
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"phase {name} failed ({child.returncode})")
    seconds, cpu = (float(figure) for figure in output.split())
    return {"seconds": seconds, "cpu": cpu, "rss_mib": usage.ru_maxrss / 1024}


def _psql(url: str, sql: str) -> None:
    subprocess.run(["psql", url, "-qc", sql], check=True,
                   env=os.environ | {"PGOPTIONS": "-c client_min_messages=warning"})


def store_url(backend: str, work: Path, name: str, postgresql: str) -> str:
    """A fresh store of ``backend``: a new SQLite file, or a new PostgreSQL schema."""
    if backend == "sqlite":
        return f"sqlite:///{work}/{name}.db"
    schema = f"docbase_bench_{uuid.uuid4().hex[:8]}"
    _psql(postgresql, f'CREATE SCHEMA "{schema}"')
    return f"{postgresql}?schema={schema}"


def drop(url: str, postgresql: str) -> None:
    """Drop a PostgreSQL schema made by :func:`store_url`."""
    if "schema=" in url:
        _psql(postgresql, f'DROP SCHEMA "{url.rsplit("schema=", 1)[1]}" CASCADE')


def bench(backend: str, count: int, postgresql: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="docbase-portability-bench-") as tmp:
        work = Path(tmp)
        urls = [store_url(backend, work, name, postgresql) for name in ("a", "b", "c")]
        archive = str(work / "archive.tar")
        try:
            bulk_before = phase("bulk", urls[0], str(count))
            exported = phase("export", urls[0], archive)
            size = Path(archive).stat().st_size
            imported = phase("import", urls[1], archive)
            bulk_after = phase("bulk", urls[2], str(count))
        finally:
            for url in urls:
                drop(url, postgresql)
    bulk_rate = count / ((bulk_before["seconds"] + bulk_after["seconds"]) / 2)
    import_rate = count / imported["seconds"]
    return {"backend": backend, "documents": count, "archive_mib": size / 2**20,
            "bulk_insert_docs_s": bulk_rate, "bulk_rss_mib": bulk_before["rss_mib"],
            "export_docs_s": count / exported["seconds"],
            "export_rss_mib": exported["rss_mib"],
            "import_docs_s": import_rate, "import_rss_mib": imported["rss_mib"],
            "import_vs_bulk": import_rate / bulk_rate}


def versus(count: int, baseline: str, rounds: int) -> None:
    """Export one SQLite database with this tree and with ``baseline``, interleaved."""
    with tempfile.TemporaryDirectory(prefix="docbase-portability-versus-") as tmp:
        url, archive = f"sqlite:///{tmp}/a.db", f"{tmp}/archive.tar"
        phase("bulk", url, str(count))
        print(f"export of {count:,} SQLite documents; load {os.getloadavg()[0]:.1f}")
        for round_ in range(1, rounds + 1):
            for label, python in (("baseline", baseline), ("this tree", sys.executable)):
                result = phase("export", url, archive, python=python)
                print(f"  round {round_} {label:<9} {count / result['seconds']:>9,.0f} docs/s"
                      f"  {result['seconds']:5.2f} s  CPU {result['cpu']:5.2f} s"
                      f"  peak RSS {result['rss_mib']:.0f} MiB"
                      f"  load {os.getloadavg()[0]:.1f}", flush=True)


def run_phase(name: str, args: list[str]) -> None:
    cpu = time.process_time()  # after the imports: the phase's own CPU seconds
    match name:
        case "bulk":
            seconds = asyncio.run(_bulk(args[0], int(args[1])))
        case "export":
            seconds = asyncio.run(_export(args[0], args[1]))
        case _:
            seconds = asyncio.run(_import(args[0], args[1]))
    print(seconds, time.process_time() - cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--postgresql", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--versus", metavar="PYTHON",
                        help="export only, against the docbase of this interpreter")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--phase", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        run_phase(args.phase[0], args.phase[1:])
        return
    if args.versus:
        versus(args.documents, args.versus, args.rounds)
        return
    for backend in args.backends.split(","):
        result = bench(backend, args.documents, args.postgresql)
        if args.json:
            print(json.dumps(result))
            continue
        print(f"{backend}: {result['documents']:,} documents, archive "
              f"{result['archive_mib']:.0f} MiB\n"
              f"  bulk insert (reference) {result['bulk_insert_docs_s']:>10,.0f} docs/s  "
              f"peak RSS {result['bulk_rss_mib']:.0f} MiB\n"
              f"  export                  {result['export_docs_s']:>10,.0f} docs/s  "
              f"peak RSS {result['export_rss_mib']:.0f} MiB\n"
              f"  import                  {result['import_docs_s']:>10,.0f} docs/s  "
              f"peak RSS {result['import_rss_mib']:.0f} MiB  "
              f"({result['import_vs_bulk']:.2f}x bulk insert)", flush=True)


if __name__ == "__main__":
    main()
