"""The store handle the Hermes plugin gives the host: one open ``state.db``, read-only.

The database is named in every unit by its place in the Hermes home (``state.db``,
``profiles/<name>/state.db``), not by the path the user typed, so the ids and identities
in the output do not depend on where the database was converted from. A database that cannot
be read raises the host's :class:`asf_core.formats.StoreError` (from the reader, when it opens
the file or part way through), so ``asf`` reports a damaged file, not a crashed plugin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_plugin.schema import DATABASE_NAME, DIR_PROFILES
from hermes_plugin.source.database import SqliteStore
from hermes_plugin.source.store import Store

__all__ = ["HermesHandle", "database_name"]


def database_name(path: Path) -> str:
    """How units name a database: ``profiles/<name>/<file>`` inside a profile, else its file
    name; the profile told from where its folder is (resolved, as for its label), not from
    the path typed (``work/state.db`` from inside ``profiles/``, a link to the profile)."""
    folder = path.parent.resolve()
    if folder.parent.name == DIR_PROFILES:
        return f"{DIR_PROFILES}/{folder.name}/{path.name}"
    return path.name or DATABASE_NAME


class HermesHandle:
    """An open database: the reader's :class:`~hermes_plugin.source.store.Store` plus ``info``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sqlite = SqliteStore(path, name=database_name(path))
        #: The plan of the conversion in progress (``plan``), for ``finish``.
        self.planner: Any = None

    @property
    def store(self) -> Store:
        return self.sqlite

    def info(self) -> dict[str, Any]:
        """Name, path, schema version, journal mode, access, and the column lists of the two
        tables rows are read from (a column missing from a ``columns`` member is NULL, held
        by a core member, or absent from the table)."""
        info: dict[str, Any] = dict(self.sqlite.info())
        info["columns"] = {t: list(self.sqlite.columns(t)) for t in ("sessions", "messages")}
        return info

    def close(self) -> None:
        self.sqlite.close()
