"""Where Hermes keeps its databases, and whether a path holds one.

Hermes keeps every session of a profile in one ``state.db``: the home's own
(``~/.hermes/state.db``, or ``$HERMES_HOME``) and one per further profile
(``<home>/profiles/<name>/state.db``). A database is converted whole.

:func:`probe` says whether a path holds Hermes databases; :func:`claims` is what the plugin
claims at a path: those, and the ones a user plainly means as Hermes' that cannot be read
(damaged, empty, unreadable, not Hermes at all), so that opening them tells the user what is
wrong instead of their file being passed over as nobody's.
"""

from __future__ import annotations

import os
from pathlib import Path

from attrs import frozen

from asf_core.formats import StoreError
from hermes_plugin.schema import DATABASE_NAME, DIR_PROFILES
from hermes_plugin.source import sniff
from hermes_plugin.source.database import SqliteStore

__all__ = [
    "Probe",
    "claims",
    "databases",
    "default_homes",
    "find_databases",
    "is_home",
    "open_database",
    "probe",
    "store_of",
]


#: Confidence of a claim on a state.db whose tables cannot be read (damaged, unreadable).
UNREADABLE = 0.5
#: On a state.db, or a home's database, that is certainly not Hermes' (not SQLite, empty, a
#: directory, no Hermes tables): claimed so the user hears why, but any other format wins.
NOT_HERMES = 0.2
#: On a file of another name that starts as SQLite but whose tables cannot be read.
DAMAGED_SQLITE = 0.1


def is_home(directory: str | os.PathLike[str]) -> bool:
    """Whether a directory is a Hermes home or profile directory: it holds state.db."""
    return sniff.kind(Path(directory) / DATABASE_NAME) == "file"


def _entries(home: Path) -> list[Path]:
    """Everything named state.db a home holds, whatever it is: its own, then each profile's in
    name order. Not what is behind a directory that cannot be searched: whether it holds a
    state.db cannot be told."""
    own = home / DATABASE_NAME
    found = [own] if sniff.kind(own) not in ("missing", "denied") else []
    try:
        profiles = sorted(p for p in (home / DIR_PROFILES).iterdir() if sniff.kind(p) == "dir")
    except OSError:
        return found
    found.extend(
        p / DATABASE_NAME
        for p in profiles
        if sniff.kind(p / DATABASE_NAME) not in ("missing", "denied")
    )
    return found


def databases(home: str | os.PathLike[str]) -> list[Path]:
    """The databases a home holds: its own state.db, then each profile's in name order."""
    return [p for p in _entries(Path(home)) if sniff.kind(p) == "file"]


def find_databases(root: str | os.PathLike[str]) -> list[Path]:
    """The Hermes databases under root: each state.db, a directory's before its subdirectories'.

    A file root is returned as it is. Directories that cannot be read are
    passed over and symbolic links (to directories or files) are not followed.
    """
    root = Path(root)
    if sniff.kind(root) == "file":
        return [root]
    found: list[Path] = []
    for directory, subdirs, files in os.walk(root, followlinks=False):
        subdirs.sort()
        if DATABASE_NAME in files:
            candidate = Path(directory) / DATABASE_NAME
            if not candidate.is_symlink() and sniff.kind(candidate) == "file":
                found.append(candidate)
    return found


def store_of(path: str | os.PathLike[str]) -> Path | None:
    """The database a path names: the path itself when it is a file, the state.db
    of a home or profile directory, else None."""
    path = Path(path)
    if sniff.kind(path) == "file":
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
    Hermes homes, 0.5 (:data:`UNREADABLE`) for a state.db whose tables could
    not be confirmed. :func:`claims` gives one per database, and lower ones.
    """

    path: Path
    databases: tuple[Path, ...]
    confidence: float
    detail: str


def _probe_file(path: Path) -> Probe | None:
    verdict = sniff.hermes_schema(path)
    named = path.name == DATABASE_NAME
    if verdict is True:
        confidence, reason = (1.0, "Hermes state.db") if named else (0.9, "Hermes schema")
        return Probe(path=path, databases=(path,), confidence=confidence, detail=reason)
    if verdict is None and named:
        return Probe(
            path=path,
            databases=(path,),
            confidence=UNREADABLE,
            detail="state.db, schema unreadable",
        )
    return None


def probe(path: str | os.PathLike[str]) -> Probe | None:
    """Whether a path holds Hermes databases, and with what confidence; None if not.

    A file is checked by its schema; a home or profile directory by its own
    databases; any other directory by the homes under it.
    """
    path = Path(path)
    kind = sniff.kind(path)
    if kind == "file":
        return _probe_file(path)
    if kind != "dir":
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
    found = tuple(p for p in find_databases(path) if sniff.hermes_schema(p))
    if not found:
        return None
    return Probe(path=path, databases=found, confidence=0.7, detail="directory of Hermes homes")


def _damaged_sqlite(path: Path) -> bool:
    """An SQLite file whose tables cannot be read (truncated, corrupt)."""
    return sniff.is_sqlite(path) and sniff.hermes_schema(path) is None


def _claim(path: Path, *, meant: bool) -> Probe | None:
    """The claim on one database. ``meant``: the user means it as Hermes' (it is named
    state.db, or it is a home's), so it is claimed whatever it holds."""
    kind = sniff.kind(path)
    if kind == "missing":
        return None
    found = _probe_file(path) if kind == "file" else None
    if found is not None:
        return found
    if kind == "file" and not meant and _damaged_sqlite(path):
        confidence, detail = DAMAGED_SQLITE, "SQLite file, tables unreadable"
    elif kind == "denied" and meant:
        confidence, detail = UNREADABLE, "state.db, not readable"
    elif meant:
        confidence, detail = NOT_HERMES, "state.db, not a Hermes database"
    else:
        return None
    return Probe(path=path, databases=(path,), confidence=confidence, detail=detail)


def _home_of(database: Path) -> Path:
    """The Hermes home a database belongs to: the one above ``profiles/<name>/``, else its
    directory."""
    if database.parent.parent.name == DIR_PROFILES:
        return database.parent.parent.parent
    return database.parent


def claims(path: str | os.PathLike[str] | None) -> list[Probe]:
    """Each database the plugin claims at a path the user named (None: the default homes).

    * A file: one with Hermes' tables (1.0; 0.9 under another name). A file named state.db is
      claimed whatever it holds: :data:`UNREADABLE` when its tables cannot be read,
      :data:`NOT_HERMES` when it is surely not Hermes' (so is a directory named state.db). A
      file of another name is claimed only as a damaged SQLite file (:data:`DAMAGED_SQLITE`).
    * A home or profile directory: everything named state.db in it and in its profiles, each
      as a file named state.db is.
    * Any other directory: the Hermes databases under it and everything named state.db in
      their homes (inside the directory), and each state.db under it that is SQLite but
      unreadable; not another program's readable state.db.
    """
    if path is None:
        return [c for home in default_homes() for c in _home_claims(home)]
    path = Path(path)
    if sniff.kind(path) == "dir" and _entries(path):
        return _home_claims(path)
    if sniff.kind(path) == "dir" and path.name != DATABASE_NAME:
        return _tree_claims(path)
    found = _claim(path, meant=path.name == DATABASE_NAME)
    return [found] if found is not None else []


def _home_claims(home: Path) -> list[Probe]:
    return [c for c in (_claim(db, meant=True) for db in _entries(home)) if c is not None]


def _tree_claims(root: Path) -> list[Probe]:
    found: dict[Path, Probe] = {}
    for db in find_databases(root):
        if sniff.hermes_schema(db):
            for claim in _home_claims(_home_of(db)):
                if claim.path.is_relative_to(root):
                    found.setdefault(claim.path, claim)
        elif db not in found and _damaged_sqlite(db):
            found[db] = Probe(
                path=db, databases=(db,), confidence=UNREADABLE, detail="state.db, damaged"
            )
    return list(found.values())


def open_database(path: str | os.PathLike[str], *, name: str | None = None) -> SqliteStore:
    """Open the database a path names (a file, or a home's state.db), read-only.

    Raises the host's :class:`~asf_core.formats.StoreError` when there is none.
    """
    database = store_of(path)
    if database is None:
        raise StoreError(f"no Hermes database (no file, no {DATABASE_NAME})")
    return SqliteStore(database, name=name)
