"""Install CongoDB for the Mongo wire test server, once per install directory.

:func:`docbase.testing.mongo_wire.start_mongo_wire_server` calls :func:`run_install`
when :func:`needs_install` says the directory lacks a complete, current install. The
project-owned scripts it runs live in ``scripts/mongo-wire-server/`` of a source
checkout. Only the standard library is used here.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

INSTALL_TIMEOUT_S = 600.0
"""How long ``install.sh`` may take (it downloads from the npm registry)."""

# Written by install.sh once an install is complete; keep the two in sync.
_INSTALL_MARKER = ".installed-smartmongo-2.2.0"
_ENTRY_MODULE = "node_modules/@push.rocks/smartmongo/dist_ts/congodb/index.js"


class MongoWireServerError(RuntimeError):
    """The wire server could not be installed, started or found."""


def node_available() -> bool:
    """Return whether ``node`` is on ``PATH`` (needed to run the server).

    Installing additionally needs ``npm`` and ``bash``; :func:`start_mongo_wire_server`
    reports a clear error if they are missing.
    """
    return shutil.which("node") is not None


def scripts_dir() -> Path:
    """Return the ``scripts/mongo-wire-server`` directory of the source checkout.

    Raises:
        MongoWireServerError: if the package is not running from a checkout that holds
            ``scripts/mongo-wire-server/install.sh`` and ``start.mjs`` (e.g. it was
            installed as a wheel).

    """
    directory = Path(__file__).resolve().parent.parent.parent / "scripts" / "mongo-wire-server"
    missing = [name for name in ("install.sh", "start.mjs") if not (directory / name).is_file()]
    if missing:
        raise MongoWireServerError(
            f"cannot find {', '.join(missing)} in {directory}: the Mongo wire test server "
            "is only available from a source checkout of docbase "
            "(docbase/testing/../../scripts/mongo-wire-server)"
        )
    return directory


def default_install_dir() -> Path:
    """Return the default install directory, ``<repo>/.mongo-wire``."""
    return scripts_dir().parent.parent / ".mongo-wire"


def needs_install(install_dir: Path, scripts: Path) -> bool:
    """Return whether ``install.sh`` must run for ``install_dir``."""
    if not (install_dir / _INSTALL_MARKER).is_file():
        return True
    if not (install_dir / _ENTRY_MODULE).is_file():
        return True
    installed_start = install_dir / "start.mjs"
    if not installed_start.is_file():
        return True
    return installed_start.read_bytes() != (scripts / "start.mjs").read_bytes()


def run_install(install_dir: Path, scripts: Path) -> None:
    """Run ``install.sh`` into ``install_dir``, raising on failure."""
    for tool in ("bash", "node", "npm"):
        if shutil.which(tool) is None:
            raise MongoWireServerError(
                f"'{tool}' is not on PATH; it is needed to install the Mongo wire test "
                f"server into {install_dir}"
            )
    try:
        result = subprocess.run(
            ["bash", str(scripts / "install.sh"), str(install_dir)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise MongoWireServerError(
            f"install.sh did not finish within {INSTALL_TIMEOUT_S:.0f} s"
        ) from exc
    if result.returncode != 0:
        raise MongoWireServerError(
            f"install.sh failed with exit status {result.returncode}:\n"
            f"{result.stderr.strip()}\n{result.stdout.strip()}".rstrip()
        )
