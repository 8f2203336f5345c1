"""Property tests: whatever the writer writes, the reader reads back identically.

Entries of every type are generated from the model's own field types (so a new field is
covered without touching this file), with random unknown members at the top level and inside
the JSON payloads, then appended to a random tree with :class:`SessionBuilder`, written with
:func:`write_session` and read back with :func:`read_session`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import types
import typing
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest
import rfc8785
from fixture_paths import VECTORS
from hypothesis import given
from hypothesis import strategies as st

from asf_core import canonical, ids, strict_json, writer
from asf_core.codec import entry_from_json, entry_to_json, header_to_json
from asf_core.model import CORE_TYPES, Entry, Extension, Header, ParentRef
from asf_core.reader import FormatError, read_session
from asf_core.writer import LEAF, SessionBuilder, write_session

#: Text that sometimes holds lone surrogates (the writer normalises them, and records it).
text = st.text(
    st.characters(codec=None, categories=["L", "N", "P", "Zs", "Cs"]), max_size=12
) | st.sampled_from(["", "a", "sha256:x", "\u00e9\U0001f600"])
keys = st.text(st.characters(codec=None, categories=["L", "N", "P"]), min_size=1, max_size=8)
numbers = (
    st.integers(min_value=-(2**53), max_value=2**53)
    | st.integers(min_value=-(2**64), max_value=2**64)  # unsafe ones get normalised
    | st.floats(allow_nan=False, allow_infinity=False)
)
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | numbers | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(keys, json_values, max_size=4)
header_values = st.recursive(
    st.none() | st.booleans() | numbers | keys,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=4,
)

ENVELOPE_AND_RESERVED = set(ids.RESERVED)


def _wire(name: str) -> str:
    return name[:-1] if name.endswith("_") else name


def _strategy_for(tp: Any) -> st.SearchStrategy[Any]:
    """A strategy producing values of one model field type (the codec's closed set)."""
    origin = typing.get_origin(tp)
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if origin in (typing.Union, types.UnionType):
        if set(args) == {int, float}:
            inner: st.SearchStrategy[Any] = numbers
        else:
            (only,) = args
            inner = _strategy_for(only)
        return st.none() | inner
    if tp is str:
        return text
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.integers(min_value=-(2**53), max_value=2**53)
    if tp is Any:
        return json_values.filter(lambda v: v is not None)
    if origin is dict or tp is dict:
        return json_objects
    if origin is tuple:
        (item,) = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return st.lists(_strategy_for(item), max_size=3).map(tuple)
    raise TypeError(f"no strategy for {tp!r}")


ENTRY_CLASSES = [*CORE_TYPES.values(), Extension]


_SKIP = frozenset({"ts", "id", "parent", "parents", "unknown", "kind", "normalised"})
_TS = st.integers(min_value=0, max_value=10**12).map(
    lambda us: ids.format_ts(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(microseconds=us))
)


def _entry_strategy(cls: type[Entry]) -> st.SearchStrategy[Entry]:
    """Unsealed entries of ``cls``: random typed members and random unknown members."""
    hints = typing.get_type_hints(cls)
    typed = {
        f.name: _strategy_for(hints[f.name])
        for f in attrs.fields(cls)
        if f.name not in _SKIP and f.init
    }
    banned = ENVELOPE_AND_RESERVED | {_wire(name) for name in typed} | {"normalised"}
    extra: dict[str, st.SearchStrategy[Any]] = {
        "ts": _TS,
        "unknown": st.dictionaries(keys.filter(lambda k: k not in banned), json_values, max_size=3),
    }
    if cls is Extension:
        extra["kind"] = keys.map(lambda k: "ns:" + k)
    return st.fixed_dictionaries({**typed, **extra}).map(lambda kw: cls(**kw))


ENTRY_STRATEGIES = {cls: _entry_strategy(cls) for cls in ENTRY_CLASSES}


def bodies(cls: type[Entry]) -> st.SearchStrategy[Entry]:
    return ENTRY_STRATEGIES[cls]


@st.composite
def sessions(draw: st.DrawFn) -> SessionBuilder:
    """A random tree of random entries, every entry type at least once."""
    header = Header(
        id=draw(text.filter(bool)),
        created_at="2026-01-01T00:00:00Z",
        records=draw(st.none() | st.lists(keys, max_size=2).map(tuple)),
        # The header is not hashed, so nothing normalises it: no lone surrogates there.
        unknown=draw(st.dictionaries(keys.map(lambda k: "x-" + k), header_values, max_size=2)),
    )
    builder = SessionBuilder(header)
    classes = draw(st.permutations(ENTRY_CLASSES)) + draw(
        st.lists(st.sampled_from(ENTRY_CLASSES), max_size=6)
    )
    for cls in classes:
        entry = draw(bodies(cls))
        ids_so_far = [e.id for e in builder.entries if e.id is not None]
        where: Any = LEAF
        if ids_so_far:
            where = draw(st.sampled_from([LEAF, None, *ids_so_far]))
        parent = builder.leaf if where is LEAF else where
        extra = (
            draw(st.lists(st.sampled_from(ids_so_far), unique=True, max_size=2))
            if ids_so_far
            else []
        )
        refs = [ParentRef(entry=x) for x in sorted(extra) if x != parent]
        if draw(st.booleans()):
            refs.append(ParentRef(entry="sha256:" + "e" * 64, session="other-session"))
        entry = attrs.evolve(entry, parents=tuple(refs))
        try:
            builder.append(entry, parent=where)
        except ValueError:  # the very same entry twice: the format has no room for it
            continue
    return builder


def as_numbers(value: Any) -> Any:
    """``value`` with every number as the double it denotes.

    JSON has one number type: ``2**64`` is exactly a double (so I-JSON, kept as written) but
    its canonical spelling is ``18446744073709552000``, and ``3.6e16`` is spelled as an
    integer. Read back, each is the same JSON number as another Python value.
    """
    if isinstance(value, dict):
        return {k: as_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_numbers(v) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value


@pytest.mark.slow
@given(sessions())
def test_written_session_reads_back_identically(builder: SessionBuilder) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        size = write_session(path, builder.header, builder.entries)
        assert size == path.stat().st_size
        session = read_session(path)
    assert session.problems == []
    # The header is written normalised to I-JSON (a lone surrogate becomes U+FFFD, recorded).
    expected_header, records = strict_json.normalise(header_to_json(builder.header))
    if records:
        expected_header = {**expected_header, "normalised": records}
    assert as_numbers(header_to_json(session.header)) == as_numbers(expected_header)
    assert [e.id for e in session.entries] == [e.id for e in builder.entries]
    read_back = [entry_to_json(e) for e in session.entries]
    written = [entry_to_json(e) for e in builder.entries]
    assert [canonical.dumps(x) for x in read_back] == [canonical.dumps(x) for x in written]
    assert as_numbers(read_back) == as_numbers(written)
    assert {type(e) for e in session.entries} == {type(e) for e in builder.entries}
    assert session.resume_leaf() == builder.entries[-1].id or any(
        getattr(e, "label", None) == "leaf" for e in session.entries
    )


@given(st.sampled_from(ENTRY_CLASSES).flatmap(bodies))
def test_reserialising_keeps_the_id(entry: Entry) -> None:
    sealed = writer.seal(entry)
    obj = strict_json.parse(canonical.dumps(entry_to_json(sealed)))
    assert ids.entry_id(obj) == sealed.id
    again = entry_from_json(obj)
    assert ids.entry_id(entry_to_json(again)) == sealed.id
    assert as_numbers(entry_to_json(again)) == as_numbers(entry_to_json(sealed))


@pytest.mark.parametrize("fail_at", [0, 1, 5])
def test_interrupted_write_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: int
) -> None:
    header = Header(id="s-1", created_at="2026-01-01T00:00:00Z")
    builder = SessionBuilder(header)
    for n in range(8):
        builder.append(
            entry_from_json({"type": "info", "ts": f"2026-01-01T00:00:0{n}Z", "name": "x"})
        )
    real = writer.entry_line
    calls = 0

    def failing(entry: Entry) -> bytes:
        nonlocal calls
        if calls == fail_at:
            raise OSError("disk full")
        calls += 1
        return real(entry)

    monkeypatch.setattr(writer, "entry_line", failing)
    target = tmp_path / "out" / "s.jsonl"
    with pytest.raises(OSError, match="disk full"):
        write_session(target, header, builder.entries)
    assert list(target.parent.iterdir()) == []

    # Over an existing file: the old file survives untouched.
    monkeypatch.setattr(writer, "entry_line", real)
    write_session(target, header, builder.entries[:2])
    before = target.read_bytes()
    calls = 0
    monkeypatch.setattr(writer, "entry_line", failing)
    with pytest.raises(OSError, match="disk full"):
        write_session(target, header, builder.entries)
    assert target.read_bytes() == before
    assert list(target.parent.iterdir()) == [target]


@given(st.sampled_from(ENTRY_CLASSES).flatmap(bodies))
def test_sealed_line_is_the_canonical_form_of_the_entry(entry: Entry) -> None:
    """The line the writer keeps from sealing equals encoding the sealed entry afresh."""
    sealed = writer.seal(entry)
    assert sealed.id == ids.entry_id(entry_to_json(sealed))
    assert writer.entry_line(sealed) == canonical.dumps(entry_to_json(sealed)) + b"\n"
    # A changed entry drops the kept line: it must be sealed again to be written.
    assert attrs.evolve(sealed, ts=sealed.ts)._line is None


def _clean_sessions() -> list[Path]:
    """The conformance vectors a reader takes without a finding, in the current format."""
    out = []
    for path in sorted((VECTORS / "sessions").glob("*.jsonl")):
        with contextlib.suppress(FormatError):
            session = read_session(path)
            if not session.problems and not session.migrated:
                out.append(path)
    assert len(out) > 20, VECTORS
    return out


@pytest.mark.parametrize("path", _clean_sessions(), ids=lambda p: p.stem)
def test_a_session_read_back_is_written_byte_for_byte(path: Path) -> None:
    """Entries read from a file carry no line kept from sealing: writing them again (a
    redaction, an incremental conversion keeping what it wrote) gives the file's bytes."""
    session = read_session(path)
    assert all(e._line is None for e in session.entries)
    assert b"".join(writer.session_lines(session.header, session.entries)) == path.read_bytes()


@pytest.mark.parametrize("ts", [None, 1767225600.0])
def test_an_entry_without_a_ts_string_cannot_be_sealed(ts: Any) -> None:
    """``ts`` is hashed: an entry without one (a converter's slip) has no id, which
    ``IdError`` says, rather than a line with ``"ts":null`` every reader reports."""
    entry = CORE_TYPES["custom"](ts=ts, ns="t", data={"k": 1})
    with pytest.raises(ids.IdError, match="no 'ts' string"):
        writer.seal(entry, parent=None)
    with pytest.raises(ids.IdError, match="no 'ts' string"):
        writer.seal_draft(entry, parent=None)


@pytest.mark.parametrize("beside", [{}, {"cost": 1.0}], ids=["fast", "exact"])
def test_member_names_are_ordered_by_utf16_in_the_line_and_the_id(
    beside: dict[str, Any],
) -> None:
    """RFC 8785 sorts names by UTF-16 code units: a name beyond the BMP before one from the
    top of it, on the compiled path and member by member alike."""
    unknown = {"\ue000": 1, "\U0001f600": 2, "z": 3, **beside}
    entry = CORE_TYPES["custom"](ts="2026-01-01T00:00:00Z", ns="t", unknown=unknown)
    sealed = writer.seal(entry, parent=None)
    line = writer.entry_line(sealed)
    assert line == rfc8785.dumps(strict_json.parse(line)) + b"\n"
    assert line.index("\U0001f600".encode()) < line.index("\ue000".encode())
    assert sealed.id == ids.entry_id(entry_to_json(sealed))


@pytest.mark.parametrize("beside", [{}, {"cost": 1.0}], ids=["fast", "exact"])
def test_the_depth_limit_counts_the_line_itself(beside: dict[str, Any]) -> None:
    """A line holds its members one level down: a member nested ``MAX_DEPTH - 1`` deep makes
    a line the reader reads, one level more a line it would refuse, which is not written."""
    for levels, fits in ((canonical.MAX_DEPTH - 1, True), (canonical.MAX_DEPTH, False)):
        data: Any = []
        for _ in range(levels - 1):
            data = [data]
        entry = CORE_TYPES["custom"](ts="2026-01-01T00:00:00Z", ns="t", data=data, unknown=beside)
        if fits:
            line = writer.entry_line(writer.seal(entry, parent=None))
            assert strict_json.parse(line)["data"] == data
        else:
            with pytest.raises(canonical.JsonError, match="nested deeper"):
                writer.seal(entry, parent=None)


def test_the_leaf_moves_only_when_appending_under_it() -> None:
    """Appending under the leaf (the default) moves it; appending under another entry starts
    a branch and leaves the leaf where it was, so the next default append continues it."""
    builder = SessionBuilder(Header(id="s", created_at="2026-01-01T00:00:00Z"))

    def add(n: int, parent: Any = LEAF) -> str:
        entry = CORE_TYPES["custom"](ts="2026-01-01T00:00:00Z", ns="t", data={"n": n})
        sealed = builder.append(entry, parent=parent)
        assert sealed.id is not None
        return sealed.id

    a = add(1)
    b = add(2)
    assert builder.leaf == b
    # A parent not in the session, or the very same entry again, is refused; the entry
    # handed to append is left unsealed (the session holds a sealed copy).
    entry = CORE_TYPES["custom"](ts="2026-01-01T00:00:00Z", ns="t", data={"n": 2})
    with pytest.raises(ValueError, match="not an entry of this session"):
        builder.append(entry, parent="sha256:" + "0" * 64)
    with pytest.raises(ValueError, match="already in the session"):
        builder.append(entry, parent=a)
    assert entry.id is None
    assert len(builder) == 2
    aside = add(3, parent=a)
    assert builder.leaf == b
    c = add(4)
    assert [e.parent for e in builder.entries] == [None, a, a, b]
    assert builder.leaf == c
    add(5, parent=c)  # under the leaf, named: the leaf moves
    assert builder.leaf == builder.entries[-1].id
    assert len(builder) == 5
    assert aside in {e.id for e in builder.entries}


def test_header_and_entry_lines_refuse_or_fix_what_they_must() -> None:
    """A header is normalised like a body (recorded in its own ``normalised``); an entry
    that was never sealed has no line."""
    header = Header(id="s", created_at="2026-01-01T00:00:00Z", unknown={"x-note": "a\ud800"})
    line = strict_json.parse(writer.header_line(header))
    assert line["x-note"] == "a\ufffd"
    assert line["normalised"] == [{"at": "/x-note", "was": '"a\\ud800"'}]
    entry = CORE_TYPES["custom"](ts="2026-01-01T00:00:00Z", ns="t", data={})
    with pytest.raises(ValueError, match="no id"):
        writer.entry_line(entry)


def test_sealing_again_merges_new_records_in_utf16_order() -> None:
    """An entry that already records a normalisation (one read back, then edited and sealed
    again) keeps its records, the new ones merged in among them by ``at``."""
    kept = {"at": "/data/\ue000", "was": '"\\udc00"'}
    entry = CORE_TYPES["custom"](
        ts="2026-01-01T00:00:00Z",
        ns="t",
        data={"a": "x\ud800", "\U0001f600": "y\udfff", "\ue000": "\ufffd"},
        normalised=(kept,),
    )
    sealed = writer.seal(entry, parent=None)
    assert sealed.normalised is not None
    # UTF-16 order: U+1F600 (D83D DE00) sorts before U+E000, unlike code point order.
    assert [r["at"] for r in sealed.normalised] == ["/data/a", "/data/\U0001f600", kept["at"]]
    assert strict_json.parse(writer.entry_line(sealed))["normalised"] == list(sealed.normalised)
    assert sealed.id == ids.entry_id(entry_to_json(sealed))


@pytest.mark.parametrize(
    "beside",
    [{}, {"cost": 1.0}, {"note": "x\ud800"}, {"n": 2**53 + 1}],
    ids=["alone", "integral-float", "lone-surrogate", "unsafe-int"],
)
def test_an_entry_with_a_long_tool_output_seals_canonically(beside: dict[str, Any]) -> None:
    """A tool output longer than the compiled encoder takes (a large file read) seals to its
    canonical line and its recomputed id, whether the rest of the entry takes the fast path,
    the exact one, or is normalised first."""
    output = ('out \u00e9 "q" \\ \x01\n' * canonical._LONG)[: canonical._LONG * 2]
    item = {"type": "function_call_output", "call_id": "c1", "output": output}
    entry = CORE_TYPES["item"](ts="2026-01-01T00:00:00Z", item=item, unknown=beside)
    sealed = writer.seal(entry, parent=None)
    obj = entry_to_json(sealed)
    assert obj["item"]["output"] == output
    assert sealed.id == ids.entry_id(obj)
    assert writer.entry_line(sealed) == canonical.dumps(obj) + b"\n"
    assert strict_json.parse(writer.entry_line(sealed)) == obj
    assert (sealed.normalised is not None) == ("note" in beside or "n" in beside)
    # Normalising rebuilds the entry: its envelope is kept as it was.
    parents = (ParentRef(entry="sha256:" + "1" * 64, session="other"),)
    under = writer.seal(attrs.evolve(entry, parents=parents), parent="sha256:" + "2" * 64)
    envelope = {k: entry_to_json(under)[k] for k in ("type", "ts", "parent", "parents")}
    assert envelope == {
        "type": "item",
        "ts": entry.ts,
        "parent": "sha256:" + "2" * 64,
        "parents": [{"entry": "sha256:" + "1" * 64, "session": "other"}],
    }


@given(
    st.sampled_from(ENTRY_CLASSES).flatmap(bodies),
    st.none() | st.just("sha256:" + "0" * 64),
    st.lists(st.builds(ParentRef, entry=keys, session=st.none() | keys), max_size=2),
)
def test_sealing_a_draft_in_place_equals_sealing_a_copy(
    entry: Entry, parent: str | None, parents: list[ParentRef]
) -> None:
    """A converter's own draft, sealed in place with its parent, extra parents and a member
    set there, has the id and line of the same entry built whole and sealed as a copy."""
    members = {"ts": "2026-01-02T03:04:05Z"}
    whole = attrs.evolve(entry, parents=tuple(parents), **members)
    expected = writer.seal(whole, parent=parent)
    draft = attrs.evolve(entry)
    sealed = writer.seal_draft(draft, parent=parent, parents=tuple(parents), members=members)
    assert sealed.id == expected.id
    assert writer.entry_line(sealed) == writer.entry_line(expected)
    assert entry_to_json(sealed) == entry_to_json(expected)
    assert expected.id == ids.entry_id(entry_to_json(expected))
    if sealed.normalised is None:  # nothing to normalise: sealed where it stood, no copy
        assert sealed is draft
    with pytest.raises(AttributeError, match="no member"):
        writer.seal_draft(attrs.evolve(entry), parent=None, members={"nonsense": 1})


@given(
    old=st.none() | st.binary(max_size=40),
    new=st.lists(st.binary(max_size=12), max_size=6),
)
def test_write_if_changed_streams_and_keeps_equal_files(
    old: bytes | None, new: list[bytes]
) -> None:
    """The file ends up holding the new bytes; a file already holding them is not touched."""
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "s.jsonl"
        if old is not None:
            target.write_bytes(old)
        before = target.stat() if old is not None else None
        size = writer.write_if_changed(target, iter(new))
        data = b"".join(new)
        assert target.read_bytes() == data
        assert sorted(p.name for p in Path(tmp).iterdir()) == ["s.jsonl"]
        if old == data:
            assert size is None
            assert before is not None
            assert (target.stat().st_ino, target.stat().st_mtime_ns) == (
                before.st_ino,
                before.st_mtime_ns,
            )
        else:
            assert size == len(data)


class _Shrinking:
    """The old file as ``write_if_changed`` reads it, cut short by another process once the
    comparison has matched its whole length."""

    def __init__(self, handle: Any, path: Path, keep: int) -> None:
        self.handle, self.path, self.keep, self.read_so_far = handle, path, keep, 0
        self.name = str(path)

    def read(self, n: int = -1) -> bytes:
        data = self.handle.read(n)
        self.read_so_far += len(data)
        if self.read_so_far >= self.path.stat().st_size:
            os.truncate(self.path, self.keep)
        return data

    def seek(self, offset: int) -> int:
        return self.handle.seek(offset)

    def __enter__(self) -> _Shrinking:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()


def test_an_old_file_that_shrinks_while_compared_is_not_copied_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The matching prefix is copied from the old file: if it is shorter than what matched
    (another process truncated it meanwhile), the write fails rather than lose bytes."""
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"abcdef")
    real_open = Path.open
    monkeypatch.setattr(
        Path,
        "open",
        lambda self, *a, **k: (
            _Shrinking(real_open(self, *a, **k), self, 2)
            if self == target
            else real_open(self, *a, **k)
        ),
    )
    with pytest.raises(OSError, match="changed while being compared"):
        writer.write_if_changed(target, iter([b"abc", b"def", b"XYZ"]))
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]


def test_write_if_changed_failing_stream_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"abcdef")

    def chunks() -> Iterator[bytes]:
        yield b"abc"
        yield b"XY"  # differs: a temporary file is being written when the stream fails
        raise OSError("source gone")

    with pytest.raises(OSError, match="source gone"):
        writer.write_if_changed(target, chunks())
    assert target.read_bytes() == b"abcdef"
    assert [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]
