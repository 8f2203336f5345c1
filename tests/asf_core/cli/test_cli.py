"""The ``asf`` command, called as ``main([...])``: exit codes, stdout, stderr, files written."""

from __future__ import annotations

import errno
import functools
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import types
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest
from fixture_paths import CODEX_HOME, ROOT, SHARED
from plugin_stubs import FakeDist, installed_only

from asf_core import DISTRIBUTION, hookimpl, writer
from asf_core.cli.main import ExitCode, main
from asf_core.formats import Claim, ConvertedSession, Finding, NativeSession, StoreError
from asf_core.layout import store_label
from asf_core.model import Header, Item
from asf_core.reader import FormatError, read_session
from asf_core.verify.session import verify_path
from asf_core.writer import SessionBuilder, write_session

SESSIONS = SHARED / "asf" / "vectors" / "testdata" / "sessions"


class ToyStore:
    def __init__(self, owner: str, path: Path) -> None:
        self.owner = owner
        self.path = path

    def info(self) -> dict[str, Any]:
        return {"owner": self.owner, "schema": 7}

    def close(self) -> None:
        pass


class Toy:
    """Claims ``*.toy`` files: each line ``id text`` is a session, a line without text a stray."""

    def __init__(self, fmt: str, confidence: float = 1.0, fail: str = "") -> None:
        self.fmt = fmt
        self.confidence = confidence
        self.fail = fail

    @hookimpl
    def discover(self, path: Path | None) -> list[Claim] | None:
        if path is None or path.suffix != ".toy":
            return None
        return [Claim(format=self.fmt, path=path, confidence=self.confidence)]

    @hookimpl
    def open_store(self, claim: Claim) -> ToyStore | None:
        return ToyStore(self.fmt, claim.path) if claim.format == self.fmt else None

    @hookimpl
    def read(self, store: ToyStore) -> Iterator[NativeSession | Finding] | None:
        return self._read(store) if store.owner == self.fmt else None

    def _read(self, store: ToyStore) -> Iterator[NativeSession | Finding]:
        for number, line in enumerate(store.path.read_text().splitlines(), 1):
            if self.fail == "read":
                raise RuntimeError(f"cannot parse line {number}")
            ident, _, text = line.partition(" ")
            if not text:
                yield Finding(kind="stray", message="no text", unit=f"line {number}")
            else:
                yield NativeSession(
                    id=ident,
                    title=text,
                    started="2026-01-01T00:00:00Z",
                    counts={"lines": 1},
                    native=text,
                )

    @hookimpl
    def convert(
        self, store: ToyStore, sessions: Iterable[NativeSession]
    ) -> Iterator[ConvertedSession | Finding] | None:
        return self._convert(sessions) if store.owner == self.fmt else None

    def _convert(self, sessions: Iterable[NativeSession]) -> Iterator[ConvertedSession | Finding]:
        for n, native in enumerate(sessions):
            if self.fail == "convert" and n == 1:
                raise KeyError("boom")
            if self.fail == "interrupt" and n == 1:
                raise KeyboardInterrupt
            # "same-id": every session under one id, as a plugin with a bug in its ids would.
            ident = self.fmt if self.fail == "same-id" else f"{self.fmt}-{native.id}"
            builder = SessionBuilder(Header(id=ident, created_at="2026-01-01T00:00:00Z"))
            item = {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": str(native.native)}],
            }
            builder.append(Item(ts="2026-01-01T00:00:01Z", item=item))
            yield ConvertedSession(
                header=builder.header, entries=builder.entries, name=native.id, counts={"items": 1}
            )


class Installed:
    """The plugins the command sees in a test: fake distributions only."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch
        self.dists: list[FakeDist] = []
        installed_only(monkeypatch, self.dists)

    def add(self, name: str, plugin: object) -> None:
        module = types.ModuleType(f"asf_cli_fake_{name}")
        module.PLUGIN = plugin  # type: ignore[attr-defined]
        self.monkeypatch.setitem(sys.modules, module.__name__, module)
        self.dists.append(FakeDist(f"asf-{name}", {name: f"{module.__name__}:PLUGIN"}))

    def add_example(self) -> None:
        """The example plugin from its source tree, as if its distribution were installed."""
        self.monkeypatch.syspath_prepend(str(ROOT / "examples" / "asf-format-example"))
        self.dists.append(FakeDist("asf-format-example", {"chatlog": "asf_format_example.plugin"}))


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Installed:
    return Installed(monkeypatch)


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    src = ROOT / "examples" / "asf-format-example" / "samples" / "sample.chat.jsonl"
    dst = tmp_path / "logs" / "sample.chat.jsonl"
    dst.parent.mkdir()
    shutil.copyfile(src, dst)
    return dst


def _toy(tmp_path: Path, name: str = "a.toy", text: str = "s1 hello\nbad\ns2 world\n") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


# --- convert -----------------------------------------------------------------------------


def _written(store_dir: Path) -> list[str]:
    """The session files under a store's output directory, relative to it."""
    return [p.relative_to(store_dir).as_posix() for p in store_dir.rglob("*.jsonl")]


def _file(store_dir: Path, name: str) -> Path:
    """The file the store's report says session ``name`` was written to."""
    report = json.loads((store_dir / "report.json").read_text())
    return store_dir / report["files"][name]


def test_convert_writes_the_documented_layout_and_report(
    installed: Installed, sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed.add_example()
    out = tmp_path / "out"

    code, stdout, stderr = _run(capsys, "convert", sample, "-o", out)

    assert (code, stderr) == (ExitCode.OK, "")  # strays are reported, not failures
    store_dir = out / "chatlog" / store_label(sample)
    report = json.loads((store_dir / "report.json").read_text())
    # The reference store layout: <project key>/<created at>_<session id>.jsonl
    assert sorted(report["files"]) == ["math.jsonl", "trip.jsonl"]
    assert sorted(_written(store_dir)) == sorted(report["files"].values())
    for rel in report["files"].values():
        project, name = rel.split("/")
        header = read_session(store_dir / rel).header
        assert name.endswith(f"_{header.id}.jsonl")
        assert project == "default"  # the example's headers carry no cwd
    assert report["complete"] is True
    assert report["store"] == {"file": "sample.chat.jsonl", "bytes": sample.stat().st_size}
    assert (report["sessions_read"], report["sessions_written"], report["files_written"]) == (
        2,
        2,
        2,
    )
    assert [s["unit"] for s in report["strays"]] == ["sample.chat.jsonl:8", "sample.chat.jsonl:9"]
    assert [d["unit"] for d in report["dropped"]] == ["sample.chat.jsonl:4"]
    assert report["counts"] == {"lines": 7, "entries": report["entries_written"]}
    entries = sum(
        len(read_session(_file(store_dir, n)).entries) for n in ("math.jsonl", "trip.jsonl")
    )
    assert report["entries_written"] == entries
    assert (
        f"2 ASF sessions (2 written, 0 unchanged), {entries} entries; 2 strays, 1 dropped" in stdout
    )
    assert [f for f in verify_path(out) if f.severity == "error"] == []


def test_convert_rerun_rewrites_only_sessions_that_grew(
    installed: Installed, sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed.add_example()
    out = tmp_path / "out"
    assert _run(capsys, "convert", sample, "-o", out, "--quiet")[0] == ExitCode.OK
    store_dir = out / "chatlog" / store_label(sample)
    before = {n: _file(store_dir, n).stat().st_ino for n in ("math.jsonl", "trip.jsonl")}

    code, stdout, _ = _run(capsys, "convert", sample, "-o", out, "--json")
    assert code == ExitCode.OK
    totals = json.loads(stdout)["totals"]
    assert (totals["files_written"], totals["files_unchanged"]) == (0, 2)
    assert {n: _file(store_dir, n).stat().st_ino for n in ("math.jsonl", "trip.jsonl")} == before

    with sample.open("a") as f:
        f.write(
            '{"session": "math", "role": "user", "content": "And 17 * 24?", "ts": 1790845300}\n'
        )
    code, stdout, _ = _run(capsys, "convert", sample, "-o", out, "--json")
    store = json.loads(stdout)["stores"][0]
    assert (store["files_written"], store["files_unchanged"]) == (1, 1)
    assert _file(store_dir, "trip.jsonl").stat().st_ino == before["trip.jsonl"]
    assert _file(store_dir, "math.jsonl").stat().st_ino != before["math.jsonl"]
    assert "And 17 * 24?" in _file(store_dir, "math.jsonl").read_text()


def test_convert_json_and_report_file(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed.add("toy", Toy("toy"))
    log = _toy(tmp_path)
    code, stdout, _ = _run(
        capsys, "convert", log, "-o", tmp_path / "o", "--json", "--report", tmp_path / "r.json"
    )
    assert code == ExitCode.OK
    run = json.loads(stdout)
    assert run == json.loads((tmp_path / "r.json").read_text())
    (store,) = run["stores"]
    assert (store["format"], store["store"], store["counts"]) == (
        "toy",
        {"owner": "toy", "schema": 7},
        {"items": 2},
    )
    assert store["strays"] == [{"kind": "stray", "message": "no text", "unit": "line 2"}]
    assert run["totals"]["strays"] == 1


def test_plugin_crash_names_plugin_and_spares_other_stores(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed.add("good", Toy("good"))
    installed.add("bad", Toy("bad", fail="convert"))
    (tmp_path / "in").mkdir()
    good_log, bad_log = _toy(tmp_path / "in", "g.toy"), _toy(tmp_path / "in", "b.toy")
    out = tmp_path / "out"

    code, _, stderr = _run(
        capsys, "convert", good_log, bad_log, "-o", out, "--format", "good", "--quiet"
    )
    assert code == ExitCode.OK  # --format good: the bad plugin never runs

    code, stdout, stderr = _run(capsys, "convert", bad_log, "-o", out, "--format", "bad")
    assert code == ExitCode.PLUGIN
    assert stderr.strip().splitlines() == [
        f"asf: {bad_log}: plugin 'bad' failed in convert: KeyError: 'boom'"
    ]
    bad_dir = out / "bad" / store_label(bad_log)
    report = json.loads((bad_dir / "report.json").read_text())
    assert (report["complete"], report["sessions_written"]) == (False, 1)
    assert "plugin 'bad' failed in convert" in report["error"]
    assert "1 store stopped early" in stdout
    assert _file(out / "good" / store_label(good_log), "s2").is_file()


def test_two_formats_claiming_one_file_need_format(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed.add("alpha", Toy("alpha", 0.8))
    installed.add("beta", Toy("beta", 0.8))
    log = _toy(tmp_path)
    code, stdout, stderr = _run(capsys, "convert", log, "-o", tmp_path / "o")
    assert (code, stdout) == (ExitCode.USAGE, "")
    assert stderr == (
        f"asf: {log}: claimed with equal confidence by alpha (0.8), beta (0.8); "
        "choose one with --format\n"
    )
    code, _, _ = _run(capsys, "convert", log, "-o", tmp_path / "o", "--format", "beta")
    assert code == ExitCode.OK
    assert _file(tmp_path / "o" / "beta" / store_label(log), "s1").is_file()
    assert not (tmp_path / "o" / "alpha").exists()


def test_convert_unknown_inputs(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed.add("toy", Toy("toy"))
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    assert _run(capsys, "convert", text, "-o", tmp_path / "o") == (
        ExitCode.NOTHING,
        "",
        f"asf: {text}: no format plugin recognises it\n",
    )
    assert (
        _run(capsys, "convert", tmp_path / "missing.toy", "-o", tmp_path / "o")[0] == ExitCode.USAGE
    )
    code, _, stderr = _run(
        capsys, "convert", _toy(tmp_path), "--format", "nope", "-o", tmp_path / "o"
    )
    assert code == ExitCode.USAGE
    assert "unknown format 'nope' (installed: toy" in stderr
    assert _run(capsys, "convert", "-o", tmp_path / "o")[:2] == (ExitCode.NOTHING, "")
    assert not (tmp_path / "o").exists()


def test_ctrl_c_leaves_whole_files_and_exits_130(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed.add("toy", Toy("toy", fail="interrupt"))
    log = _toy(tmp_path)
    out = tmp_path / "o"
    code, stdout, stderr = _run(capsys, "convert", log, "-o", out)
    assert (code, stdout, stderr) == (ExitCode.INTERRUPTED, "", "asf: interrupted\n")
    store_dir = out / "toy" / store_label(log)
    files = sorted(p.name for p in store_dir.rglob("*") if p.is_file())
    assert files == sorted(["report.json", _file(store_dir, "s1").name])  # no temp files
    assert read_session(_file(store_dir, "s1")).problems == []
    report = json.loads((store_dir / "report.json").read_text())
    assert (report["complete"], report["error"]) == (False, "interrupted")


def test_progress_only_on_a_terminal(
    installed: Installed,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    installed.add("toy", Toy("toy"))
    log = _toy(tmp_path)
    assert _run(capsys, "convert", log, "-o", tmp_path / "o")[2] == ""  # not a TTY: silent
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert "\r" in _run(capsys, "convert", log, "-o", tmp_path / "o")[2]
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert _run(capsys, "convert", log, "-o", tmp_path / "o", "--json")[2] == ""
    assert _run(capsys, "convert", log, "-o", tmp_path / "o", "--quiet") == (ExitCode.OK, "", "")


# --- list and plugins --------------------------------------------------------------------


def test_list_shows_native_sessions(
    installed: Installed, sample: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    installed.add_example()
    code, stdout, stderr = _run(capsys, "list", sample.parent)
    assert code == ExitCode.OK
    lines = stdout.splitlines()
    assert lines[0].split() == ["ID", "STARTED", "AGE", "ROWS", "RELATION", "TITLE"]
    assert [line.split()[0] for line in lines[1:]] == ["trip", "math"]
    assert "2 stray" in stderr
    code, stdout, _ = _run(capsys, "list", sample, "--json")
    (store,) = json.loads(stdout)["stores"]
    assert [s["id"] for s in store["sessions"]] == ["trip", "math"]
    assert store["sessions"][0]["counts"] == {"lines": 5, "assistant": 2, "system": 1, "user": 2}
    assert not (tmp_path / "asf-out").exists()


class Streaming(Toy):
    """A toy whose sessions say where they ran, and whose entries come from a generator."""

    def __init__(self, fmt: str, fail_after: int | None = None) -> None:
        super().__init__(fmt)
        self.fail_after = fail_after
        self.pulled = 0

    def _read(self, store: ToyStore) -> Iterator[NativeSession | Finding]:
        for session in super()._read(store):
            if isinstance(session, NativeSession):
                yield attrs.evolve(
                    session, cwd=f"/work/{session.id}", details={"branch": "main", "v": "2"}
                )

    def _entries(self, native: NativeSession) -> Iterator[Item]:
        parent: str | None = None
        for n in range(5):
            if self.fail_after is not None and n == self.fail_after:
                raise StoreError("source changed while being converted")
            self.pulled += 1
            item = {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": f"{native.native} {n}"}],
            }
            sealed = writer.seal(Item(ts="2026-01-01T00:00:01Z", item=item), parent=parent)
            parent = sealed.id
            yield sealed

    def _convert(self, sessions: Iterable[NativeSession]) -> Iterator[ConvertedSession | Finding]:
        for native in sessions:
            header = Header(id=f"{self.fmt}-{native.id}", created_at="2026-01-01T00:00:00Z")
            yield ConvertedSession(header=header, entries=self._entries(native), name=native.id)


def test_list_shows_cwd_and_details(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed.add("toy", Streaming("toy"))
    log = _toy(tmp_path)
    code, stdout, _ = _run(capsys, "list", log, "--cwd", "/work/s1")
    assert code == ExitCode.OK
    _, first = stdout.splitlines()  # the terminal line leaves them to --json
    assert first.split()[0] == "s1"
    assert first.split()[-1] == "hello"
    code, stdout, _ = _run(capsys, "list", log, "--json")
    (store,) = json.loads(stdout)["stores"]
    assert store["sessions"][0]["cwd"] == "/work/s1"
    assert store["sessions"][0]["details"] == {"branch": "main", "v": "2"}


def test_convert_streams_entries_from_a_generator(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ConvertedSession.entries`` may be a one-pass iterable: consumed once, in order; a
    re-run with the same bytes leaves the file alone."""
    plugin = Streaming("toy")
    installed.add("toy", plugin)
    log = _toy(tmp_path)
    out = tmp_path / "o"
    code, stdout, _ = _run(capsys, "convert", log, "-o", out, "--json")
    assert code == ExitCode.OK
    (store,) = json.loads(stdout)["stores"]
    assert store["entries_written"] == 10
    assert plugin.pulled == 10
    assert verify_path(out) == []
    path = _file(out / "toy" / store_label(log), "s1")
    assert len(read_session(path).entries) == 5
    before = path.stat()
    code, stdout, _ = _run(capsys, "convert", log, "-o", out, "--json")
    (store,) = json.loads(stdout)["stores"]
    assert (store["files_unchanged"], store["entries_written"]) == (2, 10)
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_convert_source_damage_found_while_streaming(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The plugin finds damage while the host writes a session: the store stops with the
    input's exit code, no half file is left, and the file of an earlier run survives."""
    installed.add("toy", Streaming("toy"))
    log = _toy(tmp_path)
    out = tmp_path / "o"
    assert _run(capsys, "convert", log, "-o", out)[0] == ExitCode.OK
    path = _file(out / "toy" / store_label(log), "s1")
    before = path.read_bytes()
    installed.dists.clear()
    installed.add("toy", Streaming("toy", fail_after=3))
    code, _, stderr = _run(capsys, "convert", log, "-o", out)
    assert code == ExitCode.USAGE
    assert "source changed while being converted" in stderr
    assert path.read_bytes() == before
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]


def test_plugins_lists_ok_and_broken(
    installed: Installed, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    installed.add("toy", Toy("toy"))
    installed.dists.append(FakeDist("asf-gone", {"gone": "asf_no_such_module_for_tests"}))
    code, stdout, stderr = _run(capsys, "plugins", "--json")
    assert code == ExitCode.PLUGIN
    rows = {r["name"]: r for r in json.loads(stdout)}
    assert rows["toy"] == {
        "name": "toy",
        "distribution": "asf-toy",
        "version": "1.0",
        "hooks": ["convert", "discover", "open_store", "read"],
        "status": "ok",
        "error": None,
    }
    assert rows["gone"]["status"] == "broken"
    assert "ModuleNotFoundError" in rows["gone"]["error"]
    assert "(distribution asf-gone) not loaded" in stderr
    code, stdout, _ = _run(capsys, "plugins")
    assert stdout.splitlines()[0].split() == ["NAME", "DISTRIBUTION", "VERSION", "STATUS", "HOOKS"]
    assert "broken: ModuleNotFoundError" in stdout
    # With the broken one gone, every plugin loads: exit 0.
    installed.dists.pop()
    code, stdout, _ = _run(capsys, "plugins", "--json")
    assert code == ExitCode.OK
    assert {r["status"] for r in json.loads(stdout)} == {"ok"}


# --- show and verify ---------------------------------------------------------------------


def test_show_prints_every_entry_and_marks_forks_and_leaves(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = SESSIONS / "branch.jsonl"
    session = read_session(path)
    code, stdout, _ = _run(capsys, "show", path)
    assert code == ExitCode.OK
    lines = stdout.splitlines()
    rows = lines[1 : 1 + len(session.entries)]
    assert [r.split()[0] for r in rows] == [
        e.id.removeprefix("sha256:")[:8] for e in session.entries if e.id
    ]
    forks = [e for e in session.entries if len(session.children.get(e.id, [])) > 1]
    assert [r for r in rows if "[fork:" in r] == [
        r for r in rows if r.split()[0] in {f.id[7:15] for f in forks if f.id}
    ]
    assert sum("leaf" in r.split("[")[-1] for r in rows if "[" in r) == len(session.leaves())
    resume = session.resume_leaf()
    assert resume is not None
    assert next(r for r in rows if "resume]" in r).startswith(resume[7:15])
    assert f"context at {resume[7:15]}" in stdout


def test_show_names_what_a_config_entry_holds_never_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A Codex CLI 0.77 rollout opens with a config entry holding only the plugin's own
    ``codex`` member (its session_meta line), and an extension's entry type is known to no
    summary: each tree line named them as nothing, a blank after the type; each names the
    members it holds, as a custom entry names its namespace, and no line ends in blanks."""
    (rollout,) = (CODEX_HOME / ".codex").rglob("rollout-*019b64e5*.jsonl")
    code, stdout, _ = _run(capsys, "show", rollout)
    assert code == ExitCode.OK
    first = stdout.splitlines()[1]
    assert first.split()[3:] == ["config", "codex"]
    assert [line for line in stdout.splitlines() if line != line.rstrip()] == []
    # An extension's entry type (``agentturn:note``) names the members it holds too.
    code, stdout, _ = _run(capsys, "show", SESSIONS / "extensions.jsonl")
    assert code == ExitCode.OK
    (note,) = [line for line in stdout.splitlines() if " agentturn:note " in line]
    assert note.split("agentturn:note", 1)[1].split() == ["legacy_id", "nested", "order", "text"]
    assert [line for line in stdout.splitlines() if line != line.rstrip()] == []


def test_show_json_and_leaf_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    path = SESSIONS / "branch.jsonl"
    session = read_session(path)
    other = next(leaf for leaf in session.leaves() if leaf != session.resume_leaf())
    code, stdout, _ = _run(capsys, "show", path, "--json", "--leaf", other[7:19])
    assert code == ExitCode.OK
    shown = json.loads(stdout)
    assert shown["leaf"] == other
    assert shown["header"]["id"] == session.header.id
    assert [e["id"] for e in shown["entries"]] == [e.id for e in session.entries]
    context = shown["context"]
    assert context["entries"][-1] == other
    assert len(context["items"]) == len(context["item_entries"])
    assert set(context) >= {"settings", "items", "entries", "item_entries", "omitted"}


def test_show_expected_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(bytes(range(256)) * 4)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.txt").write_text("not asf")
    cases = [
        (("show", tmp_path / "missing.jsonl"), "no such file"),
        (("show", garbage), "not an ASF session file"),
        (("show", SESSIONS / "basic.jsonl", "--leaf", "zzzz"), "no entry id starts with 'zzzz'"),
        (("show", SESSIONS / "basic.jsonl", "--leaf", "sha256:"), "is ambiguous"),
    ]
    for argv, message in cases:
        code, stdout, stderr = _run(capsys, *argv)
        assert (code, stdout) == (ExitCode.USAGE, ""), argv
        assert len(stderr.splitlines()) == 1, argv
        assert message in stderr, argv
    # A directory is a store to pick a session from: here no plugin knows it.
    code, stdout, stderr = _run(capsys, "show", notes)
    assert (code, stdout) == (ExitCode.NOTHING, "")
    assert stderr == f"asf: {notes}: no format plugin recognises it\n"


def test_verify_exit_codes(
    installed: Installed, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, stdout, _ = _run(capsys, "verify", SESSIONS / "basic.jsonl")
    assert (code, stdout.splitlines()[-1]) == (ExitCode.OK, f"{SESSIONS / 'basic.jsonl'}: ok")
    code, stdout, _ = _run(capsys, "verify", SESSIONS / "bad-parent.jsonl", "--json")
    result = json.loads(stdout)
    assert (code, result["ok"]) == (ExitCode.PROBLEMS, False)
    assert any(f["severity"] == "error" for f in result["findings"])
    good = tmp_path / "good"
    good.mkdir()
    for name in ("basic.jsonl", "branch.jsonl"):
        shutil.copyfile(SESSIONS / name, good / name)
    code, stdout, _ = _run(capsys, "verify", good)
    assert (code, stdout.splitlines()[-1]) == (ExitCode.OK, f"{good}: ok (2 files)")
    assert json.loads(_run(capsys, "verify", good, "--json")[1])["files"] == 2
    garbage = tmp_path / "g.jsonl"
    garbage.write_bytes(b"\x00\xff" * 100)
    assert _run(capsys, "verify", garbage)[0] == ExitCode.USAGE
    assert _run(capsys, "verify", tmp_path / "missing")[0] == ExitCode.USAGE
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "a.txt").write_text("x")
    assert _run(capsys, "verify", empty)[:2] == (ExitCode.NOTHING, "")
    # In a DIR an unreadable file is one finding among the others (exit 1, docs/cli.md),
    # each finding named by its file and line.
    shutil.copyfile(garbage, good / "g.jsonl")
    shutil.copyfile(SESSIONS / "bad-parent.jsonl", good / "bad-parent.jsonl")
    code, stdout, _ = _run(capsys, "verify", good)
    assert code == ExitCode.PROBLEMS
    lines = stdout.splitlines()
    assert any(line.startswith(f"{good / 'g.jsonl'}: error: unreadable: ") for line in lines)
    found = [line for line in lines if line.startswith(f"{good / 'bad-parent.jsonl'}:")]
    assert found
    assert all(re.match(rf"{re.escape(str(good / 'bad-parent.jsonl'))}:\d+: ", f) for f in found)


def test_verify_warnings_alone_exit_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    warned = [
        p
        for p in sorted(SESSIONS.glob("*.jsonl"))
        if (fs := verify_path(p)) and all(f.severity != "error" for f in fs)
    ]
    if not warned:
        pytest.skip("no vector session has warnings only")
    code, stdout, _ = _run(capsys, "verify", warned[0])
    assert code == ExitCode.OK
    assert "warning" in stdout


# --- process-level behaviour -------------------------------------------------------------


class _ClosedPipe:
    def write(self, text: str) -> int:
        raise BrokenPipeError

    def flush(self) -> None:
        raise BrokenPipeError


def test_broken_pipe_is_quiet(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["show", str(SESSIONS / "basic.jsonl")]) == ExitCode.BROKEN_PIPE
    assert capsys.readouterr().err == ""


class _FullDisk:
    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("argv", [["show"], ["verify"], ["verify", "--json"], ["--version"]])
def test_a_full_disk_under_stdout_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """``asf list --json > file`` on a full disk (or past ``ulimit -f``): one line and exit 2,
    as for any output that cannot be written, never a traceback."""
    monkeypatch.setattr(sys, "stdout", _FullDisk())
    files = [] if argv == ["--version"] else [str(SESSIONS / "basic.jsonl")]
    assert main([*argv, *files]) == ExitCode.USAGE
    assert capsys.readouterr().err == "asf: cannot write: No space left on device\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_the_installed_script_on_a_full_disk_says_one_line() -> None:
    """The real process: nothing more at exit either (no "Exception ignored" as the
    interpreter flushes what stdout could not take)."""
    script = _asf_script()
    if script is None:
        pytest.skip("the asf console script is not installed (pip install -e .)")
    with Path("/dev/full").open("w") as full:
        done = subprocess.run(
            [script, "verify", str(SESSIONS / "basic.jsonl")],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert (done.returncode, done.stderr) == (
        ExitCode.USAGE,
        "asf: cannot write: No space left on device\n",
    )


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, stderr = _run(capsys, "frobnicate")
    assert (code, stdout) == (ExitCode.USAGE, "")
    assert "invalid choice" in stderr
    code, stdout, stderr = _run(capsys, "convert", "-o", "")  # "$UNSET": not the current dir
    assert (code, stdout) == (ExitCode.USAGE, "")
    assert "an empty path" in stderr
    assert _run(capsys, "--help")[0] == ExitCode.OK


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["list", ""], "PATH"),
        (["convert", "", "-o", "out"], "PATH"),
        (["show", ""], "PATH"),
        (["verify", ""], "FILE|DIR|-"),
        (["export", "", "--to", "atif"], "FILE|DIR"),
        (["export", "basic.jsonl", "--to", "markdown", "-o", ""], "-o/--output"),
        (["export", ".", "--to", "text", "-o", ""], "-o/--output"),
        (["convert", "home", "-o", "out", "--report", ""], "--report"),
        (["list", "home", "--cwd", ""], "--cwd"),
    ],
)
def test_an_empty_path_is_a_usage_error_never_the_current_directory(
    argv: list[str],
    names: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``"$UNSET"`` as any path: ``Path("")`` is ``.``, so ``asf verify ""`` verified and
    ``asf export f --to markdown -o ""`` wrote into whatever the current directory held, and
    ``--cwd ""`` picked every session; each is refused, as ``convert -o ""`` was, and
    nothing is read or written."""
    shutil.copy(SESSIONS / "basic.jsonl", tmp_path / "basic.jsonl")
    shutil.copytree(ROOT / "examples" / "hermes-home", tmp_path / "home")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    monkeypatch.chdir(tmp_path)
    code, stdout, stderr = _run(capsys, *argv)
    assert (code, stdout) == (ExitCode.USAGE, "")
    assert stderr.endswith(
        f"error: argument {names}: an empty path (for the current directory, say '.')\n"
    )
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_version_is_the_installed_one_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    from asf_core import DISTRIBUTION, FORMAT

    expected = f"asf {importlib.metadata.version(DISTRIBUTION)} ({FORMAT})\n"
    assert _run(capsys, "--version") == (ExitCode.OK, expected, "")
    assert _run(capsys, "--version", "convert") == (ExitCode.OK, expected, "")


def test_version_loads_no_command() -> None:
    """``asf --version`` answers without loading the subcommands (and what they import)."""
    probe = (
        "import sys\n"
        "from asf_core.cli.main import main\n"
        "code = main(['--version'])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('asf_core.cli.') and"
        " m.rsplit('.', 1)[1] in ('convert', 'list', 'listing', 'show', 'verify', 'export'))\n"
        "print(code, loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "0 []"


_LEAVING = """\
import atexit, sys, threading, time
from asf_core.cli.main import _leave

class Finalized:
    def __del__(self) -> None:
        sys.stderr.write("teardown")

kept = Finalized()  # freed by the interpreter's teardown, if it runs
sys.stdout.write("out")  # still in the buffer
if sys.argv[1] == "callback":
    atexit.register(lambda: print(" callback"))
if sys.argv[1] == "thread":
    threading.Thread(target=lambda: (time.sleep(0.3), print(" thread"))).start()
_leave(5)
"""


@pytest.mark.parametrize(
    ("waiting", "stdout", "stderr"),
    [
        ("nothing", "out", ""),
        ("callback", "out callback\n", "teardown"),
        ("thread", "out thread\n", "teardown"),
    ],
)
def test_the_script_skips_the_teardown_only_when_nothing_waits_for_the_exit(
    waiting: str, stdout: str, stderr: str
) -> None:
    """``console`` ends the process once its streams are flushed, without the interpreter's
    teardown (a tenth of a run that finds nothing to do), but never before an exit callback
    or another thread has run: then the usual exit, teardown and all."""
    done = subprocess.run(
        [sys.executable, "-c", _LEAVING, waiting], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (5, stdout, stderr)


def _asf_script() -> str | None:
    beside = Path(sys.executable).parent / "asf"
    return str(beside) if beside.is_file() else shutil.which("asf")


def test_installed_asf_script(tmp_path: Path) -> None:
    """The console script as a user runs it: real entry points, real process, a real pipe."""
    script = _asf_script()
    if script is None:
        pytest.skip("the asf console script is not installed (pip install -e .)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASF_")}
    listed = subprocess.run(
        [script, "plugins", "--json"], capture_output=True, text=True, env=env, check=False
    )
    assert listed.returncode in (ExitCode.OK, ExitCode.PLUGIN), listed.stderr
    names = {row["name"]: row for row in json.loads(listed.stdout)}
    assert names["hermes"]["distribution"] == DISTRIBUTION
    big = tmp_path / "big.jsonl"  # enough output to overflow any pipe buffer
    builder = SessionBuilder(Header(id="big", created_at="2026-01-01T00:00:00Z"))
    for n in range(2000):
        item = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": f"m{n}"}],
        }
        builder.append(Item(ts="2026-01-01T00:00:01Z", item=item))
    write_session(big, builder.header, builder.entries)
    show = subprocess.Popen(
        [script, "show", str(big)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert show.stdout is not None
    assert show.stderr is not None
    first = show.stdout.readline()
    show.stdout.close()  # like `asf show big.jsonl | head -n 1`: the reader goes away
    assert show.wait(timeout=60) == ExitCode.BROKEN_PIPE
    assert first.startswith(b"session big ")
    assert show.stderr.read() == b""  # no traceback, no "Exception ignored" at exit
    show.stderr.close()
    missing = subprocess.run(
        [script, "show", str(tmp_path / "nope.jsonl")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert (missing.returncode, missing.stdout) == (ExitCode.USAGE, "")
    assert missing.stderr == f"asf: {tmp_path / 'nope.jsonl'}: no such file\n"


def test_unsafe_or_repeated_session_names_are_plugin_errors(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed.add("toy", Toy("toy"))
    out = tmp_path / "o"
    evil = _toy(tmp_path, "evil.toy", "ok fine\n../evil hello\n")
    code, _, stderr = _run(capsys, "convert", evil, "-o", out, "--quiet")
    assert code == ExitCode.PLUGIN
    assert "plugin 'toy' failed in convert: session name '../evil' is not a file name" in stderr
    assert len([p for p in out.rglob("*.jsonl") if p.is_file()]) == 1  # "ok" only
    twice = _toy(tmp_path, "twice.toy", "s hello\ns again\n")
    code, _, stderr = _run(capsys, "convert", twice, "-o", out, "--quiet")
    assert code == ExitCode.PLUGIN
    assert "two sessions are named 's.jsonl'" in stderr


def test_two_sessions_under_one_id_are_a_plugin_error(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Files are named by id as well as name: a second session of one id would take the place
    of the first (or two files would claim one session)."""
    installed.add("toy", Toy("toy", fail="same-id"))
    out = tmp_path / "o"
    store = _toy(tmp_path, "ids.toy", "a hello\nb again\n")
    code, _, stderr = _run(capsys, "convert", store, "-o", out, "--quiet")
    assert code == ExitCode.PLUGIN
    assert "plugin 'toy' failed in convert: two sessions have the id 'toy'" in stderr
    # Refused before it was written: the one file is the first session's, not replaced.
    (written,) = [p for p in out.rglob("*.jsonl") if p.is_file()]
    assert b"hello" in written.read_bytes()
    assert b"again" not in written.read_bytes()


def test_a_store_named_twice_is_converted_once(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed.add("toy", Toy("toy"))
    log = _toy(tmp_path)
    code, stdout, _ = _run(
        capsys, "convert", log, tmp_path / "." / log.name, "-o", tmp_path / "o", "--json"
    )
    assert code == ExitCode.OK
    assert len(json.loads(stdout)["stores"]) == 1


@pytest.mark.parametrize(
    "path", sorted(SESSIONS.rglob("*.jsonl")), ids=lambda p: str(p.relative_to(SESSIONS))
)
def test_show_handles_every_vector_file(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        session = read_session(path)
    except FormatError:  # not readable as ASF: show must say so in one line
        code, stdout, stderr = _run(capsys, "show", path)
        assert (code, stdout, len(stderr.splitlines())) == (ExitCode.USAGE, "", 1)
        return
    code, stdout, stderr = _run(capsys, "show", path)
    assert code == ExitCode.OK
    assert len(stderr.splitlines()) == len(session.problems)
    assert len(stdout.splitlines()) > len(session.entries)
    code, stdout, _ = _run(capsys, "show", path, "--json")
    assert code == ExitCode.OK
    assert len(json.loads(stdout)["entries"]) == len(session.entries)


def test_list_reports_a_failing_plugin_and_goes_on(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed.add("good", Toy("good"))
    installed.add("bad", Toy("bad", 0.5, fail="read"))
    good = _toy(tmp_path, "g.toy")
    code, stdout, stderr = _run(capsys, "list", good, "--format", "bad", "--json")
    assert code == ExitCode.PLUGIN
    assert json.loads(stdout)["stores"] == []
    assert (
        stderr == f"asf: {good}: plugin 'bad' failed in read: RuntimeError: cannot parse line 1\n"
    )
    code, stdout, _ = _run(capsys, "list", good)  # good wins on confidence
    assert code == ExitCode.OK
    assert [line.split()[0] for line in stdout.splitlines()[1:]] == ["s1", "s2"]


class Fragile(Toy):
    """A toy whose stores may be damaged: a file starting ``DAMAGED`` cannot be opened, a line
    ``CUT`` cannot be read; a line ``BOOM`` is a bug in the plugin."""

    @hookimpl
    def open_store(self, claim: Claim) -> ToyStore | None:
        if claim.path.read_text().startswith("DAMAGED"):
            raise StoreError("truncated: 7 of 4096 bytes")
        return ToyStore(self.fmt, claim.path)

    def _read(self, store: ToyStore) -> Iterator[NativeSession | Finding]:
        for line in store.path.read_text().splitlines():
            if line == "CUT":
                raise StoreError("page 2 cannot be read")
            if line == "BOOM":
                raise RuntimeError("boom")
            ident, _, text = line.partition(" ")
            yield NativeSession(id=ident, title=text, native=text)


def test_a_damaged_store_is_one_line_and_exit_2_and_the_others_convert(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed.add("toy", Fragile("toy"))
    good = _toy(tmp_path, "good.toy", "s1 hello\n")
    damaged = _toy(tmp_path, "damaged.toy", "DAMAGED")
    cut = _toy(tmp_path, "cut.toy", "s1 hello\nCUT\ns2 world\n")
    out = tmp_path / "o"
    code, _, stderr = _run(capsys, "convert", damaged, good, cut, "-o", out, "--quiet")
    assert code == ExitCode.USAGE
    assert stderr.splitlines() == [
        f"asf: {cut}: page 2 cannot be read",
        f"asf: {damaged}: truncated: 7 of 4096 bytes",
    ]
    reports = {
        Path(r["path"]).name: r
        for r in (json.loads(p.read_text()) for p in out.rglob("report.json"))
    }
    assert reports["good.toy"]["complete"] is True
    assert reports["good.toy"]["sessions_written"] == 1
    assert (reports["damaged.toy"]["complete"], reports["damaged.toy"]["error"]) == (
        False,
        "truncated: 7 of 4096 bytes",
    )
    assert reports["cut.toy"]["error"] == "page 2 cannot be read"

    code, stdout, stderr = _run(capsys, "list", damaged, good, "--json")
    assert code == ExitCode.USAGE
    listed = json.loads(stdout)
    assert [Path(s["path"]).name for s in listed["stores"]] == ["good.toy"]
    assert listed["errors"] == [f"{damaged}: truncated: 7 of 4096 bytes"]
    assert stderr == f"asf: {damaged}: truncated: 7 of 4096 bytes\n"


def test_a_plugin_failure_outranks_a_damaged_store(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    installed.add("toy", Fragile("toy"))
    damaged = _toy(tmp_path, "damaged.toy", "DAMAGED")
    buggy = _toy(tmp_path, "buggy.toy", "BOOM\n")
    for command in (["list"], ["convert", "-o", tmp_path / "o", "--quiet"]):
        code, _, stderr = _run(capsys, *command, damaged, buggy)
        assert code == ExitCode.PLUGIN
        assert stderr.splitlines() == [
            f"asf: {buggy}: plugin 'toy' failed in read: RuntimeError: boom",
            f"asf: {damaged}: truncated: 7 of 4096 bytes",
        ]


def test_a_path_that_cannot_be_searched_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PermissionError from looking at a PATH is a message, not a traceback (root reads
    everything, so the refusal is simulated)."""
    closed = tmp_path / "closed"
    closed.mkdir()

    def refuse(path: Path, *args: Any, **kwargs: Any) -> os.stat_result:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(Path, "stat", refuse)
    code, _, stderr = _run(capsys, "list", closed / "state.db")
    assert (code, stderr) == (ExitCode.USAGE, f"asf: {closed / 'state.db'}: permission denied\n")


@pytest.mark.parametrize(
    ("member", "value", "code"),
    [("parent", {}, ExitCode.OK), ("ts", "\udcff", ExitCode.USAGE)],
    ids=["parent-an-object", "ts-a-lone-surrogate"],
)
def test_show_redact_on_a_damaged_file_is_a_line_not_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, member: str, value: Any, code: int
) -> None:
    """A damaged entry ``show`` shows as it is: redacted, it is kept as it is when it can be
    sealed again, else the file cannot be redacted (one line, nothing shown)."""
    lines = (SESSIONS / "basic.jsonl").read_text().splitlines()
    entry = json.loads(lines[2])
    entry[member] = value
    lines[2] = json.dumps(entry)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("\n".join(lines) + "\n")
    assert _run(capsys, "show", damaged)[0] == ExitCode.OK
    shown, stdout, stderr = _run(capsys, "show", damaged, "--redact")
    assert shown == code
    if code == ExitCode.USAGE:
        assert stdout == ""
        assert stderr == f"asf: {damaged}: cannot redact: entry cannot be normalised to I-JSON\n"


def test_show_exits_with_the_plugin_failure_that_hid_the_session(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A session not found because its plugin failed reading the store is the plugin's
    failure (exit 3, the most severe), not "nothing to show" (4), as with ``convert``."""
    installed.add("bad", Toy("bad", fail="read"))
    log = _toy(tmp_path, "g.toy")
    for command in (["show"], ["convert", "-o", tmp_path / "o", "--quiet"]):
        code, _, stderr = _run(capsys, *command, log, "--session", "s1")
        assert code == ExitCode.PLUGIN, command
        assert stderr.splitlines() == [
            f"asf: {log}: plugin 'bad' failed in read: RuntimeError: cannot parse line 1",
            "asf: no session id starts with 's1'",
        ]


class BadEntries(Toy):
    """A toy whose sessions' entries go wrong part way: ``how`` is what comes after the first
    good entry (a None, a dict, or an exception from the generator)."""

    def __init__(self, how: str) -> None:
        super().__init__("toy")
        self.how = how

    def _convert(self, sessions: Iterable[NativeSession]) -> Iterator[ConvertedSession | Finding]:
        for native in sessions:
            builder = SessionBuilder(
                Header(id=f"toy-{native.id}", created_at="2026-01-01T00:00:00Z")
            )
            for n in range(2):
                item = {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": str(n)}],
                }
                builder.append(Item(ts="2026-01-01T00:00:01Z", item=item))
            yield ConvertedSession(
                header=builder.header, entries=self._entries(builder.entries), name=native.id
            )

    def _entries(self, good: list[Any]) -> Iterable[Any]:
        if self.how.startswith("list-"):  # a list: checked before anything is written
            return [good[0], None if self.how == "list-none" else {"type": "item"}, good[1]]
        return self._lazily(good)

    def _lazily(self, good: list[Any]) -> Iterator[Any]:
        yield good[0]
        if self.how == "raise":
            raise ValueError("entry 2 is cursed")
        yield None if self.how == "none" else {"type": "item"}
        yield good[1]


@pytest.mark.parametrize(
    ("how", "why"),
    [
        ("raise", "ValueError: entry 2 is cursed"),
        ("none", "gave NoneType as an entry"),
        ("dict", "gave dict as an entry"),
        ("list-none", "gave NoneType as an entry"),
        ("list-dict", "gave dict as an entry"),
    ],
)
@pytest.mark.parametrize(
    "command", [["convert"], ["convert", "--redact"], ["show", "--session", "s1"]]
)
def test_entries_that_go_wrong_are_the_plugins_failure_in_every_command(
    installed: Installed,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    how: str,
    why: str,
    command: list[str],
) -> None:
    """Whoever pulls a session's entries (the writer, the redactor, ``asf show``), an entry
    that fails or is not an entry stops the store as the plugin's failure: never a traceback,
    never a file cut short at a None, never a dict written as an entry."""
    installed.add("toy", BadEntries(how))
    log = _toy(tmp_path, "g.toy", "s1 hello\n")
    out = tmp_path / "o"
    argv = [command[0], log, *command[1:]]
    if command[0] == "convert":
        argv += ["-o", out, "--quiet"]
    code, _, stderr = _run(capsys, *argv)
    assert code == ExitCode.PLUGIN
    assert stderr == f"asf: {log}: plugin 'toy' failed in convert (session s1): {why}\n"
    assert list(out.rglob("*.jsonl")) == []


class OddFindings(Toy):
    """A toy whose read, session or convert hands over a finding or counts that the report
    (JSON, read back by the next run) cannot hold: ``where`` says which, ``what`` what."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__("toy")
        self.where, self.what = where, what

    def _odd(self) -> Finding:
        data: dict[str, Any] = {
            "datetime": {"at": datetime.now(UTC)},
            "nan": {"ratio": float("nan")},
            "deep": {"x": functools.reduce(lambda inner, _: [inner], range(80), [])},
        }.get(self.what, {})
        if self.what == "line":
            return Finding(kind="stray", message="odd", line=True)  # type: ignore[arg-type]
        if self.what == "huge line":  # JSON refuses to write an int of over 4300 digits
            return Finding(kind="stray", message="odd", line=10**5000)
        return Finding(kind="stray", message="odd", data=data)

    def _read(self, store: ToyStore) -> Iterator[NativeSession | Finding]:
        for item in super()._read(store):
            if self.where == "read" and isinstance(item, NativeSession):
                item = attrs.evolve(item, findings=[self._odd()])
            if self.where == "read counts" and isinstance(item, NativeSession):
                item = attrs.evolve(item, counts={"lines": "1"})
            if self.where == "read big counts" and isinstance(item, NativeSession):
                item = attrs.evolve(item, counts={"lines": 1 << 63})
            yield item

    def _convert(self, sessions: Iterable[NativeSession]) -> Iterator[ConvertedSession | Finding]:
        for item in super()._convert(sessions):
            if self.where == "convert":
                yield self._odd()
            elif self.where == "session" and isinstance(item, ConvertedSession):
                item = attrs.evolve(item, findings=[self._odd()])
            elif self.where == "session counts" and isinstance(item, ConvertedSession):
                item = attrs.evolve(item, counts={"items": 1.5})
            elif self.where == "session huge counts" and isinstance(item, ConvertedSession):
                # two sessions' sum has 4301 digits: the report could not be written
                item = attrs.evolve(item, counts={"items": 9 * 10**4299})
            yield item


@pytest.mark.parametrize(
    ("where", "what", "why"),
    [
        ("convert", "datetime", "gave a finding whose data is not JSON: Object of type datetime"),
        ("convert", "nan", "gave a finding whose data is not JSON: Out of range float values"),
        ("convert", "deep", "gave a finding whose data nests deeper than 64"),
        ("convert", "line", "gave a finding whose line is bool"),
        ("session", "datetime", "gave a finding whose data is not JSON: Object of type datetime"),
        ("read", "nan", "gave a finding whose data is not JSON: Out of range float values"),
        ("convert", "huge line", "gave a finding whose line is out of range"),
        ("read counts", "", "gave counts that are not 64-bit whole numbers by name"),
        ("read big counts", "", "gave counts that are not 64-bit whole numbers by name"),
        ("session counts", "", "gave counts that are not 64-bit whole numbers by name"),
        ("session huge counts", "", "gave counts that are not 64-bit whole numbers by name"),
    ],
)
def test_findings_and_counts_the_report_cannot_hold_are_the_plugins_failure(
    installed: Installed,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    where: str,
    what: str,
    why: str,
) -> None:
    """The report is written when the store is done and read back by the next run: a
    finding or figure it cannot hold was a traceback at the end (after the whole store
    converted), or a damaged record every next run. It is the plugin's failure, said as the
    finding arrives."""
    installed.add("toy", OddFindings(where, what))
    log = _toy(tmp_path)
    code, _, stderr = _run(capsys, "convert", log, "-o", tmp_path / "o", "--quiet")
    assert code == ExitCode.PLUGIN
    hook = "read" if where.startswith("read") else "convert"
    assert stderr.startswith(f"asf: {log}: plugin 'toy' failed in {hook}: {why}"), stderr
    report = json.loads(next((tmp_path / "o").rglob("report.json")).read_text())
    assert report["complete"] is False


class OddInfoStore(ToyStore):
    def info(self) -> dict[str, Any]:
        return {"opened": object(), "ratio": float("nan")}


class OddInfo(Toy):
    """A toy whose store's ``info()`` holds what JSON cannot."""

    @hookimpl
    def open_store(self, claim: Claim) -> ToyStore | None:
        return OddInfoStore(self.fmt, claim.path)


@pytest.mark.parametrize(
    "command", [["convert", "--quiet"], ["list", "--json"], ["convert", "--json"]]
)
def test_store_info_json_cannot_hold_is_the_plugins_failure(
    installed: Installed, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """``info()`` goes into the report, written when the store is done: a value JSON cannot
    hold was a traceback then. It is the plugin's failure, said when ``info()`` answers."""
    installed.add("toy", OddInfo("toy"))
    log = _toy(tmp_path)
    argv = [command[0], log, *command[1:]]
    if command[0] == "convert":
        argv += ["-o", tmp_path / "o"]
    code, _, stderr = _run(capsys, *argv)
    assert code == ExitCode.PLUGIN
    assert stderr.startswith(
        f"asf: {log}: plugin 'toy' failed in info: returned what JSON cannot hold: "
    )


def test_the_summary_counts_one_session_as_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A project of one Claude Code session: "1 native session read, 1 ASF session"."""
    project = (
        SHARED / "claude-code/home/.claude/projects/-tmp-agent-history-real-agent-claude-workspace"
    )
    code, stdout, err = _run(capsys, "convert", project, "-o", tmp_path / "out")
    assert code == ExitCode.OK, err
    assert "Converted 1 store into " in stdout
    assert ": 1 native session read, 1 ASF session (1 written, 0 unchanged), " in stdout


def test_show_and_export_take_a_leaf_by_the_id_an_old_draft_wrote(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A pre-0.5 file's entries get new ids as it is read; ``--leaf`` takes the ids written
    in it too (as a prefix when unique), for ``show`` and ``export`` alike."""
    path = SESSIONS / "v0.4" / "branch.jsonl"
    session = read_session(path)
    other = session.legacy["r0000002"]  # the leaf of the abandoned branch
    assert other in session.leaves()
    assert other != session.resume_leaf()
    for wanted in ("r0000002", other[7:19]):
        code, stdout, _ = _run(capsys, "show", path, "--json", "--leaf", wanted)
        assert code == ExitCode.OK
        assert json.loads(stdout)["leaf"] == other
    code, _, stderr = _run(capsys, "show", path, "--leaf", "r00")
    assert code == ExitCode.USAGE
    assert "'r00' is ambiguous: 3 entry ids start with it" in stderr
    by_legacy, by_id = tmp_path / "legacy.md", tmp_path / "id.md"
    assert (
        _run(capsys, "export", path, "--to", "markdown", "--leaf", "r000000", "-o", by_legacy)[0]
        == ExitCode.USAGE
    )
    for wanted, out in (("r0000002", by_legacy), (other, by_id)):
        code, _, _ = _run(capsys, "export", path, "--to", "markdown", "--leaf", wanted, "-o", out)
        assert code == ExitCode.OK
    assert by_legacy.read_bytes() == by_id.read_bytes()
    assert "follow-up A" in by_legacy.read_text()
