"""Redacting whole converted sessions (asf_core/redaction/sessions.py), on the ASF vectors: ids
sealed again after a change, every reference (``parent``, ``first_kept``, a reference into a
sub-agent redacted earlier in the run) following its entry, ``request_hash`` dropped and
counted, header ids and finding text handled as docs/cli.md (``--redact``) says."""

from __future__ import annotations

import attrs
from fixture_paths import VECTORS

from asf_core.codec import entry_from_json, entry_to_json
from asf_core.findings import Finding
from asf_core.formats import ConvertedSession
from asf_core.model import Custom, Entry, ParentRef
from asf_core.reader import parse_session, read_session
from asf_core.redaction import Redactor, SessionRedaction, placeholder_pattern
from asf_core.writer import seal, session_lines

SESSIONS = VECTORS / "sessions"
#: A word of the first entry (the config's "Be brief.") of basic.jsonl and compaction.jsonl,
#: taken as personal: redacting it changes the first entry, so every id below it changes.
PERSONAL = {"display_name": ["brief"]}


def _vector(name: str) -> ConvertedSession:
    session = read_session(SESSIONS / name)
    return ConvertedSession(header=session.header, entries=session.entries, name=name)


def _redaction() -> SessionRedaction:
    return SessionRedaction(Redactor(phones=False))


def _redact(redaction: SessionRedaction, session: ConvertedSession) -> ConvertedSession:
    """The session redacted with :data:`PERSONAL` known, its entries consumed."""
    done = redaction.session(attrs.evolve(session, personal=PERSONAL))
    return attrs.evolve(done, entries=list(done.entries))


def _moved(before: ConvertedSession, after: ConvertedSession) -> dict[str, str]:
    """Old id -> new id, by position (redaction keeps the file order)."""
    old, new = list(before.entries), list(after.entries)
    assert len(old) == len(new)
    return {str(a.id): str(b.id) for a, b in zip(old, new, strict=True)}


def test_an_entry_named_in_a_list_inside_a_body_follows_its_new_id() -> None:
    """A body's list naming entries (a plugin's custom data) names their new ids, as a
    string member does: every level of a body is walked for them."""
    session = _vector("basic.jsonl")
    entries = list(session.entries)
    named = [str(e.id) for e in entries[1:3]]
    note = Custom(ts=entries[-1].ts, parent=entries[-1].id, ns="x", data={"see": named})
    session = attrs.evolve(session, entries=[*entries, seal(note)])
    redacted = _redact(_redaction(), session)
    moved = _moved(session, redacted)
    assert all(moved[n] != n for n in named)  # the premise: the entries it names changed id
    last = entry_to_json(list(redacted.entries)[-1])
    assert last["data"] == {"see": [moved[n] for n in named]}


def test_an_entry_named_inside_a_body_follows_its_new_id() -> None:
    """compaction.jsonl's ``first_kept`` names an entry below the redacted config: it must
    name that entry's new id, or the redacted file points at nothing."""
    session = _vector("compaction.jsonl")
    kept = [entry_to_json(e)["first_kept"] for e in session.entries if e.type == "compaction"]
    assert len(kept) == 1
    redacted = _redact(_redaction(), session)
    moved = _moved(session, redacted)
    assert moved[kept[0]] != kept[0]  # the premise: the entry it names changed id
    after = [entry_to_json(e)["first_kept"] for e in redacted.entries if e.type == "compaction"]
    assert after == [moved[kept[0]]]
    parsed = parse_session(b"".join(session_lines(redacted.header, redacted.entries)))
    assert not parsed.problems


def test_request_hash_is_dropped_and_counted() -> None:
    """A ``request_hash`` no longer describes the redacted request: dropped from every
    response, and the number dropped counted as ``request_hash_dropped``."""
    session = _vector("compaction.jsonl")
    hashed = sum("request_hash" in entry_to_json(e) for e in session.entries)
    assert hashed > 0
    redaction = _redaction()
    redacted = _redact(redaction, session)
    assert not any("request_hash" in entry_to_json(e) for e in redacted.entries)
    assert redaction.redactor.take_counts()["request_hash_dropped"] == hashed


def _spawner(sub_id: str, sub_leaf: str) -> ConvertedSession:
    """fork.jsonl, its config's ``parents`` naming ``sub_leaf`` of session ``sub_id`` (the
    vector names a legacy id that exists in no file)."""
    session = _vector("fork.jsonl")
    entries: list[Entry] = list(session.entries)
    obj = entry_to_json(entries[0])
    assert obj["parents"][0]["session"] == sub_id
    first = entry_from_json(obj)
    entries[0] = attrs.evolve(first, parents=(ParentRef(entry=sub_leaf, session=sub_id),))
    return attrs.evolve(session, entries=entries)


def test_a_reference_to_a_sub_agent_redacted_earlier_follows_its_new_leaf() -> None:
    """A plugin writes the sub-agent before the session that spawned it; the spawner's
    reference to the sub-agent's leaf must name the leaf's redacted id."""
    sub = _vector("basic.jsonl")
    leaf = str(list(sub.entries)[-1].id)
    redaction = _redaction()
    sub_redacted = _redact(redaction, sub)
    new_leaf = _moved(sub, sub_redacted)[leaf]
    assert new_leaf != leaf
    # Only the leaf: nothing hangs from it.
    assert redaction.leaves[sub.header.id] == {leaf: new_leaf}

    spawner = _redact(redaction, _spawner(sub.header.id, leaf))
    refs = next(iter(spawner.entries)).parents
    assert refs == (ParentRef(entry=new_leaf, session=sub.header.id),)


def test_a_reference_into_an_unknown_session_is_kept() -> None:
    """No session of the run has that id: there is nothing to move it to."""
    sub = _vector("basic.jsonl")
    leaf = str(list(sub.entries)[-1].id)
    spawner = _redact(_redaction(), _spawner(sub.header.id, leaf))
    assert next(iter(spawner.entries)).parents == (ParentRef(entry=leaf, session=sub.header.id),)


def test_the_session_a_reference_names_is_never_redacted() -> None:
    """A reference's ``session`` is an id, kept as written even when its text is a personal
    value (a Hermes session key), as the header's ``parent_session`` is."""
    name = "agent:main:telegram:dm:owner-4471"
    sub = _vector("basic.jsonl")
    leaf = str(list(sub.entries)[-1].id)
    session = _spawner(sub.header.id, leaf)
    entries = list(session.entries)
    entries[0] = attrs.evolve(entries[0], parents=(ParentRef(entry=leaf, session=name),))
    redaction = _redaction()
    redaction.redactor.learn({"session_key": [name]})
    spawner = _redact(redaction, attrs.evolve(session, entries=entries))
    [out] = next(iter(spawner.entries)).parents
    assert (out.entry, out.session) == (leaf, name)


def test_the_header_ids_are_never_redacted() -> None:
    """``parent_session`` names another session: kept as written even when its text is a
    personal value (a hand-written file shown with ``show --redact``), while ``cwd`` is
    redacted."""
    session = _vector("fork.jsonl")
    name = "agent:main:telegram:dm:owner-4471"
    header = attrs.evolve(session.header, parent_session=name, cwd=f"/home/{name}")
    redaction = SessionRedaction(Redactor(phones=False))
    redaction.redactor.learn({"session_key": [name]})
    redacted = redaction.header(header)
    assert redacted.parent_session == name
    assert redacted.cwd == "/home/[REDACTED:session_key:1]"
    assert redacted.redacted is True


def test_a_findings_unit_session_and_message_are_redacted() -> None:
    """Findings go to the report: the unit naming a source row is text like any other."""
    email = "ada.lovelace@example.org"
    finding = Finding(
        message=f"row of {email} unreadable",
        code="bad-row",
        unit=f"state.db:sessions/{email}",
        session=email,
    )
    [out] = _redaction().findings([finding])
    assert out.unit == "state.db:sessions/[REDACTED:email:1]"
    assert placeholder_pattern().fullmatch(out.session)
    assert email not in out.message
    assert out.code == "bad-row"


def test_the_members_of_a_reference_beside_its_ids_are_redacted() -> None:
    """A ``parents`` reference may carry members of its own (a plugin's note, a file shown
    with ``show --redact``): redacted like any other member, ``entry`` and ``session`` kept."""
    email = "ada.lovelace@example.org"
    sub = _vector("basic.jsonl")
    leaf = str(list(sub.entries)[-1].id)
    session = _spawner(sub.header.id, leaf)
    entries = list(session.entries)
    ref = ParentRef(entry=leaf, session=sub.header.id, unknown={"note": f"asked by {email}"})
    entries[0] = attrs.evolve(entries[0], parents=(ref,))
    spawner = _redact(_redaction(), attrs.evolve(session, entries=entries))
    [out] = next(iter(spawner.entries)).parents
    assert (out.entry, out.session) == (leaf, sub.header.id)
    assert out.unknown == {"note": "asked by [REDACTED:email:1]"}
