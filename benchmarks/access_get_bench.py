"""Get-by-id over HTTP with and without access rules (issue 30: rules add at most 10 %).

Starts one ``docbase serve`` per backend (plain HTTP on loopback behind a trusted proxy
header, as ``versus.py`` runs it; one worker) and stores the same ``--documents`` notes,
written by one user who holds the role ``editor``, in three collections:

- **plain**: no access rules (the token holder is limited by ``auth.users.*`` only);
- **private**: ``{"read": ["*"], "create": ["*"], "private": true}``;
- **role**: ``{"read": ["editor"], "create": ["editor"]}``.

That user's login token then reads one document by a random id (``GET
/rest/<c>/ID``, ``wrk`` with 32 connections, ``benchmarks/get_random.lua``) from each
collection for ``--duration`` seconds, in interleaved rounds: every round reads every
collection, in a rotated order, so that load from other work on the machine falls on
all alike. Each round's ratio ``rules / plain`` (throughput) is taken, and the median
over the rounds is printed with its spread: at least 0.90 holds the issue's target.

    .venv/bin/python benchmarks/access_get_bench.py [--backends sqlite,postgresql]
        [--documents 10000] [--rounds 5] [--duration 5]

Needs ``wrk`` (``apt-get install wrk``) and, for PostgreSQL, a server on 127.0.0.1
(trust auth): a database ``access_get_bench`` is made afresh and dropped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from served_process import http, serve_process

HERE = Path(__file__).resolve().parent
KEY = "access-get-bench-admin-key-0123456789"
EMAIL, PASSWORD = "writer@example.com", "correct horse battery"
RULES = {"plain": None,
         "private": {"read": ["*"], "create": ["*"], "private": True},
         "role": {"read": ["editor"], "create": ["editor"]}}
FIELDS = [{"name": "title", "type": "text"}, {"name": "n", "type": "number"},
          {"name": "tags", "type": "json"}]


@contextlib.contextmanager
def served(backend: str, port: int) -> Iterator[str]:
    """A ``docbase serve`` on ``backend``; its base URL."""
    directory = Path(tempfile.mkdtemp(prefix="access-get-bench-"))
    fresh = "access_get_bench" if backend == "postgresql" else None
    with serve_process(directory, port, KEY, fresh_database=fresh) as (base, _pid):
        yield base


def seed(base: str, documents: int, directory: Path) -> str:
    """Store the notes in each collection; the user's token. Writes each ids file."""
    admin = {"x-apikey": KEY}
    http("POST", base + "/_ops/users", {"email": EMAIL, "password": PASSWORD,
                                        "roles": ["editor"]}, admin)
    answer = http("POST", base + "/auth/login", {"email": EMAIL, "password": PASSWORD})
    token = {"authorization": f"Bearer {answer['jwt']}"}
    for name, access in RULES.items():
        schema = {"fields": FIELDS, **({"access": access} if access else {})}
        http("PUT", f"{base}/rest/{name}/_meta", schema, admin)
        ids = []
        for start in range(0, documents, 1000):
            batch = [{"title": f"note {i}", "n": i, "tags": [f"t{i % 7}", f"t{i % 11}"]}
                     for i in range(start, min(documents, start + 1000))]
            ids += [d["_id"] for d in http("POST", f"{base}/rest/{name}", batch, token)]
        (directory / f"{name}.ids").write_text("\n".join(ids) + "\n")
    return token["authorization"]


def wrk(base: str, name: str, directory: Path, token: str, duration: int) -> float:
    """Requests per second of random gets by id from collection ``name``."""
    command = ["wrk", "-t", "1", "-c", "32", "-d", f"{duration}s", "--timeout", "10s",
               "-H", "X-Forwarded-Proto: https", "-H", f"authorization: {token}",
               "-s", str(HERE / "get_random.lua"), base]
    environment = {**os.environ, "BENCH_IDS": str(directory / f"{name}.ids"),
                   "BENCH_PREFIX": f"/rest/{name}/"}
    out = subprocess.run(command, check=False, env=environment, capture_output=True,
                         text=True).stdout
    if re.search(r"Non-2xx or 3xx responses: (\d+)", out):
        raise SystemExit(f"{name}: some gets failed:\n{out}")
    found = re.search(r"Requests/sec:\s+([\d.]+)", out)
    return float(found.group(1)) if found else 0.0


def measure(backend: str, args: argparse.Namespace, port: int) -> None:
    directory = Path(tempfile.mkdtemp(prefix="access-get-ids-"))
    with served(backend, port) as base:
        token = seed(base, args.documents, directory)
        names = list(RULES)
        rates: dict[str, list[float]] = {name: [] for name in names}
        for number in range(args.rounds):
            order = names[number % len(names):] + names[:number % len(names)]
            for name in order:
                rates[name].append(wrk(base, name, directory, token, args.duration))
        print(f"{backend}: {args.documents:,} notes per collection, {args.rounds} rounds "
              f"of {args.duration} s per collection, wrk 32 connections, 1 worker")
        for name in names:
            print(f"  {name:8} get-by-id {statistics.median(rates[name]):7.0f} req/s "
                  f"(rounds: {', '.join(f'{r:.0f}' for r in rates[name])})")
        for name in names[1:]:
            ratios = [rule / plain for rule, plain in zip(rates[name], rates["plain"],
                                                          strict=True)]
            ratio = statistics.median(ratios)
            print(f"  {name}/plain {ratio:.2f}x [{min(ratios):.2f}-{max(ratios):.2f}] "
                  f"({'holds' if ratio >= 0.9 else 'FAILS'} the 10 % target)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=int, default=5)
    args = parser.parse_args()
    for number, backend in enumerate(args.backends.split(",")):
        measure(backend, args, 8460 + number)


if __name__ == "__main__":
    main()
