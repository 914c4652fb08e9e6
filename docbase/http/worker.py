"""What each worker of ``docbase serve`` runs: the app it builds and what it starts.

The parent process (:mod:`docbase.http.serve`) prepares the deployment and hands it to
the supervisor; each worker the supervisor starts calls :func:`worker_app`, which reads
the deployment from the environment and builds the app afresh (so a respawn after SIGHUP
serves databases added meanwhile). Kept apart from :mod:`docbase.http.serve` so that the
``docbase serve`` command, which only prepares and hands over, does not import the web
framework and the route handlers it never runs.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from litestar.datastructures import State

from docbase.bootstrap import build_deployment_server, ensure_admin_key
from docbase.config import Deployment
from docbase.core.database import Database
from docbase.core.errors import DocbaseError
from docbase.core.hooks.jobs import Job
from docbase.core.hooks.scheduling import JobScheduler
from docbase.core.media.sweeping import sweep_job
from docbase.core.metrics import NO_INSTRUMENTS
from docbase.core.plugins import lazy_module
from docbase.core.requestlog import RequestLog
from docbase.core.schemes import scheme_of
from docbase.core.webhooks.dispatcher import WebhookDispatcher
from docbase.http.app import create_app
from docbase.http.console.backups import backup_place
from docbase.http.console.logs import LOG_STATE
from docbase.http.instrumentation import install_metrics, metrics_access
from docbase.http.launch import DEPLOYMENT_ENV
from docbase.http.logs import access_lines
from docbase.http.observe import RequestObserver
from docbase.http.proxy import ForwardedHttpsOnly
from docbase.http.security_headers import SecurityHeaders
from docbase.http.shutdown_watch import ShutdownWatch
from docbase.http.supervision import exit_with_supervisor

if TYPE_CHECKING:
    from docbase.core.portability import backups
else:  # imported when backups are scheduled: it brings the archive code and tarfile
    backups = lazy_module("docbase.core.portability.backups")

logger = logging.getLogger("docbase.serve")


def scheduled_backups(deployment: Deployment, db: Database) -> list[Job]:
    """The backup job of ``db`` when the deployment has a ``backup_dir``."""
    if deployment.backup_dir is None:
        return []
    return [backups.backup_job(db, Path(deployment.backup_dir), deployment.backup_keep,
                               deployment.backup_schedule, db.settings)]


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
        watch = ShutdownWatch(deployment.graceful_timeout)  # exits should a step hang
        for task in resuming:
            task.cancel()
        watch.step("background tasks")
        await asyncio.gather(*resuming, return_exceptions=True)
        watch.step("job schedulers")
        for scheduler in schedulers:
            await scheduler.close()
        watch.step("webhook dispatchers")
        for dispatcher in dispatchers:
            await dispatcher.close()
        watch.step("request logs")
        for log in request_logs.values():  # the requests of the last second
            await log.close()
        watch.step("databases")
        await server.close()
        if instruments is not None:  # what the last requests and store calls tallied
            instruments.flush()
        watch.done()

    app: Any = create_app(server, manage_lifespan=False, on_startup=[start],
                          on_shutdown=[stop], metrics=metrics_access(deployment, instruments),
                          state=State({**backup_place(deployment.backup_dir,
                                                      deployment.backup_keep,
                                                      deployment.backup_schedule),
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


