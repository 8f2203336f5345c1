"""The process that flushes a conversion's files (asf_core.flush_process), and the Syncer's
ways around it: every file given is flushed, in order, whatever its name; the first failure
since the last barrier is named; one child serves every store of a run; a child that cannot
start or dies leaves the flushing to this process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from flush_watch import watch_fsync

from asf_core import flush_process
from asf_core.files import Syncer
from asf_core.flush_process import Flushing, FlushProcess, Gone

#: Runs the child's own code with ``os.fsync`` recording the path of each descriptor flushed
#: (on stderr, NUL-terminated): what the child flushes, seen from outside it.
_WATCHED = r"""
import os, sys
real = os.fsync
def fsync(fd):
    sys.stderr.buffer.write(os.fsencode(os.readlink(f"/proc/self/fd/{fd}")) + b"\0")
    real(fd)
os.fsync = fsync
exec(sys.argv[1])
"""

#: Put before the child's code as :class:`FlushProcess` runs it (after ``LOG = <path>``):
#: ``os.fsync`` appends the path it flushes to that file, NUL-terminated, as it flushes.
_LOGGED = r"""
import os
real = os.fsync
def fsync(fd):
    with open(LOG, "ab") as log:
        log.write(os.fsencode(os.readlink(f"/proc/self/fd/{fd}")) + b"\0")
    real(fd)
os.fsync = fsync
"""

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/fd").is_dir(), reason="needs /proc to see what is flushed"
)


@pytest.fixture(autouse=True)
def _child_from_the_first_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run flushes its first few files itself: here the child takes every file."""
    monkeypatch.setattr(flush_process, "FIRST_HERE", 0)


def _names(tmp_path: Path) -> list[Path]:
    """Files whose names a line-based or UTF-8-only protocol would get wrong."""
    names = ["plain.jsonl", "two\nlines.jsonl", "space and é.jsonl"]
    out = [tmp_path / name for name in names]
    out.append(tmp_path / os.fsdecode(b"not-utf8-\xff.jsonl"))
    for path in out:
        path.write_bytes(b"x")
    return out


def _run_child(paths: list[Path | None]) -> tuple[bytes, list[bytes]]:
    """The child's answers and what it flushed, given ``paths`` (None: a barrier)."""
    given = b"".join(b"\0" if p is None else os.fsencode(p) + b"\0" for p in paths)
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _WATCHED, flush_process._CHILD],
        input=given,
        capture_output=True,
        timeout=60,
        check=True,
    )
    return done.stdout, done.stderr.split(b"\0")[:-1]


def test_the_child_flushes_every_path_in_order(tmp_path: Path) -> None:
    paths = _names(tmp_path)
    answer, flushed = _run_child([*paths, None])
    assert answer == b"flushed\0"
    assert flushed == [os.fsencode(p) for p in paths]


def test_the_child_names_the_first_failure_and_flushes_nothing_after(tmp_path: Path) -> None:
    """Until the barrier: after it, the next files are flushed again (another store's)."""
    paths = _names(tmp_path)
    missing = tmp_path / "gone.jsonl"
    answer, flushed = _run_child([paths[0], missing, paths[1], None, paths[2], None])
    assert answer == b"failed\0%d\0" % 2 + os.fsencode(missing) + b"\0flushed\0"
    assert flushed == [os.fsencode(paths[0]), os.fsencode(paths[2])]


def test_the_child_answers_nothing_without_a_barrier(tmp_path: Path) -> None:
    """Its input ends (the parent is gone): it flushes what it was given and exits."""
    paths = _names(tmp_path)
    answer, flushed = _run_child(paths)
    assert answer == b""
    assert flushed == [os.fsencode(p) for p in paths]


def _flushed_by_child(log: Path, at_least: int) -> list[bytes]:
    """What the child logged flushing, once it names ``at_least`` files (or 30 s went by)."""
    deadline = time.monotonic() + 30
    while True:
        logged = log.read_bytes().split(b"\0")[:-1] if log.exists() else []
        if len(logged) >= at_least or time.monotonic() > deadline:
            return logged
        time.sleep(0.01)


def test_the_child_flushes_each_file_as_it_is_added_and_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The point of the child: each file is flushed while the conversion goes on, not all at
    the barrier, and no file twice (a disk commit each)."""
    log = tmp_path / "flushed"
    monkeypatch.setattr(
        flush_process, "_CHILD", f"LOG = {bytes(log)!r}\n{_LOGGED}{flush_process._CHILD}"
    )
    paths = _names(tmp_path)
    child = FlushProcess()
    for n, path in enumerate(paths, 1):
        child.add(path)
        assert _flushed_by_child(log, n) == [os.fsencode(p) for p in paths[:n]]
    assert child.barrier() is None
    child.close()  # it has exited: its log is whole
    assert child._proc.poll() == 0
    assert log.read_bytes().split(b"\0")[:-1] == [os.fsencode(p) for p in paths]


def test_a_failure_comes_back_as_the_oserror_of_its_file(tmp_path: Path) -> None:
    paths = _names(tmp_path)
    paths[1].unlink()
    child = FlushProcess()
    for path in paths:
        child.add(path)
    failure = child.barrier()
    child.close()
    assert isinstance(failure, FileNotFoundError)
    assert failure.filename == str(paths[1])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_a_files_place_fails_its_flush_without_stalling(tmp_path: Path) -> None:
    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)
    child = FlushProcess()
    child.add(fifo)
    failure = child.barrier()  # opening it to read would wait for a writer forever
    child.close()
    assert isinstance(failure, OSError)
    assert failure.filename == str(fifo)


@pytest.mark.parametrize("barrier_first", [False, True], ids=["first-store", "next-store"])
def test_adding_never_waits_for_a_stalled_child(tmp_path: Path, barrier_first: bool) -> None:
    """Far more paths than a pipe holds, given to a child that is stopped: each ``add``
    returns at once, a store's first or one after a barrier (a later store's); the child,
    let go, flushes them all."""
    import threading

    path = tmp_path / ("n" * 200)
    path.write_bytes(b"x")
    child = FlushProcess()
    if barrier_first:
        child.add(path)
        assert child.barrier() is None
    os.kill(child._proc.pid, signal.SIGSTOP)
    # A host that waits would wait for ever: the child goes on after 10 s in any case.
    going_on = threading.Timer(10, os.kill, (child._proc.pid, signal.SIGCONT))
    going_on.start()
    try:
        start = time.monotonic()
        for _ in range(2000):  # ~400 KB of paths, several pipes' worth
            child.add(path)
        assert time.monotonic() - start < 5
        assert child._pending  # held here, not waited for
    finally:
        going_on.cancel()
        os.kill(child._proc.pid, signal.SIGCONT)
    assert child.barrier() is None
    child.close()


#: A child answering three barriers a byte at a time: a failure, then ``flushed`` twice.
_SLOW_ANSWERS = r"""
import sys, time
for answer in (b"failed\0" b"2\0" b"/a/path\0", b"flushed\0", b"flushed\0"):
    sys.stdin.buffer.read(1)
    for byte in answer:
        sys.stdout.buffer.write(bytes([byte]))
        sys.stdout.buffer.flush()
        time.sleep(0.002)
sys.stdin.buffer.read()
"""


def test_an_answer_is_read_whole_however_the_pipe_brings_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(flush_process, "_CHILD", _SLOW_ANSWERS)
    child = FlushProcess()
    failure = child.barrier()
    assert isinstance(failure, FileNotFoundError)
    assert failure.filename == "/a/path"
    assert child.barrier() is None
    assert child.barrier() is None
    child.close()
    assert child._proc.poll() == 0


def test_a_child_let_go_leaves_no_descriptor_open(tmp_path: Path) -> None:
    """One child a run, but a program may run many conversions."""
    before = sorted(p.name for p in Path("/proc/self/fd").iterdir())
    child = FlushProcess()
    child.add(tmp_path)
    assert child.barrier() is None
    child.close()
    assert sorted(p.name for p in Path("/proc/self/fd").iterdir()) == before


def test_a_child_that_ends_without_an_answer_is_gone(tmp_path: Path) -> None:
    child = FlushProcess()
    child._proc.kill()
    child._proc.wait()
    child.add(tmp_path)
    with pytest.raises(Gone):
        child.barrier()
    child.close()


def test_the_syncer_flushes_here_what_a_dead_child_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed = watch_fsync(monkeypatch)
    paths = _names(tmp_path)
    syncer = Syncer()
    syncer.add(paths[:2])
    assert syncer._child is not None
    syncer._child._proc.kill()
    syncer.add(paths[2:])
    syncer.finish(tmp_path)
    assert flushed[: len(paths)] == [str(p) for p in paths]
    assert flushed[len(paths) :] == [str(tmp_path), str(tmp_path.parent)]


def test_a_child_found_dead_is_reaped_and_the_next_stores_flushed_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's child that died leaves no zombie for the rest of the run, and no store after
    gives it files: they are flushed here as they are added."""
    paths = _names(tmp_path)
    flushing = Flushing()
    first = Syncer(flushing)
    first.add(paths[:2])
    dead = first._child
    assert dead is not None
    dead._proc.kill()
    first.finish(tmp_path)
    assert not Path(f"/proc/{dead._proc.pid}").exists()  # reaped, not a zombie
    flushed = watch_fsync(monkeypatch)
    second = Syncer(flushing)
    second.add(paths[2:])
    assert second._child is None
    second.finish(tmp_path)
    flushing.close()
    assert flushed[:2] == [str(p) for p in paths[2:]]


def test_files_and_folders_flushed_here_leave_no_descriptor_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's first files and every folder are flushed by this process: one descriptor a
    file left open would run a large run out of them."""
    monkeypatch.setattr(flush_process, "FIRST_HERE", 10**6)
    paths = _names(tmp_path)
    before = sorted(p.name for p in Path("/proc/self/fd").iterdir())
    syncer = Syncer()
    syncer.add(paths)
    syncer.finish(tmp_path)
    assert sorted(p.name for p in Path("/proc/self/fd").iterdir()) == before


def test_the_syncer_uses_a_thread_where_no_child_can_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An application embedding Python names its own program as the executable: it is not
    run; the files are flushed here, on a thread."""
    flushed = watch_fsync(monkeypatch)
    monkeypatch.setattr(sys, "executable", "/usr/bin/some-app")
    paths = _names(tmp_path)
    syncer = Syncer()
    syncer.add(paths)
    assert syncer._child is None
    assert syncer._thread is not None
    syncer.finish(tmp_path)
    assert flushed[: len(paths)] == [str(p) for p in paths]


def test_the_syncer_raises_the_childs_failure(tmp_path: Path) -> None:
    paths = _names(tmp_path)
    paths[1].unlink()  # the output deleted under the run
    syncer = Syncer()
    syncer.add(paths)
    with pytest.raises(FileNotFoundError) as caught:
        syncer.finish(tmp_path)
    assert caught.value.filename == str(paths[1])


def test_a_syncer_used_again_starts_a_new_child(tmp_path: Path) -> None:
    """A syncer of its own (no run's flushing given) lets its child go when it finishes."""
    paths = _names(tmp_path)
    syncer = Syncer()
    syncer.add(paths[:1])
    first = syncer._child
    syncer.finish(tmp_path)
    assert first is not None
    assert first._proc.poll() == 0
    syncer.add(paths[1:])
    assert syncer._child is not None
    assert syncer._child is not first
    syncer.finish(tmp_path)


def test_one_child_serves_every_store_of_a_run(tmp_path: Path) -> None:
    """Each store's syncer waits for its own files and hears of its own failure only."""
    paths = _names(tmp_path)
    flushing = Flushing()
    first, second = Syncer(flushing), Syncer(flushing)
    paths[0].unlink()
    first.add(paths[:2])
    with pytest.raises(FileNotFoundError):
        first.finish(tmp_path)
    second.add(paths[2:])
    second.finish(tmp_path)
    assert first._child is second._child is None
    child = flushing.child()
    assert child is not None
    assert child._proc.poll() is None  # the same child, still there for the next store
    flushing.close()
    assert child._proc.poll() == 0


def test_gone_when_the_interpreter_is_not_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", "")
    with pytest.raises(Gone):
        FlushProcess()


def test_a_program_embedding_python_is_never_run_as_the_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An application embedding Python names its own program as the executable: run with
    Python's options it would start the application, not flush anything."""
    ran = tmp_path / "ran"
    app = tmp_path / "some-app"
    app.write_text(f"#!/bin/sh\ntouch '{ran}'\n")
    app.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(app))
    with pytest.raises(Gone):
        FlushProcess()
    assert not ran.exists()


@pytest.mark.parametrize(
    "answer", [b"hello\0", b"failed\0x\0/a/path\0"], ids=["unknown", "not-an-errno"]
)
def test_a_child_answering_nonsense_is_gone_and_its_files_flushed_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: bytes
) -> None:
    """Not waited for (it would answer nothing more), not taken for a failure: every file it
    was given is flushed by this process, at once."""
    flushed = watch_fsync(monkeypatch)
    child = f"import signal, sys\nsignal.alarm(30)\nsys.stdout.buffer.write({answer!r})\n"
    # Then it reads until let go (at once), not answering the barrier (30 s at most).
    monkeypatch.setattr(flush_process, "_CHILD", child + "sys.stdout.flush()\nsys.stdin.read()\n")
    paths = _names(tmp_path)
    syncer = Syncer()
    syncer.add(paths)
    begun = time.monotonic()
    syncer.finish(tmp_path)
    assert time.monotonic() - begun < 10
    assert flushed[: len(paths)] == [str(p) for p in paths]


def test_gone_when_python_cannot_tell_its_executable(monkeypatch: pytest.MonkeyPatch) -> None:
    """``sys.executable`` may be None (Python could not find its own program): no child, and
    the syncer flushes on its thread rather than failing the run."""
    monkeypatch.setattr(sys, "executable", None)
    with pytest.raises(Gone):
        FlushProcess()


def test_a_runs_first_files_are_flushed_here_then_by_the_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-run that rewrites a few sessions starts no process for them."""
    monkeypatch.setattr(flush_process, "FIRST_HERE", 2)
    flushed = watch_fsync(monkeypatch)
    paths = _names(tmp_path)
    flushing = Flushing()
    syncer = Syncer(flushing)
    syncer.add(paths[:2])
    assert syncer._child is None
    assert syncer._thread is not None
    syncer.add(paths[2:])
    assert syncer._child is not None
    syncer.finish(tmp_path)
    flushing.close()
    here = [p for p in flushed if Path(p).is_file()]
    assert here == [str(p) for p in paths[:2]]  # the others, in the child


def test_a_one_process_conversion_flushes_through_one_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end, as ``asf convert -j 1`` runs: the example home's two stores share one
    child, which every file but those of the run's first few goes to, and the output is
    the same as when this process flushes everything."""
    from fixture_homes import EXAMPLE, copy_home

    from asf_core.pipeline.conversion import convert_paths
    from asf_core.plugins import make_plugin_manager

    monkeypatch.setattr(flush_process, "FIRST_HERE", 3)
    started: list[FlushProcess] = []
    real_init = FlushProcess.__init__

    def init(self: FlushProcess) -> None:
        real_init(self)
        started.append(self)

    monkeypatch.setattr(FlushProcess, "__init__", init)
    given: list[Path] = []
    real_add = FlushProcess.add
    monkeypatch.setattr(FlushProcess, "add", lambda self, p: (given.append(p), real_add(self, p)))
    home = copy_home(EXAMPLE, tmp_path)
    pm = make_plugin_manager()
    run, problems = convert_paths(pm, [home], tmp_path / "child", processes=1)
    written = sorted((tmp_path / "child").rglob("*.jsonl"))
    assert len(run.stores) == 2
    assert len(started) == 1
    assert started[0]._proc.poll() == 0  # let go at the run's end
    assert len(given) == len(written) - 3
    assert set(given) <= set(written)
    monkeypatch.setattr(flush_process, "FIRST_HERE", 10**6)  # every file flushed here
    convert_paths(pm, [home], tmp_path / "here", processes=1)
    here = sorted((tmp_path / "here").rglob("*.jsonl"))
    assert [p.relative_to(tmp_path / "here") for p in here] == [
        p.relative_to(tmp_path / "child") for p in written
    ]
    assert [p.read_bytes() for p in here] == [p.read_bytes() for p in written]
    assert [p.message for p in problems if p.kind != "warning"] == []
