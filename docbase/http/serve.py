"""The bundled HTTPS server behind ``docbase serve``.

:func:`run` prepares a :class:`~docbase.config.Deployment` in the parent process (data
directory, certificate, and with ``docbase/bootstrap.py`` a full-access key for every
database that has none) and then hands it to uvicorn's supervisor in a fresh, small
process (:func:`~docbase.http.launch.supervise`), which binds the port, starts the
workers and stops them gracefully on SIGTERM/SIGINT (in-flight requests finish, for at
most ``graceful_timeout`` seconds). Each worker builds its own app with
:func:`worker_app` from the deployment passed down in the environment, reading the
database catalog afresh, so SIGHUP to the main process (which respawns the workers one
by one) serves databases added meanwhile and loads the hooks files afresh. Every worker
runs the databases' scheduled jobs; their leases make each tick run once; and delivers
their webhooks, each held by one process at a time (``docbase/core/webhooks/``). Each worker,
once started, also sends in the background the mail a stopped process left queued
(:func:`resume_mail`).

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
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import msgspec
from litestar.datastructures import State

from docbase.bootstrap import (
    bootstrap,
    build_deployment_server,
    ensure_admin_key,
)
from docbase.config import PID_FILE, Deployment, ensure_data_dir
from docbase.core.composition import DatabaseSpec, build_database
from docbase.core.database import Database
from docbase.core.errors import ConfigurationError, DocbaseError
from docbase.core.hooks.jobs import Job
from docbase.core.hooks.scheduling import JobScheduler
from docbase.core.media.sweeping import sweep_job
from docbase.core.metrics import NO_INSTRUMENTS
from docbase.core.plugins import lazy_module
from docbase.core.requestlog import RequestLog
from docbase.core.schemes import scheme_of
from docbase.core.webhooks.dispatcher import WebhookDispatcher
from docbase.http.app import create_app
from docbase.http.banner import banner
from docbase.http.console.backups import backup_place
from docbase.http.console.logs import LOG_STATE
from docbase.http.instrumentation import install_metrics, metrics_access
from docbase.http.launch import DEPLOYMENT_ENV, Listener, supervise
from docbase.http.logs import access_lines, announce, logging_config
from docbase.http.observe import RequestObserver
from docbase.http.proxy import ForwardedHttpsOnly
from docbase.http.security_headers import SecurityHeaders
from docbase.http.supervision import exit_with_supervisor
from docbase.http.tls import ensure_self_signed

if TYPE_CHECKING:
    from docbase.core.portability import backups
else:  # imported when backups are scheduled: it brings the archive code and tarfile
    backups = lazy_module("docbase.core.portability.backups")

logger = logging.getLogger("docbase.serve")

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


def scheduled_backups(deployment: Deployment, db: Database) -> list[Job]:
    """The backup job of ``db`` when the deployment has a ``backup_dir``."""
    if deployment.backup_dir is None:
        return []
    return [backups.backup_job(db, Path(deployment.backup_dir), deployment.backup_keep,
                               deployment.backup_schedule)]


def build_app(deployment: Deployment) -> Any:
    """Build the ASGI app a worker serves: docbase, behind the proxy check if configured."""
    entries = deployment.all_databases()
    instruments = install_metrics(deployment)  # before the stores are built: they are timed
    server = build_deployment_server(deployment)
    in_memory = [entry.name for entry in entries if scheme_of(entry.storage) == "memory"]
    schedulers = [JobScheduler(db, [*db.jobs, sweep_job(db), *scheduled_backups(deployment, db)])
                  for db in server.databases.values()]  # every db: the media sweep, backups
    dispatchers = [WebhookDispatcher(db) for db in server.databases.values()]
    request_logs = {name: RequestLog(db.store, deployment.request_log_keep)
                    for name, db in server.databases.items()
                    } if deployment.request_log_keep else {}

    resuming: set[asyncio.Task[Any]] = set()

    async def start() -> None:
        await server.open()
        for name in in_memory:  # nothing outlives the process: bootstrap here, not in run()
            await ensure_admin_key(server.databases[name], deployment.data_path)
        for scheduler in schedulers:  # every worker: the jobs' leases keep each tick single
            await scheduler.open()
        for dispatcher in dispatchers:  # every worker: a lease per webhook keeps it single
            await dispatcher.open()
        for log in request_logs.values():  # every worker writes its own requests
            await log.open()
        for database in server.databases.values():  # mail a stopped process left queued
            resuming.add(asyncio.create_task(resume_mail(database)))
        if instruments is not None:  # the tallies reach the shared metrics once a second
            resuming.add(asyncio.create_task(instruments.flush_every()))

    async def stop() -> None:
        for task in resuming:
            task.cancel()
        await asyncio.gather(*resuming, return_exceptions=True)
        for scheduler in schedulers:
            await scheduler.close()
        for dispatcher in dispatchers:
            await dispatcher.close()
        for log in request_logs.values():  # the requests of the last second
            await log.close()
        await server.close()
        if instruments is not None:  # what the last requests and store calls tallied
            instruments.flush()

    app: Any = create_app(server, manage_lifespan=False, on_startup=[start],
                          on_shutdown=[stop], metrics=metrics_access(deployment, instruments),
                          state=State({**backup_place(deployment.backup_dir,
                                                      deployment.backup_keep),
                                       LOG_STATE: bool(request_logs)}),
                          logging_config=None)  # docbase.http.logs configures logging
    trusted = None
    if deployment.proxy_headers:
        app = ForwardedHttpsOnly(app, deployment.trusted_proxies)
        trusted = app.is_trusted
    return SecurityHeaders(RequestObserver(app, instruments or NO_INSTRUMENTS,
                                           trusted_proxy=trusted,
                                           access=access_lines(deployment.log_format),
                                           request_logs=request_logs,
                                           default_database=deployment.default_database))


async def resume_mail(database: Database) -> None:
    """Send the mail a stopped process left ``queued``, in the background of a worker.

    Every worker tries; each record is claimed by exactly one of them
    (``docbase/core/mail/outbound.py``). A failure is logged, never raised.
    """
    try:
        await database.mail.resume()
    except DocbaseError as exc:
        logger.error("database %s: resuming queued mail failed: %s", database.name,
                     exc.message)
    except Exception:  # a background task has no caller to raise to
        logger.exception("database %s: resuming queued mail failed", database.name)


def worker_app() -> Any:
    """Build the app from the deployment in the environment (the server's app factory).

    The worker stops once its supervisor is gone, even one killed with SIGKILL
    (:func:`~docbase.http.supervision.exit_with_supervisor`).
    """
    deployment = msgspec.json.decode(os.environ[DEPLOYMENT_ENV], type=Deployment)
    exit_with_supervisor(deployment.graceful_timeout)
    return build_app(deployment)


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


WORKER_APP = "docbase.http.serve:worker_app"
"""Import path of the app factory every worker calls."""


