"""API keys and users of the database, managed from the console.

- ``GET /_/keys``: every key (prefix, scope, created, last used, revoked) and a form.
- ``POST /_/keys``: create a key, full-access or limited to paths and methods; the
  page that answers shows the key itself, once (only its hash is stored).
- ``POST /_/keys/revoke``: revoke the key whose id the form names.
- ``GET /_/users``, ``POST /_/users/create``, ``POST /_/users/delete``,
  ``POST /_/users/admin`` (make an administrator or not), ``POST /_/users/password``.
- ``GET /_/settings``: the stored settings, secrets as ``***``
  (:mod:`docbase.core.settings.display`); ``POST /_/settings``: set one by its dotted
  path (a value that is valid JSON is taken as JSON, else as text).

Each action calls the function the ``docbase keys``/``users``/``settings`` commands call.
"""

from __future__ import annotations

from typing import Any

from litestar import Response, get, post
from litestar.params import FromPath
from litestar.response import Redirect

from docbase.core import auth
from docbase.core.auth import METHODS
from docbase.core.auth.principal import split_roles
from docbase.core.errors import DocbaseError
from docbase.core.settings.display import parse_value, shown_settings
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import CONSOLE_HEADERS, render
from docbase.http.errors import answer_for


def _lines(value: Any) -> list[str]:
    text = value if isinstance(value, str) else ""
    return [part.strip() for part in text.replace(",", "\n").splitlines() if part.strip()]


async def _keys_page(console: Console, *, created: str = "", error: str = "",
                     status: int = 200) -> Response[str]:
    keys = await auth.list_keys(console.database)
    return render("keys.html", status, **console.page(
        title="API keys", keys=keys, created=created, error=error, methods=sorted(METHODS)))


@get(console_paths("/keys"))
async def keys_page(request: HttpRequest) -> Response[str]:
    """``GET /_/keys``."""
    return await _keys_page(await signed_in(request))


@post(console_paths("/keys"), status_code=200)
async def create_key(request: HttpRequest) -> Response[str]:
    """``POST /_/keys``: the new key is in the answer, and nowhere else."""
    form = await request.form()
    console = await signed_in(request, form=dict(form))
    paths, methods = _lines(form.get("paths")), form.getall("methods", [])
    full = form.get("full_access") == "on"
    description = form.get("description")
    try:
        raw, _ = await auth.create_key(
            console.database, full_access=full or None, paths=paths, methods=methods,
            description=description if isinstance(description, str) else "")
    except DocbaseError as exc:
        return await _keys_page(console, error=exc.message,
                                status=answer_for(type(exc)).status)
    return await _keys_page(console, created=raw, status=201)


@post(console_paths("/keys/revoke"), status_code=303)
async def revoke_key(request: HttpRequest) -> Redirect:
    """``POST /_/keys/revoke``: revoke the key with the form's ``id``."""
    form = await request.form()
    console = await signed_in(request, form=dict(form))
    await auth.revoke_key(console.database, str(form.get("id", "")))
    return Redirect(console.base + "/keys", status_code=303, headers=dict(CONSOLE_HEADERS))


async def _users_page(console: Console, *, error: str = "", status: int = 200
                      ) -> Response[str]:
    users = await auth.list_users(console.database)
    return render("users.html", status, **console.page(title="Users", users=users,
                                                        error=error))


@get(console_paths("/users"))
async def users_page(request: HttpRequest) -> Response[str]:
    """``GET /_/users``."""
    return await _users_page(await signed_in(request))


@post(console_paths("/users/{action:str}"), status_code=303)
async def change_user(request: HttpRequest, action: FromPath[str]) -> Response[Any]:
    """``POST /_/users/create|delete|admin|password|roles``."""
    form = await request.form()
    console = await signed_in(request, form=dict(form))
    database, email = console.database, str(form.get("email", ""))
    password = str(form.get("password", ""))
    roles = split_roles(str(form.get("roles", "")))
    try:
        if action == "create":
            await auth.create_user(database, email, password,
                                   admin=form.get("admin") == "on", roles=roles)
        elif action == "roles":
            await auth.set_roles(database, email, roles)
        elif action == "delete":
            await auth.delete_user(database, email)
        elif action == "admin":
            await auth.set_admin(database, email, form.get("admin") == "on")
        elif action == "password":
            await auth.set_password(database, email, password)
        else:
            return await _users_page(console, error=f"no user action {action!r}", status=404)
    except DocbaseError as exc:
        return await _users_page(console, error=exc.message,
                                 status=answer_for(type(exc)).status)
    return Redirect(console.base + "/users", status_code=303, headers=dict(CONSOLE_HEADERS))


async def _settings_page(console: Console, *, error: str = "", status: int = 200
                         ) -> Response[str]:
    shown = shown_settings(await console.database.settings.tree())
    return render("settings.html", status, **console.page(title="Settings", settings=shown,
                                                           error=error))


@get(console_paths("/settings"))
async def settings_page(request: HttpRequest) -> Response[str]:
    """``GET /_/settings``."""
    return await _settings_page(await signed_in(request))


@post(console_paths("/settings"), status_code=303)
async def change_setting(request: HttpRequest) -> Response[Any]:
    """``POST /_/settings``: store ``value`` at ``path``."""
    form = await request.form()
    console = await signed_in(request, form=dict(form))
    try:
        await console.database.settings.set(str(form.get("path", "")).strip(),
                                            parse_value(str(form.get("value", ""))))
    except DocbaseError as exc:
        return await _settings_page(console, error=exc.message, status=422)
    return Redirect(console.base + "/settings", status_code=303, headers=dict(CONSOLE_HEADERS))


ADMIN_HANDLERS = [keys_page, create_key, revoke_key, users_page, change_user, settings_page,
                  change_setting]
