"""Every path of every session file under a directory, for the export tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from asf_core.export import PathView, SessionTree
from asf_core.reader import FormatError, read_session


def views(root: Path) -> Iterator[tuple[Path, PathView]]:
    """(file, path view) for each leaf of each readable ``*.jsonl`` under ``root``."""
    for path in sorted(root.rglob("*.jsonl")):
        try:
            session = read_session(path)
        except FormatError:
            continue
        tree = SessionTree(session)
        for leaf in session.leaves():
            yield path, tree.view(leaf)
