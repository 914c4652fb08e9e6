"""The worker processes of ``docbase serve``: uvicorn's supervisor over one socket.

The main process binds the port, writes the pid file and runs uvicorn's
``Multiprocess`` supervisor; workers are spawned processes that each build the app from
the deployment in their environment (``docbase.http.serve.worker_app``).
"""

from __future__ import annotations

import os
import ssl
import sys
from pathlib import Path

import uvicorn
from uvicorn.supervisors import Multiprocess

WORKER_HEALTHCHECK_SECONDS = 60
"""Seconds a worker may take to answer the supervisor, starting up included: on a loaded
machine a worker takes seconds to import, and uvicorn's 5 s default had the supervisor
kill it, and abort a SIGHUP restart, before it served."""


TLS12_CIPHERS = "ECDHE+AESGCM:ECDHE+CHACHA20"
"""The TLS 1.2 cipher suites offered: forward secret (ECDHE) and AEAD only. TLS 1.3's
suites are all of that kind already."""


class TlsConfig(uvicorn.Config):
    """uvicorn's configuration: TLS 1.2 at least, and the ``header_timeout`` to apply.

    :class:`~docbase.http.coalescing.CoalescingHttpProtocol` reads ``header_timeout``.
    """

    header_timeout: float | None = None

    def load(self) -> None:
        """Load as uvicorn does, then refuse TLS versions below 1.2."""
        super().load()
        if self.ssl is not None:
            self.ssl.minimum_version = ssl.TLSVersion.TLSv1_2


class UvicornRunner:
    """uvicorn's worker supervisor over one listening socket owned by this process.

    The workers (``deployment.workers``, even one) are processes of their own, so that
    SIGHUP replaces each in turn (the new one serving before the old one stops) and a
    crashed one is respawned; SIGTERM/SIGINT stop them gracefully.
    """

    def __init__(self, config: uvicorn.Config, url: str, pid_file: Path | None) -> None:
        self.config = config
        self.url = url
        self.pid_file = pid_file

    def serve(self) -> None:
        """Serve until SIGTERM/SIGINT, then stop gracefully."""
        config = self.config
        sock = config.bind_socket()
        print(f"docbase: Listening at: {self.url}", file=sys.stderr, flush=True)
        if self.pid_file is not None:
            self.pid_file.write_text(f"{os.getpid()}\n")
        try:
            Multiprocess(config, sockets=[sock]).run()
        finally:
            sock.close()
            if self.pid_file is not None:
                self.pid_file.unlink(missing_ok=True)
        print("docbase: shutdown completed", file=sys.stderr, flush=True)
