"""Sub-agent trajectories embedded in an ATIF document (asf_core/export/atif_assembly.py) when
the files' ``subsession`` links loop: each session is embedded once on the way down, and the
link back to one being embedded names its document instead of embedding it again (which would
never end)."""

from __future__ import annotations

from typing import Any

from asf_core.export import SessionTree, atif_document
from asf_core.export.atif_assembly import main_document_name
from asf_core.model import Header, Item, Link
from asf_core.reader import SessionFile, parse_session
from asf_core.writer import SessionBuilder, session_lines

A, B = "session-a", "session-b"


def _delegating(session_id: str, child: str) -> SessionFile:
    """A session whose one call spawned ``child`` as a sub-agent."""
    b = SessionBuilder(Header(id=session_id, created_at="2026-01-01T00:00:00Z"))
    ask = {"type": "message", "role": "user", "content": f"{session_id}: delegate"}
    b.append(Item(ts="2026-01-01T00:00:01Z", item=ask), parent=None)
    call = {"type": "function_call", "call_id": "c1", "name": "delegate", "arguments": "{}"}
    b.append(Item(ts="2026-01-01T00:00:02Z", response="r1", item=call))
    b.append(Link(ts="2026-01-01T00:00:03Z", rel="subsession", session=child, call_id="c1"))
    output = {"type": "function_call_output", "call_id": "c1", "output": "done"}
    b.append(Item(ts="2026-01-01T00:00:04Z", item=output))
    return parse_session(b"".join(session_lines(b.header, b.entries)))


def _refs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The sub-agent references on the observations of the document's own steps."""
    return [
        ref
        for step in doc["steps"]
        for result in step.get("observation", {}).get("results", [])
        for ref in result.get("subagent_trajectory_ref", [])
    ]


def test_a_sub_agent_cycle_embeds_each_session_once() -> None:
    files = {A: _delegating(A, B), B: _delegating(B, A)}
    tree = SessionTree(files[A])
    main = tree.main_leaf
    assert main is not None
    doc = atif_document(tree.view(main), files.get)

    (ref,) = _refs(doc)
    (embedded,) = doc["subagent_trajectories"]
    assert ref["session_id"] == B
    assert ref["trajectory_id"] == embedded["trajectory_id"]
    assert embedded["trajectory_id"].startswith(f"{B}/")
    # B's link back to A, whose document is being built: named, not embedded again.
    (back,) = _refs(embedded)
    assert back["session_id"] == A
    assert back["trajectory_path"] == main_document_name(A) + ".json"
    assert "subagent_trajectories" not in embedded
