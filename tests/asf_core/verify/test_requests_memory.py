"""Checking request hashes holds no copy of a session's items unless it must rebuild.

The walk feeds each entry once, hashing its item's canonical bytes into a running digest; only
a rebuild (after a compaction or a change of settings) walks a path again, and only what it
walks is worth keeping for the next one. Kept for every item, the copies doubled the memory
`asf verify` needs for a long session (a 28 MB session: 169 MB at the peak, 95 MB without)."""

from __future__ import annotations

from pathlib import Path

from asf_core.model import BranchSummary, Compaction, Config, Item
from asf_core.reader import read_session
from asf_core.verify.requests import _Walk


def test_only_the_items_a_rebuild_walks_are_kept(converted_homes: list[Path]) -> None:
    files = sorted(f for home in converted_homes for f in home.rglob("*.jsonl"))
    kept = total = 0
    for path in files:
        session = read_session(path)
        walk = _Walk(session)
        list(walk.findings())
        last = max(
            (n for n, e in enumerate(session.entries) if isinstance(e, Config | Compaction)),
            default=-1,
        )
        before = {
            e.id
            for e in session.entries[: last + 1]
            if isinstance(e, Item | BranchSummary) and e.id is not None
        }
        assert set(walk.items) <= before, path  # nothing fed after the last rebuild
        kept += len(walk.items)
        total += sum(isinstance(e, Item) for e in session.entries)
    assert len(files) > 20
    assert total > 200
    assert kept < total / 4
