"""``$regex``: the pattern subset every adapter runs alike, and matching in bounded time.

Look-behind, backreferences, named groups, conditionals, atomic groups and possessive
quantifiers are refused, because not every backend runs them (``docs/query.md``);
options are a subset of ``imsx``. A pattern is compiled once here with its options so
a bad one is refused before any adapter sees it.

Where docbase matches in Python (the memory adapter, SQLite's ``REGEXP``, the checks
core makes for the Mongo adapter), :func:`regex_search` runs the ``regex`` package in
its ``re``-compatible mode with a time limit per value (:data:`REGEX_TIME_LIMIT`) and
without holding the GIL: a pattern that backtracks catastrophically (``(a|a)*$`` on a
long string) is refused with :class:`~docbase.core.errors.RegexTimeout` instead of
stalling the whole process, whose other requests go on meanwhile. Python's own ``re``
can be interrupted by neither a thread nor a time limit. All the values one store
operation matches share that operation's ``limits.query_timeout``
(:mod:`docbase.core.query.deadline`): past it the query is refused with
:class:`~docbase.core.errors.QueryTimeout`, so a pattern that takes just under the
per-value limit on each of many documents is bounded too.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from docbase.core.errors import InvalidQuery, RegexTimeout
from docbase.core.plugins import lazy_module
from docbase.core.query.ast import JSON, Path, Regex
from docbase.core.query.deadline import remaining

if TYPE_CHECKING:
    import regex
else:  # imported with the first $regex: most queries have none (~1 MiB per process)
    regex = lazy_module("regex")

_UNSUPPORTED_REGEX = re.compile(
    r"\(\?<[=!]|\\[1-9]|\(\?P[=<>]|\(\?<\w|\\k<|\(\?\(|\(\?[aLu]"  # look-behind, backrefs, names
    r"|\(\?>|[*+?}]\+"  # atomic groups and possessive quantifiers
)
_REGEX_OPTIONS = frozenset("imsx")
REGEX_TIME_LIMIT = 0.05
"""Seconds one ``$regex`` may take on one value before the query is refused."""
_OPTION_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


def _structure(pattern: str) -> str:
    r"""``pattern`` with every character class and escaped symbol replaced by ``_``.

    What is left is what can be a construct: ``[*+]`` is two literal characters, and
    ``\*+`` a literal star repeated, not a possessive quantifier. Escapes of letters
    and digits stay, since ``\1`` and ``\k<name>`` are backreferences.
    """
    kept: list[str] = []
    i, end = 0, len(pattern)
    while i < end:
        char = pattern[i]
        if char == "\\":
            escaped = pattern[i:i + 2]
            kept.append(escaped if escaped[1:].isalnum() else "_")
            i += 2
        elif char == "[":
            i += 1
            if pattern.startswith("^", i):
                i += 1
            if pattern.startswith("]", i):  # a "]" first in a class is a literal
                i += 1
            while i < end and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            kept.append("_")
            i += 1
        else:
            kept.append(char)
            i += 1
    return "".join(kept)


def regex_flags(options: str) -> re.RegexFlag:
    """Turn ``$options`` letters (a subset of ``imsx``) into :mod:`re` flags."""
    flags = re.RegexFlag(0)
    for letter in options:
        flags |= _OPTION_FLAGS[letter]
    return flags


def parse_regex(path: Path, pattern: JSON, options: JSON) -> Regex:
    """Check a ``$regex`` pattern and its ``$options`` and build the :class:`Regex` node.

    Raises:
        InvalidQuery: the pattern is not a string, uses an unsupported construct or does
            not compile, or the options hold a letter other than i, m, s, x.

    """
    dotted = ".".join(path) or "element"
    if not isinstance(pattern, str):
        raise InvalidQuery(f"$regex on {dotted!r} needs a string pattern")
    if not isinstance(options, str) or set(options) - _REGEX_OPTIONS:
        raise InvalidQuery(f"$options on {dotted!r} may only hold the letters i, m, s, x")
    if _UNSUPPORTED_REGEX.search(_structure(pattern)):
        raise InvalidQuery(f"$regex on {dotted!r} uses an unsupported construct "
                           "(look-behind, backreference, named group, atomic group or "
                           "possessive quantifier)")
    try:
        re.compile(pattern, regex_flags(options))
        compiled_regex(pattern, "".join(sorted(set(options))))
    except (re.error, regex.error) as exc:
        raise InvalidQuery(f"$regex on {dotted!r} is not a valid pattern: {exc}") from exc
    return Regex(path, pattern, "".join(sorted(set(options))))


@functools.lru_cache(maxsize=256)
def compiled_regex(pattern: str, options: str) -> regex.Pattern[str]:
    """``pattern`` compiled by the ``regex`` package, read as Python's ``re`` reads it."""
    return regex.compile(pattern, int(regex_flags(options)) | regex.VERSION0)


@functools.lru_cache(maxsize=256)
def _reference(pattern: str, options: str) -> re.Pattern[str]:
    return re.compile(pattern, regex_flags(options))


def regex_search(pattern: str, options: str, text: str) -> bool:
    """Tell whether ``pattern`` (with ``options``) matches somewhere in ``text``.

    Raises:
        RegexTimeout: the match took longer than :data:`REGEX_TIME_LIMIT`.
        QueryTimeout: the store operation in progress ran out of its time.

    """
    if not text:  # the engines differ on an empty text (\B), where nothing backtracks long
        return _reference(pattern, options).search(text) is not None
    left = remaining()
    limit = REGEX_TIME_LIMIT if left is None or left > REGEX_TIME_LIMIT else left
    try:
        found = compiled_regex(pattern, options).search(text, timeout=limit, concurrent=True)
    except TimeoutError:
        remaining()  # the operation's own time is spent: say so rather than blame one value
        raise RegexTimeout(
            f"$regex {pattern!r} took longer than {REGEX_TIME_LIMIT} s on one value; "
            "it backtracks too much (nested or overlapping repetition such as "
            "(a+)+ or (a|a)*): simplify the pattern"
        ) from None
    return found is not None


_PREFIX = re.compile(r"\^([^.^$*+?{}\[\]\\|()]+)")
_QUANTIFIERS = frozenset("*+?{")


def prefix_bounds(pattern: str, options: str) -> tuple[str, str] | None:
    """Strings ``[low, high)`` that every string ``pattern`` matches lies within, if any.

    ``^abc...`` (no ``m``, ``i`` or ``x`` option, no ``|``, no ``(?``: the ``regex``
    package takes inline flags anywhere in a pattern) matches only strings
    starting with ``abc``: those are ``>= "abc"`` and ``< "abd"`` in code point order,
    a range an index on the path seeks to. The pattern still decides the match.
    """
    found = _PREFIX.match(pattern)
    if found is None or "|" in pattern or "(?" in pattern or set(options) & set("imx"):
        return None
    prefix = found.group(1)
    if pattern[found.end():found.end() + 1] in _QUANTIFIERS:
        prefix = prefix[:-1]  # the last character may be repeated none or many times
    if not prefix or ord(prefix[-1]) >= 0x10FFFF:
        return None
    following = ord(prefix[-1]) + 1
    if 0xD800 <= following <= 0xDFFF:  # no string holds a lone surrogate
        following = 0xE000
    return prefix, prefix[:-1] + chr(following)
