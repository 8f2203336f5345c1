"""Reading ASF session files: one streaming pass that checks every line and builds the tree.

A reader must never "repair" a file: every id is recomputed from the line's own members and
every rule the draft puts on the file (parents before children, the prefix of a file with a
``base``, ``parents`` references) is checked, but what the file says is kept as written and
each deviation becomes a :class:`~asf_core.findings.Finding`. Only a file that cannot be ASF
at all (no header, a newer format) raises :class:`FormatError`.

Pre-0.5 files have opaque ids; they are migrated in memory (draft 0.11 section on
versioning): each ``ts`` is respelled, the old id is kept as ``legacy_id`` in the body, every
entry-naming member is rewritten to the new hash ids, and ids are computed in file order.

The pass is linear in the file: references that cannot be resolved yet (a ``parent`` not seen
so far) are remembered and settled once at the end, so a damaged file costs no more to read
than a good one.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

from attrs import field, frozen

from asf_core import canonical, ids
from asf_core.codec import entry_from_json, header_from_json
from asf_core.findings import ERROR, WARNING, Finding
from asf_core.model import CORE_TYPES, Entry, Header, Label, Response

__all__ = [
    "READER_VERSION",
    "FormatError",
    "SessionFile",
    "parse_session",
    "read_session",
]

#: The newest draft this reader understands; a 0.x reader refuses later minors.
READER_VERSION: Final = (0, 11)
#: Files older than this have opaque ids and are migrated in memory.
_HASHED_FROM: Final = (0, 5)

_FORMAT: Final = re.compile(r"agentsession/(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")

#: Digits and the decimal point all become "0", for :func:`_maybe_not_ijson`.
_MANTISSA: Final = bytes.maketrans(b"0123456789.", b"00000000000")
_SIXTEEN: Final = b"0" * 16


#: Members of core entries that name another entry of the file (rewritten by migration).
_NAMING: Final[dict[str, tuple[str, ...]]] = {
    "dispatch": ("target",),
    "decision": ("target",),
    "label": ("target",),
    "outcome": ("target",),
    "link": ("target",),
    "compaction": ("first_kept",),
    "branch_summary": ("from",),
    "item": ("queued_from",),
}


class FormatError(Exception):
    """The file cannot be read as ASF at all: empty, no or garbage header, newer format."""


def _id(entry: Entry) -> str:
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

    def leaves(self) -> list[str]:
        """Ids of entries without children, in file order."""
        return [_id(e) for e in self.entries if not self.children.get(_id(e))]

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
        last = _id(self.entries[-1])
        if self.version < _HASHED_FROM:
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
                below.add(_id(entry))
                if pos > label_pos:
                    newest = _id(entry)
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
        return _id(entry)


class _Pass:
    """The state of one reading pass over a file."""

    def __init__(self, path: Path | None, first: bytes) -> None:
        self.path = path
        self.problems: list[Finding] = []
        self.entries: list[Entry] = []
        self.by_id: dict[str, Entry] = {}
        self.line_of: dict[str, int] = {}
        self.index_of: dict[str, int] = {}
        self.children: dict[str | None, list[str]] = {}
        self.legacy: dict[str, str] = {}
        # (line, entry id, referenced id) settled at the end.
        self.pending_parent: list[tuple[int, str, str]] = []
        self.pending_parents: list[tuple[int, str, str]] = []
        self.header, self.version = self._header(first)
        self.migrating = self.version < _HASHED_FROM
        self.base = self.header.base if not self.migrating else None

    # -- reporting ----------------------------------------------------------------------

    def report(
        self,
        code: str,
        message: str,
        line: int = 0,
        entry: str | None = None,
        kind: str = ERROR,
    ) -> None:
        self.problems.append(Finding(code=code, message=message, line=line, entry=entry, kind=kind))

    # -- header -------------------------------------------------------------------------

    def _header(self, first: bytes) -> tuple[Header, tuple[int, int]]:
        try:
            obj = canonical.parse(first)
        except (ValueError, RecursionError) as exc:
            raise FormatError(f"line 1 is not a session header: {exc}") from None
        if not isinstance(obj, dict):
            raise FormatError("line 1 is not a session header (not a JSON object)")
        if obj.get("type") != "session":
            raise FormatError(f"line 1 is not a session header (type {obj.get('type')!r})")
        fmt = obj.get("format")
        if not isinstance(fmt, str):
            raise FormatError("the session header has no format")
        match = _FORMAT.fullmatch(fmt)
        if match is None:
            raise FormatError(f"unknown format {fmt!r} (expected agentsession/<major>.<minor>)")
        version = (int(match[1]), int(match[2]))
        if version > READER_VERSION:
            mine = "{}.{}".format(*READER_VERSION)
            raise FormatError(f"{fmt} is newer than this reader ({mine})")
        if version < (0, 1):
            raise FormatError(f"{fmt} is not a format this reader knows")
        for name in ("id", "created_at", "payload"):
            if not isinstance(obj.get(name), str):
                self.report("bad-header", f"the header has no string {name!r}", 1)
        payload = obj.get("payload")
        if isinstance(payload, str) and not payload.startswith("openresponses/"):
            self.report("bad-header", f"unknown payload profile {payload!r}", 1, kind=WARNING)
        if "base" in obj:
            if not isinstance(obj["base"], str):
                self.report("bad-header", "the header's base is not an entry id", 1)
            elif version < _HASHED_FROM:
                self.report(
                    "bad-header",
                    f"base is a 0.5 member; ignored in an {fmt} file",
                    1,
                    kind=WARNING,
                )
        return header_from_json(obj), version

    # -- lines --------------------------------------------------------------------------

    def line(self, n: int, raw: bytes, last: bool) -> None:
        if not raw.strip():
            self.report("blank-line", "empty line", n, kind=WARNING)
            return
        try:
            obj = canonical.parse(raw)
        except (ValueError, RecursionError) as exc:  # JsonError, and anything it lets through
            self._unparsable(n, raw, last, str(exc))
            return
        if not isinstance(obj, dict):
            self.report("not-object", f"line is a JSON {type(obj).__name__}, not an object", n)
            return
        if last and not raw.endswith(b"\n"):
            self.report("missing-newline", "the last line has no LF", n, kind=WARNING)
        hashable = self._screen(n, obj, raw)
        ident = (
            self._migrate(n, obj, hashable) if self.migrating else self._check_id(n, obj, hashable)
        )
        if ident is None:
            return
        if ident in self.by_id:
            self.report(
                "duplicate-id",
                f"repeats the entry of line {self.line_of[ident]}; the first is kept",
                n,
                ident,
            )
            return
        self._check_body(n, obj, ident)
        entry = entry_from_json(obj)
        self.index_of[ident] = len(self.entries)
        self.entries.append(entry)
        self.by_id[ident] = entry
        self.line_of[ident] = n

    def _unparsable(self, n: int, raw: bytes, last: bool, why: str) -> None:
        complete = _complete_json(raw)
        if complete:
            # Valid JSON the strict parse refuses: duplicate names or NaN, not damage.
            self.report("not-ijson", f"line cannot be hashed: {why}", n)
        elif last:
            self.report(
                "truncated",
                f"the last line does not parse (cut off mid-write?): {why}",
                n,
                kind=WARNING,
            )
        else:
            self.report("corrupt-line", f"line does not parse: {why}", n)

    def _screen(self, n: int, obj: dict[str, Any], raw: bytes) -> bool:
        """Report I-JSON violations (cheaply ruled out for almost every line); False if any."""
        if not _maybe_not_ijson(raw):
            return True
        found = canonical.ijson_problems(obj)
        stored = obj.get("id")
        for why in found:
            self.report("not-ijson", why, n, stored if isinstance(stored, str) else None)
        return not found

    def _check_id(self, n: int, obj: dict[str, Any], hashable: bool) -> str | None:
        """The id to file a 0.5+ line under (stored, or recomputed when missing)."""
        try:
            computed: str | None = ids.entry_id(obj)
        except ids.IdError as exc:
            computed = None
            if hashable:
                self.report("bad-entry", str(exc), n)
        stored = obj.get("id")
        if "id" not in obj or not isinstance(stored, str):
            if "id" in obj:
                self.report("bad-id", f"id {stored!r} is not a string", n, computed)
                del obj["id"]
            else:
                self.report("missing-id", "entry has no id; filed under its computed id", n)
            if computed is not None:
                obj["id"] = computed
            return computed
        if not stored.startswith("sha256:"):
            self.report("bad-id", f"id {stored!r} does not use the sha256: prefix", n, stored)
        elif computed is not None and computed != stored:
            self.report("bad-id", f"id does not match the line's content ({computed})", n, stored)
        return stored

    def _check_body(self, n: int, obj: dict[str, Any], ident: str) -> None:
        kind = obj.get("type")
        if "type" in obj and (not isinstance(kind, str) or not kind):
            self.report("bad-entry", f"entry type {kind!r} is not a name", n, ident)
        ts = obj.get("ts")
        if "ts" in obj and not (isinstance(ts, str) and ids.ts_ok(ts)):
            self.report("bad-ts", f"ts {ts!r} is not in the single 0.5 spelling", n, ident)
        if "content" in obj:
            self.report(
                "reserved-member", "the body carries the reserved member 'content'", n, ident
            )
        parent = obj.get("parent")
        if "parent" not in obj:
            self.report("bad-entry", "entry has no parent member (null for a root)", n, ident)
        if parent is None:
            self.children.setdefault(None, []).append(ident)
        elif isinstance(parent, str):
            self.children.setdefault(parent, []).append(ident)
            if parent not in self.by_id:
                self.pending_parent.append((n, ident, parent))
        else:
            self.report("bad-entry", f"parent {parent!r} is not an entry id", n, ident)
        if "parents" in obj:
            self._check_parents(n, obj["parents"], parent, ident)

    def _check_parents(self, n: int, refs: Any, parent: Any, ident: str) -> None:
        if not isinstance(refs, list):
            self.report("bad-parents", "parents is not a list", n, ident)
            return
        if not refs:
            self.report("bad-parents", "empty parents (writers omit it)", n, ident, WARNING)
            return
        seen: set[str] = set()
        keys: list[tuple[bool, str, str]] = []
        for ref in refs:
            entry = ref.get("entry") if isinstance(ref, dict) else None
            session = ref.get("session") if isinstance(ref, dict) else None
            if not isinstance(entry, str) or not (session is None or isinstance(session, str)):
                self.report("bad-parents", f"reference {ref!r} needs an entry id", n, ident)
                continue
            keys.append((session is not None, session or "", entry))
            if entry in seen:
                self.report("bad-parents", f"parents names {entry} twice", n, ident)
            seen.add(entry)
            if entry == parent:
                self.report("bad-parents", f"parents repeats the parent {entry}", n, ident)
            elif (session is None or session == self.header.id) and entry not in self.by_id:
                self.pending_parents.append((n, ident, entry))
        # Migrated references were sorted by their old ids; their order is kept as written.
        if keys != sorted(keys) and not self.migrating:
            self.report(
                "parents-order",
                "parents are not sorted by session then entry",
                n,
                ident,
                WARNING,
            )

    # -- pre-0.5 migration --------------------------------------------------------------

    def _migrate(self, n: int, obj: dict[str, Any], hashable: bool) -> str | None:
        """Rewrite a pre-0.5 line in place into its 0.5 form; return its new id."""
        old = obj.pop("id", None)
        if old is None:
            self.report("missing-id", "entry has no id", n)
        elif not isinstance(old, str):
            self.report("bad-id", f"id {old!r} is not a string", n)
            old = None
        elif old in self.legacy:
            self.report("duplicate-id", f"id {old!r} repeats; the first is kept", n, old)
            return None
        ts = obj.get("ts")
        if isinstance(ts, str):
            try:
                obj["ts"] = ids.migrate_ts(ts)
            except ids.IdError as exc:
                self.report("migration", f"{exc}; kept as written", n, kind=WARNING)
        if old is not None:
            was = obj.get("legacy_id", old)
            if was != old:
                self.report("migration", f"legacy_id {was!r} replaced by the id", n, old, WARNING)
            obj["legacy_id"] = old
        parent = obj.get("parent")
        if isinstance(parent, str) and parent in self.legacy:
            obj["parent"] = self.legacy[parent]
        refs = obj.get("parents")
        if isinstance(refs, list):
            obj["parents"] = [self._migrate_ref(n, ref) for ref in refs]
        kind = obj.get("type")
        for member in _NAMING.get(kind, ()) if isinstance(kind, str) else ():
            value = obj.get(member)
            if isinstance(value, str):
                if value in self.legacy:
                    obj[member] = self.legacy[value]
                else:
                    self.report(
                        "migration",
                        f"{member} {value!r} names no earlier entry; kept as written",
                        n,
                        old,
                        WARNING,
                    )
        if not (isinstance(kind, str) and kind in CORE_TYPES):
            for member, value in obj.items():
                if member not in ids.ENVELOPE and isinstance(value, str) and value in self.legacy:
                    self.report(
                        "migration",
                        f"extension member {member!r} may name entry {value!r}; kept as written",
                        n,
                        old,
                        WARNING,
                    )
        try:
            new = ids.entry_id(obj)
        except ids.IdError as exc:
            if hashable:
                self.report("bad-entry", str(exc), n, old)
            return None
        if old is not None:
            self.legacy[old] = new
        obj["id"] = new
        return new

    def _migrate_ref(self, n: int, ref: Any) -> Any:
        if not isinstance(ref, dict) or not isinstance(ref.get("entry"), str):
            return ref
        session = ref.get("session")
        if session is not None and session != self.header.id:
            self.report(
                "migration",
                f"parents reference {ref['entry']!r} into session {session!r} kept as written",
                n,
                kind=WARNING,
            )
            return ref
        mapped = self.legacy.get(ref["entry"])
        return ref if mapped is None else {**ref, "entry": mapped}

    # -- the end of the file ------------------------------------------------------------

    def finish(self) -> SessionFile:
        for n, ident, parent in self.pending_parent:
            if parent in self.by_id or parent in self.legacy:
                self.report("parent-later", f"parent {parent} is written after its child", n, ident)
            else:
                self.report("missing-parent", f"parent {parent} is not in the file", n, ident)
        for n, ident, ref in self.pending_parents:
            if ref in self.by_id or ref in self.legacy:
                self.report("bad-parents", f"parents names {ref}, written later", n, ident)
            else:
                self.report("bad-parents", f"parents names {ref}, not in this file", n, ident)
        if self.base is not None:
            self._check_base(self.base)
        self.problems.sort(key=lambda p: p.line)
        return SessionFile(
            path=self.path,
            header=self.header,
            version=self.version,
            migrated=self.migrating,
            entries=self.entries,
            line_of=self.line_of,
            by_id=self.by_id,
            children=self.children,
            problems=self.problems,
            base=self.base,
            index_of=self.index_of,
            legacy=self.legacy,
        )

    def _check_base(self, base: str) -> None:
        """The prefix rule: root..base as one chain first, then only entries below the base."""
        base_pos = self.index_of.get(base)
        if base_pos is None:
            self.report("base-prefix", f"the header's base {base} is not in the file")
            return
        chain: set[str] = set()
        pos: int | None = base_pos
        while pos is not None:
            entry = self.entries[pos]
            chain.add(_id(entry))
            up = self.index_of.get(entry.parent) if entry.parent is not None else None
            pos = up if up is not None and up < pos else None
        for entry in self.entries[:base_pos]:
            ident = _id(entry)
            if ident not in chain:
                self.report(
                    "base-prefix",
                    "entry before the base is not on the path to it",
                    self.line_of[ident],
                    ident,
                )
        for entry in self.entries[base_pos + 1 :]:
            ident = _id(entry)
            if entry.parent is None and "parent" not in entry.unknown:
                self.report(
                    "base-root", "a second root in a file with a base", self.line_of[ident], ident
                )
            elif entry.parent is not None:
                up = self.index_of.get(entry.parent)
                if up is not None and up < base_pos:
                    self.report(
                        "base-parent",
                        "hangs from the prefix above the base",
                        self.line_of[ident],
                        ident,
                    )


def _maybe_not_ijson(raw: bytes) -> bool:
    """A necessary condition, checked at C speed on the raw line, for a non-I-JSON value.

    The strict parse already refused duplicate names and non-finite numbers. A lone
    surrogate can only come from a ``\\uD800``-``\\uDFFF`` escape. An integer value that is
    not I-JSON has at least 16 significant digits (any value with 15 or fewer is the
    canonical rendering of its nearest double), so its mantissa, written as digits and at
    most one point, is a run of 16 or more characters from ``[0-9.]``.
    """
    return b"\\ud" in raw or b"\\uD" in raw or _SIXTEEN in raw.translate(_MANTISSA)


def _complete_json(raw: bytes) -> bool:
    """Whether a line the strict parse refused is nonetheless whole JSON (not cut off)."""
    try:
        json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return True


def _lines(stream: Iterable[bytes]) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, raw line, is last) for every line after the header."""
    it = iter(stream)
    current = next(it, None)
    n = 2
    while current is not None:
        following = next(it, None)
        yield n, current, following is None
        current = following
        n += 1


def _read(stream: Iterable[bytes], path: Path | None) -> SessionFile:
    it = iter(stream)
    first = next(it, None)
    if first is None or not first.strip():
        raise FormatError("empty file: no session header")
    state = _Pass(path, first)
    for n, raw, last in _lines(it):
        state.line(n, raw, last)
    return state.finish()


def read_session(path: Path) -> SessionFile:
    """Read a session file line by line; raises :class:`FormatError` or ``OSError``."""
    with path.open("rb") as stream:
        return _read(stream, path)


def parse_session(data: bytes, *, path: Path | None = None) -> SessionFile:
    """Read a session held in memory (lines split on LF only, as in a file)."""
    return _read(io.BytesIO(data), path)
