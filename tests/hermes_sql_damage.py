"""The damage the SQL fuzzer does (``tests/hermes_sql_fuzz.py``): a case's mutations, drawn
from its number alone, written into a prepared copy, and the rows they reach."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attrs import define, field, frozen
from hermes_hostile_values import FOLDER_SHAPES, JSON_COLUMNS, JSON_TEXTS, PLAIN, TABLES
from hermes_sql_seeds import Seed

__all__ = ["Case", "Mutation", "apply", "plan"]


@frozen
class Mutation:
    kind: str
    table: str
    rowid: int | None
    column: str | None
    value: Any

    def describe(self) -> str:
        shown = repr(self.value)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        where = f"{self.table}[{self.rowid}]"
        where += f".{self.column}" if self.column else ""
        return f"{self.kind} {where} = {shown}"


@define
class Case:
    number: int
    seed: Seed
    variant: str
    mutations: list[Mutation] = field(factory=list)
    #: The rows (units) the damage reaches directly.
    units: set[str] = field(factory=set)
    #: Whether every conversation may change (the schema version was damaged).
    everything: bool = False
    #: Folder shapes built around the damaged home before the tree holding it is converted.
    folders: list[str] = field(factory=list)

    def describe(self) -> str:
        lines = [f"case {self.number}: {self.seed.name} ({self.variant})"]
        lines += [f"  {m.describe()}" for m in self.mutations]
        lines += [f"  folder: {shape}" for shape in self.folders]
        return "\n".join(lines)


def _json_leaf(rng: random.Random, text: str) -> str | None:
    """The JSON text with one value inside it replaced by a hostile JSON text."""
    try:
        value = json.loads(text[6:] if text.startswith("\x00json:") else text)
    except ValueError:
        return None
    if not isinstance(value, dict | list) or not value:
        return None
    marker = "\u2063HOSTILE\u2063"
    node: Any = value
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            break
        key = rng.choice(keys)
        child = node[key]
        if isinstance(child, dict | list) and child and rng.random() < 0.6:
            node = child
            continue
        node[key] = marker
        break
    dumped, placeholder = json.dumps(value), json.dumps(marker)
    if placeholder not in dumped:
        return None
    out = dumped.replace(placeholder, rng.choice(JSON_TEXTS), 1)
    return "\x00json:" + out if text.startswith("\x00json:") else out


def _value(rng: random.Random, seed: Seed, column: str) -> Any:
    roll = rng.random()
    if (column in JSON_COLUMNS or column in ("content", "api_content")) and roll < 0.55:
        text = rng.choice(JSON_TEXTS)
        return "\x00json:" + text if column == "content" and rng.random() < 0.5 else text
    if roll < 0.75:
        return rng.choice(PLAIN)
    if roll < 0.9 and seed.session_ids:
        return rng.choice(seed.session_ids)
    return rng.choice(JSON_TEXTS)


def _current(db: Path, table: str, rowid: int, column: str) -> Any:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        conn.text_factory = bytes
        row = conn.execute(f'SELECT "{column}" FROM "{table}" WHERE rowid = ?', (rowid,)).fetchone()
    finally:
        conn.close()
    if row is None or not isinstance(row[0], bytes):
        return None
    try:
        return row[0].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _pick_table(rng: random.Random, seed: Seed) -> str:
    present = [t for t in TABLES if seed.rowids.get(t)]
    return rng.choices(present, weights=[TABLES[t] for t in present])[0]


def plan(number: int, seeds: Sequence[Seed]) -> Case:
    """Case ``number``: its seed, variant and mutations (drawn from the number alone)."""
    rng = random.Random(number)
    seed = rng.choice(seeds)
    case = Case(number=number, seed=seed, variant=rng.choice(("typed", "untyped")))
    if rng.random() < 0.2:
        case.folders = rng.sample(FOLDER_SHAPES, rng.choice((1, 2, 3)))
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        roll = rng.random()
        if roll < 0.6:
            table = _pick_table(rng, seed)
            rowid = rng.choice(seed.rowids[table])
            column = rng.choice(seed.columns[table])
            case.mutations.append(Mutation("cell", table, rowid, column, _value(rng, seed, column)))
        elif roll < 0.75 and seed.json_cells:
            table, rowid, column = rng.choice(seed.json_cells)
            text = _current(seed.release / seed.rel, table, rowid, column)
            leaf = _json_leaf(rng, text) if isinstance(text, str) else None
            if leaf is not None:
                case.mutations.append(Mutation("leaf", table, rowid, column, leaf))
        elif roll < 0.88:
            case.mutations.extend(_lineage(rng, seed))
        elif roll < 0.94:
            table = _pick_table(rng, seed)
            case.mutations.append(
                Mutation("delete", table, rng.choice(seed.rowids[table]), None, None)
            )
        else:
            row = {c: _value(rng, seed, c) for c in rng.sample(seed.columns["messages"], 4)}
            row.setdefault("session_id", rng.choice((*seed.session_ids, None, "nobody")))
            case.mutations.append(Mutation("insert", "messages", None, None, row))
    return case


def _lineage(rng: random.Random, seed: Seed) -> list[Mutation]:
    rows = seed.rowids["sessions"]
    ids = seed.session_of_rowid
    shape = rng.choice(("cycle", "self", "dangling", "other", "chain"))
    if shape == "cycle" and len(rows) >= 2:
        ring = rng.sample(rows, rng.choice((2, 3)))
        return [
            Mutation("cell", "sessions", r, "parent_session_id", ids[ring[(i + 1) % len(ring)]])
            for i, r in enumerate(ring)
        ] + [Mutation("cell", "sessions", r, "end_reason", "compression") for r in ring[:1]]
    row = rng.choice(rows)
    if shape == "self":
        return [Mutation("cell", "sessions", row, "parent_session_id", ids[row])]
    if shape == "dangling":
        return [Mutation("cell", "sessions", row, "parent_session_id", "no-such-session")]
    if shape == "other":
        return [Mutation("cell", "sessions", row, "parent_session_id", ids[rng.choice(rows)])]
    source = rng.choice(("subagent", "cli"))
    return [Mutation("chain", "sessions", row, source, rng.choice((300, 1100)))]


def _write(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> bool:
    """Run one damaging statement; False when the schema refuses the value."""
    try:
        conn.execute(sql, params)
    except (sqlite3.IntegrityError, sqlite3.OperationalError, sqlite3.InterfaceError):
        return False
    except sqlite3.DatabaseError:
        return False
    return True


def _param(value: Any) -> tuple[str, Any]:
    """SQL for a value and its parameter: bytes marked ``text`` are stored as TEXT."""
    if isinstance(value, tuple) and value[0] == "text":
        return "CAST(? AS TEXT)", value[1]
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: its bytes, as TEXT
            return "CAST(? AS TEXT)", value.encode("utf-8", "surrogatepass")
    return "?", value


def apply(case: Case, db: Path) -> None:
    """Write the case's damage into a prepared copy; mutations the schema refuses are
    dropped from the case."""
    seed = case.seed
    conn = sqlite3.connect(db, isolation_level=None)
    kept: list[Mutation] = []
    try:
        for m in case.mutations:
            done = _apply_one(conn, seed, m)
            if done:
                kept.append(m)
                case.units |= _reach(seed, m)
                case.everything |= m.table == "schema_version"
    finally:
        conn.close()
    case.mutations = kept


def _apply_one(conn: sqlite3.Connection, seed: Seed, m: Mutation) -> bool:
    if m.kind in ("cell", "leaf") and m.column is not None:
        sql, param = _param(m.value)
        return _write(
            conn, f'UPDATE "{m.table}" SET "{m.column}" = {sql} WHERE rowid = ?', (param, m.rowid)
        )
    if m.kind == "delete":
        return _write(conn, f'DELETE FROM "{m.table}" WHERE rowid = ?', (m.rowid,))
    if m.kind == "insert":
        names = list(m.value)
        pairs = [_param(m.value[n]) for n in names]
        sql = (
            f"INSERT INTO messages ({', '.join(f'{chr(34)}{n}{chr(34)}' for n in names)})"
            f" VALUES ({', '.join(p[0] for p in pairs)})"
        )
        return _write(conn, sql, [p[1] for p in pairs])
    if m.kind == "chain" and m.rowid is not None:
        parent = seed.session_of_rowid[m.rowid]
        conn.execute("BEGIN")
        ok = True
        for i in range(int(m.value)):
            sid = f"fuzz-chain-{i:05}"
            ok = ok and _write(
                conn,
                "INSERT INTO sessions (id, source, model, parent_session_id, started_at, ended_at,"
                " end_reason) VALUES (?, ?, 'm', ?, ?, ?, ?)",
                (sid, m.column, parent, 1.79e9 + i, 1.79e9 + i + 0.5, "compression"),
            )
            ok = ok and _write(
                conn,
                "INSERT INTO messages (session_id, role, content, timestamp)"
                " VALUES (?, 'user', ?, ?)",
                (sid, f"turn {i}", 1.79e9 + i + 0.1),
            )
            parent = sid
        conn.execute("COMMIT" if ok else "ROLLBACK")
        return ok
    return False


def _reach(seed: Seed, m: Mutation) -> set[str]:
    """The rows a mutation touches, named as the output names them."""
    db = "state.db" if not seed.rel.startswith("profiles/") else seed.rel
    sessions: set[str] = set()
    messages: set[Any] = set()
    if m.rowid is not None:
        sessions |= set(seed.owners.get(m.table, {}).get(m.rowid, ()))
        if m.table == "messages":
            messages.add(seed.message_ids.get(m.rowid))
    if m.kind == "chain":
        sessions.add(seed.session_of_rowid[m.rowid or 0])
    text = json.dumps(m.value, default=repr) if m.value is not None else ""
    sessions |= {sid for sid in seed.session_ids if isinstance(sid, str) and sid in text}
    if m.table == "messages" and m.column == "id" and isinstance(m.value, int):
        messages.add(m.value)
    units = {f"{db}:sessions/{s}" for s in sessions}
    units |= {f"{db}:messages/{i}" for i in messages if i is not None}
    return units
