"""The bundled HTTPS server behind ``docbase serve``.

:func:`run` prepares a :class:`~docbase.config.Deployment` in the parent process (data
directory, certificate, and with ``docbase/bootstrap.py`` a full-access key for every
database that has none) and then hands it to uvicorn's supervisor in a fresh, small
process (:func:`~docbase.http.launch.supervise`), which binds the port, starts the
workers and stops them gracefully on SIGTERM/SIGINT (in-flight requests finish, for at
most ``graceful_timeout`` seconds). Each worker builds its own app with
:func:`~docbase.http.worker.worker_app` from the deployment passed down in the
environment, reading the database catalog afresh, so SIGHUP to the main process (which
respawns the workers one by one) serves databases added meanwhile and loads the hooks
files afresh. Every worker runs the databases' scheduled jobs; their leases make each
tick run once; and delivers their webhooks, each held by one process at a time
(``docbase/core/webhooks/``). Each worker, once started, also sends in the background
the mail a stopped process left queued (:func:`~docbase.http.worker.resume_mail`).

uvicorn (httptools, uvloop) replaced Granian because Granian refuses raw ``"`` in a
query string; ``docs/deploy.md`` has the figures of both.
"""

from __future__ import annotations

import asyncio
import logging
import logging.config
import os
import socket
import sys
from typing import TextIO

import msgspec

from docbase.bootstrap import bootstrap
from docbase.config import PID_FILE, Deployment, ensure_data_dir
from docbase.core.composition import DatabaseSpec, build_database
from docbase.core.errors import ConfigurationError
from docbase.core.schemes import scheme_of
from docbase.http.banner import banner
from docbase.http.launch import DEPLOYMENT_ENV, Listener, supervise
from docbase.http.logs import announce, logging_config
from docbase.http.tls import ensure_self_signed


def prepare_listener(deployment: Deployment) -> Listener:
    """Return the TLS files to use, making a self-signed certificate when none is set.

    Behind a proxy (``proxy_headers``) without certificate files, the port speaks
    plain HTTP to the proxy.

    Raises:
        ConfigurationError: a configured certificate or key file is unreadable.

    """
    if deployment.certfile and deployment.keyfile:
        for path in (deployment.certfile, deployment.keyfile):
            if not os.access(path, os.R_OK):
                raise ConfigurationError(f"cannot read TLS file {path}")
        return Listener(deployment.certfile, deployment.keyfile)
    if deployment.proxy_headers:
        return Listener(None, None)
    certfile, keyfile, created = ensure_self_signed(deployment.data_path, deployment.host)
    return Listener(str(certfile), str(keyfile), self_signed=True, created=created)


def check(deployment: Deployment) -> None:
    """Refuse deployments that cannot work before anything is started.

    Raises:
        ConfigurationError: e.g. the default database does not exist, the port is
            taken, in-memory storage would be shared by several workers, or a hooks
            file cannot be loaded.

    """
    deployment.database(deployment.default_database)
    for entry in deployment.all_databases():
        if entry.hooks:  # loaded once here, so a broken file stops the start with its name
            build_database(DatabaseSpec(entry.name, "memory://", hooks=entry.hooks))
    _check_port(deployment.host, deployment.port)
    if deployment.workers > 1:
        for entry in deployment.all_databases():
            if scheme_of(entry.storage) == "memory":
                raise ConfigurationError(
                    f"database {entry.name!r} is in memory: with workers > 1 each worker "
                    "would hold different data; use SQLite or PostgreSQL storage"
                )


def _check_port(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ConfigurationError(f"cannot listen on {host}:{port}: {exc.strerror}") from None


def run(deployment: Deployment, *, out: TextIO | None = None) -> None:
    """Prepare the deployment and serve it until SIGTERM/SIGINT (blocking).

    Raises:
        ConfigurationError: the deployment cannot be served; the message says why.

    """
    out = out or sys.stdout
    check(deployment)
    logging.config.dictConfig(logging_config(deployment.log_format))
    ensure_data_dir(deployment.data_path)
    listener = prepare_listener(deployment)
    admin = asyncio.run(bootstrap(deployment))
    if deployment.log_format == "json":
        for line in banner(deployment, listener, admin).splitlines():
            announce(line, "json")
    else:
        print(banner(deployment, listener, admin), file=out, flush=True)
    os.environ[DEPLOYMENT_ENV] = msgspec.json.encode(deployment).decode()
    supervise(WORKER_APP, deployment, listener, pid_file=deployment.data_path / PID_FILE)


WORKER_APP = "docbase.http.worker:worker_app"
"""Import path of the app factory every worker calls."""


