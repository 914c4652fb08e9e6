"""A bound on a worker's application shutdown, with what it was stuck on.

When a worker stops, uvicorn first gives the requests in flight ``graceful_timeout``,
then runs the application's shutdown (:func:`docbase.http.worker.build_app`'s ``stop``:
background tasks, job schedulers, webhook dispatchers, request logs, the stores). uvicorn
puts no bound on that second part, and its supervisor waits for every worker without
one either: a shutdown step that never returns (a store whose server stopped answering,
a plugin's task that ignores cancellation) kept the whole ``docbase serve`` from
exiting. A service manager would then kill it without a word about why.

:class:`ShutdownWatch` names the step running and, should the shutdown still run
``graceful_timeout`` seconds after it began, logs that step, the stack of every thread
and of every asyncio task, and exits the worker at once (status 1). What a client was
told is stored is committed by then; only the last second's request-log lines and
metrics tallies can be lost.
"""

from __future__ import annotations

import asyncio
import faulthandler
import io
import logging
import os
import sys
import threading
from typing import Any

logger = logging.getLogger("docbase.serve")


class ShutdownWatch:
    """Times one application shutdown: :meth:`step` as it goes, :meth:`done` at its end."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.current = "starting"
        """The step of the shutdown running now."""
        self._loop = asyncio.get_running_loop()
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="docbase-shutdown-watch",
                                        daemon=True)
        self._thread.start()

    def step(self, name: str) -> None:
        """Say that the shutdown now runs step ``name``."""
        self.current = name

    def done(self) -> None:
        """The shutdown returned: nothing to report."""
        self._finished.set()

    def _watch(self) -> None:
        if self._finished.wait(self.seconds):
            return
        logger.error("worker %s: the application shutdown is still running after %g s, "
                     "in step %r; exiting now. Its tasks, then its threads:\n%s",
                     os.getpid(), self.seconds, self.current, self._tasks())
        for handler in logging.getLogger().handlers:
            handler.flush()
        try:
            sys.stderr.flush()
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        except (AttributeError, OSError, ValueError):  # no stderr file to write to
            pass
        os._exit(1)

    def _tasks(self) -> str:
        """The await chain of every task of the worker's event loop, outermost first."""
        text = io.StringIO()
        try:  # read from this thread: a diagnosis at best, never a reason not to exit
            for task in list(asyncio.all_tasks(self._loop)):
                text.write(f"task {task.get_name()!r}:\n")
                for line in awaiting(task.get_coro()):
                    text.write(f"  {line}\n")
        except RuntimeError as exc:  # the set of tasks changed as it was read
            text.write(f"(the tasks could not be listed: {exc})\n")
        return text.getvalue()


def awaiting(coroutine: Any, depth: int = 64) -> list[str]:
    """``file:line in function`` of ``coroutine`` and of each one it awaits, in turn.

    A task's own stack shows only its outermost coroutine; what hangs is at the end of
    the chain its ``await``s form (``cr_await``, ``ag_await``, ``gi_yieldfrom``). An
    ``async with`` over an async generator (the app's lifespan) awaits the generator's
    ``asend``, which hides it: the chain goes on from the context manager's ``gen``.
    """
    lines: list[str] = []
    frame = None
    while coroutine is not None and len(lines) < depth:
        inner = (getattr(coroutine, "cr_frame", None) or getattr(coroutine, "ag_frame", None)
                 or getattr(coroutine, "gi_frame", None))
        if inner is None:
            owner = frame.f_locals.get("self") if frame is not None else None
            generator = getattr(owner, "gen", None)
            if getattr(generator, "ag_frame", None) is not None and generator is not coroutine:
                coroutine = generator  # contextlib's manager awaiting its generator
                continue
            lines.append(repr(coroutine))  # a future, or a coroutine run to its end
            break
        frame = inner
        lines.append(f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}")
        coroutine = (getattr(coroutine, "cr_await", None) or getattr(coroutine, "ag_await", None)
                     or getattr(coroutine, "gi_yieldfrom", None))
    return lines
