"""The reader against the conformance sessions and against small files built to break one rule."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from fixture_paths import SHARED
from hypothesis import given
from hypothesis import strategies as st

from asf_core import canonical, ids, strict_json
from asf_core.codec import entry_to_json
from asf_core.model import Config, Header, Item, Label
from asf_core.reader import FormatError, SessionFile, parse_session, read_session
from asf_core.writer import SessionBuilder, entry_line, header_line

VECTORS = SHARED / "asf" / "vectors"
SESSIONS = VECTORS / "testdata" / "sessions"


def _readme_kinds() -> dict[str, str]:
    """``sessions/<name>`` -> the kind column ("pos", "neg (note)", ...) of the README table."""
    kinds: dict[str, str] = {}
    for row in (VECTORS / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.fullmatch(r"sessions/\S+\.jsonl", cells[0]):
            kinds[cells[0].removeprefix("sessions/")] = cells[3]
    return kinds


KINDS = _readme_kinds()
#: Session files the README describes outside its table (context/export sections): positives.
UNTABLED_POSITIVE = {"empty-resume.jsonl", "judged.jsonl", "normalised.jsonl"}
POSITIVE = sorted(
    [name for name, kind in KINDS.items() if kind.startswith("pos")] + sorted(UNTABLED_POSITIVE)
)
NEGATIVE = sorted(name for name, kind in KINDS.items() if kind.startswith("neg"))

#: What each reader-level negative must report: (code, line).
EXPECTED = {
    "corrupt-middle.jsonl": ("corrupt-line", 3),
    "truncated.jsonl": ("truncated", 10),
    "missing-id.jsonl": ("missing-id", 3),
    "duplicate-id.jsonl": ("duplicate-id", 11),
    "bad-parent.jsonl": ("missing-parent", 4),
    "bad-parents.jsonl": ("bad-parents", 3),
    "bad-base-root.jsonl": ("base-root", 10),
    "bad-base-prefix.jsonl": ("base-prefix", 3),
    "bad-base-parent.jsonl": ("base-parent", 10),
    "v0.4/missing-id.jsonl": ("missing-id", 2),
    "v0.4/bad-parent.jsonl": ("missing-parent", 3),
    "v0.4/bad-parents.jsonl": ("bad-parents", 3),
}
#: Negatives about context, records or verification: clean at the reader level.
CONTEXT_LEVEL = {
    "bad-records.jsonl",
    "bad-resume.jsonl",
    "bad-omit.jsonl",
    "bad-first-kept.jsonl",
    "bad-handback.jsonl",
    "bad-handback-folded.jsonl",
    "v0.4/bad-first-kept.jsonl",
}
FORMAT_ERRORS = {"unsupported-format.jsonl"}


def errors(session: SessionFile) -> list[str]:
    return [f"{p.code}@{p.line}: {p.message}" for p in session.problems if p.severity == "error"]


def raw_lines(path: Path) -> list[dict[str, Any]]:
    """The file's entry lines as plain JSON (stdlib parser, independent of the reader)."""
    return [json.loads(line) for line in path.read_bytes().splitlines()[1:]]


def reference_id(obj: dict[str, Any]) -> str:
    """The two-layer id with the rfc8785 package as an independent JCS (inside its domain)."""

    def jcs_hash(value: Any) -> str:
        try:
            data = rfc8785.dumps(value)
        except Exception:  # integers beyond 2**53: outside rfc8785's domain
            data = canonical.dumps(value)
        return "sha256:" + hashlib.sha256(data).hexdigest()

    body = {k: v for k, v in obj.items() if k not in ("id", "type", "parent", "parents", "ts")}
    env = {"type": obj["type"], "parent": obj.get("parent"), "ts": obj["ts"]}
    env["content"] = jcs_hash(body)
    if obj.get("parents"):
        env["parents"] = obj["parents"]
    return jcs_hash(env)


# --------------------------------------------------------------------------- the vectors


def test_every_session_file_is_classified() -> None:
    on_disk = {str(p.relative_to(SESSIONS)) for p in SESSIONS.rglob("*.jsonl")}
    assert on_disk == set(KINDS) | UNTABLED_POSITIVE
    assert set(NEGATIVE) == set(EXPECTED) | CONTEXT_LEVEL | FORMAT_ERRORS


@pytest.mark.parametrize("name", POSITIVE)
def test_positive_file_loads_cleanly(name: str) -> None:
    path = SESSIONS / name
    session = read_session(path)
    assert errors(session) == []
    lines = raw_lines(path)
    assert len(session.entries) == len(lines)
    if session.migrated:
        return  # opaque ids by design; see the migration tests
    for entry, line in zip(session.entries, lines, strict=True):
        assert entry.id == line["id"] == reference_id(line)
        assert ids.entry_id(entry_to_json(entry)) == entry.id
        assert entry_to_json(entry) == line


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_negative_file_reports_its_problem(name: str) -> None:
    code, line = EXPECTED[name]
    session = read_session(SESSIONS / name)
    found = [(p.code, p.line) for p in session.problems]
    assert (code, line) in found
    problem = next(p for p in session.problems if (p.code, p.line) == (code, line))
    assert problem.severity == ("warning" if code == "truncated" else "error")


def test_truncated_keeps_everything_before_the_cut() -> None:
    path = SESSIONS / "truncated.jsonl"
    session = read_session(path)
    good = path.read_bytes().splitlines()[1:-1]
    assert [e.id for e in session.entries] == [json.loads(x)["id"] for x in good]
    assert errors(session) == []


def test_duplicate_is_one_entry() -> None:
    path = SESSIONS / "duplicate-id.jsonl"
    session = read_session(path)
    lines = raw_lines(path)
    unique = list(dict.fromkeys(x["id"] for x in lines))
    assert [e.id for e in session.entries] == unique
    assert len(unique) == len(lines) - 1
    # The finding names the repeated entry and the line that repeats it.
    (again,) = [n for n, x in enumerate(lines, 2) if x["id"] in [y["id"] for y in lines[: n - 2]]]
    (problem,) = [p for p in session.problems if p.code == "duplicate-id"]
    assert (problem.line, problem.entry) == (again, lines[again - 2]["id"])


def test_missing_id_entry_is_kept_under_its_computed_id() -> None:
    path = SESSIONS / "missing-id.jsonl"
    session = read_session(path)
    lines = raw_lines(path)
    (nameless,) = [x for x in lines if "id" not in x]
    kept = session.entries[lines.index(nameless)]
    assert kept.id == reference_id(nameless)


@pytest.mark.parametrize("name", sorted(CONTEXT_LEVEL))
def test_context_level_negative_is_clean_for_the_reader(name: str) -> None:
    assert errors(read_session(SESSIONS / name)) == []


def test_unsupported_format_is_refused() -> None:
    with pytest.raises(FormatError, match=r"agentsession/1\.0 is newer than this reader \(0\.11\)"):
        read_session(SESSIONS / "unsupported-format.jsonl")


# --------------------------------------------------------------------------- migration

#: The README marks the v0.4 originals of hashed files with "(migration)".
MIGRATION_PAIRS = sorted(
    name.removeprefix("v0.4/") for name, kind in KINDS.items() if "(migration)" in kind
)


def test_migration_pairs_are_the_expected_ones() -> None:
    stems = ["basic", "branch", "compaction", "extensions", "instructions", "bad-first-kept"]
    assert sorted(f"{stem}.jsonl" for stem in stems) == MIGRATION_PAIRS
    assert all((SESSIONS / name).exists() for name in MIGRATION_PAIRS)


@pytest.mark.parametrize("name", MIGRATION_PAIRS)
def test_migration_reproduces_the_hashed_file(name: str) -> None:
    old = read_session(SESSIONS / "v0.4" / name)
    new_lines = raw_lines(SESSIONS / name)
    assert old.migrated
    assert old.version < (0, 5)
    assert [e.id for e in old.entries] == [x["id"] for x in new_lines]
    assert [entry_to_json(e) for e in old.entries] == new_lines
    assert errors(old) == []
    assert all(p.code == "migration" for p in old.problems)
    old_lines = raw_lines(SESSIONS / "v0.4" / name)
    assert old.legacy == {x["id"]: y["id"] for x, y in zip(old_lines, new_lines, strict=True)}


def test_migration_reports_unresolvable_references() -> None:
    fork = read_session(SESSIONS / "fork.jsonl")
    assert fork.migrated
    assert errors(fork) == []
    assert any(p.code == "migration" and p.line == 2 for p in fork.problems)
    kept = read_session(SESSIONS / "v0.4" / "bad-first-kept.jsonl")
    assert [(p.code, p.line) for p in kept.problems] == [("migration", 3)]


_V04_HEADER = (
    b'{"type":"session","format":"agentsession/0.4","id":"s","created_at":"2026-01-01T00:00:00Z",'
    b'"payload":"openresponses/2026-04-24"}\n'
)


def _migrated(*lines: bytes) -> tuple[SessionFile, list[tuple[str, int]]]:
    session = parse_session(_V04_HEADER + b"".join(line + b"\n" for line in lines))
    assert session.migrated
    return session, [(p.code, p.line) for p in session.problems]


def test_migration_keeps_the_old_id_over_a_legacy_id_written_beside_it() -> None:
    session, problems = _migrated(
        b'{"type":"info","id":"a","parent":null,"ts":"2026-01-01T00:00:01Z","name":"x",'
        b'"legacy_id":"zz"}'
    )
    assert session.entries[0].unknown["legacy_id"] == "a"
    assert problems == [("migration", 2)]


def test_migration_maps_parents_in_this_session_and_keeps_those_of_another() -> None:
    session, problems = _migrated(
        b'{"type":"info","id":"a","parent":null,"ts":"2026-01-01T00:00:01Z","name":"x"}',
        b'{"type":"info","id":"b","parent":null,"ts":"2026-01-01T00:00:02Z","name":"y"}',
        b'{"type":"info","id":"c","parent":"b","ts":"2026-01-01T00:00:03Z","name":"z",'
        b'"parents":[{"entry":"a","session":"s"},{"entry":"a","session":"other"}]}',
        b'{"type":"info","id":"d","parent":"c","ts":"2026-01-01T00:00:04Z","name":"w",'
        b'"parents":[{"entry":"b"}]}',
    )
    a, b, c, d = session.entries
    # Its own session named or not: the new id. Another session's: as written, and said so.
    assert [(r.entry, r.session) for r in c.parents or ()] == [(a.id, "s"), ("a", "other")]
    assert [(r.entry, r.session) for r in d.parents or ()] == [(b.id, None)]
    assert problems == [("migration", 4)]


def test_migration_tells_of_an_extension_member_that_may_name_an_entry() -> None:
    """It cannot know the member names an entry (its type is no core type): kept as written,
    with a warning, where a core member naming one is rewritten."""
    session, problems = _migrated(
        b'{"type":"info","id":"a","parent":null,"ts":"2026-01-01T00:00:01Z","name":"x"}',
        b'{"type":"x-vendor:mark","id":"b","parent":"a","ts":"2026-01-01T00:00:02Z","at":"a"}',
    )
    assert session.entries[1].unknown["at"] == "a"
    assert session.entries[1].parent == session.entries[0].id
    assert problems == [("migration", 3)]


def test_migrated_later_parent_is_reported_as_later() -> None:
    data = (
        b'{"type":"session","format":"agentsession/0.4","id":"s","created_at":"2026-01-01T00:00:00Z",'
        b'"payload":"openresponses/2026-04-24"}\n'
        b'{"type":"info","id":"a","parent":"b","ts":"2026-01-01T00:00:01+01:00","name":"x"}\n'
        b'{"type":"info","id":"b","parent":null,"ts":"2026-01-01T00:00:02.500Z","name":"y"}\n'
    )
    session = parse_session(data)
    assert [(p.code, p.line) for p in session.problems] == [("parent-later", 2)]
    assert [e.ts for e in session.entries] == ["2025-12-31T23:00:01Z", "2026-01-01T00:00:02.5Z"]


# --------------------------------------------------------------------------- resume leaf


def test_resume_leaf_of_branch_is_the_last_entry() -> None:
    path = SESSIONS / "branch.jsonl"
    session = read_session(path)
    assert session.resume_leaf() == raw_lines(path)[-1]["id"]
    # The branch keeps two leaves; the resume rule picks the one written last.
    assert len(session.leaves()) == 2
    assert session.leaves()[-1] == session.resume_leaf()


def _ts(n: int) -> str:
    return f"2026-10-02T08:{n // 60:02d}:{n % 60:02d}Z"


class Tree:
    """A tiny session under construction for the leaf-label cases."""

    def __init__(self, **header: Any) -> None:
        self.header = Header(id="s-1", created_at=_ts(0), **header)
        self.builder = SessionBuilder(self.header)
        self.n = 0

    def add(self, parent: str | None = None, *, root: bool = False, **kw: Any) -> str:
        self.n += 1
        entry = Item(ts=_ts(self.n), item={"type": "message", "n": self.n}, **kw)
        where: Any = None if root else (parent if parent is not None else self.builder.leaf)
        sealed = self.builder.append(entry, parent=where)
        assert sealed.id is not None
        return sealed.id

    def label(self, target: str, label: str | None) -> str:
        """Append a label under the entry written last."""
        self.n += 1
        entry = Label(ts=_ts(self.n), target=target, label=label)
        sealed = self.builder.append(entry, parent=self.builder.entries[-1].id)
        assert sealed.id is not None
        return sealed.id

    def read(self) -> SessionFile:
        data = header_line(self.header) + b"".join(entry_line(e) for e in self.builder.entries)
        return parse_session(data)


def test_leaf_label_picks_newest_descendant_written_after_it() -> None:
    t = Tree()
    root = t.add(root=True)
    a = t.add(root)
    a2 = t.add(a)  # descends from a but written before the label
    b = t.add(root)
    t.label(a, "leaf")
    assert t.read().resume_leaf() == a  # nothing below a after the label
    t.add(b)  # the other branch grows: does not move the leaf
    assert t.read().resume_leaf() == a
    a3 = t.add(a2)
    assert t.read().resume_leaf() == a3


def test_leaf_label_ignored_or_cleared() -> None:
    t = Tree()
    root = t.add(root=True)
    a = t.add(root)
    b = t.add(root)
    t.label("sha256:" + "0" * 64, "leaf")  # absent target: ignored; the label is last
    assert t.read().resume_leaf() == b  # a leaf label as leaf resolves to its parent
    first = t.label(a, "leaf")
    assert t.read().resume_leaf() == a
    t.label(first, "leaf")  # targets a leaf label: ignored
    assert t.read().resume_leaf() == a
    t.label(a, "checkpoint")  # another label does not clear the leaf
    assert t.read().resume_leaf() == a
    t.label(a, None)  # label:null clears it
    session = t.read()
    last = session.entries[-1]
    assert isinstance(last, Label)
    assert last.label is None
    assert session.resume_leaf() == last.id


def test_last_leaf_label_in_force_wins() -> None:
    t = Tree()
    root = t.add(root=True)
    a = t.add(root)
    b = t.add(root)
    t.label(a, "leaf")
    t.label(b, "leaf")
    assert t.read().resume_leaf() == b
    t.label(a, "leaf")
    assert t.read().resume_leaf() == a


def test_leaf_label_on_prefix_above_base_is_ignored() -> None:
    origin = Tree()
    root = origin.add(root=True)
    mid = origin.add(root)
    base = origin.add(mid)
    t = Tree(base=base)
    for e in origin.builder.entries:
        t.builder.append(e, parent=e.parent)
    own = t.add(base)
    t.label(mid, "leaf")
    session = t.read()
    assert errors(session) == []
    assert session.resume_leaf() == own
    t.label(base, "leaf")
    assert t.read().resume_leaf() == base


def test_pre_05_files_have_no_leaf_labels() -> None:
    data = (
        b'{"type":"session","format":"agentsession/0.4","id":"s","created_at":"2026-01-01T00:00:00Z",'
        b'"payload":"openresponses/2026-04-24"}\n'
        b'{"type":"info","id":"a","parent":null,"ts":"2026-01-01T00:00:01Z","name":"x"}\n'
        b'{"type":"info","id":"b","parent":"a","ts":"2026-01-01T00:00:02Z","name":"y"}\n'
        b'{"type":"label","id":"c","parent":"a","ts":"2026-01-01T00:00:03Z","target":"b","label":"leaf"}\n'
    )
    session = parse_session(data)
    assert session.resume_leaf() == session.legacy["c"]


# --------------------------------------------------------------------------- the header


HEADER = {
    "type": "session",
    "format": "agentsession/0.11",
    "id": "s-1",
    "created_at": "2026-10-02T08:00:00Z",
    "payload": "openresponses/2026-04-24",
}


def header_bytes(**changes: Any) -> bytes:
    obj = {**HEADER, **changes}
    return json.dumps({k: v for k, v in obj.items() if v is not None}).encode() + b"\n"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"\n", "empty"),
        (b"not json\n", "not a session header"),
        (b'{"type":"sess', "not a session header"),
        (b"[1]\n", "not a JSON object"),
        (header_bytes(type="item"), "type 'item'"),
        (header_bytes(format=None), "no format"),
        (header_bytes(format="agentsession/0.12"), r"agentsession/0\.12 is newer"),
        (header_bytes(format="agentsession/1.0"), r"agentsession/1\.0 is newer"),
        (header_bytes(format="agentsession/0.0"), "not a format this reader knows"),
        (header_bytes(format="agentsession/v1"), "unknown format"),
    ],
)
def test_bad_header_is_a_format_error(data: bytes, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        parse_session(data)


@pytest.mark.parametrize("minor", range(1, 12))
def test_every_known_minor_is_read(minor: int) -> None:
    session = parse_session(header_bytes(format=f"agentsession/0.{minor}"))
    assert session.version == (0, minor)
    assert session.migrated == (minor < 5)
    assert session.entries == []
    assert session.resume_leaf() is None


def test_header_without_required_members_is_reported() -> None:
    session = parse_session(header_bytes(id=None, created_at=None))
    assert sorted(p.code for p in session.problems) == ["bad-header", "bad-header"]
    # A payload profile this reader does not know is read, with a warning.
    session = parse_session(header_bytes(payload="chatcompletions/2024"))
    assert [(p.code, p.severity, p.line) for p in session.problems] == [
        ("bad-header", "warning", 1)
    ]
    # A header that is not I-JSON is read all the same, and that is a finding.
    for spoiled in (b'"x-note":"\\ud800"}', b'"x-n":1,"x-n":2}'):
        session = parse_session(header_bytes().replace(b"}", b"," + spoiled, 1))
        assert [(p.code, p.line) for p in session.problems] == [("not-ijson", 1)]
        assert session.header.id == HEADER["id"]


# --------------------------------------------------------------------------- single lines


def entry(**members: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"type": "info", "parent": None, "ts": _ts(1), "name": "x", **members}
    obj = {k: v for k, v in obj.items() if v is not ...}
    if "id" not in obj:
        obj["id"] = ids.entry_id(obj)
    return obj


def file_of(*lines: dict[str, Any] | bytes) -> bytes:
    out = [header_bytes()]
    for line in lines:
        out.append(line if isinstance(line, bytes) else canonical.dumps(line) + b"\n")
    return b"".join(out)


def codes(data: bytes) -> list[tuple[str, int]]:
    return [(p.code, p.line) for p in parse_session(data).problems]


def test_clean_file_has_no_problems() -> None:
    a = entry()
    b = entry(parent=a["id"], ts=_ts(2))
    session = parse_session(file_of(a, b))
    assert session.problems == []
    assert session.children == {None: [a["id"]], a["id"]: [b["id"]]}
    assert [e.id for e in session.path_to(b["id"])] == [a["id"], b["id"]]
    assert session.position(b["id"]) == 1
    assert session.line_of == {a["id"]: 2, b["id"]: 3}


def test_truncated_and_corrupt_lines() -> None:
    a = entry()
    b = entry(ts=_ts(2))
    cut = canonical.dumps(b)[:25]
    assert codes(file_of(a, cut)) == [("truncated", 3)]
    assert codes(file_of(a, cut + b"\n")) == [("truncated", 3)]
    assert codes(file_of(cut + b"\n", a)) == [("corrupt-line", 2)]
    assert codes(file_of(b'{"name":"\xff"}\n', a)) == [("corrupt-line", 2)]
    assert codes(file_of(a, b"\n", b)) == [("blank-line", 3)]
    assert [p.severity for p in parse_session(file_of(a, b"\n", b)).problems] == ["warning"]
    assert codes(file_of(a, b"[1, 2]\n")) == [("not-object", 3)]
    # A whole last line without its LF is kept, with a warning.
    session = parse_session(file_of(a, canonical.dumps(b)))
    assert [e.id for e in session.entries] == [a["id"], b["id"]]
    assert [(p.code, p.severity, p.line) for p in session.problems] == [
        ("missing-newline", "warning", 3)
    ]


def test_refused_and_damaged_at_once_is_corruption() -> None:
    a = entry()
    assert codes(file_of(b'{"a":1,"a":2} x\n', a)) == [("corrupt-line", 2)]
    assert codes(file_of(a, b'{"a":NaN}]\n')) == [("truncated", 3)]
    assert codes(file_of(a, b"[" * 100000 + b"\n", a)) == [("corrupt-line", 3), ("duplicate-id", 4)]


def test_valid_json_that_is_not_ijson_is_not_truncation() -> None:
    a = entry()
    dup = b'{"type":"info","name":"a","name":"b","parent":null,"ts":"2026-10-02T08:00:01Z"}\n'
    assert codes(file_of(a, dup)) == [("not-ijson", 3)]
    assert codes(file_of(dup, a)) == [("not-ijson", 2)]


def test_id_problems() -> None:
    a = entry()
    assert codes(file_of({**a, "name": "changed"})) == [("bad-id", 2)]
    (problem,) = parse_session(file_of({**a, "name": "changed"})).problems
    assert problem.entry == a["id"]  # filed under the id the line gives, not its content's
    assert codes(file_of({**a, "id": "md5:" + "0" * 32})) == [("bad-id", 2)]
    (problem,) = parse_session(file_of({**a, "id": "md5:" + "0" * 32})).problems
    assert problem.entry == "md5:" + "0" * 32  # filed under the id the line gives
    session = parse_session(file_of({**a, "id": 7}))
    assert [(p.code, p.entry) for p in session.problems] == [("bad-id", a["id"])]
    assert [e.id for e in session.entries] == [a["id"]]
    no_ts = {k: v for k, v in a.items() if k != "ts"}
    assert codes(file_of(no_ts)) == [("bad-entry", 2)]
    # A line the cheap I-JSON screen cannot clear (an escaped surrogate pair) is screened in
    # full and, being I-JSON after all, is still reported for what it lacks.
    emoji = "\U0001f600"
    paired = canonical.dumps({**no_ts, "name": emoji})
    paired = paired.replace(emoji.encode(), b"\\ud83d\\ude00")
    assert b"\\ud83d" in paired
    assert codes(file_of(paired + b"\n")) == [("bad-entry", 2)]


def test_body_problems() -> None:
    assert codes(file_of(entry(ts="2026-10-02T08:00:01.500Z"))) == [("bad-ts", 2)]
    assert codes(file_of(entry(ts="2026-10-02 08:00:01Z"))) == [("bad-ts", 2)]
    assert codes(file_of(entry(content="x"))) == [("reserved-member", 2)]
    assert codes(file_of(entry(parent=...))) == [("bad-entry", 2)]
    assert codes(file_of(entry(type=""))) == [("bad-entry", 2)]
    assert codes(file_of(entry(type=7))) == [("bad-entry", 2)]
    # The id is the hash of the canonical form, where 2**53 + 1 reads as its double 2**53.
    big = entry(n=2**53)
    line = canonical.dumps(big).replace(b'"n":9007199254740992', b'"n":9007199254740993')
    assert codes(file_of(line + b"\n")) == [("not-ijson", 2)]
    surrogate = canonical.dumps(entry()).replace(b'"name":"x"', b'"name":"\\ud800"')
    assert codes(file_of(surrogate + b"\n")) == [("not-ijson", 2)]
    (problem,) = parse_session(file_of(surrogate + b"\n")).problems
    assert problem.entry == entry()["id"]


@pytest.mark.parametrize(
    ("members", "code"),
    [
        ({"ts": "2026-10-02T08:00:01.500Z"}, "bad-ts"),
        ({"content": "x"}, "reserved-member"),
        ({"parent": ...}, "bad-entry"),
        ({"parent": 7}, "bad-entry"),
        ({"type": ""}, "bad-entry"),
        ({"parents": {"entry": "x"}}, "bad-parents"),
        ({"parents": []}, "bad-parents"),
        ({"parents": ["sha256:" + "4" * 64]}, "bad-parents"),
        ({"parents": [{"session": "other"}]}, "bad-parents"),
        ({"parents": [{"entry": "x", "session": 7}]}, "bad-parents"),
        ({"parents": [{"entry": "sha256:" + "4" * 64}]}, "bad-parents"),
    ],
)
def test_a_finding_about_a_line_names_its_entry(members: dict[str, Any], code: str) -> None:
    """What ``asf verify`` shows beside a finding: the line and the entry it concerns."""
    obj = entry(**members)
    (problem,) = parse_session(file_of(obj)).problems
    assert (problem.code, problem.line, problem.entry) == (code, 2, obj["id"])
    assert problem.severity == ("warning" if members == {"parents": []} else "error")


def test_parent_and_parents_problems() -> None:
    a = entry()
    b = entry(parent=a["id"], ts=_ts(2))
    c = entry(parent="sha256:" + "1" * 64, ts=_ts(3))
    assert codes(file_of(b, a)) == [("parent-later", 2)]
    # Findings settled at the end of the file (a parent written later) come in line order
    # with those found on the way.
    assert codes(file_of(b, a, b"[1]\n")) == [("parent-later", 2), ("not-object", 4)]
    assert codes(file_of(a, c)) == [("missing-parent", 3)]
    d = entry(parent=a["id"], parents=[{"entry": a["id"]}], ts=_ts(4))
    assert codes(file_of(a, d)) == [("bad-parents", 3)]
    e = entry(parent=None, parents=[{"entry": a["id"]}, {"entry": a["id"]}], ts=_ts(5))
    assert codes(file_of(a, e)) == [("bad-parents", 3)]
    f = entry(parents=[{"entry": b["id"]}, {"entry": a["id"]}], ts=_ts(6))
    session = parse_session(file_of(a, b, f))
    assert [(p.code, p.severity) for p in session.problems] == [("parents-order", "warning")]
    g = entry(parents=[{"entry": a["id"]}, {"session": "other", "entry": "x"}], ts=_ts(7))
    assert codes(file_of(a, g)) == []
    h = entry(parents=[{"entry": "sha256:" + "2" * 64}], ts=_ts(8))
    assert codes(file_of(h)) == [("bad-parents", 2)]
    later = entry(parents=[{"entry": a["id"]}], ts=_ts(10))
    (problem,) = parse_session(file_of(later, a)).problems
    assert (problem.code, problem.line) == ("bad-parents", 2)
    assert problem.message == f"parents names {a['id']}, written later"
    (problem,) = parse_session(file_of(h)).problems
    assert problem.message.endswith(", not in this file")
    assert codes(file_of(entry(parents={"entry": a["id"]}, ts=_ts(11)))) == [("bad-parents", 2)]
    session = parse_session(file_of(entry(parents=[], ts=_ts(12))))
    assert [(p.code, p.severity) for p in session.problems] == [("bad-parents", "warning")]
    own = entry(parents=[{"session": "s-1", "entry": "sha256:" + "2" * 64}], ts=_ts(9))
    assert codes(file_of(own)) == [("bad-parents", 2)]


def test_base_without_its_entry() -> None:
    data = header_bytes(base="sha256:" + "3" * 64) + canonical.dumps(entry()) + b"\n"
    assert codes(data) == [("base-prefix", 0)]


def test_base_that_is_no_entry_id_or_in_an_old_format() -> None:
    session = parse_session(header_bytes(base=7))
    assert [(p.code, p.severity, p.line) for p in session.problems] == [("bad-header", "error", 1)]
    assert session.base is None
    old = parse_session(header_bytes(format="agentsession/0.4", base="sha256:" + "3" * 64))
    assert [(p.code, p.severity) for p in old.problems] == [("bad-header", "warning")]
    assert old.base is None


def test_every_entry_before_the_base_is_on_the_path_to_it() -> None:
    """The prefix rule checks the file's first entry too: a stray root written first."""
    stray = entry(name="stray")
    root = entry(ts=_ts(2))
    base = entry(parent=root["id"], ts=_ts(3))
    data = header_bytes(base=base["id"]) + b"".join(
        canonical.dumps(e) + b"\n" for e in (stray, root, base)
    )
    assert codes(data) == [("base-prefix", 2)]
    data = header_bytes(base=base["id"]) + b"".join(
        canonical.dumps(e) + b"\n" for e in (root, base)
    )
    assert codes(data) == []


def test_path_to_stops_at_a_forged_cycle() -> None:
    x = "sha256:" + "a" * 64
    y = "sha256:" + "b" * 64
    a = entry(id=x, parent=y)
    b = entry(id=y, parent=x, ts=_ts(2))
    session = parse_session(file_of(a, b))
    assert [e.id for e in session.path_to(y)] == [x, y]
    assert [e.id for e in session.path_to(x)] == [x]
    assert ("parent-later", 2) in codes(file_of(a, b))


def test_responses_and_leaves() -> None:
    session = read_session(SESSIONS / "basic.jsonl")
    lines = raw_lines(SESSIONS / "basic.jsonl")
    assert [r.id for r in session.responses()] == [
        x["id"] for x in lines if x["type"] == "response"
    ]
    assert session.leaves() == [lines[-1]["id"]]


# --------------------------------------------------------------------------- I-JSON screen

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([2**53, 2**53 + 1, -(2**53) - 1, 2**60, 2**60 + 1, 10**20 + 1])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec=None, categories=["L", "N", "Cs", "P"]), max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(json_values)
def test_not_ijson_reported_exactly_when_the_value_is_not_ijson(value: Any) -> None:
    text = json.dumps({"type": "custom", "parent": None, "ts": _ts(1), "ns": "t", "data": value})
    data = header_bytes() + text.encode() + b"\n"
    obj = strict_json.parse(text)
    session = parse_session(data)
    reported = any(p.code == "not-ijson" for p in session.problems)
    assert reported == bool(canonical.ijson_problems(obj))


@pytest.mark.parametrize(
    ("spelling", "bad"),
    [
        ("9007199254740993", True),
        ("-9007199254740993", True),
        ("9.007199254740993e15", True),
        ("9007199254740993.0", True),
        ("90071992547409930E-1", True),
        ("9007199254740992", False),
        ("1e20", False),
        ("1152921504606847000", False),
        ("1.5e300", False),
        ("0.1", False),
    ],
)
def test_not_ijson_integers_in_any_spelling(spelling: str, bad: bool) -> None:
    obj = entry(n=0)
    line = canonical.dumps(obj).replace(b'"n":0', b'"n":' + spelling.encode()) + b"\n"
    found = [p.code for p in parse_session(file_of(line)).problems]
    assert ("not-ijson" in found) == bad


def test_config_entry_round_trip_through_reader() -> None:
    b = SessionBuilder(Header(id="s-1", created_at=_ts(0)))
    b.append(Config(ts=_ts(1), model="m", tools_added=({"type": "function", "name": "f"},)))
    data = header_line(b.header) + b"".join(entry_line(e) for e in b.entries)
    session = parse_session(data)
    assert session.problems == []
    assert [entry_to_json(e) for e in session.entries] == [entry_to_json(e) for e in b.entries]


# --------------------------------------------------------------------------- robustness

edits = st.lists(
    st.tuples(
        st.integers(min_value=0), st.sampled_from(["del", "ins", "set"]), st.binary(max_size=3)
    ),
    max_size=6,
)


@pytest.mark.parametrize("name", ["basic.jsonl", "branch.jsonl", "v0.4/compaction.jsonl"])
@given(edits=edits)
def test_damaged_files_never_crash_the_reader(
    name: str, edits: list[tuple[int, str, bytes]]
) -> None:
    data = bytearray((SESSIONS / name).read_bytes())
    for where, op, payload in edits:
        at = where % (len(data) + 1)
        if op == "del":
            del data[at : at + len(payload) + 1]
        elif op == "ins":
            data[at:at] = payload
        else:
            data[at : at + len(payload)] = payload
    try:
        session = parse_session(bytes(data))
    except FormatError:
        return
    assert all(p.severity in ("error", "warning") for p in session.problems)
    for entry in session.entries:
        assert entry.id is not None
        assert session.path_to(entry.id)[-1] is entry
    leaf = session.resume_leaf()
    assert leaf is None or leaf in session.by_id
