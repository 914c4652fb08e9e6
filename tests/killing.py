"""Load a ``docbase serve`` with concurrent clients and SIGKILL it, again and again.

The harness of the crash tests (``tests/test_crash_recovery.py``,
``tests/test_batch_crash.py``): each round starts the server on the same storage, runs
``clients`` drivers on one client of it, kills the whole server at a random moment
within ``seconds`` of load, and waits for the drivers to notice and stop.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import httpx

from tests.test_serve_harness import Served, kill, launch

Driver = Callable[[httpx.AsyncClient, random.Random, asyncio.Event], Awaitable[None]]
ClientOf = Callable[[Served], AbstractAsyncContextManager[httpx.AsyncClient]]


async def killed_and_restarted(cwd: Path, storage: str, *, rounds: int, clients: int,
                               seconds: tuple[float, float], drive: Driver,
                               client_of: ClientOf) -> tuple[int, Served]:
    """Run ``rounds`` of load by ``clients`` drivers, each ended by a SIGKILL.

    Returns the random seed (to print with a failure) and the server started again on
    the storage afterwards, which the caller stops.
    """
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    for round_number in range(rounds):
        served = await asyncio.to_thread(launch, cwd, "--storage", storage)
        async with client_of(served) as client:
            stop = asyncio.Event()
            drivers = [asyncio.create_task(drive(client, random.Random(rng.random()), stop))
                       for _ in range(clients)]
            await asyncio.sleep(rng.uniform(*seconds))
            kill(served)
            stop.set()
            await asyncio.gather(*drivers)
        assert served.process.returncode is not None, f"kill {round_number + 1} did not kill"
    return seed, await asyncio.to_thread(launch, cwd, "--storage", storage)


