"""Claude Code sessions exported as people and tools read them: the model's thinking (a reasoning
item whose content is ``reasoning_text``, docs/formats/claude-code.md) reaches the ATIF steps'
``reasoning_content`` and the transcripts, on the shared files: every thought in the context at
the session's resume leaf."""

from __future__ import annotations

from cc_helpers import Converted

from asf_core.context import context_at
from asf_core.export import SessionTree, atif_document
from asf_core.export.transcript import transcript
from asf_core.export.transcript_text import render_markdown
from asf_core.reader import read_session


def test_thinking_reaches_atif_and_the_transcript(converted: Converted) -> None:
    checked = 0
    for path in converted.files.values():
        session = read_session(path)
        if not session.entries:
            continue
        leaf = session.resume_leaf()
        if leaf is None:
            continue
        view = SessionTree(session).view(leaf)
        # The thinking in the context the model saw at the leaf (what ATIF's steps carry).
        thoughts = [
            "\n".join(p["text"] for p in item["content"] if p.get("type") == "reasoning_text")
            for item in context_at(session, leaf).items
            if item.get("type") == "reasoning" and isinstance(item.get("content"), list)
        ]
        thoughts = [t for t in thoughts if t.strip()]
        if not thoughts:
            continue
        steps = atif_document(view)["steps"]
        shown = "\n".join(str(s.get("reasoning_content") or "") for s in steps)
        page = "".join(render_markdown(transcript(view)))
        for thought in thoughts:
            assert thought in shown, path.name
            assert thought.splitlines()[0] in page, path.name
            checked += 1
    assert checked > 0  # the shared files hold thinking
