"""A session under construction before its ids exist: entries and their parents by index.

Entry ids are hashes over the parent's id and ``parents``, so the converter builds the whole
tree first (it learns a sub-agent's leaf, which an output entry lists in ``parents``, only
after converting the sub-agent) and computes every id at the end, in file order.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import define, field

from asf_core import ids
from asf_core.model import Entry, Header, ParentRef
from asf_core.writer import SessionBuilder

__all__ = ["Clock", "Plan"]

#: The ``ts`` of an entry when no trustworthy time precedes it.
EPOCH_TS = "1970-01-01T00:00:00Z"


@define
class Plan:
    """Entries in file order, each with its parent's index (None for a root)."""

    entries: list[Entry] = field(factory=list)
    parents: list[int | None] = field(factory=list)
    extra: dict[int, list[ParentRef]] = field(factory=dict)
    #: Members that name another entry of the plan, by index (a compaction's ``first_kept``).
    targets: dict[int, tuple[str, int]] = field(factory=dict)

    def add(self, entry: Entry, parent: int | None) -> int:
        self.entries.append(entry)
        self.parents.append(parent)
        return len(self.entries) - 1

    def converge(self, index: int, refs: Sequence[ParentRef]) -> None:
        """Record extra predecessors (``parents``) of an entry, e.g. sub-agent leaves."""
        self.extra.setdefault(index, []).extend(refs)

    def realize(self, header: Header) -> list[Entry]:
        """Compute every id, parents before children; ``parents`` sorted as the format says.

        The plan's entries are its own: each is sealed in place (no copy), its parent, extra
        parents and the members naming other entries set as it is.
        """
        builder = SessionBuilder(header)
        done: list[str] = []
        for entry, parent, index in zip(
            self.entries, self.parents, range(len(self.entries)), strict=True
        ):
            refs = self.extra.get(index)
            parents = None
            if refs:
                unique = {(r.session or "", r.entry): r for r in refs}
                parents = tuple(unique[k] for k in sorted(unique))
            named = self.targets.get(index)
            members = None if named is None else {named[0]: done[named[1]]}
            sealed = builder.append_draft(
                entry,
                parent=None if parent is None else done[parent],
                parents=parents,
                members=members,
            )
            done.append(str(sealed.id))
        self.entries = builder.entries
        return builder.entries


@define
class Clock:
    """Entry times: a row's timestamp when it is trustworthy, else the last good time.

    Hermes' timestamps are not monotonic and a damaged cell may hold anything; ``ts`` is
    informational in ASF, so a missing or out-of-window time (the reader already refuses
    anything outside [0, 4.2e9]) takes the previous entry's ``ts`` (the epoch before any).
    """

    last: str = EPOCH_TS

    def at(self, seconds: float | None) -> str:
        if seconds is not None:
            try:  # not contextlib.suppress, a context manager per row
                self.last = ids.format_ts(seconds)
            except ids.IdError:
                return self.last
        return self.last
