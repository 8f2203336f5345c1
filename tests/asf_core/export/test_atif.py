"""ATIF export: the reference exporter's documents reproduced, Harbor's validator satisfied.

The reference documents (``vectors/testdata/export/<session>.<leaf>.json``) are compared as
JSON values with the export of the same session file at the same leaf. Every path of every
session of every Hermes fixture conversion and of the example home is exported with its
sub-agents resolved from its directory and checked with Harbor's own validator
(``harbor.utils.trajectory_validator``), the one evaluation pipelines run.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from export_views import views
from fixture_paths import VECTORS
from harbor.utils.trajectory_validator import TrajectoryValidator

from asf_core.export import SessionTree, atif_document
from asf_core.export.resolve import DirectoryIndex
from asf_core.reader import SessionFile, read_session

GOLDENS = sorted((VECTORS / "export").glob("*.json"))


def _leaf(session: SessionFile, short: str) -> str:
    """The entry a golden's file name names: a 12-hex-digit prefix or a legacy id."""
    found = [
        e.id
        for e in session.entries
        if e.id
        and (e.id.removeprefix("sha256:").startswith(short) or e.unknown.get("legacy_id") == short)
    ]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("golden", GOLDENS, ids=[g.name for g in GOLDENS])
def test_reference_document_reproduced(golden: Path) -> None:
    name, short = golden.name.split(".")[:2]
    session = read_session(VECTORS / "sessions" / f"{name}.jsonl")
    doc = atif_document(SessionTree(session).view(_leaf(session, short)))
    assert doc == json.loads(golden.read_text())


def test_all_fifteen_reference_documents_are_there() -> None:
    assert len(GOLDENS) == 15


def _items_of(doc: dict[str, Any]) -> list[Any]:
    """Every raw item the document carries (steps, folds' pins, observations)."""
    found: list[Any] = []
    for step in doc["steps"]:
        raw = step["extra"].get("openresponses", {})
        found.extend([raw["item"]] if "item" in raw else [])
        found.extend(raw.get("pinned", []))
        found.extend(raw.get("items", []))
        for result in step.get("observation", {}).get("results", []):
            item = result.get("extra", {}).get("openresponses", {}).get("item")
            if item is not None:
                found.append(item)
    return found


def _validate(doc: dict[str, Any]) -> list[str]:
    validator = TrajectoryValidator()
    validator.validate(doc)
    return validator.get_errors()


def test_every_fixture_conversion_validates_with_harbor(converted_homes: list[Path]) -> None:
    checked = Counter[str]()
    for root in converted_homes:
        index = DirectoryIndex(root)
        for path, view in views(root):
            doc = atif_document(view, index.resolver(path))
            errors = _validate(doc)
            assert not errors, f"{path.name} at {view.leaf}: {errors}"
            checked["documents"] += 1
            checked["subagents"] += len(doc.get("subagent_trajectories", []))
            checked["steps"] += len(doc["steps"])
    # Every release holds a delegate sub-agent, embedded from the directory.
    assert checked["subagents"] >= len(converted_homes) - 1
    assert checked["documents"] > 100


def test_vector_sessions_validate_with_harbor() -> None:
    for path, view in views(VECTORS / "sessions"):
        assert not _validate(atif_document(view)), (path.name, view.leaf)


def test_every_context_item_travels_in_the_document(converted_homes: list[Path]) -> None:
    """Lossless: each item the context holds at the leaf is somewhere in the document."""
    for root in converted_homes[:1]:
        for path in sorted(root.rglob("*.jsonl")):
            session = read_session(path)
            tree = SessionTree(session)
            view = tree.view(session.entries[-1].id or "")
            doc = atif_document(view)
            carried = Counter(json.dumps(i, sort_keys=True) for i in _items_of(doc))
            wanted = Counter(json.dumps(i, sort_keys=True) for i in view.context.items)
            assert not wanted - carried, path.name


def _doc_at(name: str, pick: Any = None) -> dict[str, Any]:
    session = read_session(VECTORS / "sessions" / f"{name}.jsonl")
    leaf = pick(session) if pick else str(session.entries[-1].id)
    return atif_document(SessionTree(session).view(leaf))


def test_records_the_reference_drops_are_kept() -> None:
    """replay.jsonl before its fold: a call handed off twice with one idempotency key, and a
    scheduled run whose trigger object the reference exporter has no member for."""
    from asf_core.model import Compaction

    doc = _doc_at(
        "replay", lambda s: next(e.parent for e in s.entries if isinstance(e, Compaction))
    )
    calls = next(s["extra"]["calls"] for s in doc["steps"] if "calls" in s["extra"])
    deploy = calls["call_deploy"]
    assert deploy["dispatch"] == deploy["dispatches"][0]
    assert [d["idempotency_key"] for d in deploy["dispatches"]] == ["idem-deploy-1"] * 2
    assert [d["verdict"] for d in calls["call_notify"]["decisions"]] == ["answer"]
    runs = [r for s in doc["steps"] for r in s["extra"].get("run", [])]
    scheduled = next(r for r in runs if r["run_id"] == "run-3")
    assert scheduled["trigger"] == "nightly"
    assert scheduled["run_trigger"]["kind"] == "schedule"


def test_a_run_end_without_its_start_is_recorded_on_its_own() -> None:
    from asf_core.model import Config, Header, Item, Run
    from asf_core.reader import parse_session
    from asf_core.writer import SessionBuilder, entry_line, header_line

    header = Header(id="01995b2a-0000-7000-8000-00000000f003", created_at="2026-10-01T09:00:00Z")
    b = SessionBuilder(header)
    b.append(Config(ts="2026-10-01T09:00:00Z", model="gpt-5", instructions="Be brief."))
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    b.append(Item(ts="2026-10-01T09:00:01Z", item=user))
    end = b.append(Run(ts="2026-10-01T09:00:02Z", run_id="run-7", phase="end", reason="done"))
    data = header_line(header) + b"".join(entry_line(e) for e in b.entries)
    session = parse_session(data)
    doc = atif_document(SessionTree(session).view(str(end.id)))
    # No step follows it: it lands in the document's extra.
    assert [s["extra"].get("run") for s in doc["steps"]] == [None]
    assert doc["extra"]["run"] == [
        {"run_id": "run-7", "reason": "done", "end_entry_id": str(end.id), "pending": []}
    ]


def test_attempts_are_the_llm_call_count() -> None:
    counts = [s["llm_call_count"] for s in _doc_at("parts")["steps"] if s["source"] == "agent"]
    assert counts == [1, 2, 1]


def test_totals_count_calls_recorded_by_usage_alone(converted_homes: list[Path]) -> None:
    """Hermes' auxiliary model calls (a title generated) are custom entries with a usage:
    counted in total_steps and in the token totals, explained in notes."""
    from asf_core.model import Custom

    found = 0
    for root in converted_homes:
        for path in sorted(root.rglob("*.jsonl")):
            session = read_session(path)
            view = SessionTree(session).view(str(session.entries[-1].id))
            usages = [
                e.data["usage"]
                for e in view.path
                if isinstance(e, Custom)
                and isinstance(e.data, dict)
                and isinstance(e.data.get("usage"), dict)
            ]
            if not usages:
                continue
            doc = atif_document(view)
            steps = [s for s in doc["steps"] if s["source"] == "agent"]
            shown = sum(s.get("metrics", {}).get("prompt_tokens", 0) for s in steps)
            final = doc["final_metrics"]
            assert final["total_prompt_tokens"] == shown + sum(u["input_tokens"] for u in usages)
            assert final["total_steps"] >= len(steps) + len(usages)
            assert "calls recorded with their usage alone" in doc["notes"]
            found += 1
    assert found >= 1


def test_a_migrated_file_is_named_by_its_own_ids() -> None:
    doc = _doc_at("fork")
    assert doc["trajectory_id"] == "f0000002"
    ids = [s["extra"]["agentsession"]["entry_id"] for s in doc["steps"]]
    assert ids == ["i0000001", "r0000001", "f0000002"]
    assert all(
        "legacy_id" not in s["extra"]["openresponses"].get("response", {}) for s in doc["steps"]
    )
