"""Reading ASF session files: one streaming pass that checks every line and builds the tree.

A reader must never "repair" a file: every id is recomputed from the line's own members and
every rule the draft puts on the file (parents before children, the prefix of a file with a
``base``, ``parents`` references) is checked, but what the file says is kept as written and
each deviation becomes a :class:`~asf_core.findings.Finding`. Only a file that cannot be ASF
at all (no header, a newer format) raises :class:`FormatError`.

Pre-0.5 files have opaque ids; they are migrated in memory (:mod:`asf_core.migration`).

The pass is linear in the file: references that cannot be resolved yet (a ``parent`` not seen
so far) are remembered and settled once at the end, so a damaged file costs no more to read
than a good one.
"""

from __future__ import annotations

import errno
import io
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

from asf_core import canonical, ids, raw_lines, strict_json
from asf_core.codec import entry_from_json, header_from_json
from asf_core.findings import ERROR, WARNING, Finding, shown
from asf_core.migration import Migration
from asf_core.model import Entry, Header
from asf_core.session_file import HASHED_FROM, SessionFile, id_of

__all__ = [
    "READER_VERSION",
    "FormatError",
    "SessionFile",
    "parse_session",
    "read_session",
]

#: The newest draft this reader understands; a 0.x reader refuses later minors.
READER_VERSION: Final = (0, 11)

_FORMAT: Final = re.compile(r"agentsession/(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")
#: Version numbers longer than this are read as "newer than this reader" without converting
#: them (a hostile file may spell one with thousands of digits).
_VERSION_DIGITS: Final = 9
#: Bytes looked at before line 1 is read whole: a database or an archive costs no more.
_PEEK: Final = 64


class FormatError(Exception):
    """The file cannot be read as ASF at all: empty, no or garbage header, newer format."""


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
        # (line, entry id, referenced id) settled at the end.
        self.pending_parent: list[tuple[int, str, str]] = []
        self.pending_parents: list[tuple[int, str, str]] = []
        self.header, self.version = self._header(first)
        self.migrating = self.version < HASHED_FROM
        self.migration = Migration(self.header.id, self.report) if self.migrating else None
        self.legacy = self.migration.legacy if self.migration is not None else {}
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
        refused = ""
        try:
            obj = strict_json.parse(first)
        except canonical.TooDeep as exc:
            raise FormatError(f"line 1 is not a session header: {exc}") from None
        except ValueError as exc:  # a member that is not I-JSON costs that member only
            obj, refused = raw_lines.lenient(first), str(exc)
            if obj is None:
                raise FormatError(f"line 1 is not a session header: {exc}") from None
        if not isinstance(obj, dict):
            raise FormatError("line 1 is not a session header (not a JSON object)")
        if obj.get("type") != "session":
            raise FormatError(f"line 1 is not a session header (type {shown(obj.get('type'))})")
        fmt = obj.get("format")
        if not isinstance(fmt, str):
            raise FormatError("the session header has no format")
        match = _FORMAT.fullmatch(fmt)
        if match is None:
            raise FormatError(
                f"unknown format {shown(fmt)} (expected agentsession/<major>.<minor>)"
            )
        mine = "{}.{}".format(*READER_VERSION)
        if max(len(match[1]), len(match[2])) > _VERSION_DIGITS:
            raise FormatError(f"{shown(fmt)} is newer than this reader ({mine})")
        version = (int(match[1]), int(match[2]))
        if version > READER_VERSION:
            raise FormatError(f"{fmt} is newer than this reader ({mine})")
        if version < (0, 1):
            raise FormatError(f"{fmt} is not a format this reader knows")
        # The header is not hashed, but it is I-JSON all the same.
        if refused:
            self.report("not-ijson", f"header: {refused}", 1)
        elif raw_lines.maybe_not_ijson(first):
            for why in canonical.ijson_problems(obj):
                self.report("not-ijson", f"header: {why}", 1)
        for name in ("id", "created_at", "payload"):
            if not isinstance(obj.get(name), str):
                self.report("bad-header", f"the header has no string {name!r}", 1)
        payload = obj.get("payload")
        if isinstance(payload, str) and not payload.startswith("openresponses/"):
            self.report("bad-header", f"unknown payload profile {shown(payload)}", 1, kind=WARNING)
        if "base" in obj:
            if not isinstance(obj["base"], str):
                self.report("bad-header", "the header's base is not an entry id", 1)
            elif version < HASHED_FROM:
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
            obj = strict_json.parse(raw)
        except canonical.TooDeep as exc:
            if raw_lines.balanced(raw):
                self.report("too-deep", f"line not read: {exc}", n)
            else:  # cut off or broken as well: say that, as for any other line
                self._unparsable(n, raw, last, str(exc))
            return
        except ValueError as exc:  # JsonError
            self._unparsable(n, raw, last, str(exc))
            return
        if not isinstance(obj, dict):
            self.report("not-object", f"line is a JSON {type(obj).__name__}, not an object", n)
            return
        if last and not raw.endswith(b"\n"):
            self.report("missing-newline", "the last line has no LF", n, kind=WARNING)
        hashable = self._screen(n, obj, raw)
        ident = (
            self.migration.migrate(n, obj, hashable)
            if self.migration is not None
            else self._check_id(n, obj, hashable)
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
        complete = raw_lines.complete_json(raw)
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
        if not raw_lines.maybe_not_ijson(raw):
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
                self.report("bad-id", f"id {shown(stored)} is not a string", n, computed)
                del obj["id"]
            else:
                self.report("missing-id", "entry has no id; filed under its computed id", n)
            if computed is not None:
                obj["id"] = computed
            return computed
        if not stored.startswith("sha256:"):
            self.report("bad-id", f"id {shown(stored)} does not use the sha256: prefix", n, stored)
        elif computed is not None and computed != stored:
            self.report("bad-id", f"id does not match the line's content ({computed})", n, stored)
        return stored

    def _check_body(self, n: int, obj: dict[str, Any], ident: str) -> None:
        kind = obj.get("type")
        if "type" in obj and (not isinstance(kind, str) or not kind):
            self.report("bad-entry", f"entry type {shown(kind)} is not a name", n, ident)
        ts = obj.get("ts")
        if "ts" in obj and not (isinstance(ts, str) and ids.ts_ok(ts)):
            self.report("bad-ts", f"ts {shown(ts)} is not in the single 0.5 spelling", n, ident)
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
            self.report("bad-entry", f"parent {shown(parent)} is not an entry id", n, ident)
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
                self.report("bad-parents", f"reference {shown(ref)} needs an entry id", n, ident)
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
            chain.add(id_of(entry))
            up = self.index_of.get(entry.parent) if entry.parent is not None else None
            pos = up if up is not None and up < pos else None
        for entry in self.entries[:base_pos]:
            ident = id_of(entry)
            if ident not in chain:
                self.report(
                    "base-prefix",
                    "entry before the base is not on the path to it",
                    self.line_of[ident],
                    ident,
                )
        for entry in self.entries[base_pos + 1 :]:
            ident = id_of(entry)
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


def _refuse_non_object(head: bytes) -> None:
    """FormatError when the first line, of which ``head`` is the start, is not a JSON object."""
    start = head.split(b"\n", 1)[0].removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r")
    if start and not start.startswith(b"{"):
        shown_start = repr(start[:16])[1:]
        raise FormatError(
            f"line 1 is not a session header (not a JSON object: it begins {shown_start})"
        )


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
    _refuse_non_object(first[:_PEEK])
    state = _Pass(path, first)
    for n, raw, last in _lines(it):
        state.line(n, raw, last)
    return state.finish()


def read_session(path: Path) -> SessionFile:
    """Read a session file line by line; raises :class:`FormatError` or ``OSError``.

    Only a regular file or a pipe is read: a device (``/dev/zero``) or a socket raises
    ``OSError`` (EINVAL) instead of being read forever.
    """
    try:
        mode = path.stat().st_mode
    except ValueError:  # a NUL in the name: no file can have it
        raise OSError(errno.EINVAL, "not a valid file name", str(path)) from None
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise OSError(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL, kind, str(path))
    with path.open("rb") as stream:
        _refuse_non_object(stream.peek(_PEEK)[:_PEEK])
        return _read(stream, path)


def parse_session(data: bytes, *, path: Path | None = None) -> SessionFile:
    """Read a session held in memory (lines split on LF only, as in a file)."""
    return _read(io.BytesIO(data), path)
