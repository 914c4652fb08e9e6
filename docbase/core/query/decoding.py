"""Raw query input: JSON parameter text, dot paths and the nesting bound of ``q``/``h``.

Every parser of :mod:`docbase.core.query` reads its input through these helpers, so
malformed JSON, a bad path or a too deeply nested object is refused the same way
whether the query came over HTTP or from the embedded library (``docs/query.md``).
"""

from __future__ import annotations

from docbase.core.errors import InvalidQuery
from docbase.core.query.ast import JSON, Path
from docbase.core.settings.limits import Limits
from docbase.core.untrusted_json import check_bounds, decode_untrusted


def parse_json(text: str, what: str) -> JSON:
    """Decode a JSON parameter, or raise :class:`InvalidQuery` naming ``what``.

    Raises:
        InvalidQuery: ``text`` is not valid JSON (or nests past the decoder's recursion).

    """
    decoded: JSON = decode_untrusted(text, what)
    return decoded


def split_path(name: str, where: str = "field") -> Path:
    """Split a dot path, refusing empty steps and ``$`` steps.

    Raises:
        InvalidQuery: ``name`` is empty, not a string, or has an empty or ``$`` step.

    """
    if not isinstance(name, str) or not name:
        raise InvalidQuery(f"{where} name must be a non-empty string")
    steps = tuple(name.split("."))
    for step in steps:
        if not step or step.startswith("$"):
            raise InvalidQuery(f"invalid {where} path {name!r}")
    return steps


def json_depth(value: JSON) -> int:
    """Count how deeply objects and arrays nest in ``value`` (a scalar is 0).

    The walk goes level by level without recursion, so any decoded value is measured.
    """
    depth, level = 0, [value]
    while containers := [node for node in level if isinstance(node, dict | list)]:
        depth += 1
        level = [child for node in containers
                 for child in (node.values() if isinstance(node, dict) else node)]
    return depth


def check_depth(value: JSON, what: str, limits: Limits | None) -> None:
    """Refuse a ``q`` or ``h`` value nesting deeper than ``limits.max_query_depth``.

    The depth counts every object and array level of the JSON (:func:`json_depth`).
    Without ``limits`` no depth is checked here; the filter parser still stops at its
    own structural bound, ``MAX_DEPTH`` levels of ``$and``/``$or``/``$elemMatch``/``$not``.
    Integers outside the 64-bit range no engine compares are refused either way
    (:func:`~docbase.core.untrusted_json.check_bounds`).

    Raises:
        InvalidQuery: ``value`` nests deeper than the limit or holds a too large
            integer; the message names ``what``.

    """
    check_bounds(value, what, None if limits is None else limits.max_query_depth)
