"""The ``async with`` protocol written once for everything opened and closed.

Stores, databases and servers all follow the same life: ``open()`` before use,
``close()`` after. :class:`AsyncResource` turns that pair into an async context
manager, so ``async with store:`` opens the store and closes it on the way out,
whether or not the block raised.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod
from typing import Any, Self


class AsyncResource(ABC):
    """Something opened with :meth:`open`, released with :meth:`close`, usable in ``async with``."""

    @abstractmethod
    async def open(self) -> None:
        """Acquire what the resource needs (connections, storage layout)."""

    @abstractmethod
    async def close(self) -> None:
        """Release what :meth:`open` acquired."""

    async def __aenter__(self) -> Self:
        """Open the resource and return it."""
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the resource, whatever ended the ``async with`` block."""
        await self.close()


async def stop_task(task: asyncio.Task[Any] | None) -> None:
    """Cancel a background task (if any) and wait until it has stopped."""
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
