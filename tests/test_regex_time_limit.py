"""A ``$regex`` that backtracks catastrophically is refused, not left to stall the server.

Before the time limit, ``^(a|a)*$`` over forty ``a`` and a ``!`` kept a worker busy for
hours and every later request to it hung. Each case here would time the test client out
(30 s) without the limit; with it, the answer is a prompt 400 ``RegexTimeout`` and the
next request is served as usual. PostgreSQL's own regex engine answers such patterns at
once, so there the query simply matches nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from docbase.core.database import Database
from docbase.core.errors import InvalidQuery, RegexTimeout
from docbase.core.query import parse_filter
from docbase.core.query.regex import regex_flags, regex_search
from docbase.http.testing import LiveDocbase, live_docbase
from tests.backends import BACKENDS, IN_CI
from tests.test_sql_regex import ALPHABET, patterns

CATASTROPHIC = ["^(a|a)*$", "^(a|aa)+$", "(a|a)*$"]
VICTIM = "a" * 40 + "!"


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_a_backtracking_pattern_runs_into_the_time_limit(pattern: str) -> None:
    with pytest.raises(RegexTimeout, match="took longer than"):
        regex_search(pattern, "", VICTIM)


@pytest.mark.parametrize(("pattern", "options", "text", "found"), [
    ("^jo", "i", "Joe", True), ("e$", "", "Joe\n", True), ("e$", "", "Joe\nx", False),
    ("^x", "m", "a\nx", True), ("a.b", "s", "a\nb", True), (" a b ", "x", "ab", True),
    ("[*+]", "", "1+2", True), (r"\bfoo\b", "", "a foo.", True),
])
def test_matching_reads_patterns_as_pythons_re_does(
    pattern: str, options: str, text: str, found: bool
) -> None:
    assert regex_search(pattern, options, text) is found


# Not the Mongo wire server: it runs regexes in Node's backtracking engine and stays busy
# for minutes, so its test (tests/test_mongo_regex_bound.py) starts a private one.
@pytest.fixture(params=["memory", "sqlite-file", "postgresql"])
async def live(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[LiveDocbase]:
    async with BACKENDS[request.param](request) as stores, live_docbase(
            {"main": Database(*stores, name="main")}, tmp_path) as running:
        running.client.timeout = 30
        yield running


async def test_a_catastrophic_regex_is_answered_promptly_and_the_server_goes_on(
    live: LiveDocbase, request: pytest.FixtureRequest
) -> None:
    await live.db.collection("people").insert_many([{"name": "Ann"}, {"name": VICTIM}])
    query = {"name": {"$regex": "^(a|a)*$"}}
    response = await live.client.get("/rest/people", params={"q": json.dumps(query)},
                                     headers=live.auth())
    engine: Any = request.node.callspec.params["live"]
    if engine == "postgresql":
        assert response.status_code == 200
        assert response.json() == []
    else:
        assert response.status_code == 400
        assert response.json()["name"] == "RegexTimeout"
        assert "simplify the pattern" in response.json()["message"]
    after = await live.client.get("/rest/people", params={"q": '{"name": "Ann"}'},
                                  headers=live.auth())
    assert [p["name"] for p in after.json()] == ["Ann"]


# Known and documented (docs/query.md): the time-limited engine folds case simply, so
# under "i" the dotless i (U+0131) and dotted I (U+0130) match only their own pair
# where Python's re also relates them to i and I; the other characters must agree.
SAME_FOLDING = ALPHABET.replace("\u0130", "").replace("\u0131", "")


@settings(max_examples=1000 if IN_CI else 200, deadline=None)
@given(pattern=patterns(), options=st.sampled_from(["", "i", "m", "s", "x", "im", "ims", "imsx"]),
       texts=st.lists(st.text(SAME_FOLDING, max_size=8), min_size=1, max_size=12))
def test_the_time_limited_engine_matches_exactly_where_pythons_re_does(
    pattern: str, options: str, texts: list[str]
) -> None:
    try:
        parse_filter({"f": {"$regex": pattern, "$options": options}})
    except InvalidQuery:
        assume(False)
    reference = re.compile(pattern, regex_flags(options))
    assert [regex_search(pattern, options, t) for t in texts] == [
        reference.search(t) is not None for t in texts]
