"""What the Claude Code tests share: the shared files, converting them, finding entries."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from attrs import frozen
from fixture_paths import CLAUDE_HOME
from output_files import written_sessions

from asf_core.cli.main import main
from asf_core.reader import SessionFile, read_session
from asf_core.verify.session import verify_path

if TYPE_CHECKING:
    from cc_synth import Lines

PROJECTS = CLAUDE_HOME / ".claude" / "projects"
NS = "claude-code"


@frozen
class Converted:
    """The shared home converted: where, the file made from each source, the sources'
    digests before, the exit code."""

    out: Path
    files: dict[str, Path]
    before: dict[str, str]
    code: int


def shared_files() -> list[Path]:
    """Every shared transcript, session files and sub-agent files."""
    return sorted(PROJECTS.rglob("*.jsonl"))


def file_id(path: Path) -> str:
    """A shared file's test id: its path under ``projects`` (file names repeat across
    sessions: every compaction helper is ``agent-acompact-*.jsonl``)."""
    return path.relative_to(PROJECTS).as_posix()


def session_files() -> list[Path]:
    """The shared session files (not sub-agent transcripts)."""
    return sorted(p for p in PROJECTS.glob("*/*.jsonl"))


def tree_digest(root: Path) -> dict[str, str]:
    """SHA-256 of every file under ``root``, by relative path (to prove it untouched)."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """``asf`` with ``argv``: exit code, stdout, stderr (never a traceback)."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def watch_reads(monkeypatch: pytest.MonkeyPatch, seen: Callable[[Path], object]) -> None:
    """Tell ``seen`` of each transcript a run reads in this process (its first pass, which
    ``read`` and the conversion make: ``-j 1`` runs them all here)."""
    import claude_code_plugin.convert.store as cc_store
    import claude_code_plugin.native as cc_native

    index_file = cc_native.index_file

    def counted(path: Path) -> Any:
        seen(path)
        return index_file(path)

    monkeypatch.setattr(cc_native, "index_file", counted)
    monkeypatch.setattr(cc_store, "index_file", counted)


def last_uuid(path: Path) -> str | None:
    """The ``uuid`` of a transcript's last line that has one (what a new line hangs from)."""
    for raw in reversed(path.read_bytes().split(b"\n")):
        try:
            uid = json.loads(raw).get("uuid")
        except (ValueError, AttributeError):
            continue
        if uid:
            return str(uid)
    return None


def convert(paths: list[Path], out: Path, *extra: str) -> int:
    return main(["convert", *map(str, paths), "-o", str(out), "--quiet", *extra])


def outputs(out: Path) -> dict[str, Path]:
    """Converted file by source unit (the project-relative path of the transcript)."""
    found: dict[str, Path] = {}
    for report_path in sorted(out.rglob("report.json")):
        report = json.loads(report_path.read_text())
        for name, rel in report["files"].items():
            path = report_path.parent / rel
            header = json.loads(path.read_text().splitlines()[0])
            found[f"{report['store']['project']}/{header[NS]['file']}"] = path
            assert name  # every session is named
    return found


def source_key(path: Path) -> str:
    """A shared transcript's key in :func:`outputs`: ``<project>/<path in the project>``."""
    rel = path.relative_to(PROJECTS)
    return rel.as_posix()


def converted(tmp_path: Path, lines: Lines, project: str = "-home-u-proj") -> SessionFile:
    """``lines`` written as a transcript in a projects folder and converted: the output
    verifies (nothing above info); the session they make."""
    lines.write(tmp_path / "projects" / project)
    out = tmp_path / "out"
    assert convert([tmp_path / "projects"], out) == 0
    assert [f for f in verify_path(out) if f.severity != "info"] == []
    return sessions_in(out)[lines.session]


def line_entries(session: SessionFile, number: int) -> list[Any]:
    """The entries made from source line ``number`` (derived entries excluded)."""
    return [
        e
        for e in session.entries
        if e.unknown.get(NS, {}).get("line") == number and "derived" not in e.unknown.get(NS, {})
    ]


def load(path: Path) -> SessionFile:
    return read_session(path)


def sessions_in(out: Path) -> dict[str, SessionFile]:
    """Every converted session under ``out``, by the name its store's report gives it."""
    return {name: read_session(path) for name, path in written_sessions(out).items()}


def reports_in(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(out.rglob("report.json"))]


def context_texts(session: SessionFile, leaf: str | None = None) -> list[str]:
    """The context at ``leaf`` (default: the resume leaf), one short string per item."""
    from asf_core.context import context_at

    at = leaf or session.resume_leaf()
    assert at is not None
    out = []
    for item in context_at(session, at).items:
        kind = item["type"]
        if kind == "message":
            part = item["content"][0]
            out.append(f"{item['role']}:{part.get('text', part['type'])}")
        elif kind == "function_call":
            out.append(f"call:{item['call_id']}")
        elif kind == "function_call_output":
            out.append(f"out:{item['call_id']}")
        else:
            out.append(kind)
    return out


def read_project(project: Path) -> tuple[Any, Any, Any, list[Any]]:
    """A project opened as a run opens it, its sessions read and not yet converted: the
    plugin manager, the Claude Code candidate, its store and the native sessions (for tests
    that change the files between the passes)."""
    from asf_core import plugins
    from asf_core.formats import NativeSession
    from asf_core.pipeline import host

    pm = plugins.make_plugin_manager()
    (candidate,) = [c for c in host.discover(pm, project).candidates if c.plugin == "claude-code"]
    store = host.open_store(pm, candidate)
    natives = [s for s in host.read(pm, candidate.plugin, store) if isinstance(s, NativeSession)]
    return pm, candidate, store, natives
