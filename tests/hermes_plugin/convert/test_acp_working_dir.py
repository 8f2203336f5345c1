"""An editor (ACP) session's working directory, as Hermes' ACP adapter records it: not in the
``cwd`` column, which Hermes fills for local CLI sessions only, but in ``model_config`` (first
``{"cwd": ...}``, then the adapter's metadata with the provider), where the adapter reads it
back to list and resume the session. The file's header names it, and ``--cwd`` picks the
session by it; a session with a ``cwd`` column keeps that one (docs/formats/hermes.md, section
1 and "Picking sessions")."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from asf_core.cli.main import main
from asf_core.reader import read_session


def _write(home: Path) -> None:
    """As Hermes 0.19.0's ACP adapter and CLI write them, through its SessionDB."""
    import hermes_state

    db = hermes_state.SessionDB(db_path=home / "state.db")
    try:
        db.create_session("acp-1", "acp", model="m-1", model_config={"cwd": "/work/app"})
        db.append_message("acp-1", "user", "list the files")
        db.append_message("acp-1", "assistant", "Two files.", finish_reason="stop")
        meta = {"cwd": "/work/app2", "provider": "openrouter", "api_mode": "chat_completions"}
        db.update_session_meta("acp-1", json.dumps(meta), "m-2")
        db.create_session("cli-1", "cli", model="m-1", model_config={"cwd": "/elsewhere"})
        db.update_session_cwd("cli-1", "/work/cli")
        db.append_message("cli-1", "user", "hello")
        db.create_session("tg-1", "telegram", model="m-1")
        db.append_message("tg-1", "user", "hi")
    finally:
        db.close()


def _headers(out: Path) -> dict[str, str | None]:
    found = {}
    for path in out.rglob("*.jsonl"):
        session = read_session(path)
        native = session.header.unknown["hermes"]["session"].rsplit("/", 1)[1]
        found[native] = session.header.cwd
    return found


def test_an_acp_sessions_directory_is_its_model_config_cwd(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _write(home)
    assert main(["convert", str(home), "-o", str(tmp_path / "all"), "--quiet"]) == 0
    assert _headers(tmp_path / "all") == {
        "acp-1": "/work/app2",  # the adapter's last metadata
        "cli-1": "/work/cli",  # the column wins
        "tg-1": None,
    }
    assert main(["verify", str(tmp_path / "all")]) == 0
    picked = tmp_path / "picked"
    assert main(["convert", str(home), "-o", str(picked), "--quiet", "--cwd", "/work/app2"]) == 0
    assert _headers(picked) == {"acp-1": "/work/app2"}


def test_an_empty_cwd_names_no_directory(tmp_path: Path) -> None:
    """An empty ``cwd`` column is no directory (the ``model_config`` one is the session's),
    and neither is an empty ``cwd`` in ``model_config``."""
    import hermes_state

    home = tmp_path / "home"
    home.mkdir()
    db = hermes_state.SessionDB(db_path=home / "state.db")
    try:
        db.create_session("acp-1", "acp", model="m-1", model_config={"cwd": "/work/app"})
        db.append_message("acp-1", "user", "list the files")
        db.create_session("acp-2", "acp", model="m-1", model_config={"cwd": ""})
        db.append_message("acp-2", "user", "hello")
    finally:
        db.close()
    with sqlite3.connect(home / "state.db") as con:  # Hermes' own setter skips an empty one
        con.execute("UPDATE sessions SET cwd = '' WHERE id = 'acp-1'")
    con.close()
    assert main(["convert", str(home), "-o", str(tmp_path / "all"), "--quiet"]) == 0
    assert _headers(tmp_path / "all") == {"acp-1": "/work/app", "acp-2": None}


def test_a_conversation_kept_as_stored_names_its_directory_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ACP conversation that could not be converted (its rows kept as stored, the header
    ``kept``) is still headed with its directory, as the converted one is."""
    from hermes_plugin.convert import database as convert_database

    realize = convert_database._Run._realize

    def failing(self: Any, frame: Any, builder: Any) -> Any:
        if frame.root == "acp-1":
            raise ValueError
        return realize(self, frame, builder)

    monkeypatch.setattr(convert_database._Run, "_realize", failing)
    home = tmp_path / "home"
    home.mkdir()
    _write(home)
    assert main(["convert", str(home), "-o", str(tmp_path / "all"), "--quiet"]) == 0
    headers = [read_session(p).header for p in (tmp_path / "all").rglob("*.jsonl")]
    (kept,) = [h for h in headers if h.unknown["hermes"]["session"].endswith("/acp-1")]
    assert kept.unknown["hermes"]["kept"] is True
    assert kept.cwd == "/work/app2"
