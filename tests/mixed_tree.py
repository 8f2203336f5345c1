"""A directory of real ASF files of every kind, for the commands that work on a directory's
files (``verify``, ``export``) with one process and with workers."""

from __future__ import annotations

import shutil
from pathlib import Path

from fixture_paths import SHARED

#: The reference vectors: files with every kind of finding, some not ASF at all.
SESSIONS = SHARED / "asf" / "vectors" / "testdata" / "sessions"


def mixed_tree(root: Path, converted: list[Path], extra: dict[str, bytes]) -> Path:
    """``root`` holding the vectors, every converted home (sub-agents in other folders than
    their parents; their JSON records left out) and the ``extra`` files named."""
    shutil.copytree(SESSIONS, root / "vectors")
    for number, home in enumerate(converted):
        shutil.copytree(home, root / f"home{number}", ignore=shutil.ignore_patterns("*.json"))
    for name, data in extra.items():
        (root / name).write_bytes(data)
    return root
