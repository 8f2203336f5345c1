"""Writing ASF: appending entries with computed ids, canonical lines, atomic session files.

A converter builds a whole session in memory with :class:`SessionBuilder` (one session at a
time, never the whole store) and hands it to :func:`write_session`, which writes it whole
(:mod:`asf_core.files`: a temporary file beside the target, renamed into place): an
interrupted run leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from asf_core import canonical, ids, strict_json
from asf_core.codec import entry_from_json, entry_to_json, header_to_json
from asf_core.files import (
    remove_stale_temporaries,
    temporary_path,
    writable,
    write_atomic,
    write_if_changed,
)
from asf_core.model import Entry, Header, ParentRef

__all__ = [
    "LEAF",
    "SessionBuilder",
    "entry_line",
    "header_line",
    "remove_stale_temporaries",
    "seal",
    "seal_draft",
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


@functools.lru_cache(maxsize=1024)
def _order(names: tuple[str, ...]) -> tuple[str, ...]:
    """Member names in UTF-16 order (entries repeat a few shapes: sorted once each)."""
    joined = "".join(names)
    # Below U+10000, code point order is UTF-16 order; only supplementary characters differ.
    return tuple(sorted(names, key=None if joined.isascii() or max(joined) <= "\uffff" else _utf16))


def _joined(fragments: dict[str, bytes], keys: Iterable[str]) -> bytes:
    """A canonical object from member fragments: members in UTF-16 order of their names."""
    return b"{" + b",".join([fragments[k] for k in _order(tuple(keys))]) + b"}"


def _normalised(entry: Entry, obj: dict[str, Any]) -> Entry:
    """The entry with its body normalised to I-JSON and the changes recorded in ``normalised``."""
    fixed, records = strict_json.normalise(ids.body_of(obj))
    if records:
        fixed = dict(fixed)
        # A damaged file's member may be anything (a string, records that are no objects):
        # kept, as the first records, never iterated as records.
        prior = fixed.get("normalised", [])
        merged = [*(prior if isinstance(prior, list) else [prior]), *records]
        merged.sort(key=lambda r: _utf16(str(r.get("at", "")) if isinstance(r, dict) else ""))
        fixed["normalised"] = merged
    envelope: dict[str, Any] = {k: obj[k] for k in ("type", "parent", "parents", "ts") if k in obj}
    return entry_from_json({**envelope, **fixed})


#: The envelope members an entry line holds besides its body, and the order the id's
#: envelope object lists them in (``content`` first, then these, as RFC 8785 sorts them).
_ENVELOPE: Final[tuple[str, ...]] = ("parent", "parents", "ts", "type")


def _seal_fast(entry: Entry, obj: dict[str, Any]) -> bool:
    """The common case: the whole line's values scanned once (:func:`canonical.fast_encoder`)
    and written by a C encoder: the body (``obj`` without the envelope), the envelope, the
    line. False when a value needs the exact path or normalising (``obj`` is left whole)."""
    encoder = canonical.fast_encoder(obj)
    if encoder is None:
        return False
    # Taken out of the body (and put back): ``ts`` and ``type`` are there (the caller
    # checked), ``parent`` is in every unstructured entry, ``parents`` when set.
    around = {"ts": obj.pop("ts"), "type": obj.pop("type")}
    envelope = {"parent": None, **around}
    if "parent" in obj:
        around["parent"] = envelope["parent"] = obj.pop("parent")
    if "parents" in obj:
        parents = around["parents"] = obj.pop("parents")
        if parents:
            envelope["parents"] = parents
    try:
        body_bytes = encoder(obj)
        envelope["content"] = "sha256:" + hashlib.sha256(body_bytes).hexdigest()
        envelope_bytes = encoder(envelope)
    except (ValueError, TypeError):  # a lone surrogate: normalised on the exact path
        obj.update(around)
        return False
    ident = "sha256:" + hashlib.sha256(envelope_bytes).hexdigest()
    around["id"] = ident
    obj.update(around)
    object.__setattr__(entry, "id", ident)
    object.__setattr__(entry, "_line", encoder(obj) + b"\n")
    return True


def _seal(entry: Entry) -> Entry:
    """Compute, in place, the id and canonical line of an entry whose members are final.

    The entry is unstructured once and canonicalised once: the body's bytes give the content
    hash, the envelope's the id (its object's member order is fixed: ``content``, ``parent``,
    ``parents`` when there are any, ``ts``, ``type``), and the same values the line. Returns
    the entry, or, when a member had to be normalised to I-JSON (rare), the normalised entry,
    a new object. Values the compiled encoder does not write exactly go member by member.
    """
    obj = entry_to_json(entry)
    obj.pop("id", None)
    # The codec writes every field, unset ones as null: a ``ts`` of null (or of no string)
    # would be hashed and written, a line every reader then reports.
    if "type" not in obj or not isinstance(obj.get("ts"), str):
        missing = "type" if "type" not in obj else "ts"
        raise ids.IdError(f"entry has no {missing!r} string")
    if _seal_fast(entry, obj):
        return entry
    obj.pop("id", None)
    fragments = _fragments(obj)
    if fragments is None:
        entry = _normalised(entry, obj)
        obj = entry_to_json(entry)
        obj.pop("id", None)
        fragments = _fragments(obj)
        if fragments is None:  # pragma: no cover - normalise leaves nothing to fix
            raise canonical.JsonError("entry cannot be normalised to I-JSON")
    envelope: dict[str, bytes] = {k: fragments.pop(k) for k in _ENVELOPE if k in fragments}
    content = hashlib.sha256(_joined(fragments, fragments)).hexdigest()
    layer = [b'"content":"sha256:' + content.encode("ascii") + b'"']
    layer.append(envelope.get("parent", b'"parent":null'))
    if obj.get("parents"):
        layer.append(envelope["parents"])
    layer += (envelope["ts"], envelope["type"])
    ident = "sha256:" + hashlib.sha256(b"{" + b",".join(layer) + b"}").hexdigest()
    fragments.update(envelope)
    fragments["id"] = b'"id":"' + ident.encode("ascii") + b'"'
    object.__setattr__(entry, "id", ident)
    object.__setattr__(entry, "_line", _joined(fragments, fragments) + b"\n")
    return entry


def seal(entry: Entry, *, parent: str | _Leaf | None = LEAF) -> Entry:
    """Return the entry normalised to I-JSON (recording what changed) with its id computed.

    ``parent``, when given, replaces the entry's parent first (what appending does). The
    entry given is left as it is: the sealed one is a copy (see :func:`seal_draft` for an
    entry its builder will not use again). The sealed entry keeps its canonical line for
    :func:`entry_line`.
    """
    changes: dict[str, Any] = {"id": None}
    if not isinstance(parent, _Leaf):
        changes["parent"] = parent
    return _seal(attrs.evolve(entry, **changes))


def seal_draft(
    entry: Entry,
    *,
    parent: str | None,
    parents: tuple[ParentRef, ...] | None = None,
    members: Mapping[str, Any] | None = None,
) -> Entry:
    """Seal an entry its builder owns and will not use again, without copying it.

    A converter builds each entry's members before it knows the ids its parent and any
    member naming another entry will have; here they are set, on the entry itself, and its
    id and line computed: ``parent``, ``parents`` (when given) and ``members`` (field name ->
    value, e.g. a compaction's ``first_kept``). Returns the sealed entry: the same object,
    unless a member had to be normalised to I-JSON.
    """
    object.__setattr__(entry, "parent", parent)
    if parents is not None:
        object.__setattr__(entry, "parents", parents)
    if members:
        fields = attrs.fields_dict(type(entry))
        for name, value in members.items():
            if name not in fields:
                raise AttributeError(f"{type(entry).__name__} has no member {name!r}")
            object.__setattr__(entry, name, value)
    object.__setattr__(entry, "id", None)
    return _seal(entry)


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
        """Append ``entry`` under ``parent`` (default: the leaf) and return it with its id.

        ``entry`` itself is left as it is; the session holds a sealed copy.
        """
        return self._add(entry, parent, owned=False)

    def append_draft(
        self,
        entry: Entry,
        *,
        parent: str | _Leaf | None = LEAF,
        parents: tuple[ParentRef, ...] | None = None,
        members: Mapping[str, Any] | None = None,
    ) -> Entry:
        """Append an entry the caller owns and will not use again, sealing it in place
        (:func:`seal_draft`): no copy. Returns the sealed entry."""
        return self._add(entry, parent, owned=True, parents=parents, members=members)

    def _add(
        self,
        entry: Entry,
        parent: str | _Leaf | None,
        *,
        owned: bool,
        parents: tuple[ParentRef, ...] | None = None,
        members: Mapping[str, Any] | None = None,
    ) -> Entry:
        where = self.leaf if isinstance(parent, _Leaf) else parent
        if where is not None and where not in self._ids:
            raise ValueError(f"parent {where} is not an entry of this session")
        if owned:
            sealed = seal_draft(entry, parent=where, parents=parents, members=members)
        else:
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


def session_lines(header: Header, entries: Iterable[Entry]) -> Iterator[bytes]:
    """The lines of a session file: the header, then each entry, canonical."""
    yield header_line(header)
    for entry in entries:
        yield entry_line(entry)


def write_session(path: Path, header: Header, entries: Iterable[Entry]) -> int:
    """Write a whole session file atomically (see :func:`write_atomic`); return its size."""
    return write_atomic(path, session_lines(header, entries))
