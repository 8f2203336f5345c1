"""Lossless: every ``messages`` and ``sessions`` row of every fixture is rebuilt from the output.

The rebuild follows ``docs/formats/hermes.md`` section 2: a row's ``columns``, plus each
``carried`` column from the entry that holds it, plus ``id``/``session_id`` from the identity
and the segment, plus ``role`` from the entry kinds. It must equal the row as stored (NULL
columns are absent).
"""

from __future__ import annotations

import base64
import json
import shutil
import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from fixture_paths import DATABASES, database_ids

from asf_core.formats import ConvertedSession
from asf_core.model import Entry
from asf_core.reader import parse_session
from asf_core.writer import entry_line, header_line
from hermes_plugin.convert.database import convert_store
from hermes_plugin.convert.parts import hermes_parts
from hermes_plugin.schema import CONTENT_PREFIX
from hermes_plugin.source.handle import HermesHandle


def _member(entry: Entry) -> dict[str, Any]:
    member = entry.unknown.get("hermes")
    return member if isinstance(member, dict) else {}


def _stored(carried: Any) -> str:
    """The cell an item's content or output was stored as."""
    if isinstance(carried, str):
        return carried
    parts = list(carried)
    if (
        len(parts) == 1
        and parts[0].get("type") in {"input_text", "output_text"}
        and set(parts[0]) <= {"type", "text", "annotations"}
    ):
        return str(parts[0]["text"])
    return CONTENT_PREFIX + json.dumps(hermes_parts(parts))


def _rebuild(entries: list[Entry], session_id: str) -> dict[str, Any]:
    principal = next(e for e in entries if "columns" in _member(e))
    member = _member(principal)
    row: dict[str, Any] = _decoded(member["columns"], member.get("encoded", {}))
    row["id"] = int(member["row"].rsplit("/", 1)[1])
    row["session_id"] = session_id
    found = [getattr(e, "item", None) or getattr(e, "summary", None) for e in entries]
    items: list[dict[str, Any]] = [i for i in found if isinstance(i, dict)]
    types = {e.type for e in entries}
    if "role" not in row:
        if "response" in types:
            row["role"] = "assistant"
        elif any(i["type"] == "function_call_output" for i in items):
            row["role"] = "tool"
        else:
            row["role"] = items[0]["role"]
    for name in member.get("carried", []):
        if name in {"content", "api_content"}:
            if row["role"] == "tool":
                row[name] = _stored(items[0]["output"])
            else:
                message = next(i for i in items if i["type"] == "message")
                row[name] = _stored(message["content"])
        elif name == "tool_calls":
            calls = [_member(e)["call"] for e in entries if "call" in _member(e)]
            row[name] = json.dumps(calls)
        elif name in {"codex_reasoning_items", "codex_message_items"}:
            kind = "reasoning" if name == "codex_reasoning_items" else "message"
            picked = [i for i in items if i["type"] == kind]
            chat = {"reasoning", "reasoning_content", "reasoning_details"}
            if kind == "reasoning" and chat & (set(member.get("carried", [])) | set(row)):
                picked = picked[1:]  # the first is the Chat Completions carriers' item
            row[name] = json.dumps(picked)
        elif name == "reasoning":
            row[name] = items[0]["summary"][0]["text"]
        elif name == "reasoning_content":
            row[name] = items[0]["content"][0]["text"]
        elif name == "reasoning_details":
            row[name] = json.dumps(items[0]["hermes:reasoning_details"])
    return row


def _decoded(columns: dict[str, Any], encoded: dict[str, str]) -> dict[str, Any]:
    """The columns with each ``encoded`` one back to its cell (section 2)."""
    out = dict(columns)
    for name, how in encoded.items():
        if how == "real":
            out[name] = float(out[name])
        else:
            data = base64.b64decode(out[name])
            out[name] = data if how == "blob" else _text_cell(data)
    return out


def _text_cell(data: bytes) -> Any:
    """A TEXT cell as this test reads it: the text, or its bytes tagged when not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return ("text", data)


def _value(cell: Any) -> Any:
    """A cell as a value: JSON text (and prefixed JSON content) parsed, since ASF keeps a
    carried JSON column as a JSON value whose member order its canonical form does not keep;
    any other cell as stored."""
    if isinstance(cell, str):
        text = cell[len(CONTENT_PREFIX) :] if cell.startswith(CONTENT_PREFIX) else cell
        if text[:1] in {"[", "{"}:
            try:
                return ("json", json.loads(text))
            except ValueError:
                return cell
    return cell


@pytest.mark.parametrize(("release", "database"), DATABASES, ids=database_ids())
def test_every_row_is_rebuilt(release: Path, database: str, tmp_path: Path) -> None:
    db = tmp_path / database
    db.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(release / database, db)
    handle = HermesHandle(db)
    by_row: dict[str, list[Entry]] = defaultdict(list)
    segment_of: dict[str, str] = {}
    sessions: dict[str, dict[str, Any]] = {}
    try:
        for item in convert_store(handle.store):
            if not isinstance(item, ConvertedSession):
                continue
            data = header_line(item.header) + b"".join(entry_line(e) for e in item.entries)
            segment = ""
            for entry in parse_session(data).entries:
                member = _member(entry)
                if "relation" in member:  # a segment's opening entry
                    segment = member["session"].rsplit("/", 1)[1]
                if "session_columns" in member:
                    sessions[member["session"]] = member
                if isinstance(member.get("row"), str) and "messages/" in member["row"]:
                    by_row[member["row"]].append(entry)
                    segment_of[member["row"]] = segment
    finally:
        handle.close()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    conn.text_factory = _text_cell
    try:
        rows = conn.execute("SELECT * FROM messages ORDER BY id").fetchall()
        session_rows = conn.execute("SELECT * FROM sessions").fetchall()
    finally:
        conn.close()
    assert rows
    for stored in rows:
        unit = f"{database}:messages/{stored['id']}"
        expected = {k: _value(v) for k, v in dict(stored).items() if v is not None}
        rebuilt = _rebuild(by_row[unit], segment_of[unit])
        assert {k: _value(v) for k, v in rebuilt.items()} == expected, unit
    for stored in session_rows:
        member = sessions[f"{database}:sessions/{stored['id']}"]
        expected = {k: v for k, v in dict(stored).items() if v is not None}
        rebuilt = _decoded(member["session_columns"], member.get("session_encoded", {}))
        rebuilt["id"] = stored["id"]
        for name in member.get("session_carried", []):
            rebuilt[name] = stored[name]  # held by the opening config: checked in the context test
        assert rebuilt == expected, stored["id"]
