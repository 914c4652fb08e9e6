"""Order keys: text order of keys is the total order of values, in Python and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncEngine

from docbase.adapters.sql import SqlDocumentStore, create_engine
from docbase.adapters.sql.order_keys import encode_key
from docbase.core.evaluate import search_strings
from docbase.core.field_name_encoding import encode_keys
from docbase.core.ordering import compare
from docbase.testing import strategies as gen
from tests.backends import IN_CI, postgresql_schema

PROPERTY = settings(max_examples=500 if IN_CI else 100, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def _sign(number: int) -> int:
    return (number > 0) - (number < 0)


@PROPERTY
@given(first=gen.json_values(3), second=gen.json_values(3))
def test_key_order_is_the_total_order(first: Any, second: Any) -> None:
    a, b = encode_key(first), encode_key(second)
    assert _sign((a > b) - (a < b)) == compare(first, second)


def test_keys_of_equal_values_are_equal_and_key_order_matters() -> None:
    assert encode_key(1) == encode_key(1.0) == encode_key(-0.0 + 1)
    assert encode_key(0.0) == encode_key(-0.0)
    assert encode_key(True) != encode_key(1)
    assert encode_key({"a": 1, "b": 2}) != encode_key({"b": 2, "a": 1})
    assert encode_key("a\x00") < encode_key("a\x01") < encode_key("a\x02") < encode_key("a\x03")
    assert encode_key(["a"]) < encode_key(["a", None]) < encode_key(["a\x00"])


def test_search_strings_skip_system_fields_and_lower_case() -> None:
    document = {"_id": "ABC", "_createdby": "Joe", "name": "Joe", "deep": [{"_id": "XY"}],
                "n": 1}
    assert sorted(search_strings(document)) == ["joe", "xy"]


@pytest.fixture
async def postgresql() -> AsyncIterator[AsyncEngine]:
    async with postgresql_schema() as url:
        engine = create_engine(url)
        assert isinstance(engine, AsyncEngine)
        await SqlDocumentStore(engine).open()  # installs the key functions
        try:
            yield engine
        finally:
            await engine.dispose()


@PROPERTY
@given(values=st.lists(gen.json_values(3), min_size=1, max_size=8))
async def test_postgresql_keys_equal_python_keys(postgresql: AsyncEngine,
                                                 values: list[Any]) -> None:
    values = [encode_keys(v) for v in values]  # PostgreSQL only ever holds stored keys
    texts = [msgspec.json.encode(v).decode() for v in values]
    async with postgresql.connect() as conn:
        raw = await conn.get_raw_connection()
        driver: Any = raw.driver_connection
        rows = await driver.fetch(
            "SELECT docbase_key(t::json) AS k, docbase_scalar_key(t::jsonb) AS s "
            "FROM unnest($1::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n", texts)
    for value, row in zip(values, rows, strict=True):
        assert row["k"] == encode_key(value)
        if not isinstance(value, dict | list):
            assert row["s"] == encode_key(value)
