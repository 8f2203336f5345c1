"""``fingerprints.json`` read and written without cattrs for the usual records: the same records
and the same bytes as cattrs gives, and nothing cattrs would refuse taken."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cattrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from output_tampering import holder, json_places

from asf_core.findings import Finding
from asf_core.layout import FINGERPRINTS_NAME
from asf_core.pipeline import fingerprints, unit_records
from asf_core.pipeline.unchanged import records_bytes
from asf_core.pipeline.unit_records import (
    FileStamp,
    Fingerprints,
    SessionRecord,
    UnitItem,
    UnitRecord,
    WholeRecord,
)

_TEXT = st.text(max_size=6)
_INT = st.integers(min_value=-(2**70), max_value=2**70)
_STAMPS = st.builds(FileStamp, size=_INT, mtime_ns=_INT, inode=_INT)
_FINDINGS = st.builds(Finding, kind=st.sampled_from(["stray", "warning"]), message=_TEXT)


def _sessions(findings: bool) -> st.SearchStrategy[SessionRecord]:
    return st.builds(
        SessionRecord,
        name=_TEXT,
        file=_TEXT,
        id=_TEXT,
        entries=_INT,
        stamp=_STAMPS,
        counts=st.dictionaries(_TEXT, _INT, max_size=3),
        findings=st.lists(_FINDINGS, max_size=1).map(tuple) if findings else st.just(()),
        native_ids=st.lists(_TEXT, max_size=2).map(tuple),
    )


@st.composite
def _records(draw: st.DrawFn, findings: bool = False) -> Fingerprints:
    items = st.builds(
        UnitItem,
        session=st.none() | _sessions(findings),
        finding=st.none() | _FINDINGS if findings else st.none(),
    )
    units = st.builds(UnitRecord, fingerprint=_TEXT, items=st.lists(items, max_size=3).map(tuple))
    whole = st.none() | st.builds(
        WholeRecord, stamp=_TEXT, report=_STAMPS, files=st.dictionaries(_TEXT, _STAMPS, max_size=2)
    )
    return Fingerprints(
        version=draw(_INT),
        host=draw(_TEXT),
        format=draw(_TEXT),
        store=draw(_TEXT),
        units=draw(st.dictionaries(_TEXT, units, max_size=3)),
        whole=draw(whole),
    )


def _has_finding(records: Fingerprints) -> bool:
    return any(
        item.finding is not None or (item.session is not None and item.session.findings)
        for unit in records.units.values()
        for item in unit.items
    )


@given(_records(findings=True))
def test_the_plain_route_writes_what_cattrs_writes(records: Fingerprints) -> None:
    """Without a finding, the same bytes; with one, the records are cattrs' to write."""
    structured = records_bytes(fingerprints._converter().unstructure(records))
    plain = unit_records.to_plain(records)
    assert (plain is None) == _has_finding(records)
    if plain is not None:
        assert records_bytes(plain) == structured


@given(_records(findings=True))
def test_the_plain_route_reads_what_cattrs_reads(records: Fingerprints) -> None:
    parsed = json.loads(records_bytes(fingerprints._converter().unstructure(records)))
    plain = unit_records.from_plain(parsed)
    assert (plain is None) == _has_finding(records)
    if plain is not None:
        assert plain == records == fingerprints._converter().structure(parsed, Fingerprints)


#: What replaces a member: a value of each JSON type, and one of each that nests.
_OTHERS: list[object] = [None, True, 0, 1.5, "x", [], {}, ["x"], {"x": 0}]


def _changed(parsed: dict[str, Any]) -> list[dict[str, Any]]:
    """The record with one change, for every place and change: a member removed, one
    added, or any member or item replaced by each of :data:`_OTHERS`."""
    out = []
    for at in json_places(parsed)[1:]:
        for change in ["remove", "add", *range(len(_OTHERS))]:
            copy = json.loads(json.dumps(parsed))
            parent = holder(copy, at)
            if isinstance(change, int):
                parent[at[-1]] = _OTHERS[change]
            elif isinstance(parent, dict):
                if change == "remove":
                    del parent[at[-1]]
                else:
                    parent["extra"] = 0
            out.append(copy)
    return out


@settings(max_examples=25)
@given(_records())
def test_a_changed_record_is_read_as_cattrs_reads_it_or_left_to_cattrs(
    records: Fingerprints,
) -> None:
    """Any member removed, added, or replaced by a value of another type: the plain route
    gives what cattrs gives, or gives nothing and cattrs decides (its account of what is
    wrong is the warning the user sees); it never takes what cattrs refuses."""
    parsed = json.loads(records_bytes(fingerprints._converter().unstructure(records)))
    for changed in _changed(parsed):
        plain = unit_records.from_plain(changed)
        try:
            structured = fingerprints._converter().structure(changed, Fingerprints)
        except (cattrs.BaseValidationError, TypeError, ValueError):
            assert plain is None, changed
        else:
            assert plain is None or plain == structured, changed


def test_a_stores_records_take_the_plain_route_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a run saves and the next loads: by the plain route, not through cattrs."""
    stamp = FileStamp(size=3, mtime_ns=4, inode=5)
    session = SessionRecord(
        name="s",
        file="default/s.jsonl",
        id="i",
        entries=2,
        stamp=stamp,
        counts={"messages": 2, "tool_calls": 0},
        native_ids=("n",),
    )
    units = {"u": UnitRecord(fingerprint="f", items=(UnitItem(session=session),))}
    whole = WholeRecord(stamp="w", report=stamp)
    structured = fingerprints._converter()

    def refused() -> object:
        raise AssertionError("cattrs was used")

    with monkeypatch.context() as patch:
        patch.setattr(fingerprints, "_converter", refused)
        fingerprints.save(tmp_path, "fmt", "/s", units, whole)
        loaded, warning = fingerprints.load(tmp_path, "fmt", "/s")
    assert warning is None
    assert loaded is not None
    assert loaded.units == units
    assert loaded.whole == whole
    data = (tmp_path / FINGERPRINTS_NAME).read_bytes()
    assert records_bytes(structured.unstructure(loaded)) == data
