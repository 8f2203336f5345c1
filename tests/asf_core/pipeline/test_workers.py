"""The worker processes on their own: calls go out and come back by ticket, and workers that
die (killed, out of memory) fail the jobs they held, never hang the host."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from asf_core.files import write_atomic
from asf_core.pipeline import workers as workers_module
from asf_core.pipeline.workers import Workers, by_size

DIED = "died"


def _square(n: int) -> tuple[int, int]:
    return n * n, os.getpid()


def _die(n: int) -> tuple[int, int]:
    os._exit(3)


def _fail(n: int) -> tuple[int, int]:
    raise ZeroDivisionError(f"defect number {n}")


def _unsendable(n: int) -> Any:
    """A result the worker cannot send back (a local function does not pickle)."""

    def local() -> int:
        return n

    return local


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


@pytest.mark.parametrize(
    ("defect", "last_line"),
    [
        (_fail, "ZeroDivisionError: defect number 7"),
        (_unsendable, "pickle"),  # the message varies with Python's version
    ],
    ids=["raised", "unsendable"],
)
def test_a_defect_in_a_worker_is_shown_and_fails_only_its_jobs(
    capfd: pytest.CaptureFixture[str], defect: Any, last_line: str
) -> None:
    """An exception out of a job, or out of sending its result back, is a defect: the worker
    prints it as one process would (it used to end silently, its traceback lost) and ends;
    the other worker runs the rest."""
    calls = [(_square, 0), (defect, 7), *((_square, n) for n in range(2, 9))]
    results = _run(Workers(2, died=DIED), calls)
    assert results[1] == DIED
    assert {t: r[0] for t, r in results.items() if r != DIED} == {
        t: t * t for t in range(9) if results[t] != DIED
    }
    assert sum(r != DIED for r in results.values()) >= 6  # what the failed worker held, at most
    err = capfd.readouterr().err
    assert err.startswith("asf: a worker process failed:\nTraceback"), err
    assert last_line in err.rstrip().splitlines()[-1], err
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


def _write_slowly(path: Path, started: Path) -> int:
    """Write ``path`` as a session is written, stalling part way (once ``started`` exists)."""

    def chunks() -> Iterator[bytes]:
        yield b"first line\n"
        started.touch()
        time.sleep(60)
        yield b"never written\n"

    return write_atomic(path, chunks())


def test_a_worker_stopped_mid_file_leaves_nothing_of_it_and_at_once(tmp_path: Path) -> None:
    """stop() (Ctrl-C, SIGTERM at the host) interrupts a worker writing a file: its temporary
    file is removed, as one process would remove it, and the host does not wait for the job;
    outside ``asf`` too (a library caller's SIGTERM handler is the default, which kills)."""
    out, started = tmp_path / "out", tmp_path / "started"
    workers: Workers[Any] = Workers(1, died=DIED)
    message = workers.pack(_write_slowly, out / "s.jsonl", started)
    assert message is not None
    workers.submit(0, message)
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [p.name.split(".asf-tmp-")[0] for p in out.iterdir()] == [".s.jsonl"]  # mid-file
    begun = time.monotonic()
    workers.stop()
    assert time.monotonic() - begun < 5
    assert list(out.iterdir()) == []
    assert not multiprocessing.active_children()


def _swallow_interrupts(started: Path) -> int:
    """A job whose code catches everything and goes on (a bare ``except``): the interrupt
    SIGTERM raises in its worker is lost."""
    started.touch()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(BaseException):
            time.sleep(0.05)
    return 0


def test_a_worker_that_swallows_the_interrupt_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C still ends the run when a plugin's job catches every exception: the worker
    that did not end on SIGTERM is killed once :data:`STOP_WAIT` has gone by."""
    monkeypatch.setattr(workers_module, "STOP_WAIT", 0.5)
    started = tmp_path / "started"
    workers: Workers[Any] = Workers(1, died=DIED)
    message = workers.pack(_swallow_interrupts, started)
    assert message is not None
    workers.submit(0, message)
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    begun = time.monotonic()
    workers.stop()
    assert time.monotonic() - begun < 5
    assert not multiprocessing.active_children()


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


def test_a_signal_as_workers_start_is_handled_by_them_silently(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Ctrl-C reaches every process of the group, and stop() sends SIGTERM, maybe while a
    worker is still starting (the host's handlers, which raise, are what it was forked with):
    a worker ignores SIGINT and ends on SIGTERM, and neither prints a traceback."""
    from asf_core.cli.signals import Trap

    with Trap():
        for _ in range(20):
            workers: Workers[Any] = Workers(3, died=DIED)
            workers.start()
            for proc in workers._procs:  # Ctrl-C at the terminal, just as they start
                os.kill(proc.pid or 0, signal.SIGINT)
            results = _run(workers, [(_square, n) for n in range(3)])
            assert {t: r[0] for t, r in results.items()} == {0: 0, 1: 1, 2: 4}  # none lost
            workers = Workers(3, died=DIED)
            workers.start()
            workers.stop()  # SIGTERM, just as they start
    assert not multiprocessing.active_children()
    err = capfd.readouterr().err
    assert "Traceback" not in err, err
    assert "Exception ignored" not in err, err


def test_workers_that_cannot_all_be_started_are_fewer(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """``-j 60`` where a process may open few files: the workers that can be started run every
    job; when none can, starting raises OSError (the caller works in its own process)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    opened = len(list(Path("/proc/self/fd").iterdir()))
    resource.setrlimit(resource.RLIMIT_NOFILE, (opened + 12, hard))
    try:
        workers: Workers[Any] = Workers(60, died=DIED)
        results = _run(workers, [(_square, n) for n in range(20)])
        assert {t: r[0] for t, r in results.items()} == {n: n * n for n in range(20)}
        assert 1 <= len({pid for _, pid in results.values()}) < 60
        resource.setrlimit(resource.RLIMIT_NOFILE, (opened, hard))
        with pytest.raises(OSError, match="no worker process could be started"):
            Workers(2, died=DIED).start()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert not multiprocessing.active_children()
    assert "Traceback" not in capfd.readouterr().err


def test_a_worker_done_with_its_jobs_takes_the_next_ones() -> None:
    workers: Workers[Any] = Workers(1, died=DIED)
    try:
        assert [_run_one(workers, n)[0] for n in range(4)] == [0, 1, 4, 9]
    finally:
        workers.close()


def test_work_is_split_largest_first_in_chunks_of_about_a_share_each() -> None:
    assert by_size([5, 5, 5, 5], 2) == [[0, 1], [2, 3]]
    assert by_size([1, 9, 3, 7], 2) == [[1, 3], [2, 0]]
    assert by_size([0, 0, 0], 2) == [[0, 1, 2]]  # sizes unknown: one chunk
    assert by_size([], 4) == []


_HOST = """
import sys, time
from asf_core.pipeline.workers import Workers
workers = Workers(1, died="died")
workers.submit(0, workers.pack(time.sleep, 120))
time.sleep(float(sys.argv[1]))
print(workers._procs[0].pid, flush=True)
time.sleep(120)
"""


def _gone(pid: int) -> bool:
    """Whether a process has ended (a zombie left to a parent that does not reap counts)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux: PR_SET_PDEATHSIG")
@pytest.mark.parametrize("settle", [0.0, 1.0])
def test_a_busy_worker_ends_with_its_killed_host(settle: float) -> None:
    """A host killed outright (SIGKILL, the OOM killer) leaves no worker running on: one in
    the middle of a long job ends too, not only when it next reads its pipe; so does one the
    host died under as it started (``settle`` 0: killed at once)."""
    import subprocess
    import sys

    host = subprocess.Popen(
        [sys.executable, "-c", _HOST, str(settle)], stdout=subprocess.PIPE, text=True
    )
    assert host.stdout is not None
    worker = int(host.stdout.readline())
    assert not _gone(worker)
    host.kill()
    host.wait()
    deadline = time.monotonic() + 10
    while not _gone(worker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _gone(worker)
