from __future__ import annotations

import contextlib
import ctypes
import gc
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.register_assert_rewrite("docbase.testing.contract",
                               "docbase.testing.document_reads_contract",
                               "docbase.testing.document_writes_contract",
                               "docbase.testing.key_contract",
                               "docbase.testing.differential_suite")


def _return_large_buffers_to_the_system() -> None:
    """Have glibc map every allocation of 1 MiB or more on its own, and unmap it when freed.

    Each test runs in a new event loop, whose worker threads each get a malloc arena;
    an argon2 hash (19 MiB, in such a thread) otherwise stays in that arena once freed,
    as glibc raises its mmap threshold after the first one: about 19 MB more resident
    per test that hashes a password. The variable reaches the xdist workers and every
    server process the tests start; ``mallopt`` covers this process.
    """
    os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", str(1 << 20))
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD


_return_large_buffers_to_the_system()


def _compile_docbase_once_for_every_process() -> None:
    """Write the compiled form of docbase's modules before any other process starts.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (this machine's image sets it), no process
    writes what it compiles, and docbase, installed editable, has no ``__pycache__`` of
    its own (pip compiled the other packages when it installed them). Every process the
    suite starts, each ``docbase serve`` and its workers, each ``docbase`` command,
    compiled docbase's 350 modules again: 1.4 of the 3.3 s of CPU a ``docbase serve``
    took to answer its first request (docs/testing.md, "Time"). Compiling once here,
    in the controller before the xdist workers start, writes the standard
    ``__pycache__`` files (ignored by git) that every later process reads; files
    already up to date are skipped.
    """
    if "PYTEST_XDIST_WORKER" in os.environ:
        return  # the controller did it before starting this worker
    import compileall

    import docbase

    compileall.compile_dir(Path(docbase.__file__).parent, quiet=1)


_compile_docbase_once_for_every_process()

from tests.backends import BACKENDS, stop_mongo_server  # noqa: E402
from tests.served_engines import ENGINES, engine_storage, postgresql_storage  # noqa: E402
from tests.test_serve_harness import Served, serving  # noqa: E402

_MARKS = {"postgresql": pytest.mark.postgres, "mongo": pytest.mark.mongo}

_SHARED_SCOPES = ("module", "class", "package")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep the tests that share a fixture wider than one test on one xdist worker.

    Under ``--dist loadgroup`` (pyproject's ``addopts``) tests spread over the workers one
    by one; a test using a module-, class- or package-scoped fixture (a served process,
    ``engine_server``) joins its module's group instead, so that the fixture is made once,
    not once per worker that happens to get one of its tests (docs/testing.md). The
    modules that drive Chromium (a ``browser`` fixture) share one group, so that only one
    browser runs at a time: two at once made the suite's peak memory.
    """
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        if "browser" in info.name2fixturedefs:
            item.add_marker(pytest.mark.xdist_group("chromium"))
        elif any(definition.scope in _SHARED_SCOPES
                 for definitions in info.name2fixturedefs.values() for definition in definitions):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a module's last test on this worker, give its freed memory back.

    A worker's heap grows through the property tests (Hypothesis's examples, SQLAlchemy's
    compiled statements of the stores they open and close) and keeps the pages after
    they are freed; collecting and trimming once a module ends keeps each worker about
    30 MB smaller at the end of the run (docs/testing.md, "Memory").
    """
    if nextitem is not None and getattr(nextitem, "module", None) is getattr(item, "module", 0):
        return
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the Mongo wire server this process started (``stop_mongo_server``)."""
    stop_mongo_server()


def _backend_params(names: list[str]) -> list[Any]:
    return [pytest.param(name, marks=[_MARKS[name]] if name in _MARKS else [])
            for name in names]


WITHOUT_TRANSACTIONS = ("mongo",)
"""The backends whose store has no ``transaction()`` (``TransactionsUnsupported``)."""


@pytest.hookimpl(tryfirst=True)  # before the fixture's own parameters are applied
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run a test marked ``transactions`` on the backends with transactions only, and one
    marked ``no_transactions`` on the others: tests that would not apply are not made,
    rather than made and skipped (the ``stores`` fixture's parameters, narrowed)."""
    if "stores" not in metafunc.fixturenames:
        return
    if metafunc.definition.get_closest_marker("transactions") is not None:
        names = [name for name in BACKENDS if name not in WITHOUT_TRANSACTIONS]
    elif metafunc.definition.get_closest_marker("no_transactions") is not None:
        names = [name for name in BACKENDS if name in WITHOUT_TRANSACTIONS]
    else:
        return
    # as a mark: the fixture's own parameters then give way to it
    metafunc.definition.add_marker(
        pytest.mark.parametrize("stores", _backend_params(names), indirect=True))


@pytest.fixture(params=_backend_params(list(BACKENDS)))
async def stores(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """An open, empty (DocumentStore, BlobStore) pair of every backend."""
    async with BACKENDS[request.param](request) as pair:
        yield pair


@pytest.fixture
def store(stores: Any) -> Any:
    return stores[0]


@pytest.fixture
def blob_store(stores: Any) -> Any:
    return stores[1]


@pytest.fixture(scope="module", params=ENGINES)
def engine_server(request: pytest.FixtureRequest,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A ``docbase serve`` on a fresh database of every engine, one per test module."""
    directory = tmp_path_factory.mktemp(f"served-{request.param}")
    with (engine_storage(request.param, directory) as storage,
          serving(directory, "--storage", storage) as server):
        yield server


@pytest.fixture
def schema_url() -> Iterator[str]:
    """A fresh PostgreSQL schema's storage URL, for servers started by the test (skipped
    locally without PostgreSQL)."""
    with postgresql_storage() as url:
        yield url


@pytest.fixture
async def live(stores: Any, tmp_path: Path) -> AsyncIterator[Any]:
    """docbase served over HTTPS in this event loop (a ``LiveDocbase``), its database
    "main" on every backend; a module needing other settings defines its own."""
    from docbase import Database
    from docbase.http.testing import live_docbase

    async with live_docbase({"main": Database(*stores, name="main")}, tmp_path) as running:
        yield running


_MEMORY_LOG = os.environ.get("DOCBASE_TEST_MEMORY_LOG")
"""A file to which each test appends its worker's resident size before and after it
(``DOCBASE_TEST_MEMORY_LOG=/tmp/memory.log``; docs/testing.md, "Memory")."""


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


if _MEMORY_LOG:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        """Log the resident size this test left its worker with (see ``_MEMORY_LOG``)."""
        before = _resident_bytes()
        yield
        after = _resident_bytes()
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(_MEMORY_LOG, "a") as log:
            log.write(f"{worker}\t{before >> 10}\t{after >> 10}\t{(after - before) >> 10}"
                      f"\t{item.nodeid}\n")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Set what imports and collection made out of the garbage collector's way.

    A full collection walks every object a process holds; with Litestar, SQLAlchemy and
    Hypothesis imported and 5,000 tests collected, one took 0.1-0.2 s, and a worker runs
    one after each module (:func:`pytest_runtest_teardown`) besides the interpreter's
    own. Objects made before the first test live as long as the process, so they are
    frozen (moved to the permanent generation, which collections skip): 6 % less CPU
    for ``tests/test_http_errors.py`` (docs/testing.md, "Time").
    """
    gc.collect()
    gc.freeze()
