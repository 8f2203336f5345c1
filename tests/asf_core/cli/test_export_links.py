"""Links between transcripts: a sub-agent's session is linked to its page only when that page
is part of the export (docs/export.md, "Sub-agents"), with a target any file name survives."""

from __future__ import annotations

import re
from pathlib import Path

from asf_core.cli.main import main
from asf_core.model import Header, Item, Link
from asf_core.writer import SessionBuilder, write_session

CHILD = "child-1"


def _sessions(folder: Path, child_file: str = "child (1).jsonl") -> Path:
    """A parent whose call spawned a sub-agent, and the sub-agent's session in the file
    beside it (by default a name with a space and parentheses, as a copied file gets)."""
    folder.mkdir()
    child = SessionBuilder(Header(id=CHILD, created_at="2026-01-01T00:00:00Z"))
    answer = {"type": "message", "role": "assistant", "content": "done"}
    child.append(Item(ts="2026-01-01T00:00:01Z", item=answer), parent=None)
    write_session(folder / child_file, child.header, child.entries)
    parent = SessionBuilder(Header(id="parent-1", created_at="2026-01-01T00:00:00Z"))
    call = {"type": "function_call", "call_id": "c1", "name": "delegate", "arguments": "{}"}
    parent.append(Item(ts="2026-01-01T00:00:02Z", response="r1", item=call), parent=None)
    parent.append(Link(ts="2026-01-01T00:00:03Z", rel="subsession", session=CHILD, call_id="c1"))
    output = {"type": "function_call_output", "call_id": "c1", "output": "done"}
    parent.append(Item(ts="2026-01-01T00:00:04Z", item=output))
    write_session(folder / "parent.jsonl", parent.header, parent.entries)
    return folder / "parent.jsonl"


def _linked(tmp_path: Path, parent: Path, markdown: str, html: str) -> Path:
    """Export the parent's folder as Markdown (into ``md``, returned) and as HTML: the parent
    links the sub-agent's page by ``markdown`` and by ``html``, the target in each."""
    out = tmp_path / "md"
    assert main(["export", str(parent.parent), "--to", "markdown", "-o", str(out)]) == 0
    assert f"[sub-agent session {CHILD}](<{markdown}>)" in (out / "parent.md").read_text()
    pages = tmp_path / "html"
    assert main(["export", str(parent.parent), "--to", "html", "-o", str(pages)]) == 0
    page = (pages / "parent.html").read_text()
    assert f'<a href="{html}"><bdi>sub-agent session {CHILD}</bdi></a>' in page
    return out


def test_a_directory_export_links_the_sub_agent_page(tmp_path: Path) -> None:
    # Angle brackets keep a target with blanks and parentheses one link (CommonMark).
    out = _linked(tmp_path, _sessions(tmp_path / "in"), "child (1).md", "child%20%281%29.html")
    assert (out / "child (1).md").is_file()


def test_a_file_name_cannot_add_links_or_headings_to_the_markdown(tmp_path: Path) -> None:
    """The link target is made from a file name, which may hold anything but a slash: it
    is percent-encoded, so the name can neither end the link nor start a line."""
    hostile = "javascript:x>) [evil](<https:evil.example>) <\n# Fake heading\n.jsonl"
    parent = _sessions(tmp_path / "in", hostile)
    out = tmp_path / "md"
    assert main(["export", str(parent.parent), "--to", "markdown", "-o", str(out)]) == 0
    md = (out / "parent.md").read_text()
    assert re.findall(r"\]\(", md) == ["]("]  # one link, to the sub-agent's page
    target = (
        "javascript%3Ax%3E) %5Bevil%5D(%3Chttps%3Aevil.example%3E) %3C%0A%23 Fake heading%0A.md"
    )
    assert f"[sub-agent session {CHILD}](<{target}>)" in md
    assert not [line for line in md.splitlines() if line.startswith("# Fake")]
    assert (out / hostile.replace(".jsonl", ".md")).is_file()  # where the link goes


def test_a_sub_agent_in_another_folder_is_linked_by_its_relative_path(tmp_path: Path) -> None:
    """The target is a relative path: its slashes stay separators (not ``%2F``)."""
    parent = _sessions(tmp_path / "in")
    (parent.parent / "agents").mkdir()
    (parent.parent / "child (1).jsonl").rename(parent.parent / "agents" / "child (1).jsonl")
    out = _linked(tmp_path, parent, "agents/child (1).md", "agents/child%20%281%29.html")
    assert (out / "agents" / "child (1).md").is_file()


def test_a_hash_in_a_file_name_is_part_of_the_link_target(tmp_path: Path) -> None:
    """A ``#`` in a file name is encoded (``%23``): left as it is, it would start the link's
    fragment, and the link would lead to ``notes`` instead of the sub-agent's page."""
    parent = _sessions(tmp_path / "in", "notes#2.jsonl")
    out = _linked(tmp_path, parent, "notes%232.md", "notes%232.html")
    assert (out / "notes#2.md").is_file()


def test_a_single_file_export_names_a_sibling_sub_agent_without_a_link(tmp_path: Path) -> None:
    """Exporting one FILE writes its page only: the sub-agent's file is found beside it, but
    no page is written for it, so the parent names it and links nowhere."""
    parent = _sessions(tmp_path / "in")
    out = tmp_path / "out"
    assert main(["export", str(parent), "--to", "markdown", "-o", f"{out}/"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["parent.md"]
    md = (out / "parent.md").read_text()
    assert f"→ sub-agent session {CHILD}\n" in md
    assert not re.search(r"\]\(", md)
