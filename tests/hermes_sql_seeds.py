"""The fixture databases the SQL damage fuzzer starts from (``tests/hermes_sql_fuzz.py``):
what a mutation needs to know of each, and a fresh copy of one in either variant (its own
schema, or one without declared types or constraints)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from attrs import frozen
from hermes_damage import copy_database
from hermes_hostile_values import JSON_COLUMNS, TABLES

__all__ = ["Seed", "prepare", "read_seed", "untyped"]


@frozen
class Seed:
    """One fixture database and what the mutations need to know of it."""

    release: Path
    rel: str
    #: Per table: its columns and its rows' rowids.
    columns: dict[str, tuple[str, ...]]
    rowids: dict[str, tuple[int, ...]]
    session_ids: tuple[str, ...]
    #: Per rowid of each table: the sessions (by id) the row belongs to or names.
    owners: dict[str, dict[int, tuple[str, ...]]]
    #: Per message rowid: its id; per session rowid: its id.
    message_ids: dict[int, Any]
    session_of_rowid: dict[int, str]
    #: The cells holding a JSON array or object: (table, rowid, column).
    json_cells: tuple[tuple[str, int, str], ...]

    @property
    def name(self) -> str:
        return f"{self.release.name}/{self.rel}"


def read_seed(release: Path, rel: str) -> Seed:
    conn = sqlite3.connect(f"file:{release / rel}?mode=ro&immutable=1", uri=True)
    try:
        tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        columns: dict[str, tuple[str, ...]] = {}
        rowids: dict[str, tuple[int, ...]] = {}
        owners: dict[str, dict[int, tuple[str, ...]]] = {}
        for table in TABLES:
            if table not in tables:
                continue
            columns[table] = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({table})"))
            rowids[table] = tuple(r for (r,) in conn.execute(f"SELECT rowid FROM {table}"))
        sessions = dict(conn.execute("SELECT rowid, id FROM sessions").fetchall())
        owners["sessions"] = {r: (sid,) for r, sid in sessions.items()}
        owners["messages"] = {
            r: (sid,) for r, sid in conn.execute("SELECT rowid, session_id FROM messages")
        }
        if "session_model_usage" in columns:
            owners["session_model_usage"] = {
                r: (sid,)
                for r, sid in conn.execute("SELECT rowid, session_id FROM session_model_usage")
            }
        if "async_delegations" in columns:
            owners["async_delegations"] = {
                r: (sid,) if sid else ()
                for r, sid in conn.execute("SELECT rowid, parent_session_id FROM async_delegations")
            }
        if "system_prompts" in columns:
            owners["system_prompts"] = {
                r: tuple(
                    s
                    for (s,) in conn.execute(
                        "SELECT id FROM sessions WHERE system_prompt_hash = ?", (h,)
                    )
                )
                for r, h in conn.execute("SELECT rowid, hash FROM system_prompts")
            }
        message_ids = dict(conn.execute("SELECT rowid, id FROM messages").fetchall())
        json_cells = []
        for table in ("sessions", "messages"):
            for column in columns[table]:
                if column not in JSON_COLUMNS and column not in ("content", "api_content"):
                    continue
                for rowid, text in conn.execute(f'SELECT rowid, "{column}" FROM {table}'):
                    if isinstance(text, str) and text.removeprefix("\x00json:")[:1] in ("[", "{"):
                        json_cells.append((table, rowid, column))
    finally:
        conn.close()
    return Seed(
        release=release,
        rel=rel,
        columns=columns,
        rowids=rowids,
        session_ids=tuple(sessions.values()),
        owners=owners,
        message_ids=message_ids,
        session_of_rowid=sessions,
        json_cells=tuple(json_cells),
    )


def untyped(db: Path) -> None:
    """Rebuild every table the reader reads without declared types or constraints, so any
    SQLite value fits any column; FTS triggers go with the old tables."""
    conn = sqlite3.connect(db)
    try:
        tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for table in TABLES:
            if table not in tables:
                continue
            names = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            quoted = ", ".join(f'"{n}"' for n in names)
            conn.execute(f'CREATE TABLE "{table}__new" ({quoted})')
            conn.execute(
                f'INSERT INTO "{table}__new" SELECT {quoted} FROM "{table}" ORDER BY rowid'
            )
            conn.execute(f'DROP TABLE "{table}"')
            conn.execute(f'ALTER TABLE "{table}__new" RENAME TO "{table}"')
        conn.commit()
    finally:
        conn.close()


def drop_triggers(db: Path) -> None:
    """The FTS triggers would refuse some values; the reader never reads the index."""
    conn = sqlite3.connect(db)
    try:
        triggers = [
            n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")
        ]
        for name in triggers:
            conn.execute(f'DROP TRIGGER "{name}"')
        conn.commit()
    finally:
        conn.close()


def prepare(release: Path, rel: str, variant: str, root: Path) -> Path:
    """A copy of a seed in a variant, closed and without side files."""
    db = copy_database(release, rel, root)
    drop_triggers(db)
    if variant == "untyped":
        untyped(db)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for side in ("-wal", "-shm"):
        Path(f"{db}{side}").unlink(missing_ok=True)
    return db
