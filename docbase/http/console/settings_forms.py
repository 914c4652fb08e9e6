"""The Settings page: typed forms, the server's limits and backups, and the path/value box.

- ``GET /_/settings``: the stored settings (secrets as ``***``,
  :mod:`docbase.core.settings.display`); a form per group of typed settings
  (:mod:`~docbase.http.console.setting_fields`: ``auth.jwt``, ``auth.login``,
  ``auth.users``, ``realtime``, ``schema``, ``media``); the limits and the backup
  settings this server runs with, which its config file sets (``[limits]``,
  ``backup_*``), shown with their descriptions; the box that sets any setting by path.
- ``POST /_/settings/group/<group>``: store one group's form in one write of its object,
  checked against the typed settings as ``docbase settings set`` is; a refused value is
  named beside its input and nothing is stored.
- ``POST /_/settings``: store ``value`` at ``path`` (JSON when it is valid JSON, else text).
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Response, get, post
from litestar.params import FromPath

from docbase.config.settings import settings as server_settings
from docbase.core.errors import ConfigurationError, DocbaseError, NotFound
from docbase.core.settings import DatabaseSettings, Limits
from docbase.core.settings.display import parse_value, shown_settings
from docbase.core.settings.in_force import LimitsInForce
from docbase.core.settings.limits import DATABASE_LIMITS
from docbase.http.console.backups import BackupPlace, place_of
from docbase.http.console.flash import go
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import render
from docbase.http.console.setting_fields import (
    SettingGroup,
    attribute_docs,
    group_tree,
    setting_groups,
    shown_text,
    stored_at,
    typed_value,
)

BACKUP_SETTINGS = ("backup_dir", "backup_schedule", "backup_keep")
"""The server settings of scheduled backups (``docbase/config/settings.py``)."""
OWN_SECTIONS = ("limits", "backups")
"""Groups shown in a section of their own, beside the server's values they lower."""


class Refused(msgspec.Struct, frozen=True):
    """A group's form that was not stored: what was typed, and why."""

    group: str
    form: dict[str, Any]
    message: str


def _group_view(group: SettingGroup, settings: DatabaseSettings, tree: dict[str, Any],
                refused: Refused | None, servers: dict[str, str]) -> dict[str, Any]:
    """What the template needs of ``group``: each field, its text, whether it is set.

    ``servers`` holds the server's value of each setting a blank box leaves in force
    (``limits.*``, ``backups.*``), by path: the box shows it as its placeholder.
    """
    typed = refused.form if refused and refused.group == group.path else None
    stored = stored_at(tree, group.path)
    fields = []
    for field in group.fields:
        value = typed_value(settings, field.path)
        text = shown_text(value, field) if typed is None else (
            "" if field.kind == "secret" else str(typed.get(field.key, "")))
        checked = bool(value) if typed is None else typed.get(field.key) == "on"
        invalid = typed is not None and f"'{field.path}'" in (refused.message if refused
                                                               else "")
        fields.append({"field": field, "text": text, "checked": checked,
                       "stored": field.key in stored, "invalid": invalid,
                       "server": servers.get(field.path)})
    return {"group": group, "fields": fields,
            "error": refused.message if typed is not None and refused else ""}


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def _limits(limits: LimitsInForce) -> list[tuple[str, str, str]]:
    """``(limits.NAME, value in force, description)`` of every limit, as declared.

    A value the database lowered says so, with the server's beside it.
    """
    docs = attribute_docs(Limits)
    rows = []
    for name in Limits.__struct_fields__:
        value, server = getattr(limits.current, name), getattr(limits.server, name)
        shown = _json(value) if value == server else (
            f"{_json(value)} (this database; the server's: {_json(server)})")
        rows.append((f"limits.{name}", shown, docs.get(name, "")))
    return rows


def _servers(limits: Limits, place: BackupPlace | None) -> dict[str, str]:
    """The server's value of each setting a database may store its own of, by path."""
    values = {f"limits.{name}": _json(getattr(limits, name)) for name in DATABASE_LIMITS}
    if place is not None:
        values |= {"backups.schedule": place.schedule, "backups.keep": str(place.keep)}
    return values


def _backups(place: BackupPlace | None) -> list[tuple[str, str, str]] | None:
    """``(setting, value, description)`` of the backup settings; ``None`` without any."""
    if place is None:
        return None
    values = {"backup_dir": place.directory, "backup_schedule": place.schedule,
              "backup_keep": str(place.keep)}
    return [(s.name, values[s.name], s.description) for s in server_settings()
            if s.name in BACKUP_SETTINGS]


async def settings_view(request: HttpRequest, console: Console, *, error: str = "",
                        status: int = 200, refused: Refused | None = None) -> Response[str]:
    """The Settings page, with ``error`` above it or a ``refused`` group's form."""
    tree = await console.database.settings.tree()
    try:
        typed: DatabaseSettings | None = DatabaseSettings.from_tree(tree)
    except ConfigurationError as exc:  # stored by an import: fix it with the path box
        typed, error = None, error or f"The stored settings do not fit their types: {exc}"
    place, limits = place_of(request), console.database.limits_in_force
    servers = _servers(limits.server, place)
    views = {} if typed is None else {g.path: _group_view(g, typed, tree, refused, servers)
                                      for g in setting_groups()}
    return render("settings.html", status, **console.page(
        title="Settings", settings=shown_settings(tree), error=error,
        groups=[v for path, v in views.items() if path not in OWN_SECTIONS],
        limits_form=views.get("limits"), backups_form=views.get("backups"),
        limits=_limits(limits), backups=_backups(place)))


@get(console_paths("/settings"))
async def settings_page(request: HttpRequest) -> Response[str]:
    """``GET /_/settings``."""
    return await settings_view(request, await signed_in(request))


@post(console_paths("/settings/group/{group:str}"), status_code=303)
async def save_group(request: HttpRequest, group: FromPath[str]) -> Response[Any]:
    """``POST /_/settings/group/<group>``: store that group's typed form, all at once."""
    form = dict(await request.form())
    console = await signed_in(request, form=form)
    chosen = next((g for g in setting_groups() if g.path == group), None)
    if chosen is None:
        raise NotFound(f"no group of settings {group!r}")
    settings = console.database.settings
    try:
        await settings.set(group, group_tree(chosen, stored_at(await settings.tree(), group),
                                             form))
    except DocbaseError as exc:
        kept = {k: v for k, v in form.items() if isinstance(v, str) and k != "csrf"}
        return await settings_view(request, console, status=422, refused=Refused(
            group, kept, f"Not saved: {exc.message}"))
    return go(console.base, console.base + "/settings", f"Settings {group}.* saved.")


@post(console_paths("/settings"), status_code=303)
async def change_setting(request: HttpRequest) -> Response[Any]:
    """``POST /_/settings``: store ``value`` at ``path``."""
    form = await request.form()
    console = await signed_in(request, form=dict(form))
    path = str(form.get("path", "")).strip()
    try:
        await console.database.settings.set(path, parse_value(str(form.get("value", ""))))
    except DocbaseError as exc:
        return await settings_view(request, console, error=exc.message, status=422)
    return go(console.base, console.base + "/settings", f"Setting {path} saved.")


SETTINGS_HANDLERS = [settings_page, save_group, change_setting]
