"""API keys and users of the database, managed from the console.

- ``GET /_/keys``: every key (prefix, scope, created, last used, revoked) and a form.
- ``POST /_/keys``: create a key, full-access or limited to paths and methods (a key
  with neither is refused: it would allow everything or nothing); the browser is sent
  back to ``GET /_/keys``, which shows the key itself once (only its hash is stored).
- ``POST /_/keys/revoke``: revoke the key whose id the form names.
- ``GET /_/users``, ``POST /_/users/create``, ``POST /_/users/delete``,
  ``POST /_/users/admin`` (make an administrator or not), ``POST /_/users/password``.
- The Settings page is :mod:`~docbase.http.console.settings_forms`.

Each action calls the function the ``docbase keys``/``users``/``settings`` commands call.
"""

from __future__ import annotations

from typing import Any

from litestar import Response, get, post
from litestar.params import FromPath

from docbase.core import auth
from docbase.core.auth import METHODS
from docbase.core.auth.principal import split_roles
from docbase.core.errors import DocbaseError, Forbidden, InvalidQuery
from docbase.http.console.flash import go
from docbase.http.console.guard import Console, HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import render
from docbase.http.errors import answer_for


def _lines(value: Any) -> list[str]:
    text = value if isinstance(value, str) else ""
    return [part.strip() for part in text.replace(",", "\n").splitlines() if part.strip()]


async def _keys_page(console: Console, *, error: str = "", status: int = 200
                     ) -> Response[str]:
    keys = await auth.list_keys(console.database)
    return render("keys.html", status, **console.page(
        title="API keys", keys=keys, created=console.flash.secret, error=error,
        methods=sorted(METHODS)))


@get(console_paths("/keys"))
async def keys_page(request: HttpRequest) -> Response[str]:
    """``GET /_/keys``."""
    return await _keys_page(await signed_in(request))


@post(console_paths("/keys"), status_code=303)
async def create_key(request: HttpRequest) -> Response[Any]:
    """``POST /_/keys``: then ``GET /_/keys`` shows the new key, once."""
    form = await request.form()
    console = await signed_in(request, form=dict(form))
    paths, methods = _lines(form.get("paths")), form.getall("methods", [])
    full = form.get("full_access") == "on"
    description = form.get("description")
    try:
        if not (full or paths or methods):
            raise InvalidQuery("a key without full access needs paths or methods: tick "
                               "Full access, or name what the key may do")
        raw, _ = await auth.create_key(
            console.database, full_access=full, paths=paths, methods=methods,
            description=description if isinstance(description, str) else "")
    except DocbaseError as exc:
        return await _keys_page(console, error=exc.message,
                                status=answer_for(type(exc)).status)
    return go(console.base, console.base + "/keys", "Key created.", secret=raw)


@post(console_paths("/keys/revoke"), status_code=303)
async def revoke_key(request: HttpRequest) -> Response[Any]:
    """``POST /_/keys/revoke``: revoke the key with the form's ``id``."""
    form = await request.form()
    console = await signed_in(request, form=dict(form))
    await auth.revoke_key(console.database, str(form.get("id", "")))
    return go(console.base, console.base + "/keys", "Key revoked.")


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
            done = f"User {email} created."
        elif action == "roles":
            await auth.set_roles(database, email, roles)
            done = f"Roles of {email} set."
        elif action == "delete":
            await _keep_an_administrator(console, email)
            await auth.delete_user(database, email)
            done = f"User {email} deleted."
        elif action == "admin":
            granted = form.get("admin") == "on"
            if not granted:
                await _keep_an_administrator(console, email)
            await auth.set_admin(database, email, granted)
            done = f"{email} is {'now' if granted else 'no longer'} an administrator."
        elif action == "password":
            await auth.set_password(database, email, password)
            done = f"Password of {email} set."
        else:
            return await _users_page(console, error=f"no user action {action!r}", status=404)
    except DocbaseError as exc:
        return await _users_page(console, error=exc.message,
                                 status=answer_for(type(exc)).status)
    return go(console.base, console.base + "/users", done)


async def _keep_an_administrator(console: Console, email: str) -> None:
    """Refuse to take the last administrator's flag (or user) away.

    After that, only the command line could sign anyone in to the console again.

    Raises:
        Forbidden: ``email`` is the only administrator left.

    """
    admins = {u.email for u in await auth.list_users(console.database) if u.admin}
    if admins == {email.strip().lower()}:
        raise Forbidden(f"{email} is the last administrator: make another user an "
                        "administrator first")


ADMIN_HANDLERS = [keys_page, create_key, revoke_key, users_page, change_user]
