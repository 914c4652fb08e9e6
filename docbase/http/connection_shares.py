"""How many connections each worker of ``docbase serve`` holds, in one file they all map.

The supervisor makes the file before it starts the workers (:func:`shares_file`, named
to them in :data:`SHARES_ENV`); each worker claims a slot for its process id and keeps
its count of open connections there (:class:`ConnectionShares`), so that a worker about
to accept a connection can see whether another one holds fewer
(``docbase/http/accepting.py``). Only a worker writes its own slot; a reader may see a
count a connection old, which is all the balance needs.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import struct
import tempfile
from collections.abc import Iterator

from docbase.core.processes import process_exists

SHARES_ENV = "DOCBASE_CONNECTION_SHARES"
"""The environment variable that names the shared file to the workers."""
SLOTS = 64
"""Workers the file has room for; a worker that finds no free slot accepts as it would
alone (new workers take the slots of dead ones)."""
_SLOT = struct.Struct("=qq")  # process id, open connections


@contextlib.contextmanager
def shares_file(workers: int) -> Iterator[None]:
    """A new, zeroed shares file for ``workers`` workers, removed at the end.

    With one worker there is nothing to balance and no file.
    """
    if workers < 2:
        yield
        return
    descriptor, path = tempfile.mkstemp(prefix="docbase-connections-")
    try:
        os.ftruncate(descriptor, SLOTS * _SLOT.size)
    finally:
        os.close(descriptor)
    os.environ[SHARES_ENV] = path
    try:
        yield
    finally:
        os.environ.pop(SHARES_ENV, None)
        with contextlib.suppress(OSError):
            os.unlink(path)


def slot_holders(path: str) -> set[int]:
    """The process ids holding a slot of the shares file at ``path`` (alive or not)."""
    with open(path, "rb") as file:
        return {owner for owner, _count in _SLOT.iter_unpack(file.read()) if owner}


class ConnectionShares:
    """A worker's own slot in the shares file, and a look at the other workers' counts."""

    def __init__(self, path: str) -> None:
        with open(path, "r+b") as file:
            self._map = mmap.mmap(file.fileno(), SLOTS * _SLOT.size)
            fcntl.flock(file, fcntl.LOCK_EX)  # two workers starting at once
            try:
                self._offset = self._claim(os.getpid())
            finally:
                fcntl.flock(file, fcntl.LOCK_UN)
        self.open = 0

    @classmethod
    def from_environment(cls) -> ConnectionShares | None:
        """The shares of the worker calling, or None when it serves alone or has no slot."""
        path = os.environ.get(SHARES_ENV)
        if not path:
            return None
        try:
            shares = cls(path)
        except (OSError, ValueError):
            return None
        return shares if shares._offset is not None else None

    def _claim(self, pid: int) -> int | None:
        for slot in range(SLOTS):
            owner, _count = _SLOT.unpack_from(self._map, slot * _SLOT.size)
            if owner in (0, pid) or not process_exists(owner):
                _SLOT.pack_into(self._map, slot * _SLOT.size, pid, 0)
                return slot * _SLOT.size
        return None

    def change(self, by: int) -> None:
        """Count a connection set up (``+1``) or closed (``-1``)."""
        self.open += by
        if self._offset is not None:
            struct.pack_into("=q", self._map, self._offset + 8, self.open)

    def leave(self) -> None:
        """Give the slot up: this worker accepts no more connections (it is stopping)."""
        if self._offset is not None:
            _SLOT.pack_into(self._map, self._offset, 0, 0)
            self._offset = None

    def fewest_elsewhere(self) -> int | None:
        """The fewest open connections any other live worker holds (None: no other)."""
        fewest = None
        for slot, (owner, count) in enumerate(_SLOT.iter_unpack(self._map)):
            if (owner and (fewest is None or count < fewest)
                    and slot * _SLOT.size != self._offset and process_exists(owner)):
                fewest = count
        return fewest
