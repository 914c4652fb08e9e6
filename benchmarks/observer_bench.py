"""What the request observer and the metrics instruments add to one request (a script, not a test).

Around a bare ASGI app (one 200 answer) and a store whose ``get`` does nothing, so that
only their own work is timed, in CPU time per call, each the lowest of 9 runs of 20,000
(the lowest is what the code costs; a shared machine only ever adds to it):

- the access line: :class:`~docbase.http.observe.RequestObserver` with logging configured
  as ``docbase serve`` does (the format given, ``text`` or ``json``; standard error sent
  to a temporary file) and its access lines written the short way
  (:func:`~docbase.http.logs.access_lines`), minus the observer with no logging
  configured (no line written);
- the request tally: the observer reporting to the Prometheus instruments (multiprocess
  files in a temporary directory), minus the observer without them;
- the timed store get: ``TimedStore.get`` (``docbase/core/metrics/timed_store.py``) minus
  the store's own ``get``.

    .venv/bin/python benchmarks/observer_bench.py text
    PYTHONPATH=<other checkout> .venv/bin/python benchmarks/observer_bench.py json
"""

from __future__ import annotations

import asyncio
import logging.config
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

from docbase.core.metrics import MULTIPROC_ENV

os.environ[MULTIPROC_ENV] = tempfile.mkdtemp(prefix="observer-bench-")

from docbase.adapters.prometheus import PrometheusInstruments
from docbase.core.metrics.timed_store import timed
from docbase.http.logs import access_lines, logging_config
from docbase.http.observe import RequestObserver

CALLS = 20_000
SCOPE = {"type": "http", "method": "GET", "path": "/rest/items/1",
         "path_template": "/rest/{collection}/{document_id}", "headers": [],
         "client": ("127.0.0.1", 5555)}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


async def ignore(message: dict[str, Any]) -> None:
    return None


class Store:
    transactional = False

    async def get(self, collection: str, document_id: str) -> dict[str, Any]:
        return {"_id": document_id}


async def lowest(call: Callable[[], Awaitable[Any]]) -> float:
    """The lowest CPU time of one call, in µs, over 9 runs of :data:`CALLS`."""
    runs = []
    for _ in range(9):
        started = time.process_time()
        for _ in range(CALLS):
            await call()
        runs.append((time.process_time() - started) / CALLS * 1e6)
    return min(runs)


async def main(log_format: str) -> None:
    instruments = PrometheusInstruments()
    plain, counted = RequestObserver(app), RequestObserver(app, instruments)
    store = Store()
    timed_store: Any = timed(store, "sqlite", instruments)  # type: ignore[arg-type]
    silent = await lowest(lambda: plain(dict(SCOPE), None, ignore))
    tally = await lowest(lambda: counted(dict(SCOPE), None, ignore)) - silent
    get = (await lowest(lambda: timed_store.get("items", "1"))
           - await lowest(lambda: store.get("items", "1")))
    log = os.open(tempfile.mktemp(prefix="observer-bench-log-"), os.O_WRONLY | os.O_CREAT)
    os.dup2(log, 2)  # the lines go where a server's standard error would
    logging.config.dictConfig(logging_config(log_format))
    writing = RequestObserver(app, access=access_lines(log_format))
    line = await lowest(lambda: writing(dict(SCOPE), None, ignore)) - silent
    print(f"access line ({log_format}) {line:5.2f} us   request tally {tally:5.2f} us   "
          f"timed store get {get:5.2f} us   (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "text"))
