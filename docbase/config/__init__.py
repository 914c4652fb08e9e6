"""Operator configuration: settings, where they come from, the deployment, the catalog.

``docbase/config/settings.py`` declares every setting once; ``sources.py`` derives
the config file keys, the environment overrides and the command-line options from
that declaration; ``deployment.py`` resolves them; ``catalog.py`` keeps the data
directory's catalog of databases and secret files. Every name is validated when
read: an unknown key in the config file is a
:class:`~docbase.core.errors.ConfigurationError` that names it.
"""

from __future__ import annotations

from docbase.config.catalog import (
    ADMIN_KEY_FILE,
    CATALOG_FILE,
    PID_FILE,
    DatabaseEntry,
    add_to_catalog,
    admin_key_path,
    ensure_data_dir,
    read_catalog,
    sqlite_url,
    write_secret,
)
from docbase.config.deployment import Deployment, resolve
from docbase.config.settings import (
    DEFAULT_DATA_DIR,
    DEFAULT_HOST,
    DEFAULT_PORT,
    PRIMARY,
    ConfigFile,
    DatabaseConfig,
    ServerSettings,
    Setting,
    settings,
)
from docbase.config.sources import (
    add_options,
    environment_overrides,
    load_config,
    options_from,
)

__all__ = [
    "ADMIN_KEY_FILE",
    "CATALOG_FILE",
    "DEFAULT_DATA_DIR",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "PID_FILE",
    "PRIMARY",
    "ConfigFile",
    "DatabaseConfig",
    "DatabaseEntry",
    "Deployment",
    "ServerSettings",
    "Setting",
    "add_options",
    "add_to_catalog",
    "admin_key_path",
    "ensure_data_dir",
    "environment_overrides",
    "load_config",
    "options_from",
    "read_catalog",
    "resolve",
    "settings",
    "sqlite_url",
    "write_secret",
]
