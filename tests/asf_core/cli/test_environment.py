"""``asf`` in the environments people run it in, each as a separate process: a locale whose
encoding cannot spell the data, closed or full standard streams, a deleted current directory.
Whatever the environment, a run ends with its documented exit code and never a traceback."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from fixture_paths import CLAUDE_HOME, ROOT
from terminal_output import read_terminal
from unprivileged import run_unprivileged

from asf_core.cli.exit_codes import ExitCode
from asf_core.cli.humane import clip

ASF = [sys.executable, "-m", "asf_core.cli.main"]


def _asf(
    *argv: str | Path,
    env: dict[str, str] | None = None,
    command: Sequence[str] = ASF,
    base: Mapping[str, str] | None = None,
    **how: Any,
) -> subprocess.CompletedProcess[bytes]:
    """One run of the command as its own process, stdout and stderr captured as bytes: in
    this environment with the Hermes plugin alone (or ``base``), plus ``env``."""
    how.setdefault("stdout", subprocess.PIPE)
    how.setdefault("stderr", subprocess.PIPE)
    environ = {**os.environ, "ASF_PLUGINS": "hermes"} if base is None else dict(base)
    environ.update(env or {})
    done = subprocess.run([*command, *map(str, argv)], env=environ, check=False, timeout=120, **how)
    assert b"Traceback" not in (done.stderr or b""), done.stderr.decode(errors="replace")
    return done


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example Hermes home."""
    target = tmp_path_factory.mktemp("env") / "hermes-home"
    shutil.copytree(ROOT / "examples" / "hermes-home", target)
    return target


@pytest.fixture(scope="module")
def session(home: Path) -> Path:
    """The example session whose reply holds an em dash (U+2014), converted."""
    out = home.parent / "out"
    assert _asf("convert", home, "-o", out, "--quiet", "-j", "1").returncode == ExitCode.OK
    (found,) = [p for p in out.rglob("*.jsonl") if "\u2014" in p.read_text(encoding="utf-8")][:1]
    return found


def _documents(data: bytes, encoding: str) -> list[Any]:
    """The JSON documents of an output, one or one per line."""
    text = data.decode(encoding)
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-16"])
def test_an_encoding_that_cannot_spell_the_data_escapes_it(
    encoding: str, home: Path, session: Path
) -> None:
    """``PYTHONIOENCODING`` (or a Latin-1 locale) narrower than the data: people's text gets
    backslash escapes, JSON its ``\\u`` escapes (the same documents as in UTF-8), HTML
    character references; stderr the same as stdout."""
    env = {"PYTHONIOENCODING": encoding}
    for argv in (
        ["show", session, "--json"],
        ["verify", session.parent, "--json"],
        ["export", session, "--to", "atif"],
        ["export", session, "--to", "otel"],
        ["list", home, "--json"],
        ["show", home, "--session", "fx-unicode-long", "--json"],
    ):
        narrow, utf8 = _asf(*argv, env=env), _asf(*argv, env={"PYTHONIOENCODING": "utf-8"})
        assert narrow.returncode == utf8.returncode == ExitCode.OK, (argv, narrow.stderr)
        assert _documents(narrow.stdout, encoding) == _documents(utf8.stdout, "utf-8"), argv
    for argv, raw, escaped in (
        (["show", session], "Sure \u2014 10.", "Sure \\u2014 10."),
        (["show", session, "--format", "markdown"], "Sure \u2014 10.", "Sure \\u2014 10."),
        (["export", session, "--to", "text"], "Sure \u2014 10.", "Sure \\u2014 10."),
        (["export", session, "--to", "html"], "Sure \u2014 10.", "Sure &#8212; 10."),
        (["list", home], "\U0001f680", "\\U0001f680"),
        (["show", home / "caf\u00e9\u2014.jsonl"], "caf\u00e9\u2014", "caf\\xe9\\u2014"),
    ):
        done = _asf(*argv, env=env)
        said = (done.stdout or done.stderr).decode(encoding)
        if encoding == "latin-1":
            escaped = escaped.replace("\\xe9", "\u00e9")
        assert (raw if encoding == "utf-16" else escaped) in said, (argv, said[-300:])
        assert done.returncode == (ExitCode.USAGE if "caf" in raw else ExitCode.OK), argv


def _closing(*fds: int) -> Any:
    """A ``preexec_fn`` closing ``fds`` in the child, as ``>&-`` does in a shell."""

    def close() -> None:
        for fd in fds:
            os.close(fd)

    return close


def test_a_closed_stdout_is_one_line_and_exit_2(home: Path, session: Path, tmp_path: Path) -> None:
    """``asf ... >&-``: what has to be said cannot be, as on a full disk; a run with nothing
    to say (``convert --quiet``) succeeds, and nothing meant for stdout lands in its files."""
    for argv in (
        ["show", session],
        ["list", home, "--json"],
        ["export", session, "--to", "atif"],
        ["convert", home, "-o", tmp_path / "loud", "-j", "2"],
        ["plugins"],
        ["--version"],
    ):
        done = _asf(*argv, preexec_fn=_closing(1), stdout=None)
        assert (done.returncode, done.stderr) == (
            ExitCode.USAGE,
            b"asf: cannot write: stdout is closed\n",
        ), argv
    quiet = _asf("convert", home, "-o", tmp_path / "quiet", "--quiet", preexec_fn=_closing(1))
    assert (quiet.returncode, quiet.stderr) == (ExitCode.OK, b"")
    for out in ("quiet", "loud"):
        assert _asf("verify", tmp_path / out).returncode == ExitCode.OK
        files = [p for p in (tmp_path / out).rglob("*") if p.is_file()]
        assert files
        assert not any(b"Converted" in p.read_bytes() for p in files)


def test_a_closed_stderr_or_stdin_keeps_the_exit_code(home: Path, session: Path) -> None:
    """``2>&-``: the error line goes nowhere, its exit code still tells; ``<&-``: stdin reads
    as empty."""
    missing = _asf("show", home / "nope.jsonl", preexec_fn=_closing(2), stderr=None)
    assert (missing.returncode, missing.stdout) == (ExitCode.USAGE, b"")
    shown = _asf("show", session, preexec_fn=_closing(2), stderr=None)
    assert shown.returncode == ExitCode.OK
    assert shown.stdout.startswith(b"session ")
    empty = _asf("show", "-", preexec_fn=_closing(0))
    assert empty.returncode == ExitCode.USAGE
    assert empty.stderr.startswith(b"asf: stdin: not an ASF session file: empty file")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_help_on_a_full_disk_says_so(unbuffered: str) -> None:
    """``asf --help > file`` on a full disk fails as any other output does, buffered or not
    (argparse ignores a write that fails, and unbuffered, nothing is left to flush)."""
    env = {"PYTHONUNBUFFERED": unbuffered}
    for argv in (["--help"], ["list", "--help"], ["--version"]):
        with Path("/dev/full").open("w") as full:
            done = _asf(*argv, env=env, stdout=full)
        assert (done.returncode, done.stderr) == (
            ExitCode.USAGE,
            b"asf: cannot write: No space left on device\n",
        ), argv
    closed = _asf("list", "--help", preexec_fn=_closing(1), stdout=None)
    assert (closed.returncode, closed.stderr) == (
        ExitCode.USAGE,
        b"asf: cannot write: stdout is closed\n",
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_stderr_that_cannot_be_written_keeps_the_exit_code(home: Path, session: Path) -> None:
    """``asf ... 2> log`` on a full disk: the error line is lost, not turned into a traceback
    (exit 1) nobody can read; the code is the one the error calls for."""
    for argv, code in (
        (["show", home / "nope.jsonl"], ExitCode.USAGE),
        (["show", session, "--leaf", "nope"], ExitCode.USAGE),
        (["list", home / "nope"], ExitCode.USAGE),
        (["show", home, "--session", "nope"], ExitCode.NOTHING),
        (["show", session], ExitCode.OK),
    ):
        with Path("/dev/full").open("w") as full:
            done = _asf(*argv, stderr=full)
        assert done.returncode == code, argv
    with Path("/dev/full").open("w") as full:
        both = _asf("show", session, stdout=full, stderr=full)
    assert both.returncode == ExitCode.USAGE


def test_a_deleted_current_directory_is_one_line(home: Path, tmp_path: Path) -> None:
    """Run from a directory deleted since (``cd d && rmdir ../d``): a relative path means
    nothing there, which is said in one line (exit 2); paths from ``/`` work as anywhere."""
    gone = tmp_path / "gone"

    def in_gone(*argv: str | Path) -> subprocess.CompletedProcess[bytes]:
        gone.mkdir()
        return _asf(*argv, cwd=gone, preexec_fn=gone.rmdir)

    for argv in (
        ["convert", home],  # the default output, ./asf-out
        ["convert", home, "-o", "out"],
        ["convert", home, "-o", tmp_path / "out", "--report", "report.json"],
        ["list", home, "--cwd", "."],
    ):
        done = in_gone(*argv)
        assert (done.returncode, done.stderr) == (
            ExitCode.USAGE,
            b"asf: the current directory no longer exists: name paths from / or run elsewhere\n",
        ), argv
    assert not (tmp_path / "out").exists()
    done = in_gone("convert", home, "-o", tmp_path / "out", "--quiet")
    assert (done.returncode, done.stderr) == (ExitCode.OK, b"")
    assert _asf("verify", tmp_path / "out").returncode == ExitCode.OK


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_lines_cut_to_the_width_fit_it_as_escaped(encoding: str, home: Path) -> None:
    """Under a stdout that cannot spell the titles, each character it escapes takes its
    escape's columns (``\\u6570``: six), so a cut line still fits the terminal; the ellipsis
    is ``...`` where ``…`` cannot be spelled."""
    shown: list[str] = []
    for columns in (40, 61, 100):
        env = {"COLUMNS": str(columns), "PYTHONIOENCODING": encoding}
        done = _asf("list", home, env=env)
        assert done.returncode == ExitCode.OK, done.stderr
        lines = done.stdout.decode(encoding).splitlines()
        assert max(map(len, lines)) <= columns, [line for line in lines if len(line) > columns]
        shown += lines
    assert any("\\u65e5" in line for line in shown)  # a title's CJK, escaped, yet within
    assert any(line.endswith("...") for line in shown)  # neither spells "…"


#: An age as ``asf list`` shows it, padded in its column.
_AGE = re.compile(r"(?<=  )\d+(?:s|m|h|d|w|mo|y) *(?=  )")


def test_columns_zero_sets_no_width(home: Path) -> None:
    """``COLUMNS=0`` (as some shells and CI runners export it) is no width: a pipe gets whole
    lines, as without it; a positive number still cuts them."""
    whole = _asf("list", home, env={"COLUMNS": ""}).stdout.decode()
    assert max(map(len, whole.splitlines())) > 80  # else nothing to cut
    for columns in ("0", "00", "\u00b2", "-5", "abc"):
        # the AGE column is read against the clock, which may pass a day's mark meanwhile
        listed = _asf("list", home, env={"COLUMNS": columns}).stdout.decode()
        assert _AGE.sub("AGE", listed) == _AGE.sub("AGE", whole), columns
    cut = _asf("list", home, env={"COLUMNS": "40"}).stdout.decode().splitlines()
    assert max(map(len, cut)) == 40


def test_the_progress_line_fits_a_narrow_terminal(tmp_path: Path) -> None:
    """On a 60-column terminal a progress line longer than the terminal would wrap, and
    ``\\r`` rewrites only its last row: every update would leave a row behind. Each line
    fits, the store's name giving way to the count."""
    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 60, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "ASF_PLUGINS")}
    projects = CLAUDE_HOME / ".claude" / "projects"
    with subprocess.Popen(
        [*ASF, "convert", projects, "-o", tmp_path / "out", "-j", "1"],
        stdout=subprocess.DEVNULL,
        stderr=child_fd,
        env={**env, "ASF_PLUGINS": "claude-code"},
    ) as proc:
        os.close(child_fd)
        shown = read_terminal(main_fd, proc, seconds=120)
        assert proc.wait(timeout=120) == ExitCode.OK
    lines = shown.decode().split("\r")
    assert any(": 1 of 1 sessions (1 file written)" in line for line in lines), lines
    assert all(clip(line, 59) == line for line in lines), lines


def test_a_default_home_behind_a_closed_directory_is_said(home: Path, tmp_path: Path) -> None:
    """``$HERMES_HOME`` inside a directory closed to the user: not a plugin failure (exit 3
    with a ``PermissionError``) but a folder passed over, said in one line, then nothing
    found (exit 4). Run as root without the capabilities that bypass permissions."""
    closed = tmp_path / "closed"
    hidden = closed / "hermes-home"
    shutil.copytree(home, hidden)
    env = {"ASF_PLUGINS": "hermes", "HERMES_HOME": str(hidden)}
    assert _listed_behind(closed, env) == (
        f"asf: {hidden}: cannot search this folder: permission denied; skipped\n"
        f"asf: no stores found in the default locations (hermes: {hidden}); name a PATH\n"
    )


def _listed_behind(closed: Path, env: Mapping[str, str]) -> str:
    """``asf list`` of the default locations with ``closed`` closed to the user: it finds
    nothing (exit 4, nothing on stdout); what it says on stderr."""
    closed.chmod(0)
    try:
        done = run_unprivileged([*ASF, "list"], {**os.environ, **env})
    finally:
        closed.chmod(0o755)
    assert (done.returncode, done.stdout) == (ExitCode.NOTHING, "")
    return done.stderr


@pytest.mark.parametrize("closed_is", ["the directory above", "projects itself"])
def test_a_default_claude_code_home_behind_a_closed_directory_is_said(
    tmp_path: Path, closed_is: str
) -> None:
    """The same for Claude Code's ``$CLAUDE_CONFIG_DIR/projects``: closed to the user (or a
    directory above it), it is a folder passed over, said, where nothing was said before."""
    config = tmp_path / "closed" / "claude"
    shutil.copytree(CLAUDE_HOME / ".claude", config)
    projects = config / "projects"
    closed = tmp_path / "closed" if closed_is == "the directory above" else projects
    env = {"ASF_PLUGINS": "claude-code", "CLAUDE_CONFIG_DIR": str(config)}
    assert _listed_behind(closed, env) == (
        f"asf: {projects}: cannot search this folder: permission denied; skipped\n"
        f"asf: no stores found in the default locations (claude-code: {projects}); name a PATH\n"
    )


def test_a_signal_ignored_at_start_stays_ignored(home: Path, tmp_path: Path) -> None:
    """A script's ``asf convert ... &`` starts with SIGINT ignored (and a supervisor may
    ignore SIGTERM): Ctrl-C in the terminal then stops the script's foreground command, not
    ``asf``. Sent while ``asf`` waits for the store's lock, both leave it waiting; it converts
    once the lock is free."""
    store, out = home / "state.db", tmp_path / "out"
    assert _asf("convert", store, "-o", out, "--quiet", "-j", "1").returncode == ExitCode.OK
    (lock,) = (out / "hermes").glob(".*.lock")

    def ignoring() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    held = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = subprocess.Popen(
            [*ASF, "convert", store, "-o", out, "-j", "1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "ASF_PLUGINS": "hermes"},
            preexec_fn=ignoring,
        )
        assert proc.stderr is not None
        assert proc.stderr.readline().startswith(b"asf: waiting for another asf convert")
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGTERM)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=1)
    finally:
        os.close(held)  # the lock goes with it
    stdout, stderr = proc.communicate(timeout=120)
    assert (proc.returncode, stderr) == (ExitCode.OK, b""), stderr
    assert stdout.startswith(b"Converted 1 store")


def _no_threads() -> None:
    """Limits under which no thread can start (each would reserve an 8 GB stack, more than
    the address space allowed) but the process runs: as a process limit (``ulimit -u``, a
    container's) leaves a run that has used its share."""
    resource.setrlimit(resource.RLIMIT_STACK, (8 << 30, 8 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_convert_without_a_thread_to_spare(jobs: str, home: Path, tmp_path: Path) -> None:
    """Where no thread can start, the files are flushed to disk one by one as written (no
    ``RuntimeError: can't start new thread``), and are the same files."""
    plain, limited = tmp_path / "plain", tmp_path / "limited"
    assert _asf("convert", home, "-o", plain, "-j", jobs, "--quiet").returncode == ExitCode.OK
    done = _asf("convert", home, "-o", limited, "-j", jobs, "--quiet", preexec_fn=_no_threads)
    assert (done.returncode, done.stderr) == (ExitCode.OK, b"")
    names = sorted(p.relative_to(plain) for p in plain.rglob("*.jsonl"))
    assert names == sorted(p.relative_to(limited) for p in limited.rglob("*.jsonl"))
    assert all((plain / n).read_bytes() == (limited / n).read_bytes() for n in names)


def test_no_home_directory_at_all(home: Path) -> None:
    """``$HOME`` unset and no password entry for the user (a container run under an
    arbitrary uid): the default locations under the home are nowhere, said in one line
    (exit 4), not three plugins failing (exit 3); ``$HERMES_HOME`` still names a home, and
    ``--cwd ~/x`` is a usage error."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to run as a user with no password entry")
    shared = Path(tempfile.mkdtemp(prefix="asf-homeless-"))
    try:
        shared.chmod(0o777)
        shutil.copytree(home, shared / "hermes-home")
        env = {k: v for k, v in os.environ.items() if k not in ("HOME", "ASF_PLUGINS")}
        user = [setpriv, "--reuid=54321", "--regid=54321", "--clear-groups", *ASF]

        def homeless(*argv: str | Path, **extra: str) -> subprocess.CompletedProcess[bytes]:
            return _asf(*argv, env=extra, command=user, base=env, cwd="/")

        nothing = homeless("list")
        assert (nothing.returncode, nothing.stderr) == (
            ExitCode.NOTHING,
            b"asf: no stores found in the default locations of any format;"
            b" no home directory ($HOME is unset); name a PATH\n",
        )
        tilde = homeless("list", shared / "hermes-home", "--cwd", "~/x")
        assert (tilde.returncode, tilde.stderr) == (
            ExitCode.USAGE,
            b"asf: --cwd ~/x: no home directory for ~ ($HOME is unset)\n",
        )
        named = homeless(
            "convert", "-o", shared / "out", "--quiet", HERMES_HOME=str(shared / "hermes-home")
        )
        assert (named.returncode, named.stderr) == (ExitCode.OK, b"")
        assert len(list((shared / "out").rglob("*.jsonl"))) > 20
    finally:
        shutil.rmtree(shared)


def _nonblocking_pipe(end: int) -> tuple[int, int]:
    """A pipe, its end ``end`` (0: read, 1: write) non-blocking, as a parent may leave it."""
    fds = os.pipe()
    os.set_blocking(fds[end], False)
    return fds


def test_a_nonblocking_stdout_gets_everything(session: Path) -> None:
    """A pipe whose reader set ``O_NONBLOCK`` on it (the flag is the pipe's, shared with us):
    a full pipe made Python drop what did not fit (unbuffered, exit 0) or fail with
    ``BlockingIOError``; every byte arrives, as through a blocking pipe."""
    for unbuffered in ("1", ""):
        env = {"PYTHONUNBUFFERED": unbuffered}
        expected = _asf("export", session.parents[1], "--to", "atif", env=env).stdout
        assert len(expected) > 65536  # more than a pipe holds
        read_fd, write_fd = _nonblocking_pipe(1)
        with subprocess.Popen(
            [*ASF, "export", session.parents[1], "--to", "atif"],
            stdout=write_fd,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
        ) as proc:
            os.close(write_fd)
            time.sleep(1)  # the pipe fills meanwhile
            with os.fdopen(read_fd, "rb") as reader:
                got = reader.read()
            assert proc.stderr is not None
            assert (proc.wait(timeout=60), proc.stderr.read()) == (ExitCode.OK, b"")
        assert got == expected


def test_a_nonblocking_stdin_is_read_whole(session: Path) -> None:
    """``asf show -`` on a pipe left non-blocking read only what had arrived, and showed half
    a session (a warning, exit 0); it waits for the rest."""
    data = session.read_bytes()
    expected = _asf("show", session).stdout
    read_fd, write_fd = _nonblocking_pipe(0)
    with subprocess.Popen(
        [*ASF, "show", "-"], stdin=read_fd, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        os.close(read_fd)
        with os.fdopen(write_fd, "wb") as writer:
            writer.write(data[:100])
            writer.flush()
            time.sleep(1)
            writer.write(data[100:])
        stdout, stderr = proc.communicate(timeout=60)
    assert (proc.returncode, stderr) == (ExitCode.OK, b"")
    assert stdout == expected.replace(str(session).encode(), b"stdin")


def test_streams_opened_the_wrong_way(home: Path, session: Path, tmp_path: Path) -> None:
    """``asf ... 1< file`` (stdout open for reading only) died with EBADF's traceback: it is
    a closed stdout, said in one line (exit 2); ``2< file`` loses the error line, keeping the
    code; ``0> file`` reads as an empty stdin."""
    with Path(os.devnull).open("rb") as reading:
        for argv in (["show", session], ["list", home, "--json"], ["--help"]):
            done = _asf(*argv, stdout=reading)
            assert (done.returncode, done.stderr) == (
                ExitCode.USAGE,
                b"asf: cannot write: stdout is open for reading only\n",
            ), argv
        missing = _asf("show", home / "nope.jsonl", stderr=reading)
        assert (missing.returncode, missing.stdout) == (ExitCode.USAGE, b"")
    with (tmp_path / "sink").open("wb") as writing:
        empty = _asf("show", "-", stdin=writing)
    assert empty.returncode == ExitCode.USAGE
    assert empty.stderr.startswith(b"asf: stdin: not an ASF session file: empty file")


def test_a_terminal_that_hung_up_is_one_line(home: Path) -> None:
    """stdout on a terminal gone (an ssh session dropped under a run that outlived it):
    every write fails with EIO, which was a traceback; now one line, exit 2."""
    for argv in (["list", home], ["show", home, "--session", "fx-plain"]):
        main_fd, child_fd = pty.openpty()
        with subprocess.Popen(
            [*ASF, *map(str, argv)],
            stdin=subprocess.DEVNULL,
            stdout=child_fd,
            stderr=subprocess.PIPE,
            env={**os.environ, "ASF_PLUGINS": "hermes"},
            start_new_session=True,
        ) as proc:
            os.close(child_fd)
            os.close(main_fd)  # the terminal hangs up before asf writes its first line
            _, stderr = proc.communicate(timeout=60)
        assert (proc.returncode, stderr) == (
            ExitCode.USAGE,
            b"asf: cannot write: Input/output error\n",
        ), argv
