"""ATIF's references to sub-agent sessions that cannot be embedded, where links are listed
instead, and the totals of a file of an earlier draft: the parts of
:mod:`asf_core.export.atif_assembly` the reference documents leave unchecked."""

from __future__ import annotations

from typing import Any

from fixture_paths import VECTORS
from harbor.utils.trajectory_validator import TrajectoryValidator

from asf_core.export import SessionTree, atif_document
from asf_core.model import Config, Header, Item, Link, Response
from asf_core.reader import parse_session, read_session
from asf_core.session_file import SessionFile
from asf_core.writer import SessionBuilder, entry_line, header_line

JSON = dict[str, Any]


def _valid(doc: JSON) -> JSON:
    validator = TrajectoryValidator()
    validator.validate(doc)
    assert validator.get_errors() == []
    return doc


def _not_found(session_id: str) -> SessionFile | None:
    return None


def test_a_child_not_found_is_referenced_at_the_leaf_its_answer_came_from() -> None:
    """converge.jsonl: two calls each hand a task to a sub-agent whose answer names the child
    entry it came from (``parents``). The children are not at hand: each call's one
    observation result references its child at that leaf, and where its document would be."""
    session = read_session(VECTORS / "sessions" / "converge.jsonl")
    doc = _valid(atif_document(SessionTree(session).view(str(session.entries[-1].id)), _not_found))
    results = [r for s in doc["steps"] for r in s.get("observation", {}).get("results", [])]
    children = {"call_a": ("c1", "a0000009"), "call_b": ("c2", "b0000006")}
    assert [r["source_call_id"] for r in results] == list(children)
    for result in results:
        tail, leaf = children[result["source_call_id"]]
        child = f"01995b2a-0000-7000-8000-0000000000{tail}"
        (ref,) = result["subagent_trajectory_ref"]
        assert result["content"].startswith("Option ")
        assert ref["session_id"] == child
        assert ref["extra"]["child_leaf"] == leaf
        assert ref["trajectory_id"] == f"{child}/{leaf}"
        assert ref["trajectory_path"] == f"{child}.json"
    assert "subagent_trajectories" not in doc
    assert "links" not in doc["extra"]


def test_links_no_call_on_the_path_holds_are_listed_in_the_document() -> None:
    """A ``subsession`` link whose call is not on the path is listed under ``extra.links``
    with its reference; one naming no session cannot be followed and has none. A child's
    id that is no file name becomes one (``trajectory_path`` stays in the folder)."""
    header = Header(id="01995b2a-0000-7000-8000-00000000a7f2", created_at="2026-10-01T09:00:00Z")
    b = SessionBuilder(header)
    ts = iter(f"2026-10-01T09:00:{n:02d}Z" for n in range(60))
    b.append(Config(ts=next(ts), model="gpt-5"))
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    b.append(Item(ts=next(ts), item=user))
    call = {"type": "function_call", "call_id": "call_1", "name": "delegate", "arguments": "{}"}
    b.append(Item(ts=next(ts), item=call, response="resp_1"))
    b.append(Response(ts=next(ts), response_id="resp_1", model="gpt-5"))
    b.append(Link(ts=next(ts), rel="subsession", session="20261001_090000_ab/../x y"))
    b.append(Link(ts=next(ts), rel="subsession", call_id="call_1"))
    data = header_line(header) + b"".join(entry_line(e) for e in b.entries)
    session = parse_session(data)
    doc = _valid(atif_document(SessionTree(session).view(str(b.leaf))))
    orphan, sessionless = doc["extra"]["links"]
    ref = orphan["subagent_trajectory_ref"]  # one link, one reference
    assert ref["session_id"] == "20261001_090000_ab/../x y"
    assert ref["trajectory_path"] == "20261001_090000_ab-..-x-y.json"
    assert sessionless["call_id"] == "call_1"
    assert "subagent_trajectory_ref" not in sessionless
    (agent,) = [s for s in doc["steps"] if s["source"] == "agent"]
    assert "observation" not in agent


def test_an_earlier_draft_counts_folded_calls_as_steps() -> None:
    """compaction.jsonl (draft 0.5): ``total_steps`` is the steps plus the calls folded away,
    and ``notes`` says so (docs/export.md)."""
    session = read_session(VECTORS / "sessions" / "compaction.jsonl")
    assert session.header.format == "agentsession/0.5"
    doc = _valid(atif_document(SessionTree(session).view(str(session.entries[-1].id))))
    assert doc["final_metrics"]["total_steps"] == len(doc["steps"]) + 1
    assert (
        "leave out 1 model call(s) that were folded away; total_steps counts them" in (doc["notes"])
    )
