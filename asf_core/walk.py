"""Walking a folder tree without recursion: the one walk every search for files uses.

People point asf at their home directories, and a tree can be thousands of folders deep or
hold folders closed to us. :func:`files_under` keeps its own stack (``rglob`` and
``os.walk`` recurse), never follows a link to a folder (no cycles), and passes over a folder it
cannot list, saying which and why, so the rest of the tree is still searched. Plugins use it
too (``from asf_core.walk import files_under``), and :func:`unsearchable` for the warning
that names such a folder (``asf verify`` and a plugin's ``discover`` give the same one).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from attrs import frozen

from asf_core.findings import WARNING, Finding

__all__ = [
    "UNSEARCHABLE",
    "Walk",
    "file_status",
    "files_under",
    "is_dir",
    "is_file",
    "reason",
    "unsearchable",
]

#: The code of the warning for a folder that could not be searched.
UNSEARCHABLE = "unsearchable"


@frozen
class Walk:
    """What a walk found: files in path order, and each folder passed over with the reason."""

    files: tuple[Path, ...]
    skipped: tuple[tuple[Path, str], ...] = ()
    #: Entries whose name matched but that are no regular file nor folder (a FIFO, a
    #: socket, a device, a dangling link, a link to a folder): never opened, for the caller
    #: to report.
    others: tuple[Path, ...] = ()


def _kind(item: os.DirEntry[str]) -> str:
    try:
        if item.is_dir(follow_symlinks=False):
            return "dir"
        return "file" if item.is_file() else "other"
    except OSError:
        return "other"


def file_status(path: Path) -> tuple[int, ...] | str:
    """A file's device, inode, mode, size, modification and change times (through a link),
    for a plugin's stamps and fingerprints (a change time cannot be set back: content
    rewritten with its size and modification time kept still shows); the error's name when
    it has none (gone, a dangling link, closed to us)."""
    try:
        st = path.stat()
    except OSError as exc:
        return exc.__class__.__name__
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def is_file(path: Path) -> bool:
    """``path.is_file()``, False where the file system will not say (a race, no access)."""
    try:
        return path.is_file()
    except OSError:
        return False


def is_dir(path: Path) -> bool:
    """``path.is_dir()``, False where the file system will not say."""
    try:
        return path.is_dir()
    except OSError:
        return False


def reason(exc: OSError | ValueError) -> str:
    """Why a folder could not be listed, in the system's words ("permission denied")."""
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return why.lower()


def unsearchable(folder: Path, why: str) -> Finding:
    """The warning for a folder passed over (``why``: see :func:`reason`)."""
    return Finding(
        code=UNSEARCHABLE,
        message=f"cannot search this folder: {why}; skipped",
        kind=WARNING,
        path=str(folder),
    )


def files_under(root: Path, match: Callable[[str], bool] = lambda name: True) -> Walk:
    """Every regular file (or link to one) below ``root`` whose name ``match`` accepts."""
    files: list[Path] = []
    others: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                items = [(item.name, _kind(item)) for item in listing]
        except (OSError, ValueError) as exc:  # closed to us, gone, a name too long
            skipped.append((folder, reason(exc)))
            continue
        for name, kind in items:
            if kind == "dir":
                stack.append(folder / name)
            elif match(name):
                (files if kind == "file" else others).append(folder / name)
    return Walk(files=tuple(sorted(files)), skipped=tuple(skipped), others=tuple(sorted(others)))
