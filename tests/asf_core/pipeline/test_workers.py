"""The worker processes on their own: calls go out and come back by ticket, and workers that
die (killed, out of memory) fail the jobs they held, never hang the host."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest

from asf_core.pipeline.workers import Workers

DIED = "died"


def _square(n: int) -> tuple[int, int]:
    return n * n, os.getpid()


def _die(n: int) -> tuple[int, int]:
    os._exit(3)


@pytest.fixture(autouse=True)
def _never_hang() -> Iterator[None]:
    """A host stuck waiting for workers that are gone fails the test instead of hanging it."""

    def stuck(signum: int, frame: Any) -> None:
        raise TimeoutError("the host is stuck waiting for its workers")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(60)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _run(workers: Workers[Any], calls: list[tuple[Any, int]]) -> dict[int, Any]:
    results: dict[int, Any] = {}
    try:
        for ticket, (function, arg) in enumerate(calls):
            message = workers.pack(function, arg)
            assert message is not None
            workers.submit(ticket, message)
        while workers.pending:
            for ticket, result in workers.collect():
                results[ticket] = result
    finally:
        workers.close()
    return results


def test_calls_come_back_by_ticket_from_every_worker() -> None:
    results = _run(Workers(2, died=DIED), [(_square, n) for n in range(12)])
    assert {t: r[0] for t, r in results.items()} == {n: n * n for n in range(12)}
    assert len({pid for _, pid in results.values()}) == 2
    assert not multiprocessing.active_children()


def test_when_every_worker_dies_every_job_fails_and_the_host_goes_on() -> None:
    results = _run(Workers(2, died=DIED), [(_die, n) for n in range(7)])
    assert results == dict.fromkeys(range(7), DIED)
    assert not multiprocessing.active_children()


def test_jobs_of_a_worker_killed_while_idle_go_to_the_others() -> None:
    workers: Workers[Any] = Workers(2, died=DIED)
    victim = _run_one(workers, 0)[1]
    os.kill(victim, signal.SIGKILL)
    time.sleep(0.2)  # dead, its pipe closed, and still on the host's list of idle workers
    results = _run(workers, [(_square, n) for n in range(1, 6)])
    # It held no job: none is lost, all go to the worker left.
    assert {t: r[0] for t, r in results.items()} == {t: (t + 1) ** 2 for t in range(5)}
    assert all(r[1] != victim for r in results.values())


def _run_one(workers: Workers[Any], n: int) -> Any:
    message = workers.pack(_square, n)
    assert message is not None
    workers.submit(100 + n, message)
    while True:
        for _, result in workers.collect():
            return result


@pytest.mark.parametrize("count", [1, 3])
def test_any_number_of_workers_gives_every_result(count: int) -> None:
    results = _run(Workers(count, died=DIED), [(_square, n) for n in range(9)])
    assert sorted(r[0] for r in results.values()) == sorted(n * n for n in range(9))
