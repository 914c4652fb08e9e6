"""The ``docbase`` command: serve, manage a deployment, move its data in and out.

It serves; manages databases, keys, users, schemas, webhooks, mail and media; and
exports, imports, backs up and migrates.

Every command acts on a deployment named by ``--data-dir`` (default
``./docbase-data``), ``--storage`` and ``--config``, and on one of its databases with
``--db`` (default: the primary, ``docbase``). ``docs/cli.md`` documents each command;
scripts rely on these spellings. Each command group is a module with a ``register``
function.

Output meant for scripts (a new key) goes to stdout alone; everything else to stderr.
Exit status: 0 done, 1 the operation failed (e.g. no such key), 2 bad usage or
configuration.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from docbase.cli import (
    databases,
    keys,
    mail,
    media,
    portability,
    schema,
    settings,
    users,
    webhooks,
)
from docbase.cli.common import UsageError, redact, say
from docbase.core.errors import ConfigurationError, DocbaseError

COMMAND_GROUPS = (databases, keys, users, settings, schema, mail, media, webhooks, portability)
"""The modules whose ``register(commands)`` adds their commands, in help order."""


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser of the ``docbase`` command."""
    parser = argparse.ArgumentParser(
        prog="docbase",
        description="A self-hosted document database REST service (restdb.io compatible).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``docbase`` command; return its exit status."""
    args = build_parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except (ConfigurationError, UsageError) as exc:
        say(f"error: {exc}")
        return 2
    except DocbaseError as exc:
        say(f"error: {exc.message}")
        return 1
    except KeyboardInterrupt:
        return 130


def entry_point() -> NoReturn:
    """Exit with the status of :func:`main` (for ``python -m docbase.cli``)."""
    sys.exit(main())


__all__ = ["UsageError", "build_parser", "entry_point", "main", "redact"]
