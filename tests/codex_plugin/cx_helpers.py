"""What the Codex tests share: the shared rollouts, converting them, reading lines back."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen
from fixture_paths import CODEX_HOME
from output_files import written_sessions

from asf_core.cli.main import main
from asf_core.context import context_at
from asf_core.model import Compaction, Config, Custom, Entry, Item, Response
from asf_core.reader import SessionFile, read_session

SESSIONS = CODEX_HOME / ".codex" / "sessions"
NS = "codex"
JSON = dict[str, Any]


@frozen
class Converted:
    """The shared home converted: where, the sources' digests before, the exit code."""

    out: Path
    before: dict[str, str]
    code: int


def shared_files() -> list[Path]:
    """The shared rollouts (X1 to X6, in path order: X1 is the 2025 one)."""
    return sorted(SESSIONS.rglob("rollout-*.jsonl")) if SESSIONS.is_dir() else []


def need_shared() -> None:
    if not SESSIONS.is_dir():
        pytest.skip(f"shared Codex rollouts not found at {SESSIONS} (set ASF_SHARED)")


def by_tag(tag: str) -> Path:
    """A shared rollout by the notes' tag, ``X1`` ... ``X6``."""
    marks = {"X1": "019b64e5", "X2": "019c8a4c", "X3": "019c8a4d", "X4": "019c8a59"}
    marks |= {"X5": "019c8a70", "X6": "019c8bfe"}
    (found,) = [p for p in shared_files() if marks[tag] in p.name]
    return found


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def convert(paths: list[Path], out: Path, *extra: str) -> int:
    return main(["convert", *map(str, paths), "-o", str(out), "--quiet", *extra])


def reports_in(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(out.rglob("report.json"))]


def sessions_in(out: Path) -> dict[str, SessionFile]:
    """Every converted session under ``out``, by the name its store's report gives it (the
    thread id)."""
    return {name: read_session(path) for name, path in written_sessions(out).items()}


def by_file(out: Path) -> dict[str, SessionFile]:
    """Every converted session under ``out`` by its rollout's file name."""
    return {Path(s.header.unknown[NS]["file"]).name: s for s in sessions_in(out).values()}


def context_items(session: SessionFile) -> list[JSON]:
    """The ASF context at the session's resume leaf."""
    leaf = session.resume_leaf()
    assert leaf is not None
    ctx = context_at(session, leaf)
    assert ctx.problems == []
    return ctx.items


def write_rollout(path: Path, lines: list[JSON | bytes]) -> Path:
    """``lines`` (objects, or raw bytes written as they are) as a rollout file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join(
        (line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines
    )
    path.write_bytes(data)
    return path


# --- rebuilding lines (docs/formats/codex.md §6) ---------------------------------------------


def _own(entry: Entry) -> JSON:
    member = entry.unknown.get(NS)
    return member if isinstance(member, dict) else {}


def rebuilt_lines(session: SessionFile) -> dict[int, Any]:
    """Each source line rebuilt from the entries made from it: the JSON object, or the raw
    bytes of a line that could not be read."""
    out: dict[int, Any] = {}
    for entry in session.entries:
        own = _own(entry)
        if "derived" in own or "line" not in own:
            continue
        number = own["line"]
        if isinstance(entry, Custom):
            data = entry.data
            if "object" in data:
                out[number] = data["object"]
            elif "text" in data:
                out[number] = data["text"].encode()
            else:
                out[number] = base64.b64decode(data["base64"])
        elif isinstance(entry, Compaction):
            payload = out[number]["payload"]
            payload["replacement_history"] = [entry.summary, *(entry.pinned or ())]
        elif isinstance(entry, Config | Response):
            obj = own["object"]
            if own.get("moved") == "payload.base_instructions.text":
                assert isinstance(entry, Config)
                obj["payload"]["base_instructions"]["text"] = entry.instructions
            out[number] = obj
        elif isinstance(entry, Item):
            item = entry.item or {}
            if "call_id" in own:  # a repeated call id, renamed
                item = {**item, "call_id": own["call_id"]}
            if own.get("form") == "bare":
                out[number] = item
                continue
            line = {"type": "response_item", "payload": item, **own.get("fields", {})}
            if not own.get("untimed") and "timestamp" not in line:
                line["timestamp"] = entry.ts
            out[number] = line
        else:
            raise AssertionError(f"an entry of a line no rule rebuilds: {entry.type}")
    return out


def source_lines(path: Path) -> dict[int, Any]:
    """Each non-blank line of ``path``: its object, or its bytes when it is not one."""
    out: dict[int, Any] = {}
    for number, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            value = None
        out[number] = value if isinstance(value, dict) else raw
    return out
