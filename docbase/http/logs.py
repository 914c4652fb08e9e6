"""The log lines of ``docbase serve``: text or JSON, each carrying its request id.

``--log-format text`` (the default) writes ``TIME LEVEL LOGGER [REQUEST-ID] MESSAGE``;
``--log-format json`` writes one JSON object a line (``time``, ``level``, ``logger``,
``pid`` (the worker), ``message``, ``request_id`` when the line was written while a
request was served, the fields of an access line, and ``error`` with the traceback of
an exception), so every line of the output parses on its own. The same configuration
(:func:`logging_config`) is handed to uvicorn, which applies it in the supervisor and
in every worker, so uvicorn's own lines take the same form.

:data:`REQUEST_ID` is set by :class:`~docbase.http.observe.RequestObserver` for the time
a request is served; :class:`RequestIdFilter` stamps it on every record written
meanwhile, by any logger. No line carries a key, token or password: the access line
names the kind of credential only, and errors are described by their class and
message, which never include a credential (``tests/test_serve_logs.py``).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import sys
import time
from datetime import UTC, datetime
from typing import Any, NamedTuple

import msgspec

REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "docbase_request_id", default=None)
"""The id of the request being served in this task (``None`` outside requests)."""
ACCESS_LOGGER = "docbase.access"
"""The logger of the one line per request."""

_encode = msgspec.json.Encoder().encode


class RequestIdFilter(logging.Filter):
    """Stamp the current request's id on each record (``record.request_id``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Add the id; let every record through."""
        if getattr(record, "request_id", None) is None:
            record.request_id = REQUEST_ID.get()
        return True


def text_line(time_text: str, level: str, logger: str, request_id: str | None,
              message: str) -> str:
    """``TIME LEVEL LOGGER [REQUEST-ID] MESSAGE``, the id only within a request."""
    if request_id is None:
        return f"{time_text} {level} {logger} {message}"
    return f"{time_text} {level} {logger} [{request_id}] {message}"


def json_line(time_text: str, level: str, logger: str, message: str, *, pid: int | None,
              request_id: str | None, fields: dict[str, Any] | None = None,
              error: str | None = None) -> str:
    """One record as a line of JSON: time, level, logger, pid, message, id, fields, error."""
    line: dict[str, Any] = {"time": time_text, "level": level, "logger": logger,
                            "pid": pid, "message": message}
    if request_id is not None:
        line["request_id"] = request_id
    if fields:
        line.update(fields)
    if error:
        line["error"] = error
    return _encode(line).decode()


class TextFormatter(logging.Formatter):
    """:func:`text_line` of a record (its traceback, if any, on the lines after)."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        """The line, with the request id before the message when there is one."""
        return text_line(record.asctime, record.levelname, record.name,
                         getattr(record, "request_id", None), record.message)


class JsonFormatter(logging.Formatter):
    """:func:`json_line` of a record."""

    def format(self, record: logging.LogRecord) -> str:
        """Encode ``record`` as one line of JSON."""
        fields = getattr(record, "fields", None)
        return json_line(
            datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            record.levelname.lower(), record.name, record.getMessage(), pid=record.process,
            request_id=getattr(record, "request_id", None),
            fields=fields if isinstance(fields, dict) else None,
            error=self.formatException(record.exc_info) if record.exc_info else None)


class BatchingStreamHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream handler that writes the lines of one event-loop moment together.

    A line written at once costs a system call, and a system call on the event loop's
    thread lets the store's threads take the GIL, which the loop then waits to get back:
    one access line a request, written so, cost a get a sixth and a create a quarter of
    its CPU (``docs/benchmarks.md``, run 10). Records of the event loop's thread below
    ``WARNING`` are therefore collected and written :data:`FLUSH_SECONDS` later, in
    writes of at most :data:`CHUNK_BYTES` (each ends with a whole line, so the lines of
    several workers sharing a pipe never interleave); any other record (a warning, an
    error, a line of another thread) writes what is collected and itself at once, in
    order. Lines collected when a worker is killed with ``SIGKILL`` are lost; a normal
    exit writes them (``logging.shutdown``).
    """

    FLUSH_SECONDS = 0.1
    """How long a line of the event loop's thread waits for others to be written with."""
    CHUNK_BYTES = 4096
    """The most one write carries (``PIPE_BUF``: a pipe writes that much atomically)."""
    MAX_LINES = 512
    """Collected lines that are written without waiting for the time to pass."""

    def __init__(self, stream: Any = None) -> None:
        super().__init__(stream)
        self._lines: list[str] = []
        self._timer: asyncio.TimerHandle | None = None

    def emit(self, record: logging.LogRecord) -> None:
        """Collect ``record``'s line, or write it with the collected ones (see above)."""
        try:
            self.add_line(self.format(record), urgent=record.levelno >= logging.WARNING)
        except Exception:  # logging's contract: report, never raise
            self.handleError(record)

    def add_line(self, line: str, *, urgent: bool = False) -> None:
        """Collect ``line`` (formatted elsewhere: :class:`AccessLines`), as :meth:`emit` does."""
        try:
            loop = None if urgent else asyncio.get_running_loop()
        except RuntimeError:  # not the event loop's thread: nothing to batch with
            loop = None
        with self.lock:  # type: ignore[union-attr]  # created by Handler.__init__
            self._lines.append(line)
            if loop is not None and len(self._lines) < self.MAX_LINES:
                if self._timer is None:
                    self._timer = loop.call_later(self.FLUSH_SECONDS, self._flush_later)
                return
            self.flush()

    def _flush_later(self) -> None:
        self._timer = None
        try:
            self.flush()
        except Exception:  # a log line never stops the server
            logging.getLogger(__name__).debug("log lines not written", exc_info=True)

    def flush(self) -> None:
        """Write the collected lines, in writes of at most :data:`CHUNK_BYTES`."""
        with self.lock:  # type: ignore[union-attr]  # created by Handler.__init__
            lines, self._lines = self._lines, []
            chunk: list[str] = []
            size = 0
            for line in lines:
                if chunk and size + len(line) + 1 > self.CHUNK_BYTES:
                    self._write("".join(chunk))
                    chunk, size = [], 0
                chunk.append(line + self.terminator)
                size += len(line) + 1
            if chunk:
                self._write("".join(chunk))

    def _write(self, text: str) -> None:
        self.stream.write(text)
        if hasattr(self.stream, "flush"):
            self.stream.flush()


class Access(NamedTuple):
    """What an access line tells of one request."""

    method: str
    route: str
    status: int
    seconds: float
    size: int
    principal: str

    def message(self) -> str:
        """``METHOD ROUTE STATUS DURATIONms SIZEB PRINCIPAL``."""
        return (f"{self.method} {self.route} {self.status} {self.seconds * 1000:.1f}ms "
                f"{self.size}B {self.principal}")

    def fields(self) -> dict[str, Any]:
        """The fields a JSON access line carries besides its message."""
        return {"method": self.method, "route": self.route, "status": self.status,
                "duration_ms": round(self.seconds * 1000, 3), "bytes": self.size,
                "principal": self.principal}


class AccessLines:
    """Access lines made here, with the formatters' own line builders, and handed to the handler.

    Through ``logging``, a record costs a served get ~12 µs of CPU (the record, the
    filter, the formatter's clock); made here, with the time's text made once a second
    and the JSON fields only for JSON, ~2-4 µs (``docs/benchmarks.md``, run 10).
    :func:`access_lines` makes one when ``docbase serve``'s logging is in place; otherwise
    the observer logs as usual. The lines are :func:`text_line` and :func:`json_line`,
    as the formatters write them; ``tests/test_access_lines.py`` compares the two ways.
    """

    def __init__(self, handler: BatchingStreamHandler, log_format: str) -> None:
        self.handler = handler
        self.json = log_format == "json"
        self.pid = os.getpid()
        self._second = -1
        self._stamp = ""

    def write(self, request_id: str, access: Access) -> None:
        """Write the access line of request ``request_id``."""
        now = time.time()
        second = int(now)
        if second != self._second:
            self._second = second
            self._stamp = (datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
                           if self.json else time.strftime("%Y-%m-%d %H:%M:%S",
                                                            time.localtime(second)))
        millis = int((now - second) * 1000)
        if self.json:
            line = json_line(f"{self._stamp}.{millis:03d}+00:00", "info", ACCESS_LOGGER,
                             access.message(), pid=self.pid, request_id=request_id,
                             fields=access.fields())
        else:
            line = text_line(f"{self._stamp},{millis:03d}", "INFO", ACCESS_LOGGER, request_id,
                             access.message())
        self.handler.add_line(line)


def access_lines(log_format: str) -> AccessLines | None:
    """The fast access lines, when the root logger writes through our handler."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, BatchingStreamHandler):
            return AccessLines(handler, log_format)
    return None


def logging_config(log_format: str) -> dict[str, Any]:
    """The ``logging.config.dictConfig`` of ``docbase serve`` for ``text`` or ``json``.

    Everything goes to standard error through one handler on the root logger: docbase's
    loggers (INFO and up) and uvicorn's, whose own handlers are removed.
    """
    formatter = JsonFormatter if log_format == "json" else TextFormatter
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": RequestIdFilter}},
        "formatters": {"docbase": {"()": formatter}},
        "handlers": {"stderr": {"()": BatchingStreamHandler, "stream": "ext://sys.stderr",
                                "formatter": "docbase", "filters": ["request_id"]}},
        "root": {"level": "INFO", "handlers": ["stderr"]},
        "loggers": {name: {"handlers": [], "propagate": True}
                    for name in ("uvicorn", "uvicorn.error", "uvicorn.access")},
    }


def announce(line: str, log_format: str) -> None:
    """Tell the operator ``line`` (the banner, listening, shutdown) in the log's format.

    As text it is printed as it is, as ``docbase serve`` always did; as JSON it is a log
    record of ``docbase.serve``, so that every line of the output parses.
    """
    if log_format == "json":
        logging.getLogger("docbase.serve").info(line)
    else:
        print(line, file=sys.stderr, flush=True)
