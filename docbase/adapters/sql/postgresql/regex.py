r"""Python ``re`` patterns rewritten as PostgreSQL regular expressions that match the same.

``$regex`` means Python's :func:`re.search` (``docbase.core.evaluate``). PostgreSQL's
engine differs in ``$``, ``\b``, ``\w``, ``.``, case folding and more, so the pattern is
parsed with Python's own parser and every construct is written out explicitly:
single-character matchers (literals under ``i``, classes, ``\d``, ``\w``, ``.``) become
bracket expressions listing exactly the code points Python's matcher accepts, found by
running that matcher over every code point once; anchors become look-around
constraints. Only whether a match exists matters, so greedy and lazy quantifiers are
the same. Atomic groups and possessive quantifiers have no equivalent and raise
:class:`~docbase.core.errors.InvalidQuery` (as do back-references and conditionals,
which the core parser already refuses).
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any, Final

from docbase.core.errors import InvalidQuery
from docbase.core.query.regex import regex_flags

_parser: Any = importlib.import_module("re._parser")
_compiler: Any = importlib.import_module("re._compiler")
_constants: Any = importlib.import_module("re._constants")

_DUPMAX: Final = 255  # PostgreSQL's largest repetition count
_VALID: Final = ((0x1, 0xD7FF), (0xE000, 0x10FFFF))  # no NUL or surrogate is ever stored
_NEVER: Final = "(?=a)b"
_CHAR_MATCHERS: Final = frozenset({"LITERAL", "NOT_LITERAL", "IN", "ANY"})


@functools.lru_cache(maxsize=1)
def _every_code_point() -> str:
    return "".join(map(chr, range(0x110000)))


@functools.lru_cache(maxsize=1024)
def translate(pattern: str, options: str = "") -> str:
    """Return a PostgreSQL ARE that finds a match exactly where Python's ``re`` does.

    Raises:
        InvalidQuery: the pattern is invalid or uses a construct without an equivalent.

    """
    try:
        tree = _parser.parse(pattern, int(regex_flags(options)))
    except re.error as exc:
        raise InvalidQuery(f"$regex {pattern!r} is not a valid pattern: {exc}") from exc
    return "***:" + _Translator(pattern).sequence(tree, tree.state.flags)


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def refuse(self, what: str) -> InvalidQuery:
        return InvalidQuery(f"$regex {self.pattern!r} uses {what}, which is not supported")

    def sequence(self, items: Any, flags: int) -> str:
        return "".join(self.node(op, av, flags) for op, av in items)

    def node(self, op: Any, av: Any, flags: int) -> str:
        name = op.name
        if name == "LITERAL" and not flags & re.IGNORECASE:
            return _char(av)
        if name in _CHAR_MATCHERS:
            if name == "ANY" and flags & re.DOTALL:
                return "."
            return _bracket(_code_points((op, av), flags & (re.IGNORECASE | re.DOTALL)))
        if name == "BRANCH":
            return "(?:" + "|".join(self.sequence(b, flags) for b in av[1]) + ")"
        if name == "SUBPATTERN":
            _group, add, remove, items = av
            return "(?:" + self.sequence(items, (flags | add) & ~remove) + ")"
        if name in ("MAX_REPEAT", "MIN_REPEAT"):
            low, high, items = av
            return _repeat("(?:" + self.sequence(items, flags) + ")", low, high, self)
        if name in ("ASSERT", "ASSERT_NOT"):
            direction, items = av
            kind = ("=" if name == "ASSERT" else "!")
            look = "(?" + ("" if direction == 1 else "<") + kind
            return look + self.sequence(items, flags) + ")"
        if name == "AT":
            return self.anchor(av.name, flags)
        if name in ("ATOMIC_GROUP", "POSSESSIVE_REPEAT"):
            raise self.refuse("an atomic group or a possessive quantifier")
        raise self.refuse(f"a back-reference or conditional ({name})")

    def anchor(self, name: str, flags: int) -> str:
        multiline = bool(flags & re.MULTILINE)
        match name:
            case "AT_BEGINNING_STRING":
                return "^"
            case "AT_END_STRING":
                return "$"
            case "AT_BEGINNING":
                return "(?:^|(?<=\\n))" if multiline else "^"
            case "AT_END":
                return "(?=\\n|$)" if multiline else "(?=\\n?$)"
            case "AT_BOUNDARY" | "AT_NON_BOUNDARY":
                word = _bracket(_code_points(_word_class(), 0))
                if name == "AT_BOUNDARY":
                    return f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
                # Python's \B never matches inside an empty string
                return f"(?:(?<={word})(?={word})|(?<!{word})(?!{word})(?:(?<=.)|(?=.)))"
        raise self.refuse(f"the anchor {name}")


def _word_class() -> tuple[Any, Any]:
    return (_constants.IN, [(_constants.CATEGORY, _constants.CATEGORY_WORD)])


_RUNS: dict[tuple[str, int], tuple[tuple[int, int], ...]] = {}


def _runs(node: Any, flags: int) -> tuple[tuple[int, int], ...]:
    cache_key = (repr(node), flags)
    cached = _RUNS.get(cache_key)
    if cached is not None:
        return cached
    state = _parser.State()
    state.flags = flags | re.UNICODE
    single = _parser.SubPattern(state, [node])
    runs = _parser.SubPattern(state, [(_constants.MAX_REPEAT, (1, _constants.MAXREPEAT,
                                                                single))])
    matcher = _compiler.compile(runs, state.flags)
    found = tuple((m.start(), m.end() - 1) for m in matcher.finditer(_every_code_point()))
    if len(_RUNS) < 4096:
        _RUNS[cache_key] = found
    return found


def _code_points(node: Any, flags: int) -> list[tuple[int, int]]:
    """Return the valid code point ranges a single-character matcher accepts."""
    ranges = []
    for low, high in _runs(node, flags):
        for valid_low, valid_high in _VALID:
            start, stop = max(low, valid_low), min(high, valid_high)
            if start <= stop:
                ranges.append((start, stop))
    return ranges


def _char(code: int) -> str:
    text = chr(code)
    if text.isascii() and text.isalnum():
        return text
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _bracket(ranges: list[tuple[int, int]]) -> str:
    if not ranges:
        return _NEVER
    parts = (_char(lo) if lo == hi else f"{_char(lo)}-{_char(hi)}" for lo, hi in ranges)
    return "[" + "".join(parts) + "]"


def _repeat(atom: str, low: int, high: int, translator: _Translator) -> str:
    unbounded = high is _constants.MAXREPEAT or high == _constants.MAXREPEAT
    text = _exactly(atom, low, translator)
    if unbounded:
        return text + atom + "*"
    extra = high - low
    if extra <= _DUPMAX:
        return text + (atom + "{0," + str(extra) + "}" if extra else "")
    times, rest = divmod(extra, _DUPMAX)
    if times > _DUPMAX:
        raise translator.refuse("a repetition count above 65,000")
    return text + f"(?:{atom}{{0,{_DUPMAX}}}){{{times}}}" + (
        f"{atom}{{0,{rest}}}" if rest else "")


def _exactly(atom: str, count: int, translator: _Translator) -> str:
    if count == 0:
        return ""
    if count <= _DUPMAX:
        return f"{atom}{{{count}}}"
    times, rest = divmod(count, _DUPMAX)
    if times > _DUPMAX:
        raise translator.refuse("a repetition count above 65,000")
    return f"(?:{atom}{{{_DUPMAX}}}){{{times}}}" + (f"{atom}{{{rest}}}" if rest else "")
