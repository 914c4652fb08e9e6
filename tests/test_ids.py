"""ObjectIDs (24 hex, time-ordered, unique across processes) and timestamps."""

from __future__ import annotations

import importlib.util
import multiprocessing
import re
import sys
import time
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

import docbase.core.ids as ids_module
from docbase.core.errors import InvalidId, InvalidQuery
from docbase.core.ids import (
    check_object_id,
    format_timestamp,
    is_object_id,
    new_object_id,
    object_id_time,
    utc_now,
)
from docbase.http.errors import answer_for

TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def test_object_id_is_24_lowercase_hex() -> None:
    value = new_object_id()
    assert re.fullmatch(r"[0-9a-f]{24}", value)
    assert is_object_id(value)


def test_object_id_starts_with_the_creation_second() -> None:
    before = int(time.time())
    value = new_object_id()
    after = int(time.time())
    assert before <= int(value[:8], 16) <= after
    assert before <= object_id_time(value).timestamp() <= after
    assert object_id_time(value).tzinfo is UTC


def test_ids_of_later_seconds_sort_after(monkeypatch: pytest.MonkeyPatch) -> None:
    made = []
    for second in (1_600_000_000, 1_600_000_001, 1_700_000_000):
        monkeypatch.setattr(time, "time", lambda s=second: s + 0.5)
        made.append(new_object_id())
    assert made == sorted(made)
    assert [object_id_time(i) for i in made] == [
        datetime(2020, 9, 13, 12, 26, 40, tzinfo=UTC),
        datetime(2020, 9, 13, 12, 26, 41, tzinfo=UTC),
        datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC),
    ]


def test_ids_within_one_second_count_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time, "time", lambda: 1_600_000_000.25)
    first, second, third = new_object_id(), new_object_id(), new_object_id()
    assert first[:18] == second[:18] == third[:18]  # same second, same process
    counters = [int(i[18:], 16) for i in (first, second, third)]
    assert counters[1] == (counters[0] + 1) % 2**24
    assert counters[2] == (counters[1] + 1) % 2**24


def test_a_process_counts_from_below_half_the_counter_so_its_ids_sort_as_made() -> None:
    # a counter started near ffffff wraps within a process's first ids, and an id made
    # after the wrap in the same second sorts before the ones made just before it
    starts = []
    for _ in range(20):  # each copy starts as a new process; all below half: 2**-20
        spec = importlib.util.spec_from_file_location("ids_copy", ids_module.__file__)
        assert spec is not None
        assert spec.loader is not None
        fresh = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fresh)
        starts.append(int(fresh.new_object_id()[18:], 16))
    assert all(start < 2**23 for start in starts), starts
    assert len(set(starts)) > 1  # still random


def test_ids_are_unique_in_one_process() -> None:
    made = [new_object_id() for _ in range(10_000)]
    assert len(set(made)) == len(made)


def _make_ids(count: int) -> list[str]:
    return [new_object_id() for _ in range(count)]


def _send_ids(queue: Any, count: int) -> None:
    queue.put(_make_ids(count))


@pytest.mark.parametrize(
    "method",
    [
        pytest.param("fork", marks=pytest.mark.skipif(sys.platform == "win32",
                                                      reason="no fork on Windows")),
        "spawn",
    ],
)
def test_ids_are_unique_across_processes(method: str) -> None:
    # forked children inherit the parent's random bytes and counter unless reseeded
    new_object_id()
    context: Any = multiprocessing.get_context(method)
    queue = context.Queue()
    workers = [context.Process(target=_send_ids, args=(queue, 2_000)) for _ in range(2)]
    for worker in workers:
        worker.start()
    mine = _make_ids(2_000)
    batches = [queue.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    everything = [*batches[0], *batches[1], *mine]
    assert len(set(everything)) == len(everything)
    process_parts = {batch[0][8:18] for batch in (*batches, mine)}
    assert len(process_parts) == 3


@pytest.mark.parametrize("value", ["5F0C0C0C0C0C0C0C0C0C0C0C", "5f0c0c0c0c0c0c0c0c0c0c0c"])
def test_check_object_id_accepts_and_lowercases(value: str) -> None:
    assert check_object_id(value) == "5f0c0c0c0c0c0c0c0c0c0c0c"


@pytest.mark.parametrize(
    "value",
    ["", "5f0c", "5f0c0c0c0c0c0c0c0c0c0c0c0", "5f0c0c0c0c0c0c0c0c0c0c0g",
     " 5f0c0c0c0c0c0c0c0c0c0c0"],
)
def test_check_object_id_refuses_other_strings(value: str) -> None:
    assert not is_object_id(value)
    with pytest.raises(InvalidId, match=re.escape(repr(value))):
        check_object_id(value)


def test_invalid_id_is_a_bad_request() -> None:
    assert issubclass(InvalidId, InvalidQuery)
    assert answer_for(InvalidId).status == 400
    assert not is_object_id(12345)
    assert not is_object_id(None)


def test_utc_now_has_the_timestamp_format() -> None:
    before = datetime.now(UTC) - timedelta(seconds=1)
    value = utc_now()
    assert TIMESTAMP.fullmatch(value)
    parsed = datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert before <= parsed <= datetime.now(UTC)


@pytest.mark.parametrize(
    ("moment", "expected"),
    [
        (datetime(2016, 1, 1, tzinfo=UTC), "2016-01-01T00:00:00.000Z"),
        (datetime(2016, 1, 1, 12, 30, 5, 123999, tzinfo=UTC), "2016-01-01T12:30:05.123Z"),
        (datetime(2016, 1, 1, 1, 0, 0, 7000, tzinfo=timezone(timedelta(hours=2))),
         "2015-12-31T23:00:00.007Z"),
        (datetime(999, 12, 31, 23, 59, 59, tzinfo=UTC), "0999-12-31T23:59:59.000Z"),
    ],
    ids=["midnight", "millis-truncated", "offset-to-utc", "four-digit-year"],
)
def test_format_timestamp(moment: datetime, expected: str) -> None:
    assert format_timestamp(moment) == expected
