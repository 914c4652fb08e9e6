"""The q/h depth limit and the page default are enforced by core, for HTTP and embedded alike."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from docbase.adapters.memory import MemoryDocumentStore
from docbase.core.database import Database
from docbase.core.errors import InvalidQuery
from docbase.core.query import (
    DEFAULT_MAX,
    json_depth,
    parse_filter,
    parse_flag,
    parse_hints,
    parse_list_params,
)
from docbase.core.settings import Limits
from docbase.http.testing import live_docbase

LIMITS = Limits(max_query_depth=3, max_page=50)
DEEP_Q = {"$or": [{"a": {"$gt": 1}}]}  # object, array, object, object: 4 levels
SHALLOW_Q = {"a": {"$gt": 1}}  # 2 levels
DEEP_H = {"$orderby": {"a": {"b": {"c": 1}}}}  # 4 levels
MESSAGE = "q is nested deeper than 3 levels"


@pytest.fixture
async def db() -> AsyncIterator[Database]:
    async with Database(MemoryDocumentStore(), limits=LIMITS) as database:
        yield database


def test_json_depth_counts_object_and_array_levels() -> None:
    assert json_depth(1) == 0
    assert json_depth({}) == 1
    assert json_depth(SHALLOW_Q) == 2
    assert json_depth(DEEP_Q) == 4
    assert json_depth([[[[[]]]]]) == 5


async def test_the_embedded_library_refuses_a_too_deep_q(db: Database) -> None:
    people = db.collection("people")
    assert await people.find(SHALLOW_Q) == []
    with pytest.raises(InvalidQuery, match=f"^{MESSAGE}$"):
        await people.find(DEEP_Q)
    with pytest.raises(InvalidQuery, match=f"^{MESSAGE}$"):
        await people.count(DEEP_Q)
    with pytest.raises(InvalidQuery, match=f"^{MESSAGE}$"):
        await people.delete_where(DEEP_Q)


async def test_the_embedded_library_refuses_a_too_deep_h(db: Database) -> None:
    with pytest.raises(InvalidQuery, match=r"^h is nested deeper than 3 levels$"):
        await db.collection("people").find(SHALLOW_Q, DEEP_H)


async def test_http_refuses_a_too_deep_q_with_the_embedded_message(tmp_path: Path) -> None:
    database = Database(MemoryDocumentStore(), name="main", limits=LIMITS)
    async with live_docbase({"main": database}, tmp_path) as live:
        response = await live.client.get("/rest/people", headers=live.auth(),
                                         params={"q": '{"$or": [{"a": {"$gt": 1}}]}'})
    assert response.status_code == 400
    assert response.json()["message"] == MESSAGE


def test_parsers_without_limits_keep_only_the_structural_bound() -> None:
    assert parse_filter(DEEP_Q) is not None
    query, _ = parse_list_params({"q": ['{"$or": [{"a": {"$gt": 1}}]}']})
    assert query.filter == parse_filter(DEEP_Q)


def test_parsers_with_limits_refuse_too_deep_input_naming_the_parameter() -> None:
    with pytest.raises(InvalidQuery, match=f"^{MESSAGE}$"):
        parse_filter(DEEP_Q, limits=LIMITS)
    with pytest.raises(InvalidQuery, match=r"^h is nested deeper than 3 levels$"):
        parse_hints(DEEP_H, limits=LIMITS)
    with pytest.raises(InvalidQuery, match=f"^{MESSAGE}$"):
        parse_list_params({"q": ['{"$or": [{"a": {"$gt": 1}}]}']}, limits=LIMITS)
    with pytest.raises(InvalidQuery, match=r"^h is nested deeper than 3 levels$"):
        parse_list_params({"h": ['{"$orderby": {"a": {"b": {"c": 1}}}}']}, limits=LIMITS)


def test_the_depth_of_q_is_checked_before_h_and_before_parsing() -> None:
    params = {"q": ['{"$or": [{"a": {"$gt": 1}}]}'], "h": ['{"$bogus": {"a": {"b": 1}}}']}
    with pytest.raises(InvalidQuery, match=f"^{MESSAGE}$"):
        parse_list_params(params, limits=LIMITS)
    params = {"q": ['{"a": {"$foo": 1}}'], "h": ['{"$orderby": {"a": {"b": {"c": 1}}}}']}
    with pytest.raises(InvalidQuery, match=r"^h is nested deeper"):
        parse_list_params(params, limits=LIMITS)


@pytest.mark.parametrize(("params", "limit"), [
    ({}, 50),
    ({"max": ["20"]}, 20),
    ({"max": ["80"]}, 80),  # asked for: the facade refuses it, not silently cut
    ({"h": ['{"$max": 80}']}, 80),
])
def test_without_max_a_read_gets_the_smaller_of_1000_and_max_page(
    params: dict[str, list[str]], limit: int
) -> None:
    query, _ = parse_list_params(params, limits=LIMITS)
    assert query.limit == limit
    query, _ = parse_list_params(params)
    assert query.limit == (DEFAULT_MAX if limit == 50 else limit)


@pytest.mark.parametrize(("value", "expected"), [
    ("true", True), ("1", True), ("YES", True), ("false", False), ("0", False), ("no", False),
    ("", False),
])
def test_parse_flag_reads_true_and_false_spellings(value: str, expected: bool) -> None:
    assert parse_flag({"totals": ["maybe", value]}, "totals") is expected


def test_parse_flag_defaults_and_refuses_other_values() -> None:
    params: dict[str, Any] = {"validate": [], "count": ["maybe"]}
    assert parse_flag(params, "validate", default=True) is True
    assert parse_flag(params, "missing") is False
    with pytest.raises(InvalidQuery, match="parameter 'count' must be true or false, not 'maybe'"):
        parse_flag(params, "count")
