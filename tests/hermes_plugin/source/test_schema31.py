"""A schema-31 database (SCHEMA-NOTES §2), with a column no Hermes has, reads fully.

No released wheel writes schema 31, so the database is built here from the
documented columns, in the order an upgraded database has them (newer
columns appended by Hermes' reconciler).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from hermes_columns import JSON_COLUMNS, to_json

from hermes_plugin.source.database import SqliteStore
from hermes_plugin.source.listing import list_sessions
from hermes_plugin.source.relations import Relation, classify_all
from hermes_plugin.source.store import session_prompt

SESSIONS = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
    system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL,
    end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, title TEXT,
    cwd TEXT, rewind_count INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0,
    git_branch TEXT, git_repo_root TEXT, session_key TEXT, chat_id TEXT, chat_type TEXT,
    thread_id TEXT, display_name TEXT, origin_json TEXT, expiry_finalized INTEGER DEFAULT 0,
    compression_fallback_streak INTEGER NOT NULL DEFAULT 0, profile_name TEXT,
    system_prompt_hash TEXT REFERENCES system_prompts(hash),
    git_metadata_generation INTEGER NOT NULL DEFAULT 0, title_source TEXT,
    last_activity_at REAL, last_activity_description TEXT, last_activity_provenance TEXT,
    pinned INTEGER NOT NULL DEFAULT 0, hidden INTEGER NOT NULL DEFAULT 0, last_read_at REAL,
    tool_names TEXT, transport_profile TEXT, created_source TEXT,
    compression_overload_streak INTEGER NOT NULL DEFAULT 0,
    auto_archived INTEGER NOT NULL DEFAULT 0,
    quantum_flux TEXT
)"""

MESSAGES = """
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
    reasoning_details TEXT, codex_reasoning_items TEXT, reasoning_content TEXT,
    codex_message_items TEXT, platform_message_id TEXT, observed INTEGER DEFAULT 0,
    active INTEGER, compacted INTEGER NOT NULL DEFAULT 0, effect_disposition TEXT,
    api_content TEXT, _compressed_summary INTEGER NOT NULL DEFAULT 0, display_kind TEXT,
    display_metadata TEXT, display_identity BLOB, display_order INTEGER, message_uid TEXT,
    absorbed_message_uids TEXT, tool_call_uids TEXT, tool_call_uid TEXT,
    sparkle_level INTEGER,
    sparkle_double INTEGER GENERATED ALWAYS AS (sparkle_level * 2) VIRTUAL
)"""

OTHERS = [
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    "INSERT INTO schema_version VALUES (31)",
    "CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL)",
    """CREATE TABLE session_model_usage (
        session_id TEXT NOT NULL, model TEXT NOT NULL DEFAULT '', billing_provider TEXT NOT NULL
        DEFAULT '', billing_base_url TEXT NOT NULL DEFAULT '', billing_mode TEXT NOT NULL DEFAULT
        '', task TEXT NOT NULL DEFAULT '', api_call_count INTEGER NOT NULL DEFAULT 0,
        input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
        estimated_cost_usd REAL NOT NULL DEFAULT 0, first_seen REAL, last_seen REAL,
        PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode, task))""",
    """CREATE TABLE async_delegations (
        delegation_id TEXT PRIMARY KEY, origin_session TEXT NOT NULL,
        origin_ui_session_id TEXT NOT NULL DEFAULT '', parent_session_id TEXT, state TEXT NOT NULL,
        dispatched_at REAL, completed_at REAL, updated_at REAL, event_json TEXT, result_json TEXT,
        task_json TEXT, delivery_state TEXT NOT NULL DEFAULT 'pending',
        origin_session_id TEXT NOT NULL DEFAULT '')""",
]

PROMPT = "You are Hermes (schema 31)."
PROMPT_HASH = hashlib.sha256(PROMPT.encode()).hexdigest()
T0 = 1_790_000_000.0
UID = "0123456789abcdef0123456789abcdef"


def _insert(conn: sqlite3.Connection, table: str, row: dict[str, object]) -> None:
    names = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    conn.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", tuple(row.values()))


@pytest.fixture
def db31(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    for sql in (SESSIONS, MESSAGES, *OTHERS):
        conn.execute(sql)
    _insert(conn, "system_prompts", {"hash": PROMPT_HASH, "prompt": PROMPT})
    _insert(
        conn,
        "sessions",
        {
            "id": "s31-root",
            "source": "tui",
            "model": "m",
            "model_config": json.dumps({"max_iterations": 90}),
            "system_prompt": None,
            "system_prompt_hash": PROMPT_HASH,
            "started_at": T0,
            "ended_at": T0 + 60,
            "end_reason": "session_reset",
            "session_key": "agent:main:telegram:dm:7",
            "title": "Thirty-one",
            "title_source": "llm",
            "tool_names": PROMPT_HASH,
            "auto_archived": 0,
            "quantum_flux": "entangled",
        },
    )
    _insert(
        conn,
        "sessions",
        {
            "id": "s31-reset",
            "source": "telegram",
            "model_config": json.dumps({"_reset_from": "s31-root"}),
            "system_prompt": "inline prompt",
            "system_prompt_hash": "f" * 64,  # dangling: falls back to the inline column
            "parent_session_id": "s31-root",
            "started_at": T0 + 61,
            "session_key": "agent:main:telegram:dm:7",
        },
    )
    display = json.dumps(json.dumps({"delegation_id": "d-1", "reactions": ["👍"]}))
    rows: list[dict[str, object]] = [
        {"role": "user", "content": "hi", "message_uid": UID, "active": None},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": json.dumps(
                [
                    {
                        "id": "call_1",
                        "call_id": "call_1",
                        "type": "function",
                        "function": {"name": "t", "arguments": "{}"},
                    }
                ]
            ),
            "tool_call_uids": json.dumps({"call_1": "u" * 32}),
            "reasoning_content": "",
            "absorbed_message_uids": json.dumps([UID]),
        },
        {"role": "tool", "content": "ok", "tool_call_id": "call_1", "tool_call_uid": "u" * 32},
        {
            "role": "user",
            "content": "[CONTEXT COMPACTION — REFERENCE ONLY] summary",
            "_compressed_summary": 1,
            "display_kind": "hidden",
        },
        {
            "role": "user",
            "content": "delegation finished",
            "display_kind": "async_delegation_complete",
            "display_metadata": display,
            "display_identity": b"\x00\x01\xfe",
            "display_order": 5,
            "sparkle_level": 11,
        },
    ]
    for i, row in enumerate(rows):
        _insert(conn, "messages", {"session_id": "s31-root", "timestamp": T0 + i, **row})
    _insert(
        conn,
        "messages",
        {
            "session_id": "s31-reset",
            "role": "user",
            "content": "again",
            "timestamp": T0 + 62,
            "active": 1,
        },
    )
    _insert(
        conn,
        "session_model_usage",
        {"session_id": "s31-root", "model": "m", "task": "", "input_tokens": 10},
    )
    _insert(
        conn,
        "async_delegations",
        {
            "delegation_id": "d-1",
            "origin_session": "agent:main",
            "parent_session_id": "s31-root",
            "state": "completed",
            "origin_session_id": "s31-root",
            "result_json": json.dumps({"ok": True}),
        },
    )
    conn.commit()
    conn.close()
    return path


def test_schema31_reads_fully(db31: Path) -> None:
    before = db31.read_bytes()
    with SqliteStore(db31, name="state.db") as store:
        assert store.version() == 31
        sessions, strays = store.sessions()
        assert strays == ()
        by_id = {s.id: s for s in sessions}
        root, reset = by_id["s31-root"], by_id["s31-reset"]
        assert root.problems == ()
        assert root.cols.get("quantum_flux") == "entangled"
        assert json.loads(to_json(root.cols))["quantum_flux"] == "entangled"
        assert session_prompt(store, root) == PROMPT
        assert session_prompt(store, reset) == "inline prompt"
        assert classify_all(sessions)["s31-reset"] == (Relation.RESET, True)

        messages = store.messages("s31-root")
        assert [m.role for m in messages] == ["user", "assistant", "tool", "user", "user"]
        assert all(m.problems == () and m.error is None for m in messages)
        assert all(m.has_summary for m in messages)
        user, assistant, tool, summary, delegated = messages
        assert user.active  # NULL active (issue #51646) is active
        assert user.message_uid == UID
        assert assistant.tool_calls[0].pairing_id() == "call_1"
        assert assistant.tool_call_uids == {"call_1": "u" * 32}
        assert assistant.absorbed_message_uids == [UID]
        assert assistant.reasoning_content == ""
        assert assistant.content.text == ""
        assert not assistant.content.null
        assert tool.tool_call_uid == "u" * 32
        assert summary.summary
        assert summary.display_kind == "hidden"
        assert delegated.display_metadata == {"delegation_id": "d-1", "reactions": ["👍"]}
        assert delegated.cols.get("sparkle_level") == 11
        assert delegated.cols.get("sparkle_double") == 22  # a generated column is kept too
        as_json = json.loads(to_json(delegated.cols))
        assert as_json["display_identity"] == "AAH+"
        assert as_json["display_metadata"] == json.dumps(
            {"delegation_id": "d-1", "reactions": ["👍"]}
        )

        usage = store.model_usage("s31-root")
        assert [u.int("input_tokens") for u in usage] == [10]
        (delegation,) = store.delegations()
        assert delegation.parent_session_id == "s31-root"
        assert delegation.origin_session_id == "s31-root"
        assert delegation.cols.to_json_value(JSON_COLUMNS)["result_json"] == {"ok": True}
        listing = list_sessions(store)
        assert [(e.id, e.active_rows) for e in listing.sessions] == [
            ("s31-root", 5),
            ("s31-reset", 1),
        ]
    assert db31.read_bytes() == before
