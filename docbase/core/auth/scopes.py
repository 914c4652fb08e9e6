"""Scopes of a credential: path globs, methods and CORS origins it may use.

Paths are relative to a database's base URL (``/rest/customers/**``). In a glob,
``*`` is one path segment, ``**`` any number of them, ``?`` one character; a glob
ending in ``/**`` also covers the path without that tail. An empty ``paths`` or
``methods`` allows every path or method; an empty ``origins`` allows no browser origin.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

import msgspec

from docbase.core.errors import InvalidQuery

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})
"""The methods a scope may name."""
_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s]+")


def normal_path(path: str) -> str:
    """A path without trailing slashes (``/`` stays ``/``)."""
    return path.rstrip("/") or "/"


@functools.lru_cache(maxsize=4096)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """Compile a path glob into a regular expression matching whole paths."""
    tail = ""
    body = normal_path(pattern)
    if body.endswith("/**"):  # "/rest/c/**" also covers "/rest/c" itself
        body, tail = body[:-3], "(?:/.*)?"
    parts = re.split(r"(\*\*|\*|\?)", body)
    regex = "".join({"**": ".*", "*": "[^/]*", "?": "[^/]"}.get(p, re.escape(p)) for p in parts)
    return re.compile(regex + tail)


class Scope(msgspec.Struct, frozen=True):
    """What a scoped credential may reach; each empty tuple means "no restriction"."""

    paths: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()

    def allows(self, method: str, path: str) -> bool:
        """Tell whether ``method`` on ``path`` (relative to the base URL) is covered."""
        method = "GET" if method == "HEAD" else method
        if self.methods and method not in self.methods:
            return False
        return not self.paths or any(
            compile_glob(p).fullmatch(normal_path(path)) for p in self.paths
        )

    def allows_origin(self, origin: str) -> bool:
        """Tell whether a browser page of ``origin`` may use the credential."""
        return "*" in self.origins or origin in self.origins


def parse_scope(paths: Iterable[str], methods: Iterable[str], origins: Iterable[str]) -> Scope:
    """Check and normalise a scope as given by an operator.

    Methods are upper-cased and deduplicated, origins lose a trailing slash.

    Raises:
        InvalidQuery: a path glob not starting with ``/``, a method outside
            :data:`METHODS`, or an origin that is neither ``*`` nor ``scheme://host``.

    """
    paths_ = tuple(paths)
    for path in paths_:
        if not isinstance(path, str) or not path.startswith("/"):
            raise InvalidQuery(f"path glob {path!r} must start with '/' (e.g. /rest/customers/**)")
    methods_ = tuple(dict.fromkeys(m.upper() for m in methods))
    for method in methods_:
        if method not in METHODS:
            raise InvalidQuery(f"unknown method {method!r}; use {', '.join(sorted(METHODS))}")
    origins_ = tuple(o.rstrip("/") for o in origins)
    for origin in origins_:
        if origin != "*" and not _ORIGIN.fullmatch(origin):
            raise InvalidQuery(f"origin {origin!r} must look like https://app.example.com or *")
    return Scope(paths_, methods_, origins_)
