"""``json_copy``: an equal value that shares no container with its original."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from docbase.core.documents import json_copy

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30)


def containers(value: Any) -> list[Any]:
    """Every dict and list in ``value``, itself included."""
    found = []
    if isinstance(value, dict | list):
        found.append(value)
        for item in value.values() if isinstance(value, dict) else value:
            found += containers(item)
    return found


@given(JSON)
def test_a_copy_is_equal_and_shares_no_container(value: Any) -> None:
    copied = json_copy(value)
    assert copied == value
    assert type(copied) is type(value)
    originals = {id(c) for c in containers(value)}
    assert not originals & {id(c) for c in containers(copied)}


def test_changing_the_copy_leaves_the_original() -> None:
    original: dict[str, Any] = {"a": {"b": [1, {"c": 2}]}, "tags": ["x"]}
    copied = json_copy(original)
    copied["a"]["b"][1]["c"] = 3
    copied["tags"].append("y")
    assert original == {"a": {"b": [1, {"c": 2}]}, "tags": ["x"]}


def test_values_that_are_not_json_are_deep_copied_too() -> None:
    inner = {"in": "set"}
    original: dict[str, Any] = {"s": {1, 2}, "t": (inner,), "key order": {"z": 1, "a": 2}}
    copied = json_copy(original)
    assert copied == original
    assert copied["s"] is not original["s"]
    assert copied["t"][0] is not inner
    assert list(copied["key order"]) == ["z", "a"]
