"""The limits a database runs with: the server's, lowered by the database's stored ones.

The server's limits come from its config file (``[limits]``) and hold for every
database it serves. A database may store lower values of the limits named in
:data:`~docbase.core.settings.limits.DATABASE_LIMITS` (``docbase settings set
limits.max_page 500``, or the console's Settings page); a stored value above the
server's is refused, so a database's administrator cannot lift what the server's
operator set. Whatever reads a limit reads :attr:`LimitsInForce.current` when it uses
it, so a change takes effect with the next request: at once in the process that
stored it, and in the others when they next read the settings (at most a second
later, ``docbase/core/settings/store.py``).
"""

from __future__ import annotations

from docbase.core.settings.limits import Limits, check_lowered, lowered
from docbase.core.settings.stored import DatabaseSettings


class LimitsInForce:
    """The current limits of one database in one process."""

    def __init__(self, server: Limits) -> None:
        self.server = server
        """The server's limits, from its configuration."""
        self.current = server
        """The limits in force now: the server's, each lowered where the database says."""
        self._followed: object = None

    def check(self, settings: DatabaseSettings) -> None:
        """Refuse settings that would raise a limit above the server's.

        Raises:
            ConfigurationError: a stored limit is above the server's (named).

        """
        check_lowered(self.server, settings.stored_limits())

    def follow(self, settings: DatabaseSettings) -> None:
        """Put the limits of ``settings`` in force (cheap when they are the ones in force)."""
        if settings.limits is self._followed:
            return
        self._followed = settings.limits
        self.current = lowered(self.server, settings.stored_limits())


class ReadsLimits:
    """A part of a database that reads a limit when it uses it: ``self.limits.max_page``.

    Its ``limits_in_force`` is the database's :class:`LimitsInForce`, shared by all its
    parts, so a limit the database lowers is in force everywhere at once.
    """

    limits_in_force: LimitsInForce

    @property
    def limits(self) -> Limits:
        """The limits in force now."""
        return self.limits_in_force.current
