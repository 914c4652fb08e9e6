"""The access line written the short way reads as ``logging`` would have written it."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
from datetime import datetime

import pytest

from docbase.http.logs import (
    ACCESS_LOGGER,
    REQUEST_ID,
    Access,
    AccessLines,
    BatchingStreamHandler,
    JsonFormatter,
    RequestIdFilter,
    TextFormatter,
)

FIELDS = {"method": "GET", "route": "/rest/{collection}", "status": 200,
          "duration_ms": 1.25, "bytes": 345, "principal": "key"}
MESSAGE = "GET /rest/{collection} 200 1.2ms 345B key"
ACCESS = Access("GET", "/rest/{collection}", 200, 0.00125, 345, "key")


def both_ways(log_format: str) -> tuple[str, str]:
    """The same access line through ``logging`` and through :class:`AccessLines`."""
    stream = io.StringIO()
    handler = BatchingStreamHandler(stream)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    handler.addFilter(RequestIdFilter())
    logger = logging.getLogger(ACCESS_LOGGER)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    token = REQUEST_ID.set("0123456789abcdef01234567")
    try:
        logger.info("%s", MESSAGE, extra={"fields": FIELDS})
        AccessLines(handler, log_format).write("0123456789abcdef01234567", ACCESS)
    finally:
        REQUEST_ID.reset(token)
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
    handler.flush()
    through_logging, short_way = stream.getvalue().splitlines()
    return through_logging, short_way


def test_text_lines_are_alike_but_for_the_clock() -> None:
    through_logging, short_way = both_ways("text")
    clock = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} "
    assert re.match(clock, short_way)
    assert re.sub(clock, "", through_logging) == re.sub(clock, "", short_way)
    assert short_way.endswith(f"INFO {ACCESS_LOGGER} [0123456789abcdef01234567] {MESSAGE}")


@pytest.mark.parametrize("key", ["level", "logger", "pid", "message", "request_id",
                                 *FIELDS])
def test_json_lines_carry_the_same_fields(key: str) -> None:
    through_logging, short_way = (json.loads(line) for line in both_ways("json"))
    assert short_way[key] == through_logging[key]


def test_json_lines_tell_the_time_as_logging_does() -> None:
    through_logging, short_way = (json.loads(line) for line in both_ways("json"))
    pattern = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00"
    assert re.fullmatch(pattern, through_logging["time"])
    assert re.fullmatch(pattern, short_way["time"])
    seconds = [datetime.fromisoformat(line["time"]).timestamp()
               for line in (through_logging, short_way)]
    assert 0 <= seconds[1] - seconds[0] < 1  # written one after the other


def test_the_access_message_and_fields_are_what_lines_carry() -> None:
    assert ACCESS.message() == MESSAGE
    assert ACCESS.fields() == FIELDS


async def test_loop_lines_wait_and_other_threads_lines_do_not() -> None:
    stream = io.StringIO()
    handler = BatchingStreamHandler(stream)
    handler.add_line("from the loop")  # collected: a flush is now pending on the loop
    assert stream.getvalue() == ""
    # another thread's line is written at once, with what was collected before it
    await asyncio.to_thread(handler.add_line, "from a thread")
    assert stream.getvalue().splitlines() == ["from the loop", "from a thread"]
    handler.add_line("urgent", urgent=True)  # a warning or an error: at once too
    assert stream.getvalue().splitlines()[-1] == "urgent"
    handler.add_line("later")
    await asyncio.sleep(BatchingStreamHandler.FLUSH_SECONDS * 3)
    assert stream.getvalue().splitlines()[-1] == "later"  # the pending flush wrote it
