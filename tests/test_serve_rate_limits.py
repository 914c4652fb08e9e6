"""Rate limits of ``docbase serve --workers 2``: shared by the workers, 429 with Retry-After.

One server with two worker processes and ``[limits]`` set in its config file. Every
request goes on a new connection, so both workers answer them; a limit kept per
process would let each worker allow the whole limit. Each test sends from its own
loopback address (127.0.0.2, ...), so the per-address counts of the tests stay apart.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.test_serve_harness import Served, child_processes, run_cli, serving

# One window for the whole module, so a count never restarts midway. Windows are
# whole multiples of their length since the epoch: with an hour, a run crossing
# hh:00:00 started the counts again; this one ends in the year 2286.
WINDOW = 10**10
PER_KEY = 10
PER_ADDRESS = 15
FAILED = 5
CONFIG = f"""
[limits]
rate_window = {WINDOW}
rate_per_key = {PER_KEY}
rate_per_address = {PER_ADDRESS}
max_failed_credentials = {FAILED}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    directory = tmp_path_factory.mktemp("rates")
    (directory / "docbase.toml").write_text(CONFIG)
    with serving(directory, "--config", "docbase.toml", "--workers", "2") as server:
        assert len(child_processes(server.process.pid)) == 2
        yield server


def client_from(served: Served, address: str) -> httpx.Client:
    """A client sending from ``address``, a new connection for every request."""
    transport = httpx.HTTPTransport(verify=served.ssl_context(), local_address=address)
    return httpx.Client(base_url=served.url, transport=transport, timeout=30,
                        headers={"connection": "close"})


def scoped_key(served: Served) -> str:
    return run_cli(served.cwd, "keys", "create", "--path", "/rest/**").stdout.strip()


def statuses(client: httpx.Client, key: str, count: int) -> list[httpx.Response]:
    return [client.get("/rest/people", headers={"x-apikey": key}) for _ in range(count)]


def assert_too_many(answer: httpx.Response) -> None:
    assert answer.status_code == 429, answer.text
    assert answer.json()["name"] == "TooManyRequests"
    assert 0 < int(answer.headers["retry-after"]) <= WINDOW


def test_per_key_limit_is_shared_by_both_workers(served: Served) -> None:
    key = scoped_key(served)
    with client_from(served, "127.0.0.2") as client:
        answers = statuses(client, key, PER_KEY + 10)
    assert [a.status_code for a in answers] == [200] * PER_KEY + [429] * 10
    assert_too_many(answers[-1])


def test_full_access_keys_are_not_limited_by_default(served: Served) -> None:
    with client_from(served, "127.0.0.3") as client:
        answers = statuses(client, served.admin_key, PER_ADDRESS + 5)
    assert {a.status_code for a in answers} == {200}


def test_per_address_limit_counts_every_key_of_the_address(served: Served) -> None:
    first, second = scoped_key(served), scoped_key(served)
    with client_from(served, "127.0.0.4") as client:
        answers = statuses(client, first, PER_KEY) + statuses(client, second, PER_KEY)
    codes = [a.status_code for a in answers]
    assert codes == [200] * PER_ADDRESS + [429] * (2 * PER_KEY - PER_ADDRESS), codes
    assert "address" in answers[-1].json()["message"]
    assert_too_many(answers[-1])


def test_failed_keys_slow_down_the_address_in_every_worker(served: Served) -> None:
    with client_from(served, "127.0.0.5") as guesser:
        guesses = [guesser.get("/rest/people", headers={"x-apikey": f"guess-{n}"})
                   for n in range(FAILED + 3)]
        assert [g.status_code for g in guesses] == [401] * FAILED + [429] * 3
        assert_too_many(guesses[-1])
        time.sleep(1.2)  # past the one second a worker may trust its cached count
        # now even the right key is refused from there, by either worker, unread
        right = statuses(guesser, served.admin_key, 4)
        assert {a.status_code for a in right} == {429}
        tokens = guesser.get("/rest/people", params={"jwt": "a.b.c"})
        assert tokens.status_code == 429
    with client_from(served, "127.0.0.6") as other:  # another address is not affected
        assert {a.status_code for a in statuses(other, served.admin_key, 3)} == {200}



