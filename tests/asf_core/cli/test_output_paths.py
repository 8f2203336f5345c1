"""Where asf writes: never onto what it reads, only regular files, and no name from the data
can take one asf keeps for itself (issue 12).

A session's ``cwd`` and ``id`` become directory and file names; ``--report`` and ``-o`` are
typed by people. Each bad name or path here costs only itself: the run refuses it with one
line before converting anything, or spells the name safely and goes on.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixture_homes import EXAMPLE
from plugin_stubs import PathStore, claim_by_suffix, only_these
from unprivileged import run_unprivileged

from asf_core import hookimpl
from asf_core.cli.main import main
from asf_core.errors import OutputError
from asf_core.files import folder_trouble
from asf_core.formats import Claim, ConvertedSession, NativeSession
from asf_core.layout import (
    FINGERPRINTS_NAME,
    REPORT_NAME,
    project_key,
    session_file_name,
    session_path,
    store_label,
)
from asf_core.model import Header, Item
from asf_core.pipeline.inputs import Inputs
from asf_core.reader import read_session
from asf_core.writer import SessionBuilder, write_atomic

ASF = [sys.executable, "-m", "asf_core.cli.main"]


class _Scripted:
    """Claims ``*.script`` files (and ``*.store`` folders, holding a ``sessions.json``): a JSON
    list of headers, each converted into a session of one message."""

    @hookimpl
    def discover(self, path: Path | None) -> list[Claim] | None:
        return claim_by_suffix(path, "scripted", ".script", ".store")

    @hookimpl
    def open_store(self, claim: Claim) -> PathStore:
        return PathStore(claim.path)

    @hookimpl
    def read(self, store: PathStore) -> Iterator[NativeSession]:
        source = store.path / "sessions.json" if store.path.is_dir() else store.path
        for n, header in enumerate(json.loads(source.read_text())):
            yield NativeSession(id=f"s{n}", native=header)

    @hookimpl
    def convert(
        self, store: PathStore, sessions: Iterator[NativeSession]
    ) -> Iterator[ConvertedSession]:
        for native in sessions:
            builder = SessionBuilder(
                Header(**{"created_at": "2026-01-01T00:00:00Z", **native.native})
            )
            message = {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": native.id}],
            }
            builder.append(Item(ts="2026-01-01T00:00:01Z", item=message))
            yield ConvertedSession(header=builder.header, entries=builder.entries, name=native.id)


@pytest.fixture(autouse=True)
def _scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    only_these(monkeypatch, _Scripted())


def _store(tmp_path: Path, *headers: dict[str, Any], name: str = "a.script") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(list(headers) or [{"id": "one"}]))
    return path


def _convert(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str]:
    code = main(["convert", *map(str, argv), "--quiet"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


# --- names from the data ------------------------------------------------------------------


def test_a_cwd_named_like_the_report_cannot_take_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cwd that flattened to report.json made the store's report unwritable and stopped the
    whole run; now the project directory gets a '_' in front, every other name is as before."""
    store = _store(
        tmp_path,
        {"id": "a", "cwd": "/report.json"},
        {"id": "b", "cwd": "/REPORT.JSON"},
        {"id": "c", "cwd": "/home/u/proj"},
        {"id": "d", "cwd": "/fingerprints.json"},
    )
    out = tmp_path / "out"
    assert _convert(capsys, store, "-o", out) == (0, "")
    store_dir = out / "scripted" / store_label(store)
    assert (store_dir / REPORT_NAME).is_file()
    report = json.loads((store_dir / REPORT_NAME).read_text())
    assert report["complete"] is True
    folders = {Path(f).parts[0] for f in report["files"].values()}
    assert folders == {"_report.json", "_REPORT.JSON", "home-u-proj", "_fingerprints.json"}
    for relative in report["files"].values():
        assert read_session(store_dir / relative).problems == []


def test_session_ids_that_slug_alike_or_are_too_long_keep_their_own_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long = "x" * 10_000
    store = _store(
        tmp_path, {"id": "a/b"}, {"id": "a_b"}, {"id": "a b"}, {"id": long}, {"id": ".."}
    )
    out = tmp_path / "out"
    assert _convert(capsys, store, "-o", out) == (0, "")
    files = sorted(p.name for p in out.rglob("*.jsonl"))
    assert len(files) == 5
    assert "2026-01-01T00-00-00.000Z_a_b.jsonl" in files  # a safe id keeps its name
    assert all(len(name.encode()) < 255 for name in files)


@pytest.mark.parametrize(
    ("header", "key"),
    [
        ({"cwd": "/p/\ud800x"}, "p-\ufffdx"),
        ({"cwd": "/" + "d/" * 300}, None),
        ({"cwd": "/."}, None),
        ({"cwd": "a\0b"}, "a_b"),
        ({"created_at": "0001-01-01T00:00:00+01:00"}, None),
    ],
)
def test_odd_cwds_and_dates_give_a_file_not_a_crash(
    header: dict[str, Any], key: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _store(tmp_path, {"id": "odd", **header})
    out = tmp_path / "out"
    assert _convert(capsys, store, "-o", out) == (0, "")
    (written,) = out.rglob("*.jsonl")
    if key is not None:
        assert written.parent.name == key
    assert project_key(header.get("cwd")) not in ("", ".", "..", REPORT_NAME, FINGERPRINTS_NAME)


def test_names_that_were_safe_are_unchanged() -> None:
    header = Header(id="20260917_120000_ab12cd", created_at="2026-09-17T12:00:00Z", cwd="/home/u/p")
    assert session_path(header) == Path(
        "home-u-p/2026-09-17T12-00-00.000Z_20260917_120000_ab12cd.jsonl"
    )


def test_a_creation_time_with_an_offset_names_the_file_in_utc() -> None:
    """Files sort by creation time across sessions written in different time zones."""
    header = Header(id="s1", created_at="2026-09-17T01:30:00.250+02:00", cwd="/home/u/p")
    assert session_path(header).name == "2026-09-16T23-30-00.250Z_s1.jsonl"


@pytest.mark.parametrize("name", [".hidden", "", " padded", "a/b", "a\\b", "nul\0", "x" * 201])
def test_session_names_that_are_no_safe_file_name_are_refused(name: str) -> None:
    assert session_file_name(name) is None


def test_session_names_that_are_safe_are_kept() -> None:
    assert session_file_name("agent-1") == "agent-1.jsonl"
    assert session_file_name("agent-1.jsonl") == "agent-1.jsonl"
    assert session_file_name(REPORT_NAME.removesuffix(".json")) == "report.jsonl"


# --- --report and -o ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
def test_report_is_never_written_over_what_is_not_a_regular_file(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = {"device": Path("/dev/null"), "fifo": tmp_path / "fifo", "directory": tmp_path / "d"}[
        kind
    ]
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()
    before = target.lstat()
    out = tmp_path / "out"
    code, err = _convert(capsys, _store(tmp_path), "-o", out, "--report", target)
    assert (code, err) == (2, f"asf: {target}: exists and is not a regular file\n")
    assert not out.exists()  # refused before anything was converted
    after = target.lstat()
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)


@pytest.mark.parametrize("how", ["same path", "symlink", "hard link", "named path"])
def test_report_is_never_written_over_an_input(
    how: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _store(tmp_path)
    original = store.read_bytes()
    target = {
        "same path": store,
        "symlink": tmp_path / "link",
        "hard link": tmp_path / "hard",
        "named path": tmp_path / "named.script",
    }[how]
    if how == "symlink":
        target.symlink_to(store)
    elif how == "hard link":
        target.hardlink_to(store)
    elif how == "named path":
        target.write_text("[]")
    argv: list[str | Path] = [store, target] if how == "named path" else [store]
    code, err = _convert(capsys, *argv, "-o", tmp_path / "out", "--report", target)
    assert code == 2
    # What is wrong (the file is read, under which name) and what to do, on one line.
    said = {
        "same path": "this run reads it",
        "symlink": f"is a link to {store}, which this run reads",
        "hard link": f"is a hard link to {store} (the same file), which this run reads",
        "named path": "this run reads it",
    }[how]
    assert err == f"asf: {target}: {said}: writing there would change it; name another path\n"
    assert store.read_bytes() == original


def test_a_report_its_folder_cannot_take_is_refused_before_converting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--report`` is written last: a folder that cannot take it (a file in its place, or
    one closed to the user) was found only then, after every store was converted; it is
    tried first, and refused with one line before anything is written."""
    (tmp_path / "taken").write_text("")
    out = tmp_path / "out"
    report = tmp_path / "taken" / "run.json"
    code, err = _convert(capsys, _store(tmp_path), "-o", out, "--report", report)
    assert (code, err) == (2, f"asf: {report}: Not a directory\n")
    assert not out.exists()
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o555)
    report = closed / "run.json"
    done = run_unprivileged(
        [*ASF, "convert", str(EXAMPLE), "-o", str(out), "--report", str(report)],
        {**os.environ, "ASF_PLUGINS": "hermes"},
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"asf: {report}: Permission denied\n"
    assert not out.exists()
    assert list(closed.iterdir()) == []


def test_an_output_folder_that_cannot_be_written_is_named_not_a_file_deep_in_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o`` in a folder closed to the user named the first session file asf tried deep
    inside it (``cannot write ro/hermes/<store>/default/<...>.jsonl``); it names the folder
    the user can change, before anything is converted or exported, and makes nothing."""
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o555)
    converted = tmp_path / "asf"
    assert _convert(capsys, _store(tmp_path, {"id": "one", "cwd": "/p"}), "-o", converted) == (
        0,
        "",
    )
    env = {**os.environ, "ASF_PLUGINS": "hermes"}
    deeper = closed / "new" / "deeper"
    for argv, said in [
        (["convert", str(EXAMPLE), "-o", str(closed)], ""),
        (["convert", str(EXAMPLE), "-o", str(deeper)], f"cannot create {deeper}: "),
        (["export", str(converted), "--to", "text", "-o", str(closed)], ""),
        (
            ["export", str(converted), "--to", "atif", "-o", str(deeper)],
            f"cannot create {deeper}: ",
        ),
    ]:
        done = run_unprivileged([*ASF, *argv], env)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert done.stderr == f"asf: {said}cannot write in {closed}: Permission denied\n"
        assert list(closed.iterdir()) == []


@pytest.mark.skipif(
    not Path("/proc/self").is_dir() or os.geteuid() != 0, reason="needs Linux's /proc, as root"
)
def test_an_output_folder_the_system_will_not_make_is_named_not_a_file_deep_in_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder the permissions allow but the file system will not make (root may write in
    ``/proc``, whose ``mkdir`` says no such file) was found only when the first session file
    deep inside it was written, and that file was named: the folder is named, for ``-o`` of
    convert and of export (to a folder or a file) and for ``--report``. (Another user finds
    ``/proc`` closed before anything is converted: the test above.)"""
    converted = tmp_path / "asf"
    assert _convert(capsys, _store(tmp_path, {"id": "one", "cwd": "/p"}), "-o", converted)[0] == 0
    (session,) = converted.rglob("*.jsonl")
    top = Path(f"/proc/asf-test-{os.getpid()}-missing")
    env = {**os.environ, "ASF_PLUGINS": "hermes"}
    for argv in [
        ["convert", str(EXAMPLE), "-o", str(top / "out")],
        ["export", str(converted), "--to", "markdown", "-o", str(top / "md")],
        ["export", str(session), "--to", "atif", "-o", str(top / "s.json")],
        ["convert", str(EXAMPLE), "-o", str(tmp_path / "o"), "--report", str(top / "r.json")],
    ]:
        done = subprocess.run([*ASF, *argv], env=env, capture_output=True, text=True, check=False)
        said = f"asf: cannot create {top}: No such file or directory\n"
        assert (done.returncode, done.stdout, done.stderr) == (2, "", said), argv


def test_folder_trouble_names_a_read_only_file_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert folder_trouble(tmp_path / "a" / "b") is None
    monkeypatch.setattr(os, "access", lambda *_: False)
    flags = os.statvfs_result((0,) * 8 + (os.ST_RDONLY, 0, 0))
    monkeypatch.setattr(os, "statvfs", lambda _: flags)
    assert folder_trouble(tmp_path / "a") == (
        f"cannot create {tmp_path / 'a'}: cannot write in {tmp_path}: Read-only file system"
    )
    (tmp_path / "f").write_text("")
    assert folder_trouble(tmp_path / "f" / "x") == (
        f"cannot create {tmp_path / 'f' / 'x'}: {tmp_path / 'f'} is not a directory"
    )


def test_a_run_that_fails_early_still_reports_why_in_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A PATH that does not exist or that no plugin recognises: the report is written (its
    folder is not left empty), saying why nothing was converted, as ``--json`` prints it;
    an earlier run's report in its place would say that run's story."""
    report = tmp_path / "reports" / "run.json"
    (tmp_path / "plain").mkdir()
    for path, why, expected in [
        (tmp_path / "missing", "no such file or directory", 2),
        (tmp_path / "plain", "no format plugin recognises it", 4),
    ]:
        code, err = _convert(capsys, path, "-o", tmp_path / "out", "--report", report)
        assert (code, err) == (expected, f"asf: {path}: {why}\n")
        written = json.loads(report.read_text())
        assert (written["stores"], written["errors"]) == ([], [f"{path}: {why}"])
        assert not (tmp_path / "out").exists()


def test_an_interrupt_while_picking_still_writes_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Picking sessions (listing every store) came before the part of the run an interrupt
    ends cleanly: Ctrl-C then left --report's folder, made to try it, empty, and no report
    though cli.md promises one for an interrupted run."""
    from asf_core.pipeline import picking

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(picking, "pick", interrupted)
    report = tmp_path / "reports" / "run.json"
    code = main(
        [
            "convert",
            str(_store(tmp_path)),
            "--session",
            "s0",
            "-o",
            str(tmp_path / "o"),
            "--report",
            str(report),
        ]
    )
    assert (code, capsys.readouterr().err) == (130, "asf: interrupted\n")
    assert json.loads(report.read_text())["interrupted"] is True


def test_a_report_that_cannot_be_written_leaves_no_folder_made_for_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from asf_core.pipeline import conversion

    def full(*_: object, **__: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(conversion, "write_report", full)
    report = tmp_path / "new" / "reports" / "run.json"
    code, err = _convert(capsys, tmp_path / "missing", "-o", tmp_path / "o", "--report", report)
    assert code == 2
    assert err.endswith(f"asf: cannot write {report}: No space left on device\n")
    assert list(tmp_path.iterdir()) == []


def test_report_through_a_link_goes_to_the_file_it_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "reports" / "run.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "run.json"
    link.symlink_to(real)
    assert _convert(capsys, _store(tmp_path), "-o", tmp_path / "out", "--report", link) == (0, "")
    assert link.is_symlink()
    assert json.loads(real.read_text())["stores"][0]["complete"] is True


def test_output_inside_a_folder_store_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "a.store"
    store.mkdir()
    (store / "sessions.json").write_text(json.dumps([{"id": "one"}]))
    for out in (store / "out", store):
        code, err = _convert(capsys, store, "-o", out)
        assert code == 2
        assert err.endswith(f"{store}, which is being converted\n")
    assert sorted(p.name for p in store.iterdir()) == ["sessions.json"]
    assert _convert(capsys, store, "-o", tmp_path / "out") == (0, "")


def test_a_session_file_is_never_written_over_what_is_not_a_regular_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _store(tmp_path, {"id": "one", "cwd": "/p"})
    out = tmp_path / "out"
    where = out / "scripted" / store_label(store) / "p" / "2026-01-01T00-00-00.000Z_one.jsonl"
    where.parent.mkdir(parents=True)
    os.mkfifo(where)
    code, err = _convert(capsys, store, "-o", out)
    assert (code, err) == (2, f"asf: cannot write {where}: exists and is not a regular file\n")
    assert where.is_fifo()


def test_write_atomic_refuses_targets_that_are_not_files(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    for target in (tmp_path / "d", Path("/dev/null")):
        with pytest.raises(OSError, match="exists and is not a regular file"):
            write_atomic(target, [b"x"])
    assert list(tmp_path.iterdir()) == [tmp_path / "d"]


def test_inputs_compare_by_resolved_path_and_by_inode(tmp_path: Path) -> None:
    store = tmp_path / "state.db"
    store.write_text("x")
    folder = tmp_path / "home"
    folder.mkdir()
    inputs = Inputs.of([store, folder])
    (tmp_path / "hard").hardlink_to(store)
    (tmp_path / "soft").symlink_to(store)
    for written in (store, tmp_path / "hard", tmp_path / "soft", folder / "x" / "y.json"):
        with pytest.raises(OutputError):
            inputs.check_write(written)
    inputs.check_write(tmp_path / "other.json")
    assert inputs.near(tmp_path)
    assert not inputs.near(tmp_path / "elsewhere")
