"""The typed settings as form fields, derived from their one declaration.

The stored settings are declared once, as the structs of
:mod:`docbase.core.settings.stored`; :func:`setting_groups` reads those structs (each
field's name, type, default and the docstring written under it) and makes one
:class:`SettingGroup` per struct of plain values: ``auth.jwt``, ``auth.login``,
``auth.users``, ``realtime``, ``schema``, ``media``. A setting added to a struct gets
its input with no template change. ``mail`` has a page of its own (``/_/mail``).

How a type becomes an input, and the form's text a value (:func:`group_tree`):

- ``bool``: a checkbox; ``int`` and ``float``: a number (other text is passed on for the
  typed check to name);
- ``str | int`` (a duration: ``auth.login.lifetime``, ``media.orphan_grace``): text,
  digits as seconds, checked by :func:`~docbase.core.auth.signing.parse_duration`;
- ``tuple[str, ...]``: a comma-separated line; a ``Literal``: a choice;
- ``str`` and ``str | None``: text, blank meaning none;
- a secret (every setting :data:`~docbase.core.settings.display.SHOWN` does not name):
  never shown; a blank box keeps the stored one, and a box removes it.
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import itertools
import textwrap
import types
import typing
from typing import Any, Literal

import msgspec

from docbase.core.auth.signing import parse_duration
from docbase.core.errors import ConfigurationError, InvalidQuery
from docbase.core.settings import DatabaseSettings
from docbase.core.settings.display import SHOWN
from docbase.core.settings.stored import SECTION_TYPES

OWN_PAGES = frozenset({"mail"})
"""Sections of the settings with no group here (mail has its own page)."""
Kind = Literal["bool", "int", "float", "duration", "list", "choice", "text", "secret"]


class SettingField(msgspec.Struct, frozen=True, kw_only=True):
    """One input of a group's form."""

    key: str
    """The stored key (``global`` for ``realtime.global``): the input's name."""
    path: str
    kind: Kind
    doc: str
    optional: bool = False
    choices: tuple[str, ...] = ()
    multiline: bool = False
    """A secret holding a PEM key, typed into a text area."""


class SettingGroup(msgspec.Struct, frozen=True):
    """The plain fields of one settings struct, saved together."""

    path: str
    title: str
    fields: tuple[SettingField, ...]


@functools.cache
def attribute_docs(struct: type) -> dict[str, str]:
    """The docstring under each field of ``struct``'s class body, by field name.

    A struct made from another's declarations (``LimitSettings``) names it
    ``documented_by``: its fields have that one's docs.
    """
    struct = getattr(struct, "documented_by", struct)
    try:
        body = ast.parse(textwrap.dedent(inspect.getsource(struct))).body[0]
    except (OSError, TypeError, IndexError):  # no source: installed without it
        return {}
    docs: dict[str, str] = {}
    statements = getattr(body, "body", [])
    for field, after in itertools.pairwise(statements):
        if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            docs[field.target.id] = " ".join(after.value.value.replace("``", "").split())
    return docs


def _kind(kind: Any, path: str) -> tuple[Kind, bool, tuple[str, ...]]:
    """``(input kind, None allowed, choices)`` of a field's type."""
    args = typing.get_args(kind)
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        plain = tuple(a for a in args if a is not type(None))
        if set(plain) == {str, int}:
            return "duration", False, ()
        inner, _, choices = _kind(plain[0], path)
        return inner, len(plain) < len(args), choices
    if path not in SHOWN and kind is str:
        return "secret", False, ()
    if typing.get_origin(kind) is Literal:
        return "choice", False, tuple(str(a) for a in args)
    if typing.get_origin(kind) is tuple:
        return "list", False, ()
    named = {bool: "bool", int: "int", float: "float"}
    return typing.cast("Kind", named.get(kind, "text")), False, ()


def _groups(struct: type[msgspec.Struct], path: str) -> list[SettingGroup]:
    docs = attribute_docs(struct)
    plain: list[SettingField] = []
    nested: list[SettingGroup] = []
    for info in msgspec.structs.fields(struct):
        where = f"{path}.{info.encode_name}"
        if isinstance(info.type, type) and issubclass(info.type, msgspec.Struct):
            nested.extend(_groups(info.type, where))
            continue
        kind, optional, choices = _kind(info.type, where)
        plain.append(SettingField(key=info.encode_name, path=where, kind=kind,
                                  doc=docs.get(info.name, ""), optional=optional,
                                  choices=choices, multiline=where.endswith("key")))
    title = (struct.__doc__ or path).strip().splitlines()[0].replace("``", "")
    return ([SettingGroup(path, title, tuple(plain))] if plain else []) + nested


@functools.cache
def setting_groups() -> tuple[SettingGroup, ...]:
    """Every group of typed settings the Settings page has a form for."""
    return tuple(group for name, struct in SECTION_TYPES.items() if name not in OWN_PAGES
                 for group in _groups(struct, name))


def stored_at(tree: dict[str, Any], path: str) -> dict[str, Any]:
    """The object stored at the dotted ``path`` of ``tree`` (empty when none is)."""
    node: Any = tree
    for step in path.split("."):
        node = node.get(step) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def typed_value(settings: DatabaseSettings, path: str) -> Any:
    """The value ``settings`` give the dotted ``path`` (its default when none is stored)."""
    node: Any = settings
    for step in path.split("."):
        node = getattr(node, next(f.name for f in msgspec.structs.fields(type(node))
                                  if f.encode_name == step))
    return node


def shown_text(value: Any, field: SettingField) -> str:
    """What the input of ``field`` shows for ``value`` (nothing for a secret)."""
    if field.kind == "secret" or value is None:
        return ""
    if field.kind == "list":
        return ", ".join(str(v) for v in value)
    return str(value)


def _number(text: str, kind: Kind) -> Any:
    try:
        return float(text) if kind == "float" else int(text)
    except ValueError:
        return text  # for the typed check to name


def _value(field: SettingField, form: dict[str, Any]) -> Any:
    text = str(form.get(field.key, "")).strip()
    if field.kind == "bool":
        return form.get(field.key) == "on"
    if field.kind in ("int", "float"):
        return None if not text and field.optional else _number(text, field.kind)
    if field.kind == "list":
        return [part.strip() for part in text.split(",") if part.strip()]
    if field.kind == "duration":
        try:
            parse_duration(int(text) if text.isdigit() else text, field.path)
        except InvalidQuery as exc:
            raise ConfigurationError(f"setting {field.path!r}: {exc.message}") from None
        return int(text) if text.isdigit() else text
    return None if not text and field.optional else text


def group_tree(group: SettingGroup, stored: dict[str, Any], form: dict[str, Any]
               ) -> dict[str, Any]:
    """The object the form of ``group`` makes of the ``stored`` one (other keys kept).

    A value equal to its default is stored only when one was stored before, so a saved
    form does not pin every default. A secret left blank keeps the stored one.

    Raises:
        ConfigurationError: a duration that is none (the message names the setting).

    """
    tree = copy.deepcopy(stored)
    defaults = {f.encode_name: f.default for f in msgspec.structs.fields(
        _struct_of(group.path))}
    for field in group.fields:
        if field.kind == "secret":
            if form.get(f"forget_{field.key}") == "on":
                tree.pop(field.key, None)
            elif str(form.get(field.key, "")):
                tree[field.key] = str(form[field.key]).strip()
            continue
        value = _value(field, form)
        default = defaults.get(field.key)
        if field.key in tree or value != (list(default) if isinstance(default, tuple)
                                          else default):
            tree[field.key] = value
    return tree


def _struct_of(path: str) -> type[msgspec.Struct]:
    first, *steps = path.split(".")
    struct: Any = SECTION_TYPES[first]
    for step in steps:
        struct = next(f.type for f in msgspec.structs.fields(struct) if f.encode_name == step)
    return typing.cast("type[msgspec.Struct]", struct)
