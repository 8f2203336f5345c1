"""The shared rollouts converted: verified, lossless, and Codex's own history in context."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from cx_helpers import (
    CODEX_HOME,
    SESSIONS,
    Converted,
    by_file,
    by_tag,
    context_items,
    convert,
    rebuilt_lines,
    reports_in,
    shared_files,
    source_lines,
    tree_digest,
)
from cx_oracle import raw_history, rebuild

from asf_core.model import Compaction, Config, Entry, Header, Item, Response
from asf_core.verify.session import verify_path
from codex_plugin.source.lines import Line

FILES = shared_files()
IDS = [p.name[-14:-6] for p in FILES]


def test_all_shared_files_convert(converted: Converted) -> None:
    assert converted.code == 0
    assert len(by_file(converted.out)) == len(FILES) == 6


def test_output_verifies(converted: Converted) -> None:
    assert [f for f in verify_path(converted.out) if f.severity != "info"] == []


def test_source_untouched(converted: Converted) -> None:
    assert tree_digest(CODEX_HOME) == converted.before


def test_rerun_is_byte_identical(converted: Converted, tmp_path: Path) -> None:
    again = tmp_path / "out"
    assert convert([CODEX_HOME / ".codex"], again) == 0
    first = {p.relative_to(converted.out): p.read_bytes() for p in converted.out.rglob("*.jsonl")}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*.jsonl")}
    assert first == second


def test_report_counts_every_line(converted: Converted) -> None:
    (report,) = reports_in(converted.out)
    lines = sum(len([r for r in p.read_bytes().split(b"\n") if r.strip()]) for p in FILES)
    assert report["counts"]["lines"] == lines == 3934
    assert report["strays"] == []
    assert report["sessions_written"] == 6


@pytest.mark.parametrize("source", FILES, ids=IDS)
def test_every_line_is_rebuilt(converted: Converted, source: Path) -> None:
    session = by_file(converted.out)[source.name]
    assert rebuilt_lines(session) == source_lines(source)


#: FORMAT-NOTES §8's table: the history after the last line, before step 4, by kind.
FIGURES: dict[str, tuple[int, dict[str, int], int]] = {
    "X1": (3, {"user": 3}, 0),
    "X2": (
        341,
        {
            "developer": 10,
            "user": 10,
            "assistant": 43,
            "reasoning": 69,
            "function_call": 82,
            "function_call_output": 82,
            "custom_tool_call": 22,
            "custom_tool_call_output": 22,
            "web_search_call": 1,
        },
        0,
    ),
    "X3": (
        286,
        {
            "developer": 4,
            "user": 3,
            "assistant": 17,
            "reasoning": 26,
            "function_call": 118,
            "function_call_output": 118,
        },
        0,
    ),
    "X4": (
        454,
        {
            "developer": 8,
            "user": 40,
            "assistant": 116,
            "reasoning": 66,
            "compaction": 1,
            "function_call": 88,
            "function_call_output": 88,
            "custom_tool_call": 21,
            "custom_tool_call_output": 21,
            "web_search_call": 5,
        },
        0,
    ),
    "X5": (
        11,
        {"developer": 4, "user": 4, "assistant": 1, "reasoning": 1, "function_call": 1},
        1,
    ),
    "X6": (
        29,
        {
            "developer": 4,
            "user": 3,
            "assistant": 6,
            "reasoning": 6,
            "function_call": 5,
            "function_call_output": 5,
        },
        0,
    ),
}


def _kinds(items: list[dict[str, Any]]) -> Counter[str]:
    return Counter(i["role"] if i["type"] == "message" else i["type"] for i in items)


@pytest.mark.parametrize("tag", sorted(FIGURES))
def test_oracle_gives_the_notes_figures(tag: str) -> None:
    if not SESSIONS.is_dir():
        pytest.skip("no shared Codex rollouts")
    size, kinds, aborted = FIGURES[tag]
    history = raw_history(by_tag(tag))
    assert len(history) == size
    assert _kinds(history) == Counter(kinds)
    assert len(rebuild(by_tag(tag))) == size + aborted


@pytest.mark.parametrize("tag", sorted(FIGURES))
def test_context_is_codex_history(converted: Converted, tag: str) -> None:
    """The ASF context at the leaf is the history Codex's resume sends, item for item, and
    has the notes' figures (plus the ``aborted`` output step 4 adds)."""
    session = by_file(converted.out)[by_tag(tag).name]
    items = context_items(session)
    assert items == rebuild(by_tag(tag))
    size, kinds, aborted = FIGURES[tag]
    assert len(items) == size + aborted
    outputs = Counter(kinds).get("function_call_output", 0) + aborted
    assert _kinds(items) == Counter(kinds) + Counter({"function_call_output": outputs}) - Counter(
        {"function_call_output": Counter(kinds).get("function_call_output", 0)}
    )


def test_mid_turn_call_is_answered_aborted(converted: Converted) -> None:
    session = by_file(converted.out)[by_tag("X5").name]
    items = context_items(session)
    assert items[-2]["type"] == "function_call"
    assert items[-1] == {
        "type": "function_call_output",
        "call_id": items[-2]["call_id"],
        "output": "aborted",
    }
    (derived,) = [e for e in session.entries if e.unknown["codex"].get("derived") == "aborted"]
    assert derived.unknown["codex"]["line"] == 18


def test_compaction_is_the_replacement_history(converted: Converted) -> None:
    session = by_file(converted.out)[by_tag("X4").name]
    (fold,) = [e for e in session.entries if isinstance(e, Compaction)]
    assert fold.unknown["codex"] == {"line": 1788}
    assert len(fold.pinned or ()) == 39
    assert (fold.pinned or ())[-1]["type"] == "compaction"
    first_kept = session.by_id[str(fold.first_kept)]
    assert first_kept.id == fold.parent
    assert first_kept.data["object"]["type"] == "compacted"


def test_instructions_model_and_usage(converted: Converted) -> None:
    session = by_file(converted.out)[by_tag("X4").name]
    configs = [e for e in session.entries if isinstance(e, Config)]
    assert configs[0].instructions
    assert configs[0].unknown["codex"]["line"] == 1
    assert {c.model for c in configs[1:] if c.model} == {"gpt-5.3-codex"}
    responses = [e for e in session.entries if isinstance(e, Response)]
    assert len(responses) == 572  # 573 token_count events, the first with no usage
    assert responses[-1].usage is not None
    assert responses[-1].usage["input_tokens"] == 162_073
    assert responses[-1].model == "gpt-5.3-codex"


def test_old_cli_has_no_base_instructions(converted: Converted) -> None:
    session = by_file(converted.out)[by_tag("X1").name]
    meta = session.entries[0]
    assert isinstance(meta, Config)
    assert meta.instructions is None
    assert session.header.harness == {"name": "codex", "version": "0.77.0"}
    assert session.header.id == "019b64e5-57fa-7463-b644-fba7e456f905"
    assert session.header.cwd == "/Users/macmini/Code/homelab-migration"


def test_event_duplicates_are_not_context(converted: Converted) -> None:
    session = by_file(converted.out)[by_tag("X2").name]
    items = [e for e in session.entries if isinstance(e, Item)]
    assert len(items) == 341
    events = Counter(
        e.data["object"]["payload"]["type"]
        for e in session.entries
        if e.type == "custom" and e.data["object"]["type"] == "event_msg"
    )
    assert events["user_message"] == 5
    assert events["agent_message"] == 43
    assert events["agent_reasoning"] == 59


@pytest.mark.parametrize("tag", sorted(FIGURES))
def test_settings_at_the_leaf(converted: Converted, tag: str) -> None:
    """The instructions of the header and the model of the last ``turn_context``, after a
    compaction too (its checkpoint carries them)."""
    import json

    from asf_core.context import context_at

    session = by_file(converted.out)[by_tag(tag).name]
    settings = context_at(session, str(session.resume_leaf())).settings
    lines = [json.loads(raw) for raw in by_tag(tag).read_bytes().splitlines()]
    base = lines[0]["payload"].get("base_instructions")
    assert settings.get("instructions") == (base["text"] if base else None)
    models = [x["payload"]["model"] for x in lines if x["type"] == "turn_context"]
    assert settings["model"] == models[-1]


def _entries_of_lines(header: Header, lines: list[Line]) -> list[Entry]:
    """The entries of a rollout's first ``lines`` (held in memory here), through the
    conversion's own passes, each call Codex would answer ``aborted`` answered so."""
    from codex_plugin.convert.session import FirstPass, entries_of, item_of

    by_key = {line.offset: line.obj for line in lines}

    def fetch(key: int) -> dict[str, Any]:
        return item_of(by_key[key]) or {}

    first = FirstPass(fetch)
    for line in lines:
        first.feed(line)
    survey = first.survey(lambda end: lines)
    return list(entries_of(header, lines, fetch, survey, "rollout"))


@pytest.mark.parametrize("tag", sorted(FIGURES))
def test_context_at_every_turn_is_codex_history(tag: str) -> None:
    """Cut before each turn (an old CLI's: each ``turn_context``; and after the compaction):
    the context at the end of the cut is the history Codex would resume from there."""
    import json

    from cx_oracle import rebuild_lines

    from asf_core.context import build_context
    from codex_plugin.convert.store import header_of
    from codex_plugin.native import Native
    from codex_plugin.source.lines import read_lines
    from codex_plugin.source.rollout import facts_of

    if not SESSIONS.is_dir():
        pytest.skip("no shared Codex rollouts")
    source = by_tag(tag)
    lines = list(read_lines(source))
    objects = [line.obj for line in lines]
    cuts = [
        n
        for n, obj in enumerate(objects)
        if obj is not None
        and (
            obj["payload"].get("type") == "task_started"
            or objects[n - 1]["type"] == "compacted"
            or (obj["type"] == "turn_context" and "turn_id" not in obj["payload"])  # old CLI
        )
    ]
    assert cuts
    for cut in [*cuts, len(lines)]:
        facts = facts_of(lines[:cut], source.name)
        header = header_of(Native(path=source, unit=source.name, facts=facts, asf_id="x"))
        entries = _entries_of_lines(header, lines[:cut])
        by_id = {e.id: e for e in entries}
        path, at = [], entries[-1]
        while at is not None:
            path.append(at)
            at = by_id.get(at.parent) if at.parent else None
        items = build_context(path[::-1]).items
        assert items == rebuild_lines([json.loads(json.dumps(o)) for o in objects[:cut]]), cut
