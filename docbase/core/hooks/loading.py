"""Loading a database's hooks and jobs from a Python file or module (``docbase serve``).

The file (``hooks = "hooks.py"`` in the config) or module (``hooks = "shop.hooks"``)
defines ``setup(db)``, which registers hooks and jobs on the database it is given with
``@db.hook`` and ``@db.job`` exactly as an embedding application does. A file is
executed afresh on every load (each server worker loads it when it starts, so a
SIGHUP, which restarts the workers, loads the edited file).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from docbase.core.errors import ConfigurationError

if TYPE_CHECKING:
    from docbase.core.database import Database

SETUP = "setup"
"""The function a hooks file or module defines; it receives the database."""


def load_hooks(database: Database, target: str) -> None:
    """Run the ``setup(db)`` of the file or module ``target`` on ``database``.

    ``target`` is a file when it ends in ``.py`` or names an existing file, else a
    module name importable from ``sys.path``.

    Raises:
        ConfigurationError: the file or module cannot be loaded, has no ``setup``, or
            ``setup`` raises; the message names the target.

    """
    module_name = "docbase_hooks_" + re.sub(r"\W", "_", database.name)
    try:
        if target.endswith(".py") or Path(target).is_file():
            spec = importlib.util.spec_from_file_location(module_name, target)
            if spec is None or spec.loader is None:
                raise ConfigurationError(f"hooks {target!r}: not a Python file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module  # replaced on every load
            spec.loader.exec_module(module)
        elif target in sys.modules:  # a forked worker: load the source as it is now
            module = importlib.reload(sys.modules[target])
        else:
            module = importlib.import_module(target)
    except ConfigurationError:
        raise
    except FileNotFoundError:
        raise ConfigurationError(f"hooks {target!r}: no such file") from None
    except Exception as exc:
        raise ConfigurationError(
            f"hooks {target!r} cannot be loaded: {type(exc).__name__}: {exc}") from exc
    setup = getattr(module, SETUP, None)
    if not callable(setup) or inspect.iscoroutinefunction(setup):
        raise ConfigurationError(f"hooks {target!r} must define a plain function setup(db)")
    try:
        setup(database)
    except Exception as exc:
        raise ConfigurationError(
            f"hooks {target!r}: setup(db) raised {type(exc).__name__}: {exc}") from exc
