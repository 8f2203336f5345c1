"""The rules that ask whether an entry is on another's path (a compaction's ``first_kept``, an
item's ``queued_from``, a config's ``instructions_omitted`` ``of``) answer from one walk of
the file, as :meth:`SessionFile.above` and :meth:`SessionFile.up_of` do: the same findings as
walking each path, on generated trees with every kind of damaged parent, and linear time on
a file of thousands of them (a walk per entry took 80 s for 10,000 compactions)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from asf_fuzz_check import time_bound
from hypothesis import example, given
from hypothesis import strategies as st

from asf_core.model import Compaction, Config, Entry, Header, Item, Queued
from asf_core.session_file import SessionFile
from asf_core.verify.common import Finding
from asf_core.verify.refs import first_kept_findings, omitted_of_findings, queued_findings
from asf_core.verify.session import verify_path
from asf_core.writer import SessionBuilder, write_session

TS = "2026-10-01T12:00:00Z"
_MESSAGE = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}


def _session(entries: list[Entry]) -> SessionFile:
    ids = [str(e.id) for e in entries]
    return SessionFile(
        path=None,
        header=Header(id="s", created_at=TS),
        version=(0, 11),
        migrated=False,
        entries=entries,
        line_of={ident: n + 2 for n, ident in enumerate(ids)},
        by_id=dict(zip(ids, entries, strict=True)),
        children={},
        problems=[],
        base=None,
        index_of={ident: n for n, ident in enumerate(ids)},
    )


def _on_path(session: SessionFile, entry: Entry) -> list[Entry]:
    return [] if entry.id is None else session.path_to(entry.id)[:-1]


# The rules as they were, one walk of the path per entry: the reference.
def _first_kept_walked(session: SessionFile) -> list[str | None]:
    out = []
    for entry in session.entries:
        kept = entry.first_kept if isinstance(entry, Compaction) else None
        if kept is not None and kept not in {e.id for e in _on_path(session, entry)}:
            out.append(entry.id)
    return out


def _queued_walked(session: SessionFile) -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = []
    drained: dict[str, str] = {}
    for entry in session.entries:
        if not isinstance(entry, Item) or entry.queued_from is None:
            continue
        source = entry.queued_from
        path = _on_path(session, entry)
        queued = next((e for e in path if e.id == source and isinstance(e, Queued)), None)
        if queued is None:
            out.append((entry.id, "queued-from"))
            continue
        if source in drained and drained[source] in {e.id for e in path}:
            out.append((entry.id, "queued-drained-twice"))
        drained.setdefault(source, entry.id or "")
    return out


def _resets(entry: Entry) -> bool:
    return isinstance(entry, Compaction) or (isinstance(entry, Config) and entry.replace is True)


def _omitted_walked(session: SessionFile) -> list[tuple[str | None, str]]:
    out = []
    for entry in session.entries:
        if not isinstance(entry, Config) or not entry.instructions_omitted:
            continue
        before = _on_path(session, entry)
        index = {e.id: i for i, e in enumerate(before)}
        for ref in entry.instructions_omitted:
            of = ref["of"]
            at = index.get(of)
            named = before[at] if at is not None else None
            why = ""
            if at is None:
                why = "names no entry"
            elif not isinstance(named, Config) or named.instructions_omitted is None:
                why = "names an entry that is not a config"
            elif any(_resets(e) for e in before[at + 1 :]):
                why = "names a list discarded"
            elif entry.replace is True:
                why = "sits in a replace entry"
            if why:
                out.append((entry.id, why))
    return out


#: The queued rules about paths (the others compare the item with its queued entry).
_QUEUED_PATH_CODES = ("queued-from", "queued-drained-twice")


def _ours(found: list[Finding]) -> list[tuple[str | None, str]]:
    return [(f.entry, f.code) for f in found]


#: Per entry: its kind, its parent (None, an index anywhere in the file: before it, itself
#: or after it, or -1 for an id not in the file) and the entry it names (same choices).
_REF = st.one_of(st.none(), st.integers(-1, 24))
_SPEC = st.tuples(
    st.sampled_from(["item", "queued", "compaction", "config", "replace"]), _REF, _REF
)


def _build(specs: list[tuple[str, int | None, int | None]]) -> SessionFile:
    def name(ref: int | None) -> str | None:
        return None if ref is None else "gone" if ref < 0 else f"e{ref % len(specs)}"

    entries: list[Entry] = []
    for n, (kind, parent, ref) in enumerate(specs):
        base: dict[str, Any] = {"ts": TS, "id": f"e{n}", "parent": name(parent)}
        named = name(ref)
        if kind == "item":
            entries.append(Item(**base, item=_MESSAGE, queued_from=named))
        elif kind == "queued":
            entries.append(Queued(**base, item=_MESSAGE, mode="steer"))
        elif kind == "compaction":
            entries.append(Compaction(**base, summary=_MESSAGE, first_kept=named))
        else:
            omitted = () if named is None else ({"keep": 1, "of": named},)
            entries.append(
                Config(**base, instructions_omitted=omitted, replace=kind == "replace" or None)
            )
    return _session(entries)


@given(st.lists(_SPEC, min_size=1, max_size=25))
@example([("compaction", None, 0)])
@example([("config", None, None), ("queued", 0, None), ("item", 1, 1), ("item", 2, 1)])
@example([("config", None, None), ("compaction", 0, 0), ("config", 1, 0), ("config", 0, 0)])
def test_the_rules_find_what_walking_each_path_finds(
    specs: list[tuple[str, int | None, int | None]],
) -> None:
    session = _build(specs)
    for entry in session.entries:
        ident = str(entry.id)
        path = session.path_to(ident)
        assert session.up_of(ident) == (path[-2].id if len(path) > 1 else None)
        on_path = {e.id for e in path[:-1]}
        for other in session.entries:
            assert session.above(str(other.id), ident) == (other.id in on_path)
    assert [f.entry for f in first_kept_findings(session)] == _first_kept_walked(session)
    paths = [f for f in queued_findings(session) if f.code in _QUEUED_PATH_CODES]
    assert _ours(paths) == _queued_walked(session)
    omitted = [(f.entry, f.message) for f in omitted_of_findings(session)]
    walked = _omitted_walked(session)
    assert [e for e, _ in omitted] == [e for e, _ in walked]
    assert all(why in message for (_, message), (_, why) in zip(omitted, walked, strict=True))


def test_thousands_of_compactions_verify_in_linear_time(tmp_path: Path) -> None:
    """A chain of 2,000 rounds (a compaction keeping from the first entry, a queued item
    drained, a config keeping the round's omitted list) verifies clean, and twice the
    rounds take about twice the time, not four times."""

    def timed(rounds: int) -> float:
        builder = SessionBuilder(Header(id=f"s{rounds}", created_at=TS))
        first = builder.append(Item(ts=TS, item=_MESSAGE))
        for n in range(rounds):
            text = {**_MESSAGE, "content": [{"type": "input_text", "text": f"u{n}"}]}
            builder.append(Compaction(ts=TS, summary=text, first_kept=first.id))
            listed = builder.append(Config(ts=TS, instructions_omitted=({"id": f"m{n}"},)))
            queued = builder.append(Queued(ts=TS, item=text, mode="steer"))
            builder.append(Item(ts=TS, item=text, queued_from=queued.id))
            keep = ({"keep": 1, "of": str(listed.id)},)
            builder.append(Config(ts=TS, instructions_omitted=keep))
        path = tmp_path / f"{rounds}.jsonl"
        write_session(path, builder.header, builder.entries)
        start = time.perf_counter()
        found = verify_path(path)
        spent = time.perf_counter() - start
        codes = {f.code for f in found}
        assert not codes & {"first-kept", "queued-from", "queued-drained-twice", "omitted-of"}
        return spent

    with time_bound(60):
        small, large = timed(1_000), timed(2_000)
    assert large < 3 * small + 0.5, (small, large)
