"""Hermes homes as the tests look at them: which databases a home holds, opening one by its
home. The plugin itself only claims paths (:func:`hermes_plugin.source.discovery.claims`)."""

from __future__ import annotations

import os
from pathlib import Path

from asf_core.formats import StoreError
from hermes_plugin.schema import DATABASE_NAME, DIR_PROFILES
from hermes_plugin.source import sniff
from hermes_plugin.source.database import SqliteStore

__all__ = [
    "WRITTEN_WHILE_READING",
    "databases",
    "hermes_writes",
    "is_home",
    "open_database",
    "store_of",
]


def is_home(directory: str | os.PathLike[str]) -> bool:
    """Whether a directory is a Hermes home or profile directory: it holds state.db."""
    return sniff.kind(Path(directory) / DATABASE_NAME) == "file"


def databases(home: str | os.PathLike[str]) -> list[Path]:
    """The databases a home holds: its own state.db, then each profile's in name order."""
    home = Path(home)
    profiles = home / DIR_PROFILES
    found = (
        [home, *sorted(p for p in profiles.iterdir() if p.is_dir())]
        if profiles.is_dir()
        else [home]
    )
    return [d / DATABASE_NAME for d in found if is_home(d)]


def store_of(path: str | os.PathLike[str]) -> Path | None:
    """The database a path names: the path itself when it is a file, the state.db of a home
    or profile directory, else None."""
    path = Path(path)
    if sniff.kind(path) == "file":
        return path
    return path / DATABASE_NAME if is_home(path) else None


def open_database(path: str | os.PathLike[str], *, name: str | None = None) -> SqliteStore:
    """Open the database a path names (a file, or a home's state.db), read-only."""
    database = store_of(path)
    if database is None:
        raise StoreError(f"no Hermes database (no file, no {DATABASE_NAME})")
    return SqliteStore(database, name=name)


#: The text :func:`hermes_writes` appends.
WRITTEN_WHILE_READING = "written while asf was reading"


def hermes_writes(db: Path, session: str = "fx-plain") -> None:
    """Hermes opens the database, appends to a session and closes: its last connection
    checkpoints into the database file and removes its side files (at rest again, a
    different file)."""
    from hermes_state import SessionDB

    sdb = SessionDB(db_path=db)
    try:
        sdb.append_message(session, "user", WRITTEN_WHILE_READING)
    finally:
        sdb.close()
