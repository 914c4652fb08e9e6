"""``docbase export`` and ``import`` with ``--url``: the archive moves over HTTPS.

The served database exports into, or imports from, the archive through its operator
routes (``docbase/http/operator.py``), so an operator needs no shell on its machine.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from docbase.cli.common import say
from docbase.core.portability import Summary

if TYPE_CHECKING:
    from docbase.client import RemoteDatabase


def chosen_collections(args: argparse.Namespace) -> list[str] | None:
    """The collections of ``--collections A,B`` (``None``: all of them)."""
    return None if args.collections is None else [c for c in args.collections.split(",") if c]


async def export_remote(args: argparse.Namespace, remote: RemoteDatabase) -> int:
    """``export --url ... --out FILE``: the served database's archive into ``FILE``."""
    size = await remote.operator.export(Path(args.out), collections=chosen_collections(args),
                                        secrets=args.include_secrets)
    say(f"database {remote.name!r}: exported {size / 1e6:.1f} MB from {args.remote_url}")
    return 0


async def import_remote(args: argparse.Namespace, remote: RemoteDatabase) -> int:
    """``import --url ... FILE``: the archive ``FILE`` into the served database."""
    done = Summary(**await remote.operator.import_(Path(args.file), mode=args.mode,
                                                   validate=not args.no_validate))
    say(done.line(f"database {remote.name!r}: imported"))
    return 0
