"""The query parser: q, h and URL parameters into the typed AST, with hand-written ASTs."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from docbase.core.errors import InvalidQuery
from docbase.core.query import (
    DEFAULT_MAX,
    JSON,
    MATCH_ALL,
    MAX_DEPTH,
    Aggregate,
    And,
    Between,
    ElemMatch,
    Eq,
    Exists,
    Filter,
    Gt,
    Gte,
    In,
    Lt,
    Lte,
    Ne,
    Nin,
    Not,
    Or,
    Projection,
    Query,
    ReadOptions,
    Regex,
    SortKey,
    Text,
    parse_date,
    parse_filter,
    parse_hints,
    parse_list_params,
)

NOW = datetime(2024, 5, 17, 13, 45, 12, 345678, tzinfo=UTC)


def parse(q: JSON) -> Filter:
    return parse_filter(q, now=NOW)


def refused(part: str) -> Any:
    """Expect InvalidQuery whose message names ``part``."""
    return pytest.raises(InvalidQuery, match=re.escape(part))


def nested(levels: int, inner: JSON, wrap: Any) -> JSON:
    for _ in range(levels):
        inner = wrap(inner)
    return inner


# ---------------------------------------------------------------------------- equality


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ({}, MATCH_ALL),
        ({"name": "Joe"}, Eq(("name",), "Joe")),
        ({"name": "Joe", "age": 17}, And((Eq(("name",), "Joe"), Eq(("age",), 17)))),
        ({"address.city": "Oslo"}, Eq(("address", "city"), "Oslo")),
        ({"items.0.sku": "x1"}, Eq(("items", "0", "sku"), "x1")),
        ({"tags": ["a", "b"]}, Eq(("tags",), ["a", "b"])),
        ({"address": {"city": "Oslo", "zip": 1}}, Eq(("address",), {"city": "Oslo", "zip": 1})),
        ({"nothing": None}, Eq(("nothing",), None)),
        ({"flag": False}, Eq(("flag",), False)),
        ({"ratio": 0.5}, Eq(("ratio",), 0.5)),
        ({"age": {"$eq": 17}}, Eq(("age",), 17)),
        ({"address": {}}, Eq(("address",), {})),
        ({"navn": "æøå ☃"}, Eq(("navn",), "æøå ☃")),
    ],
    ids=["empty", "field", "two-fields", "dot-path", "numeric-step", "array", "object",
         "null", "false", "float", "$eq", "empty-object", "unicode"],
)
def test_equality_and_dot_paths(q: JSON, expected: Filter) -> None:
    assert parse(q) == expected


# ---------------------------------------------------------------------------- operators


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ({"age": {"$gt": 18}}, Gt(("age",), 18)),
        ({"age": {"$gte": 18}}, Gte(("age",), 18)),
        ({"age": {"$lt": 18.5}}, Lt(("age",), 18.5)),
        ({"name": {"$lte": "M"}}, Lte(("name",), "M")),
        ({"name": {"$ne": "Joe"}}, Ne(("name",), "Joe")),
        ({"name": {"$ne": None}}, Ne(("name",), None)),
        ({"name": {"$in": ["Joe", "Jane", None]}}, In(("name",), ("Joe", "Jane", None))),
        ({"name": {"$nin": ["Joe", 1]}}, Nin(("name",), ("Joe", 1))),
        ({"name": {"$in": []}}, In(("name",), ())),
        ({"salary": {"$bt": [5000, 7500]}}, Between(("salary",), 5000, 7500)),
        ({"name": {"$regex": "^jo"}}, Regex(("name",), "^jo", "")),
        ({"name": {"$regex": "^jo", "$options": "i"}}, Regex(("name",), "^jo", "i")),
        ({"name": {"$options": "xsmi", "$regex": "a b"}}, Regex(("name",), "a b", "imsx")),
        ({"name": {"$exists": True}}, Exists(("name",), True)),
        ({"name": {"$exists": False}}, Exists(("name",), False)),
        ({"name": {"$exists": 1}}, Exists(("name",), True)),
        ({"name": {"$not": "Joe"}}, Not(Eq(("name",), "Joe"))),
        ({"age": {"$not": {"$gt": 5}}}, Not(Gt(("age",), 5))),
        ({"age": {"$not": {"$gt": 1, "$lt": 5}}}, Not(And((Gt(("age",), 1), Lt(("age",), 5))))),
        ({"age": {"$gt": 1, "$lt": 5}}, And((Gt(("age",), 1), Lt(("age",), 5)))),
        ({"a.b": {"$gte": 0}}, Gte(("a", "b"), 0)),
    ],
    ids=["$gt", "$gte", "$lt", "$lte", "$ne", "$ne-null", "$in", "$nin", "$in-empty", "$bt",
         "$regex", "$regex-$options", "$options-canonical", "$exists-true", "$exists-false",
         "$exists-1", "$not-value", "$not-operator", "$not-two-operators", "two-operators",
         "operator-on-dot-path"],
)
def test_field_operators(q: JSON, expected: Filter) -> None:
    assert parse(q) == expected


def test_and_or_hold_whole_queries() -> None:
    assert parse({"$and": [{"status": "GOLD"}, {"sales": {"$gt": 1000}}]}) == And(
        (Eq(("status",), "GOLD"), Gt(("sales",), 1000))
    )
    assert parse({"$or": [{"name": "Jane"}, {"name": "Donald", "age": 3}]}) == Or(
        (Eq(("name",), "Jane"), And((Eq(("name",), "Donald"), Eq(("age",), 3))))
    )
    assert parse({"a": 1, "$or": [{"b": 2}]}) == And((Eq(("a",), 1), Or((Eq(("b",), 2),))))


def test_elem_match_with_field_conditions_looks_at_object_elements() -> None:
    assert parse({"items": {"$elemMatch": {"name": "Joe", "age": {"$gt": 17}}}}) == ElemMatch(
        ("items",), And((Eq(("name",), "Joe"), Gt(("age",), 17))), objects=True
    )
    assert parse({"items": {"$elemMatch": {"$or": [{"a": 1}, {"b": 2}]}}}) == ElemMatch(
        ("items",), Or((Eq(("a",), 1), Eq(("b",), 2))), objects=True
    )


def test_elem_match_with_operators_looks_at_the_elements_themselves() -> None:
    assert parse({"scores": {"$elemMatch": {"$gte": 80, "$lt": 85}}}) == ElemMatch(
        ("scores",), And((Gte((), 80), Lt((), 85))), objects=False
    )
    assert parse({"tags": {"$elemMatch": {"$regex": "^a", "$options": "i"}}}) == ElemMatch(
        ("tags",), Regex((), "^a", "i"), objects=False
    )


# ---------------------------------------------------------------------------- dates


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2016-01-01", "2016-01-01T00:00:00.000Z"),
        ("2016-01-01T12:30:00Z", "2016-01-01T12:30:00.000Z"),
        ("2016-01-01T12:30:00.123Z", "2016-01-01T12:30:00.123Z"),
        ("2016-01-01T12:30:00", "2016-01-01T12:30:00.000Z"),
        ("2016-01-01T01:30:00+02:00", "2015-12-31T23:30:00.000Z"),
        ("2016-01-01T12:30:00.123456Z", "2016-01-01T12:30:00.123Z"),
        (1451606400000, "2016-01-01T00:00:00.000Z"),
        (1451606400123, "2016-01-01T00:00:00.123Z"),
        (0, "1970-01-01T00:00:00.000Z"),
    ],
    ids=["date", "date-time-Z", "millis-Z", "no-offset-is-UTC", "offset", "micros-truncated",
         "epoch-millis", "epoch-millis-fraction", "epoch-zero"],
)
def test_date_values_become_canonical_utc_strings(value: JSON, expected: str) -> None:
    assert parse({"_created": {"$date": value}}) == Eq(("_created",), expected)


@pytest.mark.parametrize(
    ("variable", "expected"),
    [
        ("$currentDate", "2024-05-17T00:00:00.000Z"),
        ("$currentMonth", "2024-05-01T00:00:00.000Z"),
        ("$currentYear", "2024-01-01T00:00:00.000Z"),
        ("$now", "2024-05-17T13:45:12.345Z"),
    ],
)
def test_dynamic_dates_use_now(variable: str, expected: str) -> None:
    assert parse({"_changed": {"$gte": {"$date": variable}}}) == Gte(("_changed",), expected)


def test_dynamic_dates_are_taken_in_utc() -> None:
    # 2024-01-01 00:30 at +02:00 is still 2023-12-31 in UTC
    now = datetime(2024, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=2)))
    assert parse_date("$currentDate", now) == "2023-12-31T00:00:00.000Z"
    assert parse_date("$currentMonth", now) == "2023-12-01T00:00:00.000Z"
    assert parse_date("$currentYear", now) == "2023-01-01T00:00:00.000Z"


def test_dates_work_inside_every_operator() -> None:
    day, later = "2016-01-01T00:00:00.000Z", "2016-02-01T00:00:00.000Z"
    assert parse({"d": {"$gt": {"$date": "2016-01-01"}}}) == Gt(("d",), day)
    assert parse({"d": {"$bt": [{"$date": "2016-01-01"}, {"$date": "2016-02-01"}]}}) == (
        Between(("d",), day, later)
    )
    assert parse({"d": {"$in": [{"$date": "2016-01-01"}, "x"]}}) == In(("d",), (day, "x"))
    assert parse({"d": {"$not": {"$date": "2016-01-01"}}}) == Not(Eq(("d",), day))
    assert parse({"d": {"$ne": {"$date": 1451606400000}}}) == Ne(("d",), day)


@pytest.mark.parametrize("value", ["yesterday", "2016-13-01", True, None, [2016], {"y": 1}])
def test_bad_dates_are_refused(value: JSON) -> None:
    with refused("$date"):
        parse({"d": {"$date": value}})


# ---------------------------------------------------------------------------- q errors


@pytest.mark.parametrize(
    ("q", "part"),
    [
        ({"$where": "this.a > 1"}, "'$where'"),
        ({"$nor": [{"a": 1}]}, "'$nor'"),
        ({"$text": {"$search": "x"}}, "'$text'"),
        ({"a": {"$foo": 1}}, "'$foo'"),
        ({"a": {"$where": "1"}}, "'$where'"),
        ({"a": {"$size": 2}}, "'$size'"),
        ({"a": {"$gt": 1, "b": 2}}, "'a'"),
        ({"a": {"x": {"$gt": 1}}}, "'$gt'"),
        ({"$and": []}, "$and"),
        ({"$or": []}, "$or"),
        ({"$and": {"a": 1}}, "$and"),
        ({"$or": [1]}, "$or"),
        ({"a": {"$in": "Joe"}}, "$in"),
        ({"a": {"$nin": 3}}, "$nin"),
        ({"a": {"$exists": "yes"}}, "$exists"),
        ({"a": {"$elemMatch": {}}}, "$elemMatch"),
        ({"a": {"$elemMatch": 3}}, "$elemMatch"),
        ({"a": {"$elemMatch": {"$gt": 1, "b": 2}}}, "$elemMatch"),
        ({"a..b": 1}, "'a..b'"),
        ({"": 1}, "field name"),
        ({"a.$b": 1}, "'a.$b'"),
    ],
    ids=["$where", "$nor", "$text", "unknown-field-op", "$where-field-op", "$size",
         "mixed-ops-and-fields", "operator-inside-value", "$and-empty", "$or-empty",
         "$and-object", "$or-non-object", "$in-not-array", "$nin-not-array",
         "$exists-not-bool", "$elemMatch-empty", "$elemMatch-scalar", "$elemMatch-mixed",
         "empty-step", "empty-name", "dollar-step"],
)
def test_unknown_or_malformed_queries_are_refused_naming_the_part(q: JSON, part: str) -> None:
    with refused(part):
        parse(q)


@pytest.mark.parametrize("q", [[{"a": 1}], "a", 3, None])
def test_q_must_be_an_object(q: JSON) -> None:
    with refused("q must be a JSON object"):
        parse(q)


@pytest.mark.parametrize(
    ("ops", "part"),
    [
        ({"$regex": "(?<=a)b"}, "$regex on 'name'"),
        ({"$regex": "(?<!a)b"}, "$regex on 'name'"),
        ({"$regex": "(a)\\1"}, "$regex on 'name'"),
        ({"$regex": "(?P<x>a)(?P=x)"}, "$regex on 'name'"),
        ({"$regex": "(?<x>a)\\k<x>"}, "$regex on 'name'"),
        ({"$regex": "(ab"}, "$regex on 'name'"),
        ({"$regex": 5}, "$regex on 'name'"),
        ({"$regex": "a", "$options": "g"}, "$options on 'name'"),
        ({"$regex": "a", "$options": "iu"}, "$options on 'name'"),
        ({"$regex": "a", "$options": 1}, "$options on 'name'"),
        ({"$options": "i"}, "$options without $regex on 'name'"),
    ],
    ids=["look-behind", "negative-look-behind", "backreference", "python-named-group",
         "named-backreference", "unbalanced", "not-a-string", "option-g", "option-u",
         "options-not-a-string", "options-alone"],
)
def test_bad_regex_and_options_are_refused(ops: JSON, part: str) -> None:
    with refused(part):
        parse({"name": ops})


@pytest.mark.parametrize("operand", [[1], [1, 2, 3], [], 5, {"low": 1, "high": 2}])
def test_bt_needs_exactly_two_bounds(operand: JSON) -> None:
    with refused("$bt on 'salary'"):
        parse({"salary": {"$bt": operand}})


@pytest.mark.parametrize(
    "wrap",
    [
        lambda q: {"$and": [q]},
        lambda q: {"$or": [q, {"b": 1}]},
        lambda q: {"a": {"$elemMatch": q}},
    ],
    ids=["$and", "$or", "$elemMatch"],
)
def test_queries_nested_deeper_than_the_limit_are_refused(wrap: Any) -> None:
    assert parse(nested(MAX_DEPTH - 1, {"x": 1}, wrap)) is not None
    with refused(f"nested deeper than {MAX_DEPTH}"):
        parse(nested(MAX_DEPTH + 1, {"x": 1}, wrap))


def test_deeply_nested_not_is_refused_not_a_crash() -> None:
    with refused(f"nested deeper than {MAX_DEPTH}"):
        parse({"a": nested(MAX_DEPTH + 1, {"$gt": 1}, lambda c: {"$not": c})})
    with refused(f"nested deeper than {MAX_DEPTH}"):
        parse({"a": nested(5000, {"$gt": 1}, lambda c: {"$not": c})})


def test_malformed_json_is_refused_naming_the_parameter() -> None:
    with refused("q is not valid JSON"):
        parse_list_params({"q": ['{"name": "Joe"']})
    with refused("h is not valid JSON"):
        parse_list_params({"h": ["{$max: 2}"]})
    with refused("q is not valid JSON"):
        parse_list_params({"q": ["[" * 5000 + "]" * 5000]})


# ---------------------------------------------------------------------------- hints


def test_every_hint() -> None:
    h = {
        "$max": 20,
        "$skip": 40,
        "$orderby": {"name": 1, "age": -1},
        "$fields": {"name": 1, "address.city": 1},
        "$groupby": ["country", "address.city"],
        "$aggregate": ["SUM:score", "AVG:score", "MIN:age", "MAX:age", "COUNT:n", "COUNT:"],
        "$aggregate-grand-total": True,
    }
    assert parse_hints(h) == Query(
        limit=20,
        skip=40,
        sort=(SortKey(("name",), 1), SortKey(("age",), -1)),
        projection=Projection((("name",), ("address", "city")), include=True),
        groupby=(("country",), ("address", "city")),
        aggregates=(Aggregate("SUM", "score"), Aggregate("AVG", "score"),
                    Aggregate("MIN", "age"), Aggregate("MAX", "age"),
                    Aggregate("COUNT", "n"), Aggregate("COUNT", "")),
        grand_total=True,
    )


def test_aggregate_result_keys() -> None:
    aggregates = parse_hints({"$aggregate": ["sum:score", "COUNT:", "AVG:a.b"]}).aggregates
    assert [a.key for a in aggregates] == ["SUM score", "COUNT ", "AVG a.b"]
    assert [a.path for a in aggregates] == [("score",), (), ("a", "b")]


def test_fields_with_zeros_excludes() -> None:
    assert parse_hints({"$fields": {"password": 0, "secret": False}}).projection == Projection(
        (("password",), ("secret",)), include=False
    )


def test_hints_keep_what_they_do_not_mention() -> None:
    base = Query(filter=Eq(("a",), 1), skip=3)
    assert parse_hints({"$max": 2}, base) == Query(filter=Eq(("a",), 1), skip=3, limit=2)


@pytest.mark.parametrize(
    ("h", "part"),
    [
        ({"$fields": {"name": 1, "secret": 0}}, "$fields cannot mix"),
        ({"$fields": {"name": 2}}, "$fields value for 'name'"),
        ({"$fields": {}}, "$fields"),
        ({"$fields": ["name"]}, "$fields"),
        ({"$max": -1}, "$max"),
        ({"$max": "ten"}, "$max"),
        ({"$max": 2.5}, "$max"),
        ({"$skip": -5}, "$skip"),
        ({"$orderby": {"name": 2}}, "$orderby 'name'"),
        ({"$orderby": ["name"]}, "$orderby"),
        ({"$groupby": "country"}, "$groupby"),
        ({"$groupby": ["a..b"]}, "'a..b'"),
        ({"$aggregate": "SUM:a"}, "$aggregate"),
        ({"$aggregate": ["MEDIAN:score"]}, "'MEDIAN'"),
        ({"$aggregate": ["SUM"]}, "'SUM'"),
        ({"$aggregate": ["SUM:"]}, "'SUM:'"),
        ({"$aggregate-grand-total": "yes"}, "$aggregate-grand-total"),
        ({"$distinct": "a"}, "'$distinct'"),
        ({"$where": "1"}, "'$where'"),
    ],
    ids=["$fields-mixed", "$fields-2", "$fields-empty", "$fields-array", "$max-negative",
         "$max-text", "$max-float", "$skip-negative", "$orderby-direction", "$orderby-array",
         "$groupby-string", "$groupby-bad-path", "$aggregate-string", "$aggregate-func",
         "$aggregate-no-colon", "$aggregate-no-field", "grand-total-not-bool",
         "unknown-hint", "$where-hint"],
)
def test_bad_hints_are_refused_naming_the_part(h: JSON, part: str) -> None:
    with refused(part):
        parse_hints(h)


def test_hints_must_be_an_object() -> None:
    with refused("h must be a JSON object"):
        parse_hints([1])


# ---------------------------------------------------------------------------- URL


def params(**values: str | list[str]) -> dict[str, list[str]]:
    return {k: v if isinstance(v, list) else [v] for k, v in values.items()}


def test_no_parameters_give_the_defaults() -> None:
    query, options = parse_list_params({})
    assert query == Query(filter=MATCH_ALL, sort=(), skip=0, limit=DEFAULT_MAX)
    assert query.limit == 1000
    assert options == ReadOptions(totals=False, count=False, metafields=False,
                                  fetchchildren=False)


def test_every_url_parameter() -> None:
    query, options = parse_list_params(params(
        q='{"age": {"$gt": 18}}',
        filter="joe",
        sort=["name", "age"],
        dir=["-1", "1"],
        skip="10",
        max="5",
        totals="true",
        count="true",
        metafields="true",
        fetchchildren="true",
        groupby=["country", "city"],
        aggregate=["SUM:score", "COUNT:"],
        apikey="ignored",
    ), now=NOW)
    assert query == Query(
        filter=And((Gt(("age",), 18), Text("joe"))),
        sort=(SortKey(("name",), -1), SortKey(("age",), 1)),
        skip=10,
        limit=5,
        groupby=(("country",), ("city",)),
        aggregates=(Aggregate("SUM", "score"), Aggregate("COUNT", "")),
    )
    assert options == ReadOptions(totals=True, count=True, metafields=True, fetchchildren=True)


def test_filter_alone_is_a_text_search() -> None:
    query, _ = parse_list_params(params(filter="Joe Smith"))
    assert query.filter == Text("Joe Smith")


def test_sort_without_dir_is_ascending() -> None:
    query, _ = parse_list_params(params(sort=["name", "age"], dir=["-1"]))
    assert query.sort == (SortKey(("name",), -1), SortKey(("age",), 1))


def test_a_sort_field_in_json_quotes_sorts_by_that_field() -> None:
    query, _ = parse_list_params(params(sort=['"age"', '"a.b"', "name"], dir=["-1"]))
    assert query.sort == (SortKey(("age",), -1), SortKey(("a", "b"), 1),
                          SortKey(("name",), 1))
    with pytest.raises(InvalidQuery, match="sort"):
        parse_list_params(params(sort=['""']))


def test_empty_q_and_h_are_ignored() -> None:
    assert parse_list_params(params(q="", h=" "))[0] == Query()
    assert parse_list_params(params(q="{}"))[0] == Query()


def test_hints_override_url_parameters() -> None:
    query, _ = parse_list_params(params(
        max="5", skip="1", sort="name", h='{"$max": 2, "$orderby": {"age": -1}}'
    ))
    assert (query.limit, query.skip, query.sort) == (2, 1, (SortKey(("age",), -1),))


def test_flags_accept_the_usual_spellings() -> None:
    for value in ("true", "True", "1", "yes"):
        assert parse_list_params(params(totals=value))[1].totals is True
    for value in ("false", "0", "no", ""):
        assert parse_list_params(params(totals=value))[1].totals is False


@pytest.mark.parametrize(
    ("values", "part"),
    [
        (params(max="-1"), "max"),
        (params(max="ten"), "max"),
        (params(skip="-2"), "skip"),
        (params(sort="name", dir=["1", "-1"]), "more dir parameters"),
        (params(sort="name", dir="up"), "dir"),
        (params(sort="a..b"), "'a..b'"),
        (params(totals="maybe"), "'totals'"),
        (params(count="2"), "'count'"),
        (params(metafields="on"), "'metafields'"),
        (params(fetchchildren="y"), "'fetchchildren'"),
        (params(groupby="a..b"), "'a..b'"),
        (params(aggregate="TOTAL:x"), "'TOTAL'"),
        (params(q='{"$where": "1"}'), "'$where'"),
        (params(q="[1]"), "q must be a JSON object"),
        (params(h='{"$fields": {"a": 1, "b": 0}}'), "$fields cannot mix"),
    ],
    ids=["max-negative", "max-text", "skip-negative", "dir-without-sort", "dir-bad",
         "sort-bad-path", "totals", "count", "metafields", "fetchchildren", "groupby",
         "aggregate", "q-$where", "q-array", "h-$fields"],
)
def test_bad_url_parameters_are_refused_naming_them(values: dict[str, list[str]],
                                                    part: str) -> None:
    with refused(part):
        parse_list_params(values)


def test_orderby_boolean_direction_is_refused_naming_the_field() -> None:
    import pytest

    from docbase.core.errors import InvalidQuery
    from docbase.core.query import parse_hints

    with pytest.raises(InvalidQuery, match="name"):
        parse_hints({"$orderby": {"name": True}})


def test_regex_atomic_groups_and_possessive_quantifiers_are_refused() -> None:
    import pytest

    from docbase.core.errors import InvalidQuery
    from docbase.core.query import parse_filter

    for pattern in ("(?>ab)c", "a*+", "a++b", "a?+", "a{2}+"):
        with pytest.raises(InvalidQuery, match="possessive"):
            parse_filter({"f": {"$regex": pattern}})


@pytest.mark.parametrize("pattern", [
    "[*+]", "[+*]+", "a[?]+b", "[a-z*]+x", "[]*+]", "[^]+*]", r"[\]*+]", r"\*+", r"\++",
    r"\\?\d+", "(a|b)+c", "x{2}c+",
])
def test_regex_symbols_in_a_class_or_escaped_are_not_possessive_quantifiers(
    pattern: str,
) -> None:
    node = parse_filter({"f": {"$regex": pattern}})
    assert node == Regex(("f",), pattern)


@pytest.mark.parametrize("pattern", [
    "[ab]*+", "[*]++", r"\\*+", r"[\]]?+", "(?>[+*])", r"(?<=[a])b", r"(a)[1]\1",
])
def test_a_construct_after_a_class_or_an_escaped_backslash_is_still_refused(
    pattern: str,
) -> None:
    with pytest.raises(InvalidQuery, match="unsupported construct"):
        parse_filter({"f": {"$regex": pattern}})


def test_regex_is_validated_with_its_options() -> None:
    import pytest

    from docbase.core.errors import InvalidQuery
    from docbase.core.query import parse_filter

    parse_filter({"f": {"$regex": " *"}})  # a space repeated: valid without x
    with pytest.raises(InvalidQuery, match="not a valid pattern"):
        parse_filter({"f": {"$regex": " *", "$options": "x"}})  # x drops the space
