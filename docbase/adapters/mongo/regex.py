r"""Rewrite a ``$regex`` into a pattern that MongoDB (PCRE) and Python ``re`` read alike.

The reference semantics are Python's. The engines agree on literals, classes,
groups, alternation, lookahead and quantifiers, but not on ``.``, ``^``/``$`` around
newlines, ``\s``, verbose mode or the ``m``/``s``/``x`` flags. Those are rewritten
into explicit constructs that mean the same everywhere, so only ``i`` remains as an
option. Anything else engine-specific (``\d``, ``\w``, ``\b``, inline flags, ...) makes
:func:`portable_regex` return ``None`` and the condition is checked by core instead.
"""

from __future__ import annotations

import re

_WHITESPACE = "".join(chr(c) for c in range(0x10000) if re.fullmatch(r"\s", chr(c)))
_ANY = "[\\s\\S]"
_END = "(?![\\s\\S])"
_PASSTHROUGH_ESCAPES = frozenset("nrtf")
_QUANTIFIER = re.compile(r"\{\d+(,\d*)?\}")


class _NotPortable(Exception):
    pass


def portable_regex(pattern: str, options: str) -> tuple[str, str] | None:
    """Return ``(pattern, options)`` with the same meaning in PCRE, JavaScript and Python.

    ``options`` is a subset of ``imsx``; the result's options are ``"i"`` or ``""``.
    ``None`` means the pattern uses a construct whose meaning differs between engines.
    """
    if any(ord(char) > 0xFFFF for char in pattern):
        return None
    if "x" in options:
        pattern = _strip_verbose(pattern)
    try:
        translated = _Translator(pattern, "m" in options, "s" in options).run()
    except _NotPortable:
        return None
    return translated, "i" if "i" in options else ""


def _strip_verbose(pattern: str) -> str:
    out: list[str] = []
    i, in_class, comment = 0, False, False
    while i < len(pattern):
        char = pattern[i]
        if comment:
            comment = char != "\n"
        elif char == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
            continue
        elif in_class:
            in_class = char != "]"
            out.append(char)
        elif char == "[":
            in_class = True
            out.append(char)
            if pattern[i + 1 : i + 2] == "^":
                out.append("^")
                i += 1
            if pattern[i + 1 : i + 2] == "]":
                out.append("]")
                i += 1
        elif char == "#":
            comment = True
        elif not char.isspace():
            out.append(char)
        i += 1
    return "".join(out)


class _Translator:
    def __init__(self, pattern: str, multiline: bool, dotall: bool) -> None:
        self.pattern = pattern
        self.multiline = multiline
        self.dotall = dotall
        self.i = 0
        self.out: list[str] = []

    def run(self) -> str:
        while self.i < len(self.pattern):
            char = self.pattern[self.i]
            self.i += 1
            if char == "\\":
                self.out.append(self.escape(in_class=False))
            elif char == "[":
                self.character_class()
            elif char == ".":
                self.out.append(_ANY if self.dotall else "[^\n]")
            elif char == "^":
                self.out.append("(?:^|(?<=\n))" if self.multiline else "^")
            elif char == "$":
                self.out.append(f"(?=\n|{_END})" if self.multiline else f"(?=\n?{_END})")
            elif char == "(":
                self.group()
            elif char == "{":
                self.braces()
            elif char in "*+?":
                self.out.append(char)
                if self.pattern[self.i : self.i + 1] == "+":
                    raise _NotPortable  # possessive quantifier
            else:
                self.out.append(char)
        return "".join(self.out)

    def escape(self, *, in_class: bool) -> str:
        if self.i >= len(self.pattern):
            raise _NotPortable
        char = self.pattern[self.i]
        self.i += 1
        if char == "s":
            return _WHITESPACE if in_class else f"[{_WHITESPACE}]"
        if char == "S" and not in_class:
            return f"[^{_WHITESPACE}]"
        if char in _PASSTHROUGH_ESCAPES or not (char.isascii() and char.isalnum()):
            return "\\" + char
        raise _NotPortable  # \d \w \b \A \Z \u \x digits ...: engine-specific

    def character_class(self) -> None:
        parts = ["["]
        if self.pattern[self.i : self.i + 1] == "^":
            parts.append("^")
            self.i += 1
        if self.pattern[self.i : self.i + 1] == "]":
            raise _NotPortable  # a leading ] is literal in Python, an empty class in JS
        while True:
            if self.i >= len(self.pattern):
                raise _NotPortable
            char = self.pattern[self.i]
            self.i += 1
            if char == "]":
                break
            if char == "\\":
                parts.append(self.escape(in_class=True))
            elif char == "[" or self.pattern[self.i - 1 : self.i + 1] in ("&&", "||", "--",
                                                                          "~~"):
                raise _NotPortable  # POSIX classes and set operations
            else:
                parts.append(char)
        parts.append("]")
        self.out.append("".join(parts))

    def group(self) -> None:
        if self.pattern[self.i : self.i + 1] == "?":
            kind = self.pattern[self.i + 1 : self.i + 2]
            if kind not in (":", "=", "!"):
                raise _NotPortable  # inline flags, comments, atomic and named groups
            self.out.append("(?" + kind)
            self.i += 2
        else:
            self.out.append("(")

    def braces(self) -> None:
        found = _QUANTIFIER.match(self.pattern, self.i - 1)
        if found is None:
            raise _NotPortable  # a literal brace or {,n}: read differently by engines
        self.out.append(found.group())
        self.i = found.end()
        if self.pattern[self.i : self.i + 1] == "+":
            raise _NotPortable  # possessive quantifier
