"""One ``docbase serve`` process for a benchmark, and plain JSON requests to it.

The benchmarks that time docbase over HTTP start it as a user does: the ``docbase
serve`` command, plain HTTP on loopback behind a trusted proxy header (as ``versus.py``
runs it), one worker unless told, a full-access key from ``DOCBASE_ADMIN_KEY``. A
PostgreSQL database is made afresh for it when asked (``fresh_database``) and dropped
after; a storage URL given instead (``storage``) is served as it is, for data a
benchmark loaded beforehand through the library.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

PROXY = {"X-Forwarded-Proto": "https"}
"""Sent with every request: the server trusts it (``--proxy-headers``) as HTTPS."""
_PSQL = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-c"]


def http(method: str, url: str, body: object = None, headers: dict[str, str] | None = None
         ) -> Any:
    """Send one JSON request to a loopback server; its decoded answer (``None``: empty)."""
    assert url.startswith("http://127.0.0.1"), url
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={
        "content-type": "application/json", **PROXY, **(headers or {})})
    with urllib.request.urlopen(request, timeout=300) as answer:
        raw = answer.read()
        return json.loads(raw) if raw else None


@contextlib.contextmanager
def serve_process(directory: Path, port: int, key: str, *, storage: str | None = None,
                  fresh_database: str | None = None, options: Sequence[str] = (),
                  ) -> Iterator[tuple[str, int]]:
    """Run ``docbase serve`` with its data in ``directory``; yield its base URL and pid.

    ``storage``: the URL of the default database's store (default: SQLite in
    ``directory``); ``fresh_database``: a PostgreSQL database of that name, made afresh
    and dropped after, serves instead. ``options`` are more ``docbase serve`` options.
    """
    command = [str(Path(sys.executable).parent / "docbase"), "serve", "--data-dir",
               str(directory), "--port", str(port), "--proxy-headers", "--workers", "1",
               *options]
    if fresh_database is not None:
        subprocess.run([*_PSQL, f"drop database if exists {fresh_database}", "-c",
                        f"create database {fresh_database}"], check=True, capture_output=True)
        storage = f"postgresql://postgres@127.0.0.1/{fresh_database}"
    if storage is not None:
        command += ["--storage", storage]
    with open(directory / "serve.log", "w") as log:
        process = subprocess.Popen(command, env={**os.environ, "DOCBASE_ADMIN_KEY": key},
                                   stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(400):
            try:
                http("GET", base + "/health")
                break
            except OSError as exc:
                if process.poll() is not None:
                    raise RuntimeError(f"docbase serve exited: see {directory / 'serve.log'}"
                                       ) from exc
                time.sleep(0.3)
        yield base, process.pid
    finally:
        process.terminate()
        process.wait(30)
        if fresh_database is not None:
            subprocess.run([*_PSQL, f"drop database if exists {fresh_database}"],
                           check=False, capture_output=True)
