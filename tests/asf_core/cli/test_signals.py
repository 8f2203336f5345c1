"""SIGINT and SIGTERM stop asf cleanly at any moment; temporary files are ours and do not last.

Real processes (the installed ``asf``) are signalled at random moments of a conversion: only
whole files remain, the exit code is 130 or 143 with one line, never a traceback from asf's
code. The windows left are the interpreter's own start-up (site, and importing asf's entry
point, a few milliseconds) and shut-down (after asf's last line): a signal there is Python's to
handle, with nothing written yet or everything written, and these tests count it apart.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixture_paths import ROOT, VECTORS
from plugin_stubs import claim_by_suffix, only_these
from survivors import survivors_after

from asf_core import hookimpl
from asf_core.cli.main import main
from asf_core.formats import Claim, ConvertedSession, NativeSession
from asf_core.model import Header, Item
from asf_core.reader import read_session
from asf_core.writer import SessionBuilder, remove_stale_temporaries, temporary_path

ASF = ROOT / ".venv" / "bin" / "asf"
SESSIONS = 1500


@pytest.fixture(scope="module")
def chatlog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A chat log of 1500 sessions: converting it takes most of a second."""
    path = tmp_path_factory.mktemp("logs") / "big.chat.jsonl"
    with path.open("w") as out:
        for n in range(SESSIONS):
            for role, text in (("user", "hello " * 20), ("assistant", "ok")):
                line = {"session": f"s{n}", "role": role, "content": text}
                out.write(json.dumps({**line, "ts": "2026-10-01T09:00:00Z"}) + "\n")
    return path


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ASF_")}


#: A frame of asf's code running a function (not a module body being imported).
_RUNNING = re.compile(r'File "[^"]*/asf_core/[^"]*", line \d+, in (?!<module>)')


def _outside_asf(code: int, stderr: str, signum: int) -> bool:
    """The signal came before asf's handlers were in place (the interpreter starting, asf's
    entry point still being imported) or after its work (the interpreter shutting down):
    killed by it, or a traceback in which no function of asf's was running."""
    if code == -signum:
        return True
    return "Traceback" in stderr and not _RUNNING.search(stderr)


def _whole(out: Path) -> tuple[int, list[Path]]:
    """The session files written (each must read without a problem) and temporaries left."""
    files = sorted(out.rglob("*.jsonl"))
    for path in files:
        assert read_session(path).problems == [], path
    for report in out.rglob("report.json"):
        json.loads(report.read_text())
    return len(files), [p for p in out.rglob("*") if ".asf-tmp-" in p.name]


def _first_file(out: Path, proc: subprocess.Popen[str]) -> None:
    """Wait until the run has written a session file (or ended, or 60 s went by)."""
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        if out.exists() and next(out.rglob("*.jsonl"), None) is not None:
            return
        time.sleep(0.001)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_at_a_random_moment_leaves_only_whole_files(
    signum: int, chatlog: Path, tmp_path: Path
) -> None:
    rng = random.Random(signum)
    argv = [str(ASF), "convert", str(chatlog), "--quiet", "-o"]
    started = time.monotonic()
    subprocess.run([*argv, str(tmp_path / "timed")], check=True, env=_env())
    took = time.monotonic() - started
    outcomes = []
    runs = 6
    for run in range(runs):
        out = tmp_path / f"out{run}"
        proc = subprocess.Popen(
            [*argv, str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()
        )
        if run < 2:  # a moment in the first third of a run: start-up included
            time.sleep(took * (run + rng.random()) / runs)
        else:  # a moment once files are being written, whatever the machine's load
            _first_file(out, proc)
            time.sleep(took * rng.random() / 4)
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=120)
        written, temporaries = _whole(out) if out.exists() else (0, [])
        outcomes.append((proc.returncode, written))
        assert temporaries == []
        if _outside_asf(proc.returncode, stderr, signum):
            assert written in (0, SESSIONS)
            continue
        assert "Traceback" not in stderr
        if proc.returncode == 0:  # done before the signal came
            assert (stderr, written) == ("", SESSIONS)
            continue
        what = "interrupted" if signum == signal.SIGINT else "terminated"
        assert (proc.returncode, stderr) == (128 + signum, f"asf: {what}\n")
        for report in out.rglob("report.json"):
            store = json.loads(report.read_text())
            assert (store["complete"], store["error"]) == (False, "interrupted")
    # Most runs are cut off part way, so the test is about interrupted runs.
    assert sum(1 for code, n in outcomes if code == 128 + signum and 0 < n < SESSIONS) >= 2, (
        outcomes
    )


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_verify_is_stopped_cleanly_too(tmp_path: Path, jobs: str) -> None:
    sessions = VECTORS / "sessions"
    # Enough files that the signal comes part way (300 take ~0.4 s here); a signal after the
    # work, while the interpreter shuts down, ends it as the signal's default does. With
    # -j 2 (several MB: on workers), none of the workers outlives the run.
    for n in range(1500):
        (tmp_path / f"{n}.jsonl").write_bytes((sessions / "replay.jsonl").read_bytes())
    proc = subprocess.Popen(
        [str(ASF), "verify", str(tmp_path), "-j", jobs],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    time.sleep(0.4)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert (proc.returncode, stderr) == (143, "asf: terminated\n")
    assert survivors_after(tmp_path) == []


def test_a_second_signal_while_cleaning_up_ends_at_once() -> None:
    code = (
        "import os, signal\n"
        "from asf_core.cli import signals\n"
        "with signals.Trap() as caught:\n"
        "    try:\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "    except signals.Interrupted:\n"
        "        os.kill(os.getpid(), signal.SIGINT)  # cleaning up, a second signal\n"
        "        print('not reached')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (143, "", "")


class _Slow:
    """One store of three sessions; the second one sends this very process a SIGTERM."""

    def __init__(self) -> None:
        self.closed = False

    @hookimpl
    def discover(self, path: Path | None) -> list[Claim] | None:
        return claim_by_suffix(path, "slow", ".slow")

    @hookimpl
    def open_store(self, claim: Claim) -> _Slow:
        return self

    def info(self) -> dict[str, str]:
        return {}

    def close(self) -> None:
        self.closed = True

    @hookimpl
    def read(self, store: _Slow) -> Iterator[NativeSession]:
        for n in range(3):
            yield NativeSession(id=f"s{n}")

    @hookimpl
    def convert(
        self, store: _Slow, sessions: Iterator[NativeSession]
    ) -> Iterator[ConvertedSession]:
        for n, native in enumerate(sessions):
            if n == 1:
                os.kill(os.getpid(), signal.SIGTERM)
            builder = SessionBuilder(Header(id=native.id, created_at="2026-01-01T00:00:00Z"))
            message = {"type": "message", "role": "user", "content": []}
            builder.append(Item(ts="2026-01-01T00:00:01Z", item=message))
            yield ConvertedSession(header=builder.header, entries=builder.entries, name=native.id)


def test_sigterm_closes_the_store_and_writes_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host closes the store (a plugin's temporary copy goes with it) and writes the
    report on the way out, as for Ctrl-C; the handlers are the caller's again after."""
    slow = _Slow()
    only_these(monkeypatch, slow)
    store = tmp_path / "a.slow"
    store.write_text("")
    before = signal.getsignal(signal.SIGTERM)
    code = main(["convert", str(store), "-o", str(tmp_path / "out")])
    assert (code, capsys.readouterr().err) == (143, "asf: terminated\n")
    assert slow.closed
    (report,) = (tmp_path / "out").rglob("report.json")
    assert json.loads(report.read_text())["error"] == "interrupted"
    assert signal.getsignal(signal.SIGTERM) is before


# --- temporary files ------------------------------------------------------------------------


def _dead_pid() -> int:
    done = subprocess.run(["true"], check=True)
    del done
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_temporaries_are_named_ours(tmp_path: Path) -> None:
    name = temporary_path(tmp_path / "report.json").name
    assert name.startswith(f".report.json.asf-tmp-{os.getpid()}-")
    assert len(name.rsplit("-", 1)[1]) == 16


def test_only_our_stale_temporaries_are_removed(tmp_path: Path) -> None:
    dead = _dead_pid()
    stale = [
        tmp_path / f".a.jsonl.asf-tmp-{dead}-{'0' * 16}",
        tmp_path / f".r.asf-tmp-{dead}-{'f' * 16}",
    ]
    kept = [
        tmp_path / f".a.jsonl.asf-tmp-{os.getpid()}-{'1' * 16}",  # ours, still running
        tmp_path / f".a.jsonl.asf-tmp-1-{'2' * 16}",  # a live process
        tmp_path / f"a.jsonl.asf-tmp-{dead}-{'3' * 16}",  # not hidden: not a name we give
        tmp_path / f".a.jsonl.asf-tmp-{dead}-xyz",  # not our random part
        tmp_path / f".a.jsonl.{'4' * 16}.tmp",  # the old naming, or someone else's
        tmp_path / "session.jsonl",
    ]
    for path in stale + kept:
        path.write_text("x")
    folder = tmp_path / f".d.asf-tmp-{dead}-{'5' * 16}"  # a directory is never removed
    folder.mkdir()
    assert remove_stale_temporaries(tmp_path) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [p.name for p in kept] + [folder.name]
    )


def test_a_killed_run_leaves_temporaries_the_next_run_removes(
    chatlog: Path, tmp_path: Path
) -> None:
    """SIGKILL cannot be handled: what a killed run left is cleaned by the next one, in the
    directories it writes."""
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [str(ASF), "convert", str(chatlog), "-o", str(out), "--quiet"], env=_env()
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(out.rglob("*.jsonl")):
        time.sleep(0.01)
    proc.kill()
    proc.wait()
    (project,) = {p.parent for p in out.rglob("*.jsonl")}
    left = project / f".x.jsonl.asf-tmp-{proc.pid}-{'9' * 16}"
    left.write_text("half")  # what a kill mid-write leaves (the real one may have been renamed)
    store_dir = project.parent
    (store_dir / f".report.json.asf-tmp-{proc.pid}-{'8' * 16}").write_text("half")
    done = subprocess.run(
        [str(ASF), "convert", str(chatlog), "-o", str(out), "--quiet"], env=_env(), check=False
    )
    assert done.returncode == 0
    assert [p for p in out.rglob("*") if ".asf-tmp-" in p.name] == []
    assert _whole(out)[0] == SESSIONS
