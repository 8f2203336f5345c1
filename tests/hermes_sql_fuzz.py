"""The SQL damage fuzzer: the Hermes fixture databases with hostile values written into them,
converted and listed through ``asf``; whatever the damage, it must cost only itself.

A *case* is one fixture database (a *seed*), copied, in one of two variants (``typed``: its
own schema, so SQLite's column affinities and constraints apply, as for a foreign writer
using Hermes' schema; ``untyped``: every table rebuilt without declared types or constraints,
so any SQLite value fits any column, ids included), with one to three *mutations*:

* ``cell``: a hostile value in one column of one row of ``sessions``, ``messages``,
  ``session_model_usage``, ``async_delegations``, ``system_prompts`` or ``schema_version``:
  NULL, integers (64-bit extremes), floats (infinities, NaN, -0.0), text (empty, control
  characters, bidirectional controls, invalid UTF-8, long), blobs, JSON edge cases (1e400,
  huge integers, nesting past the recursion limit, lone surrogates, duplicate or colliding
  keys, wrong shapes, the ``\\x00json:`` prefix), other rows' ids;
* ``leaf``: one value inside a JSON cell replaced by a hostile JSON value (a wrong shape);
* ``lineage``: parent links made into cycles, self-links, dangling links, a chain of new
  sub-agent or continuation sessions hundreds deep;
* ``delete`` and ``insert``: a row removed, a hostile message row added;

and, in one case of five, hostile *folders* beside the damaged home (a tree 1000 levels deep,
names with control characters or bytes that are not UTF-8, a link loop, a FIFO, directory or
empty file named ``state.db``, a directory that cannot be entered), the folder holding them
converted too: the home must convert exactly as on its own.

Each case runs ``asf convert`` and ``asf list`` (in process; some cases as a subprocess) and
checks: no traceback; exit 0; the store completes; no conversation needed the safety net that
keeps the rows of one that fails (a bug, even though it cost only that conversation); every file
written verifies; every message row of the damaged database is in the output (rows in = rows in
the output + orphans) and the report's accounting says so; ``list``'s strays are ``convert``'s;
and every conversation the damage cannot reach (see :func:`hermes_damage.affected`) is byte-
identical to the undamaged conversion. A case that breaks a rule is described by its seed,
variant and mutations, and with ``ASF_FUZZ_SAVE=DIR`` its damaged database is kept there.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attrs import define, field, frozen
from hermes_damage import DATABASES, affected, asf, check_accounting, copy_database, files_of

from asf_core.verify.session import verify_path

__all__ = ["JSON_TEXTS", "PLAIN", "Case", "Fuzzer", "Seed", "untyped"]

#: Tables whose rows the reader reads, in the order mutations pick them (weights below).
TABLES = {
    "sessions": 30,
    "messages": 45,
    "session_model_usage": 6,
    "async_delegations": 6,
    "system_prompts": 6,
    "schema_version": 2,
}
#: Columns holding JSON, which get JSON edge cases more often.
JSON_COLUMNS = frozenset(
    {
        "tool_calls",
        "reasoning_details",
        "codex_reasoning_items",
        "codex_message_items",
        "model_config",
        "display_metadata",
        "tool_call_uids",
        "absorbed_message_uids",
        "origin_json",
        "event_json",
        "result_json",
        "task_json",
    }
)
DEEP = 1200

#: Hostile JSON texts: numbers no double holds, nesting past the recursion limit, lone
#: surrogates, duplicate and (once normalised) colliding keys, wrong shapes, broken text.
JSON_TEXTS: tuple[str, ...] = (
    "1e400",
    "[1e400]",
    '{"a": -1e999}',
    "[" + "1" * 400 + "]",
    "1" * 5000,
    "[" * DEEP + "]" * DEEP,
    '{"a":' * DEEP + "1" + "}" * DEEP,
    "[" * 300 + "]" * 300,
    '"\\ud800"',
    '["\\udfff", {"\\ud800": 1}]',
    '{"\\ud800": 1, "\\ufffd": 2}',
    '{"a": 1, "a": 2}',
    "[]",
    "{}",
    '"text"',
    "null",
    "true",
    "0",
    "[1, 2",
    "NaN",
    "[Infinity]",
    "-0.0",
    '[{"id": null, "function": "x"}]',
    '[{"id": "c", "type": "function", "function": {"name": 1e400, "arguments": {"a": 1e400}}}]',
    '[{"id": "c", "function": {"name": "t", "arguments": ' + "[" * DEEP + "]" * DEEP + "}}]",
    '[{"call_id": "", "id": "", "function": {"name": "", "arguments": null}}]',
    '[["not", "an", "object"], 7, null]',
    '{"id": "single", "function": {"name": "t", "arguments": "{}"}}',
    '[{"type": "reasoning", "summary": 1e400}]',
    '[{"type": "text", "text": "\\u0000\\u001b[31m"}]',
)
#: Hostile values of every SQLite type (bytes marked ``text`` are stored as TEXT, which is
#: then not valid UTF-8).
PLAIN: tuple[Any, ...] = (
    None,
    0,
    -1,
    1,
    2**63 - 1,
    -(2**63),
    2**53 + 1,
    1.5,
    -0.0,
    float("inf"),
    float("-inf"),
    float("nan"),
    1e308,
    "",
    " ",
    "x",
    "\x00",
    "\x1b]0;title\x07\x1b[31mred",
    "\u202eevil",
    "line\nbreak\r\n",
    "\ufeff",
    "\U0001f600" * 3,
    "x" * 100_000,
    "0",
    "1.5",
    "compression",
    "subagent",
    "tool",
    "assistant",
    "tool",
    "user",
    "session_meta",
    "hidden",
    b"",
    b"\x00\xff",
    b"{}",
    ("text", b"\xff\xfe"),
    ("text", b"abc\xc3"),
    ("text", b"\xed\xa0\x80"),
)


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


def _read_seed(release: Path, rel: str) -> Seed:
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


def _drop_triggers(db: Path) -> None:
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
    _drop_triggers(db)
    if variant == "untyped":
        untyped(db)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for side in ("-wal", "-shm"):
        Path(f"{db}{side}").unlink(missing_ok=True)
    return db


# --------------------------------------------------------------------------- mutations


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


# --------------------------------------------------------------------------- folders

#: Shapes of the folders beside a home under a searched path.
FOLDER_SHAPES = (
    "deep",
    "control names",
    "bad bytes",
    "link loop",
    "fifo state.db",
    "directory state.db",
    "empty state.db",
    "closed directory",
)


def build_folders(root: Path, shapes: Sequence[str]) -> None:
    """Build hostile folders under ``root`` (beside the home), without recursion."""
    for shape in shapes:
        place = root / shape.replace(" ", "-")
        place.mkdir()
        if shape == "deep":
            for _ in range(1000):
                place = place / "d"
                place.mkdir()
            (place / "state.db").write_bytes(b"SQLite format 3\x00")
        elif shape == "control names":
            for name in ("\x1b[31mred", "a\nb", "\u202eevil", " "):
                (place / name).mkdir()
                (place / name / "state.db").write_bytes(b"")
        elif shape == "bad bytes":
            (place / os.fsdecode(b"\xff\xfe")).mkdir()  # a name that is not UTF-8
        elif shape == "link loop":
            (place / "loop").symlink_to(place)
            (place / "state.db").symlink_to(place / "state.db")
        elif shape == "fifo state.db":
            os.mkfifo(place / "state.db")
        elif shape == "directory state.db":
            (place / "state.db").mkdir()
        elif shape == "empty state.db":
            (place / "state.db").write_bytes(b"")
        elif shape == "closed directory":
            (place / "inner").mkdir()
            (place / "inner" / "state.db").write_bytes(b"")
            (place / "inner").chmod(0)


def remove_tree(root: Path) -> None:
    """Remove a tree of any depth (``shutil.rmtree`` recurses), links not followed."""
    stack, directories = [root], []
    while stack:
        directory = stack.pop()
        directories.append(directory)
        directory.chmod(0o700)
        for entry in os.scandir(directory):
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            else:
                Path(entry.path).unlink()
    for directory in reversed(directories):
        directory.rmdir()


# --------------------------------------------------------------------------- running


class Hang(Exception):
    """A case ran past its time bound."""


@contextmanager
def _bounded(seconds: float) -> Iterator[None]:
    def expired(signum: int, frame: Any) -> None:
        raise Hang(f"no answer within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@define
class Fuzzer:
    """Runs cases under ``root``; undamaged conversions are made once per seed and variant."""

    root: Path
    seeds: list[Seed] = field(factory=list)
    baselines: dict[tuple[str, str], dict[str, bytes]] = field(factory=dict)
    bound: float = 60.0
    save: Path | None = None

    @classmethod
    def make(cls, root: Path) -> Fuzzer:
        """A fuzzer over private copies of the fixture databases (SQLite never opens the
        shared ones)."""
        save = os.environ.get("ASF_FUZZ_SAVE")
        fuzzer = cls(root=root, save=Path(save) if save else None)
        for release, rel in DATABASES:
            copy = root / "seeds" / release.name
            copy_database(release, rel, copy)
            fuzzer.seeds.append(_read_seed(copy, rel))
        return fuzzer

    def baseline(self, seed: Seed, variant: str) -> dict[str, bytes]:
        key = (seed.name, variant)
        if key not in self.baselines:
            where = (
                self.root / "baseline" / seed.release.name / seed.rel.replace("/", "_") / variant
            )
            db = prepare(seed.release, seed.rel, variant, where / "home")
            run = asf("convert", db, "-o", where / "out")
            assert run.code == 0, run.err
            self.baselines[key] = files_of(run.store)
        return self.baselines[key]

    def run(self, number: int, *, subprocess_run: bool = False) -> list[str]:
        """Run case ``number``; the rules it breaks (empty: none)."""
        case = plan(number, self.seeds)
        baseline = self.baseline(case.seed, case.variant)
        where = self.root / f"case-{number}"
        db = prepare(case.seed.release, case.seed.rel, case.variant, where / "home")
        apply(case, db)
        try:
            with _bounded(self.bound):
                problems = self._check(case, db, where / "out", baseline, subprocess_run)
        except Hang as exc:
            problems = [str(exc)]
        except AssertionError as exc:
            problems = [f"assertion: {exc}"]
        except Exception as exc:  # the checks themselves met something: show it, go on
            problems = [f"while checking: {type(exc).__name__}: {exc}"]
        if problems:
            problems.insert(0, case.describe())
            if self.save is not None:
                self.save.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(db, self.save / f"case-{number}.db")
        remove_tree(where)
        return problems

    def _check(
        self, case: Case, db: Path, out: Path, baseline: dict[str, bytes], as_process: bool
    ) -> list[str]:
        problems: list[str] = []
        if as_process:
            started = time.monotonic()
            done = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import sys; from asf_core.cli.main import main; sys.exit(main())",
                    "convert",
                    str(db),
                    "-o",
                    str(out),
                    "--json",
                ],
                capture_output=True,
                text=True,
                timeout=self.bound,
                env={**os.environ, "ASF_PLUGINS": "hermes"},
                check=False,
            )
            if "Traceback" in done.stderr or done.returncode != 0:
                return [f"subprocess convert: exit {done.returncode}: {done.stderr[-2000:]}"]
            report = json.loads(done.stdout)["stores"][0]
            problems.extend(self._files(case, db, report, baseline))
            if time.monotonic() - started > self.bound:
                problems.append("subprocess convert too slow")
            return problems
        run = asf("convert", db, "-o", out)
        if "Traceback" in run.err or run.code != 0 or not run.doc:
            return [f"convert: exit {run.code}: {run.err[-2000:]}"]
        report = run.store
        if not report["complete"]:
            problems.append(f"convert: store incomplete: {report.get('error')}")
        problems.extend(self._files(case, db, report, baseline))
        if case.folders:
            problems.extend(self._tree(case, db, report))
        listed = asf("list", db)
        if "Traceback" in listed.err or listed.code != 0:
            problems.append(f"list: exit {listed.code}: {listed.err[-2000:]}")
        else:
            strays = listed.store["findings"].get("stray", 0)
            converted = {s["unit"] for s in report["strays"]}
            if len(converted) != len(report["strays"]):
                problems.append("convert: a row is counted as a stray more than once")
            if strays > len(converted):
                problems.append(f"list: {strays} strays, convert: {len(converted)}")
        return problems

    def _tree(self, case: Case, db: Path, report: dict[str, Any]) -> list[str]:
        """Convert the folder holding the home, hostile folders beside it: the home converts
        exactly as on its own; a folder that cannot be searched or a file that is no database
        costs only itself (exit 0, or 2 for a state.db that cannot be read)."""
        tree = db.parent.parent
        build_folders(tree, case.folders)
        run = asf("convert", tree, "-o", tree.parent / "tree-out")
        if "Traceback" in run.err or run.code not in (0, 2):
            return [f"convert of the tree: exit {run.code}: {run.err[-2000:]}"]
        mine = [s for s in run.doc["stores"] if s["path"] == str(db)]
        if len(mine) != 1 or not mine[0]["complete"]:
            return [f"convert of the tree: the home is not converted whole: {run.err[-500:]}"]
        if files_of(mine[0]) != files_of(report):
            return ["convert of the tree: the home's files differ from its own conversion"]
        return []

    def _files(
        self, case: Case, db: Path, report: dict[str, Any], baseline: dict[str, bytes]
    ) -> list[str]:
        problems: list[str] = []
        # The safety net caught an error: the store went on, but it is a bug to fix.
        problems.extend(
            f"{s['unit']}: {s['message']}"
            for s in report["strays"]
            if s["message"].startswith("conversation not converted")
        )
        files = files_of(report)
        try:
            check_accounting(db, report, files)
        except AssertionError as exc:
            problems.append(f"accounting: {exc}")
        reach = set(baseline) if case.everything else affected(baseline, case.units)
        reach.add("_orphans")
        for name, data in baseline.items():
            if name not in reach and files.get(name) != data:
                problems.append(f"untouched conversation {name} changed")
        output = Path(report["output"])
        changed = [n for n in files if baseline.get(n) != files[n]]
        for name in changed:
            path = output / report["files"][name]
            errors = [f for f in verify_path(path) if f.severity == "error"]
            if errors:
                problems.append(f"{name}: verify: {errors[0].code}: {errors[0].message}")
        return problems
