"""Where Hermes keeps its databases, and whether a path holds one.

Hermes keeps every session of a profile in one ``state.db``: the home's own
(``~/.hermes/state.db``, or ``$HERMES_HOME``) and one per further profile
(``<home>/profiles/<name>/state.db``). A database is converted whole.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from attrs import frozen

from hermes_plugin.schema import DATABASE_NAME, DIR_PROFILES
from hermes_plugin.sqlite_store import SQLITE_MAGIC, SqliteStore
from hermes_plugin.store import StoreError

__all__ = [
    "Probe",
    "databases",
    "default_homes",
    "find_databases",
    "is_home",
    "open_database",
    "probe",
    "store_of",
]


def is_home(directory: str | os.PathLike[str]) -> bool:
    """Whether a directory is a Hermes home or profile directory: it holds state.db."""
    return (Path(directory) / DATABASE_NAME).is_file()


def databases(home: str | os.PathLike[str]) -> list[Path]:
    """The databases a home holds: its own state.db, then each profile's in name order."""
    home = Path(home)
    found = [home / DATABASE_NAME] if is_home(home) else []
    try:
        profiles = sorted(p for p in (home / DIR_PROFILES).iterdir() if p.is_dir())
    except OSError:
        return found
    found.extend(p / DATABASE_NAME for p in profiles if is_home(p))
    return found


def find_databases(root: str | os.PathLike[str]) -> list[Path]:
    """The Hermes databases under root: each state.db, a directory's before its subdirectories'.

    A file root is returned as it is. Directories that cannot be read are
    passed over and symbolic links (to directories or files) are not followed.
    """
    root = Path(root)
    if root.is_file():
        return [root]
    found: list[Path] = []
    for directory, subdirs, files in os.walk(root, followlinks=False):
        subdirs.sort()
        if DATABASE_NAME in files:
            candidate = Path(directory) / DATABASE_NAME
            if not candidate.is_symlink() and candidate.is_file():
                found.append(candidate)
    return found


def store_of(path: str | os.PathLike[str]) -> Path | None:
    """The database a path names: the path itself when it is a file, the state.db
    of a home or profile directory, else None."""
    path = Path(path)
    if path.is_file():
        return path
    if is_home(path):
        return path / DATABASE_NAME
    return None


def default_homes() -> list[Path]:
    """Hermes' home as Hermes finds it: ``$HERMES_HOME``, else ``~/.hermes``; when it exists."""
    env = os.environ.get("HERMES_HOME")
    home = Path(env).expanduser() if env else Path.home() / ".hermes"
    return [home] if home.is_dir() else []


@frozen(kw_only=True)
class Probe:
    """What :func:`probe` found: the databases a path holds and how sure it is.

    ``confidence`` is 1.0 for a file named state.db with Hermes' tables, 0.9
    for such a file under another name, 0.7 for a directory tree holding
    Hermes homes, 0.5 for a state.db whose tables could not be confirmed.
    """

    path: Path
    databases: tuple[Path, ...]
    confidence: float
    detail: str


def _looks_like_hermes(path: Path) -> bool | None:
    """True when the file's schema has Hermes' tables, False when it does not,
    None when that cannot be told. Reads the schema only (immutable: no
    sidecar files, no locks)."""
    try:
        with path.open("rb") as f:
            if f.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
                return False
        uri = f"file:{quote(str(path.absolute()), safe='/')}?mode=ro&immutable=1"
        conn = sqlite3.connect(uri, uri=True)
        try:
            tables = {
                name
                for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if not {"sessions", "messages"} <= tables:
                return False
            columns = {row[1] for row in conn.execute("PRAGMA table_info(messages)")}
            return {"session_id", "role"} <= columns
        finally:
            conn.close()
    except (OSError, sqlite3.Error, ValueError):
        return None


def _probe_file(path: Path) -> Probe | None:
    verdict = _looks_like_hermes(path)
    named = path.name == DATABASE_NAME
    if verdict is True:
        confidence, reason = (1.0, "Hermes state.db") if named else (0.9, "Hermes schema")
        return Probe(path=path, databases=(path,), confidence=confidence, detail=reason)
    if verdict is None and named:
        return Probe(
            path=path, databases=(path,), confidence=0.5, detail="state.db, schema unreadable"
        )
    return None


def probe(path: str | os.PathLike[str]) -> Probe | None:
    """Whether a path holds Hermes databases, and with what confidence; None if not.

    A file is checked by its schema; a home or profile directory by its own
    databases; any other directory by the homes under it.
    """
    path = Path(path)
    if path.is_file():
        return _probe_file(path)
    if not path.is_dir():
        return None
    if is_home(path):
        claims = [c for c in map(_probe_file, databases(path)) if c is not None]
        if not claims:
            return None
        return Probe(
            path=path,
            databases=tuple(c.databases[0] for c in claims),
            confidence=max(c.confidence for c in claims),
            detail="Hermes home",
        )
    found = tuple(p for p in find_databases(path) if _looks_like_hermes(p))
    if not found:
        return None
    return Probe(path=path, databases=found, confidence=0.7, detail="directory of Hermes homes")


def open_database(path: str | os.PathLike[str], *, name: str | None = None) -> SqliteStore:
    """Open the database a path names (a file, or a home's state.db), read-only.

    Raises :class:`~hermes_plugin.store.StoreError` when there is none.
    """
    database = store_of(path)
    if database is None:
        raise StoreError(f"{path}: no Hermes database (no file, no {DATABASE_NAME})")
    return SqliteStore(database, name=name)
