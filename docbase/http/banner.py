"""What ``docbase serve`` prints when it starts: where it listens and how to call it.

The banner names the URL a client on this machine uses, the databases and workers, the
certificate (and whether it was just created), and a ``curl`` line with the primary
database's full-access key read from where :mod:`docbase.bootstrap` put it (a file or
an environment variable, never the key itself).
"""

from __future__ import annotations

from pathlib import Path

from docbase.bootstrap import ADMIN_KEY_ENV, AdminKey
from docbase.config import PRIMARY, Deployment, admin_key_path
from docbase.http.launch import Listener, base_url


def banner(deployment: Deployment, listener: Listener, admin: list[AdminKey]) -> str:
    """Describe the running server and show how to call it with its full-access key."""
    url = base_url(deployment, listener)
    names = ", ".join(entry.name for entry in deployment.all_databases())
    lines = [f"docbase: serving {url} (databases: {names}; workers: {deployment.workers})"]
    curl = "curl"
    if listener.self_signed:
        made = "created now" if listener.created else "self-signed"
        lines.append(f"docbase: TLS certificate {_shown(listener.certfile)} ({made})")
        curl = f"curl --cacert {_shown(listener.certfile)}"
    elif not listener.tls:
        lines.append("docbase: plain HTTP for a TLS-terminating proxy at "
                     f"{', '.join(deployment.trusted_proxies)} (X-Forwarded-Proto: https)")
        curl = "curl -H 'X-Forwarded-Proto: https'"
    lines.extend(_console_lines(deployment, url, admin))
    header = None
    for outcome in admin:
        if outcome.warning:
            lines.append(f"docbase: warning: {outcome.warning}")
        if outcome.database != PRIMARY:
            if outcome.created:
                lines.append(f"docbase: database {outcome.database!r}: full-access key "
                             f"written to {_shown(outcome.path)}")
            continue
        if outcome.source == "env":
            state = "created" if outcome.created else "present"
            lines.append(f"docbase: full-access key from ${ADMIN_KEY_ENV} ({state})")
            header = f'"x-apikey: ${ADMIN_KEY_ENV}"'
        elif outcome.source == "file":
            lines.append("docbase: created a full-access API key, written to "
                         f"{_shown(outcome.path)} (mode 0600)")
            header = f'"x-apikey: $(cat {_shown(outcome.path)})"'
    path = admin_key_path(deployment.data_path, PRIMARY)
    if header is None and path.exists():
        header = f'"x-apikey: $(cat {_shown(str(path))})"'
    if header is not None:
        base = "" if deployment.default_database == PRIMARY else f"/db/{PRIMARY}"
        lines.append("docbase: try it:")
        lines.append(f"  {curl} -H {header} {url}{base}/rest/people")
    return "\n".join(lines)


def _console_lines(deployment: Deployment, url: str, admin: list[AdminKey]) -> list[str]:
    """Where the console is, and how to create its first administrator where none is."""
    lines = []
    for entry in deployment.all_databases():
        base = "" if entry.name == deployment.default_database else f"/db/{entry.name}"
        lines.append(f"docbase: console of {entry.name!r}: {url}{base}/_/")
    for outcome in admin:
        if not outcome.console_admin:
            option = "" if outcome.database == PRIMARY else f" --db {outcome.database}"
            lines.append(f"docbase: database {outcome.database!r} has no administrator to "
                         f"sign in to the console; create one with:")
            lines.append(f"  docbase users create{option} --email you@example.com --admin")
    return lines


def _shown(path: str | None) -> str:
    if path is None:
        return ""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
