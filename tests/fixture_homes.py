"""Copies of every Hermes fixture home and of the shipped example home, for commands to run on.

SQLite leaves ``-wal``/``-shm`` files beside a database it opens, and asf must never write
inside ``../shared``: tests run the command on copies.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from fixture_paths import RELEASES, ROOT, label

__all__ = ["EXAMPLE", "HOMES", "copy_home", "home_ids", "oracles"]

EXAMPLE = ROOT / "examples" / "hermes-home"
#: Every fixture release directory (each a Hermes home), then the example home.
HOMES: list[Path] = [*RELEASES, EXAMPLE]


def home_ids() -> list[str]:
    return [label(h) if h != EXAMPLE else "example" for h in HOMES]


def copy_home(home: Path, into: Path) -> Path:
    """A copy of a home (databases without their ``-wal``/``-shm`` sidecars)."""
    target = into / home.name
    if not target.exists():
        shutil.copytree(home, target, ignore=shutil.ignore_patterns("*.db-wal", "*.db-shm"))
    return target


def oracles(home: Path) -> list[tuple[str, Path]]:
    """Each session of a home that has an ``expected-conversation`` oracle, with the oracle:
    the home's own sessions, then each profile's."""
    found = [(p.stem, p) for p in sorted((home / "expected-conversation").glob("*.json"))]
    for profile in sorted((home / "profiles").glob("*/expected-conversation")):
        found += [(p.stem, p) for p in sorted(profile.glob("*.json"))]
    return found
