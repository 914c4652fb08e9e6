"""``$regex`` on PostgreSQL: translated patterns match exactly where Python's ``re`` does."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncEngine

from docbase.adapters.sql import create_engine
from docbase.adapters.sql.postgresql.regex import translate
from docbase.core.errors import InvalidQuery
from docbase.core.query import parse_filter
from docbase.core.query.regex import regex_flags
from tests.backends import IN_CI, postgresql_schema

PROPERTY = settings(max_examples=500 if IN_CI else 150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

ALPHABET = "abAB_1 é\nKk\u017f\u0130\u0131.*+?]"  # with long s, dotted I, dotless i
ATOMS = ["a", "b", "A", "é", "k", "K", "1", " ", "\\n", "_", ".", "\\.", "[a-c]", "[^ab]",
         "[A-Z_]", "[é-ï]", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "[\\w.]", "[^\\W\\d]",
         "[*+]", "[]?a]", "[^]*]", "[\\]+]", "\\*", "\\+"]  # symbols in classes are literals
ANCHORS = ["^", "$", "\\A", "\\Z", "\\b", "\\B"]
QUANTIFIERS = ["", "", "*", "+", "?", "*?", "+?", "??", "{2}", "{1,3}", "{0,2}?", "{2,}"]


@st.composite
def patterns(draw: st.DrawFn, depth: int = 2) -> str:
    pieces = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 9 if depth > 0 else 5))
        if kind <= 3:
            piece = draw(st.sampled_from(ATOMS)) + draw(st.sampled_from(QUANTIFIERS))
        elif kind <= 5:
            piece = draw(st.sampled_from(ANCHORS))
        elif kind == 6:
            piece = "(" + draw(patterns(depth - 1)) + "|" + draw(patterns(depth - 1)) + ")"
        elif kind == 7:
            group = draw(st.sampled_from(["(", "(?:", "(?i:", "(?s:", "(?m:", "(?-i:"]))
            piece = group + draw(patterns(depth - 1)) + ")" + draw(st.sampled_from(QUANTIFIERS))
        else:
            look = draw(st.sampled_from(["(?=", "(?!"]))
            piece = look + draw(patterns(depth - 1)) + ")"
        pieces.append(piece)
    return "".join(pieces)


@pytest.fixture
async def postgresql() -> AsyncIterator[AsyncEngine]:
    async with postgresql_schema() as url:
        engine = create_engine(url)
        assert isinstance(engine, AsyncEngine)
        try:
            yield engine
        finally:
            await engine.dispose()


async def _pg_matches(engine: AsyncEngine, pattern: str, texts: list[str]) -> list[bool]:
    async with engine.connect() as conn:
        raw = await conn.get_raw_connection()
        driver: Any = raw.driver_connection
        rows = await driver.fetch("SELECT t ~ $1 AS m FROM unnest($2::text[]) WITH ORDINALITY "
                                  "AS u(t, n) ORDER BY n", pattern, texts)
    return [row["m"] for row in rows]


@PROPERTY
@given(pattern=patterns(), options=st.sampled_from(["", "i", "m", "s", "x", "im", "ims", "imsx"]),
       texts=st.lists(st.text(ALPHABET, max_size=8), min_size=1, max_size=12))
async def test_translated_pattern_matches_like_python(postgresql: AsyncEngine, pattern: str,
                                                      options: str, texts: list[str]) -> None:
    try:
        parse_filter({"f": {"$regex": pattern, "$options": options}})
        compiled = re.compile(pattern, regex_flags(options))
    except (InvalidQuery, re.error):  # the core compiles without the options (x matters)
        assume(False)
    expected = [compiled.search(text) is not None for text in texts]
    assert await _pg_matches(postgresql, translate(pattern, options), texts) == expected


@pytest.mark.parametrize("pattern", ["(?>ab)c", "a++", "a*+b", "(a)\\1"])
def test_constructs_without_an_equivalent_are_refused(pattern: str) -> None:
    with pytest.raises(InvalidQuery):
        translate(pattern, "")


def test_case_folding_follows_python() -> None:
    # Python folds the Kelvin sign and long s with k and s; a PostgreSQL locale may not
    assert "\u212a" in translate("k", "i") or "212a" in translate("k", "i")
    assert "017f" in translate("s", "i")
