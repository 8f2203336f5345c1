"""One conversion at a time into a store's output: a second run waits for the first, then
converts the store as it is then; an output that cannot be locked is converted unlocked.

The other run is this test holding the lock on a descriptor of its own (``flock`` locks
belong to open files, so two opens in one process exclude each other as two processes do);
the real command is run once, to see its one line and its exit on SIGTERM while it waits.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import plan_toy
import pytest
from fixture_homes import EXAMPLE, copy_home
from fixture_paths import ROOT
from output_files import output_files

from asf_core.cli import convert as cli_convert
from asf_core.cli.main import main
from asf_core.layout import store_dir
from asf_core.pipeline import lock
from asf_core.pipeline.conversion import convert_paths
from asf_core.pipeline.report import StoreReport
from asf_core.plugins import AsfPluginManager, make_plugin_manager

LINES = ["a one", "b two three", "c four"]


@pytest.fixture
def pm() -> AsfPluginManager:
    plan_toy.STAMPS = True
    return make_plugin_manager(plugins=[("ptoy", plan_toy.PlanToy())], autoload=False)


def _store(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "src" / "s.ptoy"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _held(dest: Path) -> int:
    """The lock of ``dest`` taken as another run would: a descriptor of its own."""
    path = lock.lock_path(dest)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDONLY | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def _free(dest: Path) -> bool:
    fd = os.open(lock.lock_path(dest), os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def _waiting(
    first: int, then: Callable[[], object] | None = None
) -> tuple[list[Path], Callable[[Path], None]]:
    """An ``on_wait`` that notes where it waited, does ``then``, and ends the first run (its
    lock, held on ``first``, goes with it); and the list it notes in."""
    waited: list[Path] = []

    def on_wait(where: Path) -> None:
        waited.append(where)
        if then is not None:
            then()
        os.close(first)

    return waited, on_wait


def _run(pm: AsfPluginManager, src: Path, out: Path, **options: object) -> StoreReport:
    run, _ = convert_paths(pm, [src], out, **options)  # type: ignore[arg-type]
    (report,) = run.stores
    return report


def test_a_second_run_waits_for_the_first_then_converts_the_store_as_it_is(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """The first run read the store before it changed; the second, told to wait, converts
    it once the first is done, so the output is the store's newest state, whole."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    dest = store_dir(out, plan_toy.FORMAT, src)

    def changed() -> None:  # while the first run ran
        _store(tmp_path, [*LINES[:2], "c four and five"])

    waited, on_wait = _waiting(_held(dest), then=changed)
    report = _run(pm, src, out, on_wait=on_wait)
    assert waited == [dest]
    assert report.complete
    assert report.error is None
    _run(pm, src, tmp_path / "fresh")
    assert output_files(out, reports=False) == output_files(tmp_path / "fresh", reports=False)


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_lock_is_held_while_a_store_converts_and_only_then(
    pm: AsfPluginManager, tmp_path: Path, jobs: int
) -> None:
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    dest = store_dir(out, plan_toy.FORMAT, src)
    free_while: list[bool] = []
    report = _run(
        pm, src, out, processes=jobs, on_session=lambda *_: free_while.append(_free(dest))
    )
    assert report.complete
    assert free_while == [False] * len(LINES)
    assert _free(dest)
    assert lock.lock_path(dest).parent == dest.parent  # beside the store's files, not among
    assert lock.lock_path(dest).read_bytes() == b""


def test_a_store_s_lock_is_free_once_it_is_done_though_its_workers_live_on(
    pm: AsfPluginManager, tmp_path: Path
) -> None:
    """Workers forked while a store converts share its lock's open file and serve the next
    stores: the lock is released when the store is done, not when they exit with the run,
    so another run waiting for that store goes on while this one converts the next."""
    first = _store(tmp_path, LINES)
    second = tmp_path / "src" / "t.ptoy"
    second.write_text("d five\ne six seven\n")
    out = tmp_path / "out"
    dest = store_dir(out, plan_toy.FORMAT, first)
    seen: list[tuple[str, bool]] = []

    def on_session(report: StoreReport, _: object) -> None:
        seen.append((Path(report.path).name, _free(dest)))

    run, _ = convert_paths(pm, [first, second], out, processes=2, on_session=on_session)
    assert [s.complete for s in run.stores] == [True, True]
    assert seen == [("s.ptoy", False)] * 3 + [("t.ptoy", True)] * 2


@pytest.mark.parametrize("told", [True, False], ids=["on_wait", "no on_wait"])
def test_a_second_run_waits_until_the_first_lets_go(
    pm: AsfPluginManager, tmp_path: Path, told: bool
) -> None:
    """The first run lets go of the lock a while after the second came to it: the second
    converts nothing before then, whether or not it has anyone to tell of the wait."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    dest = store_dir(out, plan_toy.FORMAT, src)
    first = _held(dest)
    released = threading.Event()

    def let_go() -> None:
        time.sleep(0.3)
        released.set()
        os.close(first)

    waited: list[Path] = []
    after: list[bool] = []  # for each session written, whether the first had let go
    thread = threading.Thread(target=let_go)
    thread.start()
    try:
        report = _run(
            pm,
            src,
            out,
            on_wait=waited.append if told else None,
            on_session=lambda *_: after.append(released.is_set()),
        )
    finally:
        thread.join()
    assert report.complete
    assert waited == ([dest] if told else [])
    assert after == [True] * len(LINES)


def _no_flock(fd: int, operation: int) -> None:
    raise OSError(errno.ENOLCK, "No locks available")


@pytest.mark.parametrize("why", ["no-locks", "no-lock-file"])
def test_an_output_that_cannot_be_locked_is_converted_unlocked(
    pm: AsfPluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, why: str
) -> None:
    """A file system without locks (some network ones), or a lock file that cannot be
    opened: the run goes on, as it would without the lock, and waits for nothing."""
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    dest = store_dir(out, plan_toy.FORMAT, src)
    if why == "no-locks":
        monkeypatch.setattr(fcntl, "flock", _no_flock)
    else:
        lock.lock_path(dest).mkdir(parents=True)
    waited: list[Path] = []
    report = _run(pm, src, out, on_wait=waited.append)
    assert report.complete
    assert waited == []
    assert len(report.files) == len(LINES)


def test_the_command_says_it_waits_unless_quiet(
    pm: AsfPluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, out = _store(tmp_path, LINES), tmp_path / "out"
    dest = store_dir(out, plan_toy.FORMAT, src)
    monkeypatch.setattr("asf_core.plugins.make_plugin_manager", lambda: pm)
    said: list[str] = []
    held = _held(dest)

    def err(message: str) -> None:  # said, and the other run ends
        said.append(message)
        os.close(held)

    monkeypatch.setattr(cli_convert, "err", err)
    assert main(["convert", str(src), "-o", str(out)]) == 0
    assert said == [f"waiting for another asf convert writing {dest} to finish"]
    told: list[object] = []
    real = cli_convert.convert_paths

    def convert_paths(*args: object, **options: object) -> object:
        told.append(options["on_wait"])
        return real(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(cli_convert, "convert_paths", convert_paths)
    assert main(["convert", str(src), "-o", str(out), "--quiet"]) == 0
    assert told == [None]


def test_sigterm_ends_a_run_waiting_for_the_lock(tmp_path: Path) -> None:
    """The real command, waiting: its line on stderr, then SIGTERM ends it at once (143, one
    line, nothing written into the store the other run holds), while the other run still
    holds the lock."""
    home = copy_home(EXAMPLE, tmp_path)
    out = tmp_path / "out"
    dest = store_dir(out, "hermes", home / "state.db")
    held = _held(dest)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASF_")}
    proc = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "asf"), "convert", str(home), "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # the run is waiting once it has said so
        assert line.startswith("asf: waiting for another asf convert writing ")
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        os.close(held)
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, stdout, stderr) == (143, "", "asf: terminated\n")
    assert not dest.exists()


def test_the_api_tells_of_a_wait_and_writes_nothing_on_stderr(
    pm: AsfPluginManager, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``api.convert`` waits for another run as the command does; ``on_wait`` hears of it,
    where it was silent, and the library still writes nothing on its caller's streams."""
    from asf_core import api

    src, out = _store(tmp_path, LINES), tmp_path / "out"
    dest = store_dir(out, plan_toy.FORMAT, src)
    waited, on_wait = _waiting(_held(dest))
    report = api.convert(src, out, plugins=pm, on_wait=on_wait)
    assert waited == [dest]
    assert [s.complete for s in report.stores] == [True]
    assert capsys.readouterr() == ("", "")
