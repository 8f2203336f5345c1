"""One root-to-leaf path of a session, with what the tree around it says: every export target
starts here.

A session file is a tree; every projection (ATIF, OpenTelemetry, transcripts) shows one path
through it, from a root to a chosen entry (the *leaf*). :class:`SessionTree` holds what every
path of one session shares (the file's last entry, each subtree's newest entry, the labels
and the name), computed once, so exporting every leaf of a session stays linear per leaf.

Entries are named as the file names them: a pre-0.5 file is migrated in memory to hash ids by
the reader, but a document about it should carry the ids a person finds in the file, so
:meth:`SessionTree.name` maps every hash id back to its legacy id there.
"""

from __future__ import annotations

from attrs import frozen

from asf_core.context import Context, build_context
from asf_core.model import Entry, Info, Label, Outcome
from asf_core.session_file import HASHED_FROM, SessionFile

__all__ = ["PathView", "SessionTree"]


def _ident(entry: Entry) -> str:
    return entry.id or ""


@frozen(kw_only=True)
class PathView:
    """One path: the entries from a root to ``leaf`` and the context built at its end."""

    session: SessionFile
    tree: SessionTree
    leaf: str
    #: Root first, leaf last, following ``parent`` only.
    path: list[Entry]
    context: Context
    #: The path ends at the file's last entry: the session's current path.
    main: bool
    #: Leaves of the branches this path was continued in preference to, fork by fork.
    preferred_over: list[str]
    #: The fork at which this path left the preferred route (None when it never did).
    abandoned_at: str | None
    #: Outcomes written below the leaf that judge an entry of this path (file order).
    outcomes_below: list[Outcome]

    def name(self, entry_id: str | None) -> str:
        """An entry id as the file spells it (see :meth:`SessionTree.name`)."""
        return self.tree.name(entry_id)


class SessionTree:
    """The indexes every path of one session shares, built in one pass over the file."""

    def __init__(self, session: SessionFile) -> None:
        self.session = session
        entries = session.entries
        self.main_leaf: str | None = _ident(entries[-1]) if entries else None
        #: Highest file position found in each entry's subtree.
        self.latest: dict[str, int] = {}
        for pos in range(len(entries) - 1, -1, -1):
            entry = entries[pos]
            ident = _ident(entry)
            here = self.latest.setdefault(ident, pos)
            if entry.parent is not None and self.latest.get(entry.parent, -1) < here:
                self.latest[entry.parent] = here
        self.labels: dict[str, str] = {}
        self.session_name: str | None = None
        for entry in entries:
            if isinstance(entry, Label) and entry.target is not None:
                if entry.label is None:
                    self.labels.pop(entry.target, None)
                else:
                    self.labels[entry.target] = entry.label
            elif isinstance(entry, Info) and entry.name:
                self.session_name = entry.name
        self._legacy: dict[str, str] = (
            {new: old for old, new in session.legacy.items()}
            if session.migrated and session.version < HASHED_FROM
            else {}
        )

    def name(self, entry_id: str | None) -> str:
        """The id the file itself uses for an entry: its legacy id in a migrated file."""
        if entry_id is None:
            return ""
        return self._legacy.get(entry_id, entry_id)

    @property
    def legacy_named(self) -> bool:
        """Entries are named by their legacy ids (a pre-0.5 file)."""
        return bool(self._legacy)

    def children(self, entry_id: str) -> list[str]:
        return self.session.children.get(entry_id, [])

    def leaves_under(self, entry_id: str) -> list[str]:
        """The leaves of the subtree at ``entry_id``, later children's leaves first."""
        found: list[str] = []
        stack = [entry_id]
        while stack:
            ident = stack.pop()
            kids = self.children(ident)
            if not kids:
                found.append(ident)
            # Popped in file order of the children, so later children come out first.
            stack.extend(kids)
        return found

    def view(self, leaf: str) -> PathView:
        """The path ending at ``leaf`` (any entry of the file, not only a leaf)."""
        path = self.session.path_to(leaf)
        preferred_over: list[str] = []
        abandoned_at: str | None = None
        for i, entry in enumerate(path[:-1]):
            ident = _ident(entry)
            kids = self.children(ident)
            if len(kids) < 2:
                continue
            # The continued branch is the one holding the newest entry (the reference
            # exporter's default preference); ties keep the earlier child.
            preferred = kids[0]
            for kid in kids[1:]:
                if self.latest.get(kid, -1) > self.latest.get(preferred, -1):
                    preferred = kid
            if _ident(path[i + 1]) == preferred:
                for kid in kids:
                    if kid != preferred:
                        preferred_over.extend(self.leaves_under(kid))
            elif abandoned_at is None:
                abandoned_at = ident
        return PathView(
            session=self.session,
            tree=self,
            leaf=leaf,
            path=path,
            context=build_context(path),
            main=leaf == self.main_leaf,
            preferred_over=preferred_over,
            abandoned_at=abandoned_at,
            outcomes_below=self._outcomes_below(leaf, path),
        )

    def _outcomes_below(self, leaf: str, path: list[Entry]) -> list[Outcome]:
        if not self.children(leaf):
            return []
        below: set[str] = set()
        stack = list(self.children(leaf))
        while stack:
            ident = stack.pop()
            below.add(ident)
            stack.extend(self.children(ident))
        on_path = {_ident(e) for e in path}
        return [
            e
            for e in self.session.entries
            if isinstance(e, Outcome) and _ident(e) in below and e.target in on_path
        ]
