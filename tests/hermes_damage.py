"""Damaged copies of the Hermes fixture databases, converted and listed as a user would (the
``asf`` command, in process), and what an undamaged conversion says they may change.

Shared by the hostile-input tests (``tests/hermes_plugin/test_hostile.py``) and the SQL damage
fuzzer (``tests/hermes_sql_fuzz.py``). Databases are always copied first: SQLite writes side
files beside a database even to read it, and the shared fixtures must stay as they are.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import sqlite3
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from attrs import frozen
from fixture_paths import DATABASES

from asf_core.cli.main import main

__all__ = [
    "DATABASES",
    "RETRY_COUNTER",
    "Run",
    "affected",
    "asf",
    "check_accounting",
    "copy_database",
    "files_of",
    "message_ids",
    "row_count",
]

#: Python source that counts the times a ``hermes_state`` writer retried a locked database
#: (Hermes retries "database is locked" after a random pause: each ``random.uniform`` call in
#: ``hermes_state`` is one retry), in ``retries``; run after ``import hermes_state``.
RETRY_COUNTER = textwrap.dedent(
    """
    import random
    retries = 0
    class CountingRandom:
        def uniform(self, a, b):
            global retries
            retries += 1
            return random.uniform(a, b)
        def __getattr__(self, name):
            return getattr(random, name)
    hermes_state.random = CountingRandom()
    """
)

_ID = re.compile(rb'"(?:id|session|parent_session)":"([0-9a-f-]{36})"')


def copy_database(release: Path, rel: str, root: Path) -> Path:
    """Copy one fixture database (and its WAL when it holds anything) to the same place under
    ``root`` (so its rows keep their identities) and return the copy's path."""
    source = release / rel
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    wal = Path(f"{source}-wal")
    if wal.is_file() and wal.stat().st_size:
        shutil.copyfile(wal, f"{target}-wal")
    target.chmod(0o644)
    return target


@frozen
class Run:
    """One ``asf`` command run: exit code, stderr, and stdout's JSON document."""

    code: int
    err: str
    doc: dict[str, Any]

    @property
    def store(self) -> dict[str, Any]:
        """The one store's report (convert) or listing (list)."""
        stores: list[dict[str, Any]] = self.doc.get("stores", [])
        assert len(stores) == 1, (self.code, self.err, stores)
        return stores[0]


def asf(*argv: str | Path) -> Run:
    """Run ``asf ARGV --json`` in this process, the Hermes plugin alone (set
    ``ASF_PLUGINS=hermes`` around it). A traceback on stderr fails the caller's check."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*map(str, argv), "--json"])
    text = out.getvalue()
    return Run(code, err.getvalue(), json.loads(text) if text.strip() else {})


def files_of(report: Mapping[str, Any]) -> dict[str, bytes]:
    """Each converted session's bytes by its name in the store's report."""
    root = Path(report["output"])
    return {name: (root / rel).read_bytes() for name, rel in report["files"].items()}


def affected(baseline: Mapping[str, bytes], units: Iterable[str]) -> set[str]:
    """The sessions (by name) a change to the rows ``units`` (``state.db:sessions/x``,
    ``state.db:messages/7`` ...) may change: the files holding them and every file linked to
    those, transitively (a sub-agent's leaf is named by its parent, a fork names its parent's
    id, ids derive from calls), as the undamaged conversion links them."""
    wanted = [f'"{u}"'.encode() for u in units]
    ids = {name: set(_ID.findall(data)) for name, data in baseline.items()}
    header = {
        name: json.loads(data.split(b"\n", 1)[0])["id"].encode() for name, data in baseline.items()
    }
    touched = {name for name, data in baseline.items() if any(w in data for w in wanted)}
    todo = list(touched)
    while todo:
        name = todo.pop()
        for other, named in ids.items():
            if other in touched:
                continue
            if header.get(name) in named or header.get(other) in ids[name]:
                touched.add(other)
                todo.append(other)
    return touched


def row_count(db: Path, table: str) -> int:
    """How many rows a table of a (copied) database holds, read the plain way."""
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        (count,) = conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()
    finally:
        conn.close()
    return int(count)


def message_ids(db: Path) -> list[int]:
    """The ids of the message rows that have one (an integer)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    conn.text_factory = bytes  # a damaged id may be text that is not UTF-8
    try:
        rows = conn.execute("SELECT id FROM messages").fetchall()
        return [i for (i,) in rows if isinstance(i, int)]
    finally:
        conn.close()


def check_accounting(db: Path, report: Mapping[str, Any], files: Mapping[str, bytes]) -> None:
    """Rows in = rows accounted for: every message row of the database is in an output file,
    and the report's row accounting says so."""
    (accounting,) = [
        f["data"] for f in report["findings"] if f["message"].startswith("row accounting")
    ]
    in_db = row_count(db, "messages")
    assert accounting["message_rows_in_database"] == in_db, (accounting, in_db)
    converted = accounting["message_rows_converted"] + accounting["message_rows_orphaned"]
    assert converted == in_db, accounting
    text = b"".join(files.values())
    name = report["store"]["name"]
    missing = [i for i in message_ids(db) if f'"{name}:messages/{i}"'.encode() not in text]
    assert missing == [], missing
