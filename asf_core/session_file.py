"""A read session file: its header, its entries in file order, and the tree they make.

What :mod:`asf_core.reader` returns and everything downstream (context, verifier, command,
exporters) reads: walking a path, finding the leaves and the one a conversation resumes at.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from attrs import field, frozen

from asf_core.findings import Finding
from asf_core.model import Entry, Header, Label, Response

__all__ = ["HASHED_FROM", "SessionFile", "id_of", "sidecar_dir_name"]

#: Files older than this have opaque ids, migrated in memory; their labels predate ``leaf``.
HASHED_FROM: Final = (0, 5)


def sidecar_dir_name(session_id: object) -> str | None:
    """The session's sidecar directory (its blobs), beside the file and named after its id;
    None when the id is not one directory name (empty, ``.``, ``..``, a path): read from a
    file, it must never lead a reader elsewhere on disk."""
    if not isinstance(session_id, str) or session_id in ("", ".", ".."):
        return None
    if any(c in session_id for c in "/\\\0"):
        return None
    return session_id


def id_of(entry: Entry) -> str:
    """The id of an entry of a read session (every one has one: read or recomputed)."""
    # Every entry a SessionFile holds has an id (read or recomputed).
    if entry.id is None:
        raise ValueError("entry without an id in a read session")
    return entry.id


def _is_leaf_label(entry: Entry) -> bool:
    return isinstance(entry, Label) and entry.label == "leaf"


@frozen(kw_only=True)
class SessionFile:
    """A read session file: header, entries in file order, the tree, and what was wrong."""

    path: Path | None
    header: Header
    #: ``(major, minor)`` from the header's ``format``.
    version: tuple[int, int]
    #: True for a pre-0.5 file whose ids were recomputed in memory.
    migrated: bool
    #: File order; an entry whose id repeats appears once (the first).
    entries: list[Entry]
    line_of: dict[str, int]
    by_id: dict[str, Entry]
    #: Parent id (``None`` = roots) -> child ids in file order.
    children: dict[str | None, list[str]]
    problems: list[Finding]
    #: The header's ``base`` (0.5+ files only).
    base: str | None
    #: Entry id -> index in ``entries``.
    index_of: dict[str, int] = field(factory=dict)
    #: For a migrated file: old opaque id -> new hash id.
    legacy: dict[str, str] = field(factory=dict)
    #: For a file redacted in memory: the id an entry has in the file -> its id now (an entry
    #: whose content redacting changed is sealed again), as another session still names it.
    renamed: dict[str, str] = field(factory=dict)
    #: Each entry's span in a depth-first walk of the tree :meth:`path_to` follows, made on
    #: first use (with the entry count it was made for): see :meth:`above`.
    _spans: list[tuple[int, dict[str, tuple[int, int]]]] = field(
        factory=list, init=False, repr=False, eq=False
    )

    def current(self, entry_id: str) -> str | None:
        """The id now of an entry named by its id, a migrated file's legacy id or the id it
        had before redacting (another session's reference to it); None when none is known."""
        if entry_id in self.by_id:
            return entry_id
        return self.legacy.get(entry_id) or self.renamed.get(entry_id)

    def position(self, entry_id: str) -> int:
        """The entry's index in file order (``KeyError`` if it is not in the file)."""
        return self.index_of[entry_id]

    def path_to(self, entry_id: str) -> list[Entry]:
        """Root ... entry, following ``parent`` only.

        The walk stops at a parent that is missing or not earlier in the file, so a damaged
        file (a parent written later, a cycle through forged ids) still gives a finite path.
        """
        entry = self.by_id[entry_id]
        pos = self.index_of[entry_id]
        path = [entry]
        while entry.parent is not None:
            up = self.index_of.get(entry.parent)
            if up is None or up >= pos:
                break
            pos = up
            entry = self.entries[pos]
            path.append(entry)
        path.reverse()
        return path

    def up_of(self, entry_id: str) -> str | None:
        """The entry :meth:`path_to` steps to from this one: its ``parent`` when that is an
        entry earlier in the file, else None (the entry starts its path)."""
        parent = self.by_id[entry_id].parent
        up = self.index_of.get(parent) if parent is not None else None
        return parent if up is not None and up < self.index_of[entry_id] else None

    def above(self, ancestor_id: str, entry_id: str) -> bool:
        """Whether ``ancestor_id`` is on :meth:`path_to` ``entry_id`` before the entry itself.

        Constant time after one walk of the file: rules asking it of every compaction or
        queued item stay linear in a file of thousands of them (a walk of each path was
        quadratic: 10,000 compactions took 80 s to verify).
        """
        spans = self._span_table()
        inner, outer = spans.get(entry_id), spans.get(ancestor_id)
        if inner is None or outer is None:
            return False
        return outer[0] < inner[0] < outer[1]

    def _span_table(self) -> dict[str, tuple[int, int]]:
        """Entry id -> (when the walk enters it, when it has left its last descendant)."""
        if self._spans and self._spans[0][0] == len(self.entries):
            return self._spans[0][1]
        kids: dict[str, list[str]] = {}
        roots: list[str] = []
        for entry in self.entries:
            ident = id_of(entry)
            up = self.up_of(ident)
            if up is None:
                roots.append(ident)
            else:
                kids.setdefault(up, []).append(ident)
        spans: dict[str, tuple[int, int]] = {}
        entered: dict[str, int] = {}
        clock = 0
        stack = [(r, False) for r in reversed(roots)]
        while stack:
            ident, left = stack.pop()
            if left:
                spans[ident] = (entered[ident], clock)
                continue
            entered[ident] = clock
            clock += 1
            stack.append((ident, True))
            stack.extend((k, False) for k in reversed(kids.get(ident, ())))
        self._spans[:] = [(len(self.entries), spans)]
        return spans

    def leaves(self) -> list[str]:
        """Ids of entries without children, in file order."""
        return [id_of(e) for e in self.entries if not self.children.get(id_of(e))]

    def responses(self) -> list[Entry]:
        """The ``response`` entries in file order."""
        return [e for e in self.entries if isinstance(e, Response)]

    def resume_leaf(self) -> str | None:
        """The leaf a writer resuming this bare file appends under (draft 0.11, File).

        The last entry of the file, unless a ``leaf`` label is in force: then the newest
        entry descending from its target that was written after the label (the label itself
        excepted), or the target when there is none. A label is not in force when its target
        is absent, on the prefix above the base, or itself a ``leaf`` label; a ``label:null``
        on the target clears it (another label value does not). A result that is a ``leaf``
        label resolves to its nearest ancestor that is not one. Pre-0.5 files: the last entry.
        ``None`` only when there is nothing to resume at.
        """
        if not self.entries:
            return None
        last = id_of(self.entries[-1])
        if self.version < HASHED_FROM:
            return last  # `leaf` became a reserved label value in 0.5
        return self._past_leaf_labels(self._labelled_leaf() or last)

    def _labelled_leaf(self) -> str | None:
        base_pos = self.index_of.get(self.base) if self.base is not None else None
        in_force: dict[str, int] = {}  # target -> position of the leaf label naming it
        for pos, entry in enumerate(self.entries):
            if not isinstance(entry, Label) or entry.target is None:
                continue
            target = entry.target
            if entry.label is None:
                in_force.pop(target, None)
                continue
            if entry.label != "leaf":
                continue
            tpos = self.index_of.get(target)
            if tpos is None or (base_pos is not None and tpos < base_pos):
                continue
            if _is_leaf_label(self.entries[tpos]):
                continue
            in_force[target] = pos
        if not in_force:
            return None
        target, label_pos = max(in_force.items(), key=lambda kv: kv[1])
        tpos = self.index_of[target]
        below = {target}
        newest = target if tpos > label_pos else None
        for pos in range(tpos + 1, len(self.entries)):
            entry = self.entries[pos]
            if entry.parent in below:
                below.add(id_of(entry))
                if pos > label_pos:
                    newest = id_of(entry)
        return newest or target

    def _past_leaf_labels(self, leaf: str) -> str | None:
        entry = self.by_id[leaf]
        pos = self.index_of[leaf]
        while _is_leaf_label(entry):
            up = self.index_of.get(entry.parent) if entry.parent is not None else None
            if up is None or up >= pos:
                return None
            pos = up
            entry = self.entries[pos]
        return id_of(entry)
