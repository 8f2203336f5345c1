"""The acceptance test: every shared session converts, verifies, keeps every uuid, re-runs
byte-identical without touching its source, and the ASF context at its last message is the
message list FORMAT-NOTES §9 rebuilds (``cc_oracle``, written from the notes alone)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from cc_helpers import (
    CLAUDE_HOME,
    NS,
    PROJECTS,
    Converted,
    convert,
    file_id,
    line_entries,
    load,
    session_files,
    shared_files,
    source_key,
    tree_digest,
)
from cc_oracle import Atom, atoms, is_message, item_atoms, last_message, rebuild
from cc_oracle import load as load_lines

from asf_core.context import context_at
from asf_core.reader import SessionFile
from asf_core.verify.session import verify_path

SESSIONS = session_files()
IDS = [file_id(p) for p in SESSIONS]

#: FORMAT-NOTES §9's own figures at the last assistant line, §9 to the letter: entries on the
#: path, messages, results put back.
NOTES = {
    "fa812bfe": (115, 66, 6),
    "491e126e": (47, 26, 2),
    "55604662": (9, 3, 2),
    "d6e0bada": (22, 11, 1),
    "06090cb1": (2, 2, 0),
}


def _described(source: Path) -> str:
    """The key of a file FORMAT-NOTES describes; a file it does not (another real transcript
    put beside them) has no figures to compare, and the test is skipped for it."""
    key = source.stem[:8]
    if key not in NOTES:
        pytest.skip("FORMAT-NOTES gives no figures for this file")
    return key


def _with_messages(source: Path) -> list[dict[str, Any]]:
    """A file's lines; the test is skipped for a file with no message line (only bookkeeping
    or sidechain lines: no context to rebuild)."""
    lines = load_lines(source)
    if not any(is_message(obj) for obj in lines):
        pytest.skip("no message line: no context to rebuild")
    return lines


def _asf_atoms(session: SessionFile, leaf: str) -> list[Atom]:
    ctx = context_at(session, leaf)
    assert ctx.problems == []
    found: list[Atom] = []
    for item, entry_id in zip(ctx.items, ctx.item_entries, strict=True):
        member = session.by_id[entry_id].unknown.get(NS, {})
        found.extend(item_atoms(item, member))
    return found


def _leaf_entry(session: SessionFile, number: int) -> str:
    entries = line_entries(session, number)
    assert entries, f"line {number} made no entry"
    return str(entries[-1].id)


def test_all_shared_files_convert(converted: Converted) -> None:
    assert converted.code == 0
    assert sorted(converted.files) == sorted(source_key(p) for p in shared_files())


def test_output_verifies(converted: Converted) -> None:
    findings = verify_path(converted.out)
    assert [f for f in findings if f.severity != "info"] == []


def test_source_untouched(converted: Converted) -> None:
    assert tree_digest(CLAUDE_HOME) == converted.before


def test_rerun_is_byte_identical(converted: Converted, tmp_path: Path) -> None:
    again = tmp_path / "again"
    assert convert([CLAUDE_HOME / ".claude"], again) == 0
    first = {p.relative_to(converted.out): p.read_bytes() for p in converted.out.rglob("*.jsonl")}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*.jsonl")}
    assert first == second
    # Into the same directory: nothing rewritten.
    stats = {p: p.stat().st_mtime_ns for p in converted.out.rglob("*.jsonl")}
    assert convert([CLAUDE_HOME / ".claude"], converted.out, "--json") == 0
    assert {p: p.stat().st_mtime_ns for p in converted.out.rglob("*.jsonl")} == stats


@pytest.mark.parametrize("source", shared_files(), ids=file_id)
def test_every_uuid_and_line_is_kept(converted: Converted, source: Path) -> None:
    session = load(converted.files[source_key(source)])
    lines = load_lines(source)
    numbers = {e.unknown[NS].get("line") for e in session.entries if "derived" not in e.unknown[NS]}
    assert numbers == set(range(1, len(lines) + 1))
    uuids = {e.unknown[NS].get("uuid") for e in session.entries} - {None}
    assert uuids == {o["uuid"] for o in lines if "uuid" in o}


@pytest.mark.parametrize("source", SESSIONS, ids=IDS)
def test_notes_figures(source: Path) -> None:
    """The oracle follows the notes: §9 to the letter gives the notes' own figures."""
    figures = NOTES[_described(source)]
    lines = load_lines(source)
    got = rebuild(lines, last_message(lines, role="assistant"), whole_responses=False)
    assert (got.path_entries, len(got.messages), got.put_back) == figures


#: Where completing §9 step 5 changes the rebuild (file, leaf = last assistant line): the
#: lines the letter misses (off-path pieces of a response and their results).
COMPLETED = {
    "fa812bfe": set(),
    "491e126e": {11, 12, 14, 15},
    "55604662": set(),
    "d6e0bada": {30, 32},
    "06090cb1": set(),
}


@pytest.mark.parametrize("source", SESSIONS, ids=IDS)
def test_whole_responses_only_add_missing_pieces(source: Path) -> None:
    completed = COMPLETED[_described(source)]
    lines = load_lines(source)
    leaf = last_message(lines, role="assistant")
    letter = rebuild(lines, leaf, whole_responses=False)
    whole = rebuild(lines, leaf)
    assert {n + 1 for n in whole.used - letter.used} == completed
    assert letter.used <= whole.used
    roles = [role for role, _ in whole.messages]
    assert all(a != b for a, b in itertools.pairwise(roles))  # strictly alternating


@pytest.mark.parametrize("source", SESSIONS, ids=IDS)
def test_context_at_last_message_is_the_rebuild(converted: Converted, source: Path) -> None:
    session = load(converted.files[source_key(source)])
    lines = _with_messages(source)
    leaf = last_message(lines)
    expected = atoms(rebuild(lines, leaf))
    assert _asf_atoms(session, _leaf_entry(session, leaf + 1)) == expected
    # The file's resume leaf is on the main branch: its context is the same.
    resume = session.resume_leaf()
    assert resume is not None
    assert _asf_atoms(session, resume) == expected


@pytest.mark.parametrize("source", SESSIONS, ids=IDS)
def test_context_at_every_prompt_is_the_rebuild(converted: Converted, source: Path) -> None:
    """Not only the last turn: at every user message on the main path."""
    session = load(converted.files[source_key(source)])
    lines = _with_messages(source)
    by_uuid = {o["uuid"]: n for n, o in enumerate(lines) if "uuid" in o}
    n: int | None = last_message(lines)
    checked = 0
    while n is not None:
        obj = lines[n]
        content = obj.get("message", {}).get("content")
        prompt = isinstance(content, str) or (
            isinstance(content, list) and any(b.get("type") != "tool_result" for b in content)
        )
        if is_message(obj) and obj["type"] == "user" and prompt:
            expected = atoms(rebuild(lines, n))
            assert _asf_atoms(session, _leaf_entry(session, n + 1)) == expected, f"line {n + 1}"
            checked += 1
        n = by_uuid.get(obj.get("parentUuid"))
    if checked == 0 and source.stem[:8] not in NOTES:
        pytest.skip("no typed prompt on the main path")
    assert checked >= 1


def test_compaction_cuts_the_context(converted: Converted) -> None:
    """F1's compaction: a compaction entry from the summary line, its first_kept the
    boundary's entry, the helper transcript linked and named in ``parents``."""
    source = next(p for p in SESSIONS if p.stem.startswith("fa812bfe"))
    session = load(converted.files[source_key(source)])
    (compaction,) = [e for e in session.entries if e.type == "compaction"]
    assert compaction.unknown[NS]["line"] == 1585
    (boundary,) = line_entries(session, 1584)
    assert compaction.first_kept == boundary.id
    assert compaction.tokens_before == 167117
    assert compaction.summary["content"][0]["text"].startswith("This session is being continued")
    helper = load(
        converted.files[
            source_key(source.parent / source.stem / "subagents" / "agent-acompact-70d8e7.jsonl")
        ]
    )
    assert [(p.session, p.entry) for p in compaction.parents] == [
        (helper.header.id, helper.resume_leaf())
    ]
    assert helper.header.parent_session == session.header.id
    # Nothing before the boundary is in context, and the boundary hangs from the line the
    # compaction followed (logicalParentUuid), so the history stays one tree.
    assert session.by_id[str(boundary.parent)].unknown[NS]["line"] == 1583


def test_subagents_are_linked_subsessions(converted: Converted) -> None:
    source = next(p for p in SESSIONS if p.stem.startswith("fa812bfe"))
    session = load(converted.files[source_key(source)])
    links = {e.session: e for e in session.entries if e.type == "link"}
    calls = {
        b["input"]["prompt"]: b["id"]
        for o in load_lines(source)
        if o.get("type") == "assistant"
        for b in o["message"]["content"]
        if b.get("type") == "tool_use" and b["name"] == "Task"
    }
    for agent in ("a93ccab", "aa84377"):
        path = source.parent / source.stem / "subagents" / f"agent-{agent}.jsonl"
        child = load(converted.files[source_key(path)])
        assert child.header.parent_session == session.header.id
        # The spawning call: the Task whose prompt is the sub-agent's first message.
        assert child.header.spawned_by == calls[load_lines(path)[0]["message"]["content"]]
        link = links[child.header.id]
        assert link.call_id == child.header.spawned_by
        # The entry holding the Task result names the sub-agent's last entry.
        (output,) = [
            e
            for e in session.entries
            if e.type == "item"
            and e.item["type"] == "function_call_output"
            and e.item["call_id"] == link.call_id
        ]
        assert [(p.session, p.entry) for p in output.parents] == [
            (child.header.id, child.resume_leaf())
        ]
        # The sub-agent's last answer is the Task result's first text (FORMAT-NOTES §5).
        last_text = [e for e in child.entries if e.type == "item" and e.item["type"] == "message"][
            -1
        ]
        assert output.item["output"][0]["text"] == last_text.item["content"][0]["text"]
        assert child.header.unknown[NS]["subagent_type"] == "Explore"
        # The spawning call's description is the sub-agent's, as the call's input gives it.
        (call,) = [
            e
            for e in session.entries
            if e.type == "item"
            and e.item["type"] == "function_call"
            and e.item["call_id"] == link.call_id
        ]
        given = json.loads(call.item["arguments"])["description"]
        assert child.header.unknown[NS]["description"] == given


def test_header_carries_cwd_branch_version(converted: Converted) -> None:
    for source in SESSIONS:
        header = load(converted.files[source_key(source)]).header
        lines = load_lines(source)
        if not any("cwd" in o for o in lines):
            continue  # a file of titles only (CLI 1.0): nothing to compare
        first = {k: next((o[k] for o in lines if k in o), None) for k in ("cwd", "gitBranch")}
        assert header.cwd == first["cwd"]
        version = next(o["version"] for o in lines if "cwd" in o)
        assert header.harness == {"name": "claude-code", "version": version}
        assert header.unknown[NS].get("git_branch") == first["gitBranch"]  # 1.0.17 has none
        assert header.unknown[NS]["session"] == source.stem
        assert header.unknown[NS]["project"] == source.parent.name


def test_responses_keep_model_and_usage(converted: Converted) -> None:
    """One response entry per API message (FORMAT-NOTES: 157 in F1), usage of its last line."""
    source = next(p for p in SESSIONS if p.stem.startswith("fa812bfe"))
    session = load(converted.files[source_key(source)])
    lines = load_lines(source)
    responses = [e for e in session.entries if e.type == "response"]
    assert len(responses) == 157
    last = responses[-1]
    final = lines[last.unknown[NS]["lines"][-1] - 1]["message"]
    native = final["usage"]
    total_in = (
        native["input_tokens"]
        + native["cache_creation_input_tokens"]
        + native["cache_read_input_tokens"]
    )
    assert total_in == 76350  # FORMAT-NOTES §9: the size of the whole last prompt
    assert last.usage["input_tokens"] == total_in
    assert last.usage["output_tokens"] == native["output_tokens"]
    assert last.usage["input_tokens_details"] == {
        "cached_tokens": native["cache_read_input_tokens"]
    }
    assert last.model == final["model"] == "claude-opus-4-6"
    assert last.response_id == final["id"]
    per_message = {o["message"]["id"] for o in lines if o.get("type") == "assistant"}
    assert {r.response_id for r in responses} == per_message


def test_tool_errors_are_kept(converted: Converted) -> None:
    errors = 0
    for source in (s for s in SESSIONS if s.stem[:8] in NOTES):  # the files the README counts
        session = load(converted.files[source_key(source)])
        for entry in session.entries:
            if entry.type == "item" and entry.item["type"] == "function_call_output":
                errors += entry.item.get("claude-code:is_error") is True
    assert errors == 8 + 2  # F1 and F6 (README table)


def test_sessions_with_no_subagent_files_report_them(converted: Converted) -> None:
    """F5 launched a Plan sub-agent whose transcript was never published."""
    report = json.loads(next(converted.out.glob("claude-code/*marco*/report.json")).read_text())
    (finding,) = [f for f in report["findings"] if "no transcript" in f["message"]]
    assert finding["data"] == {"agent": "afb92ff", "call": "toolu_01Cz2Pnv7qNcnK1ZiocxWhQX"}


def test_projects_are_stores(converted: Converted) -> None:
    reports = sorted(converted.out.glob("claude-code/*/report.json"))
    assert len(reports) == len(list(PROJECTS.iterdir()))
