"""Writing ASF: appending entries with computed ids, canonical lines, atomic session files.

A converter builds a whole session in memory with :class:`SessionBuilder` (one session at a
time, never the whole store) and hands it to :func:`write_session`, which writes a temporary
file beside the target and renames it into place: an interrupted run leaves either the old
file or the new one, never half of one.

A temporary file is named ``.<name>.asf-tmp-<pid>-<16 hex>``. A run killed outright (SIGKILL,
a power cut) cannot remove its own, so the first write into a directory removes the ones
there whose process is gone: only names of that shape, only regular files, never a file of a
process still running.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import re
import secrets
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Final

import attrs

from asf_core import canonical, ids, strict_json
from asf_core.codec import entry_from_json, entry_to_json, header_to_json
from asf_core.model import Entry, Header

__all__ = [
    "LEAF",
    "SessionBuilder",
    "entry_line",
    "header_line",
    "remove_stale_temporaries",
    "seal",
    "session_lines",
    "temporary_path",
    "writable",
    "write_atomic",
    "write_if_changed",
    "write_session",
]


class _Leaf:
    """The default parent of an appended entry: the builder's current leaf."""

    def __repr__(self) -> str:
        return "LEAF"


LEAF: Final = _Leaf()


def _utf16(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


@functools.lru_cache(maxsize=4096)
def _name(key: str) -> bytes | None:
    """A member name as canonical ``"key":`` bytes (names repeat from entry to entry)."""
    encoded = canonical.dumps_if_normal(key)
    return None if encoded is None else encoded + b":"


def _fragments(obj: dict[str, Any]) -> dict[str, bytes] | None:
    """Each top-level member as canonical ``"key":value`` bytes; None if one needs fixing."""
    out: dict[str, bytes] = {}
    for key, value in obj.items():
        encoded = canonical.dumps_if_normal(value, depth=1)
        name = _name(key)
        if encoded is None or name is None:
            return None
        out[key] = name + encoded
    return out


def _joined(fragments: dict[str, bytes], keys: Iterable[str]) -> bytes:
    """A canonical object from member fragments: members in UTF-16 order of their names."""
    names = list(keys)
    joined = "".join(names)
    # Below U+10000, code point order is UTF-16 order; only supplementary characters differ.
    names.sort(key=None if joined.isascii() or max(joined) <= "\uffff" else _utf16)
    return b"{" + b",".join(fragments[k] for k in names) + b"}"


def _normalised(entry: Entry, obj: dict[str, Any]) -> Entry:
    """The entry with its body normalised to I-JSON and the changes recorded in ``normalised``."""
    fixed, records = strict_json.normalise(ids.body_of(obj))
    if records:
        fixed = dict(fixed)
        merged = [*fixed.get("normalised", ()), *records]
        merged.sort(key=lambda r: _utf16(str(r.get("at", ""))))
        fixed["normalised"] = merged
    envelope: dict[str, Any] = {k: obj[k] for k in ("type", "parent", "parents", "ts") if k in obj}
    return entry_from_json({**envelope, **fixed})


def seal(entry: Entry, *, parent: str | _Leaf | None = LEAF) -> Entry:
    """Return the entry normalised to I-JSON (recording what changed) with its id computed.

    ``parent``, when given, replaces the entry's parent first (what appending does). Every
    member is canonicalised once: the same bytes give the content hash and the line, which the
    sealed entry keeps for :func:`entry_line`.
    """
    changes: dict[str, Any] = {}
    obj = entry_to_json(entry)
    obj.pop("id", None)
    if not isinstance(parent, _Leaf):
        changes["parent"] = obj["parent"] = parent
    fragments = _fragments(obj)
    if fragments is None:
        entry = _normalised(entry, obj)
        obj = entry_to_json(entry)
        obj.pop("id", None)
        fragments = _fragments(obj)
        if fragments is None:  # pragma: no cover - normalise leaves nothing to fix
            raise canonical.JsonError("entry cannot be normalised to I-JSON")
    body = [k for k in obj if k not in ids.ENVELOPE]
    content = "sha256:" + hashlib.sha256(_joined(fragments, body)).hexdigest()
    changes["id"] = ident = ids.id_with_content(obj, content)
    fragments["id"] = b'"id":"' + ident.encode("ascii") + b'"'
    sealed = attrs.evolve(entry, **changes)
    object.__setattr__(sealed, "_line", _joined(fragments, fragments) + b"\n")
    return sealed


class SessionBuilder:
    """One session under construction: appends entries, computing ids and tracking the leaf.

    Appending under the leaf moves the leaf; appending under another entry starts a branch and
    leaves the leaf where it was, as the format prescribes.
    """

    def __init__(self, header: Header) -> None:
        self.header = header
        self.entries: list[Entry] = []
        self.leaf: str | None = None
        self._ids: set[str] = set()

    def append(self, entry: Entry, *, parent: str | _Leaf | None = LEAF) -> Entry:
        """Append ``entry`` under ``parent`` (default: the leaf) and return it with its id."""
        where = self.leaf if isinstance(parent, _Leaf) else parent
        if where is not None and where not in self._ids:
            raise ValueError(f"parent {where} is not an entry of this session")
        sealed = seal(entry, parent=where)
        if sealed.id is None or sealed.id in self._ids:
            # Same type, content, parent and ts: the same entry; the format forbids a repeat.
            raise ValueError(f"entry {sealed.id} is already in the session")
        self.entries.append(sealed)
        self._ids.add(sealed.id)
        if isinstance(parent, _Leaf) or where == self.leaf or self.leaf is None:
            self.leaf = sealed.id
        return sealed

    def __len__(self) -> int:
        return len(self.entries)


def header_line(header: Header) -> bytes:
    """The header as one canonical line, normalised to I-JSON like an entry body."""
    obj, records = strict_json.normalise(header_to_json(header))
    if records:
        obj = {**obj, "normalised": records}
    return canonical.dumps(obj) + b"\n"


def entry_line(entry: Entry) -> bytes:
    """An entry as one canonical line; its id must already be computed."""
    if entry.id is None:
        raise ValueError("entry has no id: seal it or append it to a SessionBuilder first")
    line = entry._line
    if line is None:
        line = canonical.dumps(entry_to_json(entry)) + b"\n"
    return line


#: A temporary file of ours: ``.<name>.asf-tmp-<pid>-<16 hex>``.
_TEMPORARY: Final = re.compile(r"\..+\.asf-tmp-([0-9]{1,10})-[0-9a-f]{16}", re.DOTALL)
#: Directories this process has cleaned of stale temporaries (once each is enough).
_cleaned: set[Path] = set()


def temporary_path(path: Path) -> Path:
    """A fresh temporary name beside ``path``, recognisably ours and naming this process."""
    return path.with_name(f".{path.name}.asf-tmp-{os.getpid()}-{secrets.token_hex(8)}")


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, OSError):  # no process can have that number
        return False
    return True


def remove_stale_temporaries(folder: Path) -> int:
    """Remove the temporary files in ``folder`` left by asf processes that are gone.

    Only regular files named like :func:`temporary_path` names them, and only when the
    process named in them no longer exists; returns how many were removed. A folder that
    cannot be listed is left alone.
    """
    removed = 0
    try:
        listing = list(os.scandir(folder))
    except OSError:
        return 0
    for item in listing:
        found = _TEMPORARY.fullmatch(item.name)
        if found is None or int(found[1]) == os.getpid() or _alive(int(found[1])):
            continue
        with contextlib.suppress(OSError):
            if item.is_file(follow_symlinks=False):
                (folder / item.name).unlink()
                removed += 1
    return removed


def writable(path: Path) -> None:
    """Refuse (``OSError``) to replace what is not a regular file: a directory, a device, a
    FIFO, a socket (the rename would put a file in its place, or fail half way)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise OSError(errno.EEXIST, "exists and is not a regular file", str(path))


def write_atomic(path: Path, chunks: Iterable[bytes], *, durable: bool = True) -> int:
    """Write ``chunks`` to ``path`` whole or not at all; return the number of bytes written.

    The bytes go to a temporary name in the same directory, then are renamed over ``path``,
    so a reader (or an interrupted run) never sees half a file. With ``durable`` the file is
    flushed to disk before the rename; a caller writing many files may pass False and sync
    once at the end instead (one flush instead of one per file). Creates missing parent
    directories; the first write into a directory removes stale temporaries there. Raises
    ``OSError`` when ``path`` exists and is not a regular file.
    """
    writable(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.parent not in _cleaned:
        _cleaned.add(path.parent)
        remove_stale_temporaries(path.parent)
    # The name is chosen before the file exists, so an interrupt at any point (even inside
    # the call that creates it) leaves a name the cleanup below knows.
    tmp = temporary_path(path)
    size = 0
    try:
        with tmp.open("xb") as out:
            batch: list[bytes] = []
            for chunk in chunks:
                size += len(chunk)
                batch.append(chunk)
                if len(batch) >= 256:
                    out.writelines(batch)
                    batch.clear()
            out.writelines(batch)
            out.flush()
            if durable:
                os.fsync(out.fileno())
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return size


def _prefix_then(old: BinaryIO, size: int, chunk: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    """The first ``size`` bytes of ``old``, then ``chunk``, then ``rest``."""
    old.seek(0)
    left = size
    while left:
        block = old.read(min(left, 1 << 20))
        if not block:  # the old file shrank under us: what we matched is what we read
            raise OSError(f"{old.name}: changed while being compared")
        left -= len(block)
        yield block
    yield chunk
    yield from rest


def write_if_changed(path: Path, chunks: Iterable[bytes]) -> int | None:
    """Write ``chunks`` to ``path`` atomically unless the file already holds exactly these
    bytes; then return None and leave it alone (times and inode too), so a re-run touches only
    sessions that changed. Else return the bytes written.

    The chunks are compared with the old file as they come; only when they differ is a
    temporary file written (the matching prefix copied from the old file). Memory holds one
    chunk at a time, however large the file. Not flushed to disk: the caller syncs a store's
    files together once it is done.
    """
    stream = iter(chunks)
    try:
        old = path.open("rb") if path.is_file() else None
    except OSError:
        old = None
    if old is None:
        return write_atomic(path, stream, durable=False)
    with old:
        matched = 0
        for chunk in stream:
            if old.read(len(chunk)) != chunk:
                return write_atomic(path, _prefix_then(old, matched, chunk, stream), durable=False)
            matched += len(chunk)
        if old.read(1) == b"":
            return None
        return write_atomic(path, _prefix_then(old, matched, b"", iter(())), durable=False)


def session_lines(header: Header, entries: Iterable[Entry]) -> Iterator[bytes]:
    """The lines of a session file: the header, then each entry, canonical."""
    yield header_line(header)
    for entry in entries:
        yield entry_line(entry)


def write_session(path: Path, header: Header, entries: Iterable[Entry]) -> int:
    """Write a whole session file atomically (see :func:`write_atomic`); return its size."""
    return write_atomic(path, session_lines(header, entries))
