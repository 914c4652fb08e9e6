"""A list read's ``q`` and ``h`` are walked for depth and integer bounds once each.

:func:`~docbase.core.query.params.decode_json_param` walks a value as it decodes it;
the filter and hint parsers are told so and do not walk it again. The walk is counted
where it is done (``check_bounds``), around the real one.
"""

from __future__ import annotations

from collections import Counter

import pytest

from docbase.core.errors import InvalidQuery
from docbase.core.query import decoding, parse_filter, parse_list_params
from docbase.core.settings import Limits
from docbase.core.untrusted_json import check_bounds
from docbase.http.params import query_filter


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    walked: Counter[str] = Counter()

    def counted(value: object, what: str, depth: int | None) -> None:
        walked[what] += 1
        check_bounds(value, what, depth)  # type: ignore[arg-type]

    monkeypatch.setattr(decoding, "check_bounds", counted)
    return walked


def test_a_list_read_walks_q_and_h_once_each(walks: Counter[str]) -> None:
    params = {"q": ['{"age": {"$gt": 30}, "$or": [{"a": 1}, {"b": [1, 2]}]}'],
              "h": ['{"$max": 5, "$orderby": {"age": -1}}']}
    query, _ = parse_list_params(params, limits=Limits())
    assert query.limit == 5
    assert walks == {"q": 1, "h": 1}


def test_a_delete_by_query_walks_q_once(walks: Counter[str]) -> None:
    assert query_filter({"q": ['{"age": {"$lt": 3}}']}, Limits()) is not None
    assert walks == {"q": 1}


def test_a_parsed_q_given_directly_is_still_walked(walks: Counter[str]) -> None:
    with pytest.raises(InvalidQuery, match="q"):
        parse_filter({"n": 2**70})
    assert walks == {"q": 1}


def test_a_too_large_integer_in_q_is_still_refused_over_the_url() -> None:
    with pytest.raises(InvalidQuery, match="q"):
        parse_list_params({"q": [f'{{"n": {2**70}}}']}, limits=Limits())
