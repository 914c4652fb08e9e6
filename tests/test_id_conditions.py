"""Conditions on ``_id`` answer alike on every store (the SQL stores seek the id column).

A stored ``_id`` is always one string, so an equality or ``$in`` with other values
(numbers, null, objects) matches nothing and their negations match everything, as the
reference semantics (``docbase.core.evaluate``) say.
"""

from __future__ import annotations

from typing import Any

import pytest

from docbase.core import evaluate
from docbase.core.documents import new_document
from docbase.core.query import Eq, Filter, In, Ne, Nin, Or, Query

OTHER = "0" * 24


def conditions(first: str, second: str) -> list[Filter]:
    return [Eq(("_id",), first), Eq(("_id",), OTHER), Eq(("_id",), 7), Eq(("_id",), None),
            Eq(("_id",), {"$oid": first}), In(("_id",), (first, second, OTHER)),
            In(("_id",), (1, None, [first])), In(("_id",), ()), Ne(("_id",), first),
            Ne(("_id",), None), Nin(("_id",), (first, 3)),
            Or((Eq(("_id",), first), Eq(("n",), 2)))]


async def test_id_conditions_match_what_the_reference_matches(store: Any) -> None:
    documents = [new_document({"n": n}, "api") for n in range(4)]
    await store.insert("c", documents)
    first, second = documents[0]["_id"], documents[1]["_id"]
    for condition in conditions(first, second):
        expected = sorted(d["_id"] for d in documents if evaluate.matches(condition, d))
        found = sorted(d["_id"] for d in await store.find("c", Query(filter=condition,
                                                                       limit=None)))
        assert found == expected, condition
        assert await store.count("c", condition) == len(expected), condition


@pytest.mark.parametrize("value", ["x", 7])
async def test_an_id_condition_on_an_empty_collection_finds_nothing(store: Any,
                                                                    value: Any) -> None:
    assert await store.find("nothing", Query(filter=Eq(("_id",), value))) == []
