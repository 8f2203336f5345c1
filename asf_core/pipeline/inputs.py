"""What a conversion reads, so that nothing it writes ever lands on it.

A store is read while its agent may be running, and people name paths by hand: ``--report
~/.hermes/state.db`` or an output directory inside a folder-shaped store would overwrite the
very history being converted. Every path a run writes is checked against the paths it reads,
by resolved path (links followed) and by inode (hard links, bind mounts), before it is written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from attrs import frozen

from asf_core.errors import OutputError

__all__ = ["Inputs"]

#: What is wrong with writing a path that is (or is in) what the run reads, and what to do.
_CHANGE = "writing there would change it; name another path"
_READ = f"which this run reads: {_CHANGE}"


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a link loop: compare it as written
        return path.absolute()


@frozen
class Inputs:
    """The stores a run converts and the paths the user named, resolved once."""

    #: Claimed stores (files or folders), resolved.
    stores: tuple[Path, ...]
    #: The PATH arguments, resolved (a folder searched, e.g. a Hermes home).
    named: tuple[Path, ...]
    #: ``(device, inode)`` of every store and named path that exists, and that path.
    inodes: dict[tuple[int, int], Path]

    @classmethod
    def of(cls, stores: Iterable[Path], named: Iterable[Path] = ()) -> Inputs:
        stores = tuple(_resolved(p) for p in stores)
        named = tuple(_resolved(p) for p in named)
        inodes: dict[tuple[int, int], Path] = {}
        for path in (*stores, *named):  # the first of one file's names, a store's first
            identity = _identity(path)
            if identity is not None:
                inodes.setdefault(identity, path)
        return cls(stores, named, inodes)

    def _store_holding(self, path: Path) -> Path | None:
        """The store ``path`` is, or lies inside (a folder-shaped store), if any."""
        for store in self.stores:
            if path == store or (path.is_relative_to(store) and store.is_dir()):
                return store
        return None

    def check_output_dir(self, out_dir: Path) -> None:
        """Refuse an output directory that is a store or lies inside one."""
        where = _resolved(out_dir)
        store = self._store_holding(where)
        if store is not None:
            what = "is" if where == store else "is inside"
            raise OutputError(f"{out_dir}: {what} {store}, which is being converted")

    def near(self, folder: Path) -> bool:
        """Whether a store lies inside ``folder`` (so files written there need checking)."""
        where = _resolved(folder)
        return any(store.is_relative_to(where) for store in self.stores)

    def check_write(self, path: Path, *, named: bool = False) -> None:
        """Refuse to write ``path`` when it is a store (or inside one) or, with ``named``, one
        of the paths the user named; links are followed and inodes compared."""
        where = _resolved(path)
        store = self._store_holding(where)
        if store is None and named and where in self.named:
            store = where
        if store is not None:
            if where == store and Path(os.path.normpath(path.absolute())) == where:
                raise OutputError(f"{path}: this run reads it: {_CHANGE}")
            linked = where == store  # through a link (to it, or to a folder above it)
            raise OutputError(f"{path}: is {'a link to' if linked else 'inside'} {store}, {_READ}")
        identity = _identity(path)
        read = None if identity is None else self.inodes.get(identity)
        if read is not None:  # the same file under another name
            raise OutputError(f"{path}: is a hard link to {read} (the same file), {_READ}")
