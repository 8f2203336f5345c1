"""Where Hermes keeps its databases, and which the plugin claims at a path.

Hermes keeps every session of a profile in one ``state.db``: the home's own
(``~/.hermes/state.db``, or ``$HERMES_HOME``) and one per further profile
(``<home>/profiles/<name>/state.db``). A database is converted whole.

:func:`claims` is what the plugin claims at a path: the Hermes databases there, and the ones a
user plainly means as Hermes' that cannot be read (damaged, empty, unreadable, not Hermes at
all), so that opening them tells the user what is wrong instead of their file being passed
over as nobody's. What a file is, :mod:`hermes_plugin.source.sniff` says.
"""

from __future__ import annotations

import os
from pathlib import Path

from attrs import frozen

from asf_core.home import home
from asf_core.walk import files_under, reason
from hermes_plugin.schema import DATABASE_NAME, DIR_PROFILES
from hermes_plugin.source import sniff

__all__ = [
    "DAMAGED_SQLITE",
    "NOT_HERMES",
    "UNREADABLE",
    "DatabaseClaim",
    "Skipped",
    "claims",
    "default_home",
    "default_homes",
    "find_databases",
    "label_of",
]


#: Confidence of a claim on a state.db whose tables cannot be read (damaged, unreadable).
UNREADABLE = 0.5
#: On a state.db, or a home's database, that is certainly not Hermes' (not SQLite, empty, a
#: directory, no Hermes tables): claimed so the user hears why, but any other format wins.
NOT_HERMES = 0.2
#: On a file of another name that starts as SQLite but whose tables cannot be read.
DAMAGED_SQLITE = 0.1


#: Folders a search passed over, each with why (the plugin reports them as warnings).
Skipped = dict[Path, str]


def _entries(home: Path, skipped: Skipped | None = None) -> list[Path]:
    """Everything named state.db a home holds, whatever it is: its own, then each profile's in
    name order. Not what is behind a directory that cannot be searched: whether it holds a
    state.db cannot be told (it goes into ``skipped``)."""
    own = home / DATABASE_NAME
    found = [own] if sniff.kind(own) not in ("missing", "denied") else []
    try:
        profiles = sorted(p for p in (home / DIR_PROFILES).iterdir() if sniff.kind(p) == "dir")
    except (FileNotFoundError, NotADirectoryError):
        return found
    except OSError as exc:
        if skipped is not None:
            skipped[home / DIR_PROFILES] = reason(exc)
        return found
    found.extend(
        p / DATABASE_NAME
        for p in profiles
        if sniff.kind(p / DATABASE_NAME) not in ("missing", "denied")
    )
    return found


def find_databases(root: str | os.PathLike[str], skipped: Skipped | None = None) -> list[Path]:
    """The Hermes databases under root: each state.db, a directory's before its subdirectories'.

    A file root is returned as it is. The walk is :func:`asf_core.walk.files_under` (any
    depth, links to directories not followed, a directory that cannot be read passed over,
    into ``skipped`` with why); a link named state.db is not taken either.
    """
    root = Path(root)
    if sniff.kind(root) == "file":
        return [root]
    walk = files_under(root, lambda name: name == DATABASE_NAME)
    if skipped is not None:
        skipped.update(walk.skipped)
    # By folder, a folder before the folders in it (the walk sorts by whole path). The walk
    # gives regular files and links to them: the links are not taken.
    ordered = sorted(walk.files, key=lambda p: p.parent.parts)
    return [p for p in ordered if not p.is_symlink()]


def default_homes(skipped: Skipped | None = None) -> list[Path]:
    """Hermes' home as Hermes finds it: ``$HERMES_HOME``, else ``~/.hermes``; when it exists.
    One behind a directory closed to us goes into ``skipped``: whether it holds a home cannot
    be told, and saying nothing would claim it holds none."""
    home = default_home()
    if home is None:
        return []
    found = sniff.kind(home)
    if found == "denied" and skipped is not None:
        skipped[home] = "permission denied"
    return [home] if found == "dir" else []


@frozen(kw_only=True)
class DatabaseClaim:
    """A database the plugin claims, how sure it is (see :func:`claims`) and why."""

    path: Path
    confidence: float
    detail: str


def _schema_claim(path: Path) -> DatabaseClaim | None:
    """The claim a regular file's schema makes: 1.0 for a file named state.db with Hermes'
    tables, 0.9 for such a file under another name, :data:`UNREADABLE` for a state.db whose
    tables cannot be read; None otherwise."""
    verdict = sniff.hermes_schema(path)
    named = path.name == DATABASE_NAME
    if verdict is True:
        confidence, reason = (1.0, "Hermes state.db") if named else (0.9, "Hermes schema")
        return DatabaseClaim(path=path, confidence=confidence, detail=reason)
    if verdict is None and named:
        return DatabaseClaim(path=path, confidence=UNREADABLE, detail="state.db, schema unreadable")
    return None


def _damaged_sqlite(path: Path) -> bool:
    """An SQLite file whose tables cannot be read (truncated, corrupt)."""
    return sniff.is_sqlite(path) and sniff.hermes_schema(path) is None


def _claim(path: Path, *, meant: bool) -> DatabaseClaim | None:
    """The claim on one database. ``meant``: the user means it as Hermes' (it is named
    state.db, or it is a home's), so it is claimed whatever it holds."""
    kind = sniff.kind(path)
    if kind == "missing":
        return None
    found = _schema_claim(path) if kind == "file" else None
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
    return DatabaseClaim(path=path, confidence=confidence, detail=detail)


def _home_of(database: Path) -> Path:
    """The Hermes home a database belongs to: the one above ``profiles/<name>/``, else its
    directory."""
    if database.parent.parent.name == DIR_PROFILES:
        return database.parent.parent.parent
    return database.parent


def label_of(database: Path) -> str:
    """What people call a database: its home's directory name (``.hermes``), a profile's as
    ``<home>/<profile>``, a file of another name by its name."""
    resolved = database.resolve()
    home = _home_of(resolved)
    if resolved.parent.parent.name == DIR_PROFILES:
        return f"{home.name}/{resolved.parent.name}"
    if resolved.name == DATABASE_NAME:
        return home.name or str(home)
    return resolved.name


def default_home() -> Path | None:
    """Where Hermes keeps its home: ``$HERMES_HOME``, else ``~/.hermes`` (existing or not;
    None without either: no home directory at all).

    Read as Hermes reads it: surrounding blanks stripped, a blank value meaning unset, and
    the rest taken as it is (Hermes expands no ``~`` in it, so neither is one expanded here:
    that would name a home Hermes does not use)."""
    env = os.environ.get("HERMES_HOME", "").strip()
    if env:
        return Path(env)
    user = home()
    return None if user is None else user / ".hermes"


def claims(
    path: str | os.PathLike[str] | None, skipped: Skipped | None = None
) -> list[DatabaseClaim]:
    """Each database the plugin claims at a path the user named (None: the default homes);
    the folders that could not be searched go into ``skipped``.

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
        return [c for home in default_homes(skipped) for c in _home_claims(home, skipped)]
    path = Path(path)
    if sniff.kind(path) == "dir" and _entries(path):
        return _home_claims(path, skipped)
    if sniff.kind(path) == "dir" and path.name != DATABASE_NAME:
        return _tree_claims(path, skipped)
    found = _claim(path, meant=path.name == DATABASE_NAME)
    return [found] if found is not None else []


def _home_claims(home: Path, skipped: Skipped | None = None) -> list[DatabaseClaim]:
    dbs = _entries(home, skipped)
    return [c for c in (_claim(db, meant=True) for db in dbs) if c is not None]


def _tree_claims(root: Path, skipped: Skipped | None = None) -> list[DatabaseClaim]:
    found: dict[Path, DatabaseClaim] = {}
    for db in find_databases(root, skipped):
        if sniff.hermes_schema(db):
            for claim in _home_claims(_home_of(db), skipped):
                if claim.path.is_relative_to(root):
                    found.setdefault(claim.path, claim)
        elif db not in found and _damaged_sqlite(db):
            found[db] = DatabaseClaim(path=db, confidence=UNREADABLE, detail="state.db, damaged")
    return list(found.values())
