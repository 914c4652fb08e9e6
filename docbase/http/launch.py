"""How ``docbase serve`` hands over to uvicorn's supervisor, in a process of its own size.

Preparing a deployment (``docbase/bootstrap.py``: the data directory, the databases'
full-access keys, a self-signed certificate) imports the whole library and opens every
database; the supervisor needs none of that, only uvicorn, for as long as the server
runs. So :func:`supervise` replaces the preparing process by a fresh interpreter
(``os.execv``: same process id, same open files, same environment) that imports this
module alone and runs :func:`main`: the supervisor holds ~30 MiB rather than ~85 MiB
(``docs/benchmarks.md``, run 8). The workers are spawned from it and import the app
themselves, as before. This module and :mod:`.supervision` import nothing of docbase's
core beyond the deployment's configuration, :data:`docbase.core.metrics.MULTIPROC_ENV` and
:mod:`docbase.core.processes` (of the standard library only), nor the app.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import msgspec

from docbase.config import Deployment
from docbase.core.metrics import MULTIPROC_ENV
from docbase.http.coalescing import CoalescingHttpProtocol
from docbase.http.connection_shares import shares_file
from docbase.http.logs import logging_config
from docbase.http.supervision import (
    TLS12_CIPHERS,
    WORKER_HEALTHCHECK_SECONDS,
    TlsConfig,
    UvicornRunner,
)

DEPLOYMENT_ENV = "DOCBASE_DEPLOYMENT"
"""The environment variable that carries the deployment (JSON) to the workers."""
LAUNCH_ENV = "DOCBASE_LAUNCH"
"""The environment variable that carries the :class:`Launch` to the fresh supervisor."""


class Listener(msgspec.Struct, frozen=True):
    """How the server listens: TLS files, or plain HTTP behind a proxy."""

    certfile: str | None
    keyfile: str | None
    self_signed: bool = False
    created: bool = False

    @property
    def tls(self) -> bool:
        """Tell whether the port speaks TLS."""
        return self.certfile is not None


class Launch(msgspec.Struct, frozen=True):
    """What the supervisor serves: the app factory's import path, how, the pid file."""

    target: str
    listener: Listener
    pid_file: str | None


class Runner(Protocol):
    """A configured ASGI server."""

    def serve(self) -> None:
        """Serve until SIGTERM/SIGINT, then stop gracefully."""


def base_url(deployment: Deployment, listener: Listener) -> str:
    """Return the URL a client on this machine reaches the server at."""
    host = deployment.host
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"{'https' if listener.tls else 'http'}://{host}:{deployment.port}"


def http_server(
    target: str, deployment: Deployment, listener: Listener, *, pid_file: Path | None = None
) -> Runner:
    """Configure the ASGI server as ``docbase serve`` runs it (the benchmarks reuse this).

    uvicorn with the httptools parser on uvloop: it accepts what the original service's
    clients send, raw ``"`` in ``q`` and ``h`` included, which Granian refuses with an
    empty 400 (``docs/deploy.md`` has the measurements). ``target`` is the import path
    of an ASGI app factory; TLS 1.2 or later when the listener has certificate files,
    TLS 1.2 offering forward-secret AEAD cipher suites only (``docs/security.md``);
    HTTP/1.1. A client gets ``header_timeout`` to send each request's headers, so slow
    clients cannot hold connections open for long.
    """
    config = TlsConfig(
        target,
        factory=True,
        host=deployment.host,
        port=deployment.port,
        workers=deployment.workers,
        loop="docbase.http.accepting:BalancedLoop",  # uvloop; connections spread evenly
        http=CoalescingHttpProtocol,  # httptools; a response's head and body in one send
        ws="none",
        lifespan="on",
        ssl_certfile=listener.certfile,
        ssl_keyfile=listener.keyfile,
        ssl_ciphers=TLS12_CIPHERS,
        timeout_graceful_shutdown=math.ceil(deployment.graceful_timeout),
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
        proxy_headers=False,  # docbase.http.proxy decides whom to believe
        server_header=False,  # SecurityHeaders sends "Server: docbase"
        access_log=False,  # docbase.http.observe writes the access lines
        log_level="info",
        log_config=logging_config(deployment.log_format),
    )
    config.header_timeout = deployment.header_timeout
    return UvicornRunner(config, base_url(deployment, listener), pid_file,
                         log_format=deployment.log_format)


def supervise(target: str, deployment: Deployment, listener: Listener, *,
              pid_file: Path | None) -> None:
    """Serve ``deployment`` until SIGTERM/SIGINT from a fresh, small process (blocking).

    On POSIX this process is replaced (``os.execv``) and the call never returns;
    elsewhere it serves from this process.
    """
    launch = Launch(target, listener, None if pid_file is None else str(pid_file))
    if os.name != "posix":
        _serve(launch, deployment)
        return
    os.environ[DEPLOYMENT_ENV] = msgspec.json.encode(deployment).decode()
    os.environ[LAUNCH_ENV] = msgspec.json.encode(launch).decode()
    sys.stdout.flush()
    sys.stderr.flush()
    # the same module search path as this process, as multiprocessing gives its children
    code = (f"import sys; sys.path[:] = {sys.path!r}; "
            "from docbase.http.launch import main; main()")
    os.execv(sys.executable, [sys.executable, "-c", code])


def main() -> None:
    """Run the supervisor :func:`supervise` prepared (the fresh process's entry point)."""
    deployment = msgspec.json.decode(os.environ[DEPLOYMENT_ENV], type=Deployment)
    launch = msgspec.json.decode(os.environ.pop(LAUNCH_ENV), type=Launch)
    _serve(launch, deployment)


def _serve(launch: Launch, deployment: Deployment) -> None:
    pid_file = None if launch.pid_file is None else Path(launch.pid_file)
    with metrics_directory(deployment.metrics), shares_file(deployment.workers):
        http_server(launch.target, deployment, launch.listener, pid_file=pid_file).serve()


@contextlib.contextmanager
def metrics_directory(wanted: bool) -> Iterator[None]:
    """A private directory where the workers write their metrics, removed at the end.

    A worker's ``prometheus_client`` reads ``PROMETHEUS_MULTIPROC_DIR`` when it is
    imported, so it is set here, before any worker starts (they inherit it); the
    directory is new, so no count of an earlier run is added in.
    """
    if not wanted:
        yield
        return
    directory = tempfile.mkdtemp(prefix="docbase-metrics-")
    os.environ[MULTIPROC_ENV] = directory
    try:
        yield
    finally:
        os.environ.pop(MULTIPROC_ENV, None)
        shutil.rmtree(directory, ignore_errors=True)

