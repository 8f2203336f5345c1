"""What a transcript shows of a path, block by block: decisions marked on the calls they
judge, each output shown once and with its call, forks listing the other branches only,
sub-agents shown with the call that spawned them, model changes, hidden items, responses.

Checked on the ASF test vectors and the converted Hermes fixtures, against what the files
say; a session built here covers what neither holds (a repeated model, a failed outcome,
non-ASCII arguments, an empty output, outputs around the folding threshold).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from export_views import views
from fixture_paths import VECTORS

from asf_core.export import PathView, SessionTree
from asf_core.export.items import reasoning_text, type_of
from asf_core.export.transcript import Block, transcript
from asf_core.export.transcript_html import render_html
from asf_core.export.transcript_text import render_markdown, render_text
from asf_core.model import (
    BranchSummary,
    Compaction,
    Config,
    Decision,
    Entry,
    Header,
    Item,
    Link,
    Outcome,
    Response,
)
from asf_core.reader import read_session
from asf_core.writer import SessionBuilder, write_session

SESSIONS = VECTORS / "sessions"


def _blocks(view: PathView, href: Any = None) -> list[Block]:
    return list(transcript(view, href=href).blocks())


def _vector_views() -> Iterator[tuple[Path, PathView]]:
    yield from views(SESSIONS)


def _by_name(view: PathView) -> dict[str, Entry]:
    return {view.name(e.id): e for e in view.path}


def _is(entry: Entry, kind: str) -> bool:
    return isinstance(entry, Item) and type_of(entry.item) == kind


# -- the vectors and converted sessions ----------------------------------------------------


@pytest.mark.parametrize(
    "name", ["runs.jsonl", "resume.jsonl", "empty-resume.jsonl", "bad-resume.jsonl"]
)
def test_decisions_mark_the_calls_they_judge_on_every_prefix(name: str) -> None:
    """A rejected call is marked ``rejected``; a held one ``held`` only while the path holds
    no output for it (docs/export.md: "a call a decision rejected or held is marked so")."""
    session = read_session(SESSIONS / name)
    tree = SessionTree(session)
    seen: set[str] = set()
    for entry in session.entries:
        view = tree.view(str(entry.id))
        verdicts: dict[str, list[str]] = defaultdict(list)
        answered: set[str] = set()
        for e in view.path:
            if isinstance(e, Decision) and e.call_id:
                verdicts[e.call_id].append(str(e.verdict))
            elif _is(e, "function_call_output") and e.item:
                answered.add(str(e.item.get("call_id")))
        for b in _blocks(view):
            if b.kind != "tool" or not b.title:
                continue
            said = verdicts[b.call_id]
            rejected = "reject" in said
            held = not rejected and bool(said) and said[-1] == "hold" and b.call_id not in answered
            assert ("rejected" in b.marks) == rejected, (name, view.leaf, b)
            assert ("held" in b.marks) == held, (name, view.leaf, b)
            seen.update(m for m in b.marks if m in ("rejected", "held"))
    assert "held" in seen  # the vector holds a call before it is answered or refused


def test_each_output_is_shown_once_with_its_call(converted_homes: list[Path]) -> None:
    """An output whose call is on the path is shown with the call, never again on its own."""
    checked = 0
    for root in [SESSIONS, *converted_homes]:
        for path, view in views(root):
            outputs = [e for e in view.path if _is(e, "function_call_output")]
            calls = {
                str(e.item.get("call_id")) for e in view.path if _is(e, "function_call") and e.item
            }
            tools = [b for b in _blocks(view) if b.kind == "tool"]
            assert sum(b.output is not None for b in tools) == len(outputs), path
            alone = [b for b in tools if not b.title]
            assert not [b for b in alone if b.call_id in calls], path
            checked += len(outputs)
    assert checked > 20


def test_forks_list_the_other_branches_only(converted_homes: list[Path]) -> None:
    """A branch point is shown at every entry of the path with several children, the last
    one before the leaf included, and links the leaves of the branches not taken."""
    forks = 0
    for root in [SESSIONS, *converted_homes]:
        for path, view in views(root):
            blocks = [b for b in _blocks(view) if b.kind == "fork"]
            at = [e for e in view.path[:-1] if len(view.tree.children(str(e.id))) > 1]
            assert [b.entry for b in blocks] == [view.name(e.id) for e in at], path
            for b, entry in zip(blocks, at, strict=True):
                following = view.path[view.path.index(entry) + 1]
                others = [
                    leaf
                    for kid in view.tree.children(str(entry.id))
                    if kid != following.id
                    for leaf in view.tree.leaves_under(kid)
                ]
                short = [view.name(leaf).removeprefix("sha256:")[:8] for leaf in others]
                assert [label for label, _ in b.links] == [
                    f"branch ending at {s}" for s in short
                ], path
                own = view.name(view.leaf).removeprefix("sha256:")[:8]
                assert not any(own in label for label, _ in b.links), path
            forks += len(blocks)
    assert forks > 0


def test_sub_agents_are_shown_with_the_call_that_spawned_them() -> None:
    """converge.jsonl: each ``subsession`` link is shown on its call, linked at the child
    entry the call's output names, and not a second time as a linked session."""
    session = read_session(SESSIONS / "converge.jsonl")
    view = SessionTree(session).view(str(session.resume_leaf()))
    asked: list[tuple[str, str | None]] = []

    def href(session_id: str, leaf: str | None) -> str:
        asked.append((session_id, leaf))
        return f"{session_id}.md"

    blocks = _blocks(view, href)
    links = [e for e in view.path if isinstance(e, Link) and e.rel == "subsession"]
    assert len(links) == 2
    for link in links:
        (call,) = [b for b in blocks if b.kind == "tool" and b.title and b.call_id == link.call_id]
        assert call.links == ((f"sub-agent session {link.session}", f"{link.session}.md"),)
        (output,) = [
            e
            for e in view.path
            if _is(e, "function_call_output") and e.item
            if e.item.get("call_id") == link.call_id
        ]
        (answered_from,) = [p.entry for p in output.parents if p.session == link.session]
        assert (link.session, answered_from) in asked
    assert not [b for b in blocks if b.kind == "link"]


def test_hidden_and_response_facts_follow_the_entries() -> None:
    """``hidden`` marks exactly the items written ``visible: false``; a response line names
    its status only when the call neither completed nor failed with an error it names."""
    hidden = 0
    for path, view in _vector_views():
        entries = _by_name(view)
        for b in _blocks(view):
            entry = entries[b.entry]
            if isinstance(entry, Item):
                assert ("hidden" in b.marks) == (entry.visible is False), (path, b)
                hidden += entry.visible is False
            if isinstance(entry, Response) and b.kind == "response":
                facts = b.text.split(" · ")
                if entry.error is None and entry.status not in (None, "completed"):
                    assert entry.status in facts, (path, b)
                else:
                    assert "completed" not in facts, (path, b)
    assert hidden > 0


def test_reasoning_without_text_is_not_shown(converted_homes: list[Path]) -> None:
    """A reasoning item with nothing to read (encrypted only) makes no empty block."""
    silent = 0
    for root in converted_homes:
        for _path, view in views(root):
            silent += sum(
                1 for e in view.path if _is(e, "reasoning") and not reasoning_text(e.item)
            )
            assert all(b.text for b in _blocks(view) if b.kind == "reasoning")
    assert silent > 0


# -- a session built here ------------------------------------------------------------------


def _lines(n: int) -> str:
    return "\n".join(f"line {i}" for i in range(1, n + 1))


def _built(path: Path) -> PathView:
    header = Header(id="built-1", created_at="2026-01-01T00:00:00Z", cwd="/srv/my_project/*x*")
    b = SessionBuilder(header)
    ts = iter(f"2026-01-01T00:00:{n:02d}Z" for n in range(60))
    b.append(Config(ts=next(ts), model="gpt-5"), parent=None)
    say = {"type": "message", "role": "user", "content": "go\n\nnow"}
    b.append(Item(ts=next(ts), item=say))
    b.append(Config(ts=next(ts), model="gpt-5"))  # the same model again: no new note
    b.append(Config(ts=next(ts), model="gpt-5-mini"))
    calls = {
        "call_json": ('{"city": "Zürich", "note": "日本"}', "ok"),
        "call_empty": ("{}", []),
        "call_12": ("{}", _lines(12)),
        "call_13": ("{}", _lines(13)),
        "call_twice": ("{}", "first answer"),
    }
    for call_id, (arguments, _) in calls.items():
        call = {
            "type": "function_call",
            "call_id": call_id,
            "name": "`tick`",
            "arguments": arguments,
        }
        b.append(Item(ts=next(ts), response="resp_1", item=call))
    b.append(Response(ts=next(ts), response_id="resp_1", model="gpt-5-mini"))
    for call_id, (_, output) in calls.items():
        out = {"type": "function_call_output", "call_id": call_id, "output": output}
        b.append(Item(ts=next(ts), item=out))
    again = {"type": "function_call_output", "call_id": "call_twice", "output": "second answer"}
    b.append(Item(ts=next(ts), item=again))
    b.append(Outcome(ts=next(ts), kind="test", target=b.leaf, pass_=False, score=0.25))
    write_session(path, b.header, b.entries)
    session = read_session(path)
    return SessionTree(session).view(str(session.resume_leaf()))


def test_built_session_blocks(tmp_path: Path) -> None:
    view = _built(tmp_path / "built.jsonl")
    blocks = _blocks(view)
    notes = [b.text for b in blocks if b.kind == "note"]
    # The second gpt-5 config changes nothing: one note per model change.
    assert [n for n in notes if n.startswith("model: ")] == ["model: gpt-5", "model: gpt-5-mini"]
    (outcome,) = [n for n in notes if n.startswith("outcome: ")]
    assert outcome.split()[-1] == "fail"
    tools = {b.call_id: b for b in blocks if b.kind == "tool" and b.title}
    # Arguments are pretty-printed as the characters they hold, not \u escapes.
    arguments = tools["call_json"].text
    assert json.loads(arguments) == {"city": "Zürich", "note": "日本"}
    assert "Zürich" in arguments
    assert "日本" in arguments
    # The first output of a call is shown with it, a later one where it comes.
    assert [p.text for p in tools["call_twice"].output or ()] == ["first answer"]
    alone = [b for b in blocks if b.kind == "tool" and not b.title]
    assert [[p.text for p in b.output or ()] for b in alone] == [["second answer"]]


def _code_span(text: str) -> str:
    """The content of the one CommonMark code span ``text`` is (its backtick runs match and
    one space is stripped from each end when both ends have one)."""
    opening = re.match(r"`+", text)
    assert opening is not None, text
    ticks = opening.group()
    assert text.endswith(ticks), text
    assert not text[: -len(ticks)].endswith("`"), text  # the closing run is no longer
    inner = text[len(ticks) : -len(ticks)]
    assert not inner.startswith("`"), text  # the opening run is no longer either
    if len(inner) > 1 and inner.startswith(" ") and inner.endswith(" ") and inner.strip():
        inner = inner[1:-1]
    return inner


def test_built_session_in_markdown(tmp_path: Path) -> None:
    """Tool names are code spans that read back as the name, an output that holds nothing
    says so, and heading facts are escaped."""
    view = _built(tmp_path / "built.jsonl")
    md = "".join(render_markdown(transcript(view)))
    heads = re.findall(r"(?m)^\*\*Tool call\*\* (.+?) \((`+.*?`+)\)$", md)
    assert len(heads) == 5
    for name, call_id in heads:
        assert _code_span(name) == "`tick`"
        assert _code_span(call_id).startswith("call_")
    empty = md.split("(`call_empty`)", 1)[1].split("**Tool call**", 1)[0]
    assert "Output:\n\n*(empty)*" in empty
    (cwd,) = re.findall(r"(?m)^- \*\*directory:\*\* (.*)$", md)
    assert re.sub(r"\\(.)", r"\1", cwd) == view.session.header.cwd
    assert re.search(r"(?<!\\)[_*]", cwd) is None


def test_built_session_in_html_folds_long_outputs(tmp_path: Path) -> None:
    """Tool output longer than 12 lines starts folded (docs/export.md); the summary counts
    the output's lines."""
    view = _built(tmp_path / "built.jsonl")
    page = "".join(render_html(transcript(view)))
    for call_id, lines in (("call_12", 12), ("call_13", 13), ("call_json", 1)):
        call = f'<span class="call"><bdi>{call_id}</bdi></span>'
        section = page.split(call, 1)[1].split("</section>")[0]
        count = f"{lines} line{'s' if lines > 1 else ''}"
        opened = " open" if lines <= 12 else ""
        assert f"<details{opened}><summary>Output ({count})</summary>" in section


def test_built_session_in_plain_text(tmp_path: Path) -> None:
    """Plain text marks an output that holds nothing, and no line ends in blanks."""
    view = _built(tmp_path / "built.jsonl")
    text = "".join(render_text(transcript(view)))
    empty = text.split("call_empty]", 1)[1].split("\n[", 1)[0]
    assert "--- output ---" in empty
    assert not [line for line in text.splitlines() if line != line.rstrip()]


def _view_of(path: Path) -> PathView:
    session = read_session(path)
    return SessionTree(session).view(str(session.resume_leaf()))


def _answer_in_markdown(tmp_path: Path, text: str) -> str:
    """The Markdown an assistant's message ``text`` is written as, between its heading and
    the next turn's."""
    b = SessionBuilder(Header(id="one", created_at="2026-01-01T00:00:00Z"))
    answer = {"type": "message", "role": "assistant", "content": [_text_part(text)]}
    b.append(Item(ts="2026-01-01T00:00:01Z", item=answer))
    user = {"type": "message", "role": "user", "content": "ok"}
    b.append(Item(ts="2026-01-01T00:00:02Z", item=user))
    path = tmp_path / "one.jsonl"
    write_session(path, b.header, b.entries)
    md = "".join(render_markdown(transcript(_view_of(path))))
    after = md.split("### Assistant · 2026-01-01T00:00:01Z\n\n", 1)[1]
    return after.split("\n\n### User", 1)[0]


def _text_part(text: str) -> dict[str, str]:
    return {"type": "output_text", "text": text}


@pytest.mark.parametrize(
    ("text", "closing"),
    [
        ("plain text", ""),
        ("~~~\ncode", "~~~"),  # a fence of tildes is closed by tildes
        ("```\ncode\n~~~", "```"),  # which do not close one of backticks
        ("````\ncode\n```", "````"),  # nor does a shorter fence
        ("```\ncode\n```", ""),  # closed already
        ("```\ncode\n````", ""),  # a longer fence closes it too
        ("```\ncode\n``` not closing", "```"),  # a closing fence has no info string
        ("```\na\n```\n\n```\nb", "```"),  # the second block is left open
        ("```a`b\ncode", ""),  # a backtick in the info string: not a fence at all
        ("~~~a`b\ncode", "~~~"),  # which a fence of tildes may hold
        ("> ```sh\n> code", "> ```"),  # inside a quote: closed inside it
        ("1. ```sh\n   make", "   ```"),  # in a list item: closed inside it, not a new item
        ("1) ```sh\n   make", "   ```"),
        ("1234. ```sh\n      make", "      ```"),
        ("+ ```sh\n  make", "  ```"),
        ("-```x", ""),  # no blank after the mark: not a list item, no fence
        ("1.```x", ""),
    ],
)
def test_a_message_is_closed_only_where_its_code_fence_is_left_open(
    tmp_path: Path, text: str, closing: str
) -> None:
    """The fence a message leaves open, as CommonMark reads it (backticks or tildes, inside a
    quote or list item), is closed after it, where its lines start; nothing is added when
    none is left open, or to text that only looks like a fence."""
    expected = f"{text}\n{closing}" if closing else text
    assert _answer_in_markdown(tmp_path, text) == expected


def test_the_path_length_is_counted_in_entries_and_one_is_one_entry(tmp_path: Path) -> None:
    b = SessionBuilder(Header(id="short", created_at="2026-01-01T00:00:00Z"))
    said = {"type": "message", "role": "user", "content": "hi"}
    b.append(Item(ts="2026-01-01T00:00:01Z", item=said))
    path = tmp_path / "short.jsonl"
    write_session(path, b.header, b.entries)
    assert "(1 entry)" in "".join(render_markdown(transcript(_view_of(path))))
    b.append(Item(ts="2026-01-01T00:00:02Z", item=said))
    write_session(path, b.header, b.entries)
    assert "(2 entries)" in "".join(render_markdown(transcript(_view_of(path))))


def test_a_message_cut_inside_a_code_block_keeps_the_turns_after_it(tmp_path: Path) -> None:
    """An answer cut off inside a code block (out of tokens) leaves its fence open: it is
    closed where the message ends, so the turns after it are not swallowed into it and a
    tool's output stays fenced (its heading and link are not rendered)."""
    b = SessionBuilder(Header(id="cut", created_at="2026-01-01T00:00:00Z"))
    cut = "Here is the fix:\n```python\ndef f():"
    listed = "Steps:\n\n1. Run\n   ```sh\n   make"
    for n, text in enumerate((cut, listed)):
        answer = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        }
        b.append(Item(ts=f"2026-01-01T00:00:0{n}Z", item=answer))
    call = {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": ""}
    b.append(Item(ts="2026-01-01T00:00:03Z", item=call))
    output = "# Heading from a file\n[click](https://evil.example)"
    b.append(
        Item(
            ts="2026-01-01T00:00:04Z",
            item={"type": "function_call_output", "call_id": "c1", "output": output},
        )
    )
    b.append(
        Item(ts="2026-01-01T00:00:05Z", item={"type": "message", "role": "user", "content": "ok"})
    )
    path = tmp_path / "cut.jsonl"
    write_session(path, b.header, b.entries)
    md = "".join(render_markdown(transcript(_view_of(path))))
    assert f"\n\n{cut}\n```\n" in md
    assert f"\n\n{listed}\n   ```\n" in md
    # Outside fences, only the transcript's own headings; the output is fenced.
    fence, outside = "", []
    for line in md.splitlines():
        bare = line.lstrip(" ")
        if fence and bare.rstrip() == fence[0] * len(fence):
            fence = ""
        elif not fence and bare.startswith(("```", "~~~")):
            fence = re.match(r"`+|~+", bare)[0]  # type: ignore[index]
        elif not fence:
            outside.append(line)
    assert [line for line in outside if line.startswith("#")] == [
        "# Session cut",
        "### Assistant · 2026-01-01T00:00:00Z",
        "### Assistant · 2026-01-01T00:00:01Z",
        "### User · 2026-01-01T00:00:05Z",
    ]
    assert "[click]" not in "\n".join(outside)


def test_a_sub_agent_link_whose_call_is_not_on_the_path_is_shown_on_its_own() -> None:
    """v0.4/extensions.jsonl links a sub-agent session to ``call_9``, a call the path does
    not hold: with no call to show it beside, the link is a block of its own. Its two
    responses show as a line each: the tokens in and out, the error's message."""
    session = read_session(SESSIONS / "v0.4" / "extensions.jsonl")
    view = SessionTree(session).view(session.leaves()[-1])
    assert not any(_is(e, "function_call") for e in view.path)
    text = "".join(render_text(transcript(view)))
    assert "[link] subsession\n    -> 01995b2a-0000-7000-8000-0000000000aa\n" in text
    assert "\n[response] gpt-5 · 9 tokens in, 1 out\n" in text
    assert "\n[response] error: boom (error)\n" in text


def test_summaries_and_items_of_other_kinds_say_what_they_are(tmp_path: Path) -> None:
    """A fold's summary that is a provider's opaque ``compaction`` item shows as its kind; a
    summary of another kind shows its text (``[item]`` when there is none); an item of no
    known kind, its text after its kind (``item`` when it has none)."""
    b = SessionBuilder(Header(id="kinds", created_at="2026-01-01T00:00:00Z"))
    ts = iter(f"2026-01-01T00:00:{n:02d}Z" for n in range(60))
    say = {"type": "message", "role": "user", "content": "go"}
    kept = b.append(Item(ts=next(ts), item=say), parent=None)
    opaque = {"type": "compaction", "encrypted_content": "gAAAA"}
    b.append(Compaction(ts=next(ts), first_kept=kept.id, summary=opaque))
    noted = {"type": "summary_note", "text": "Tried the other route first."}
    b.append(BranchSummary(ts=next(ts), from_=kept.id, summary=noted))
    b.append(BranchSummary(ts=next(ts), from_=kept.id, summary=None))  # read, though missing
    b.append(Item(ts=next(ts), item={"text": "no type at all"}))
    path = tmp_path / "kinds.jsonl"
    write_session(path, b.header, b.entries)
    session = read_session(path)
    blocks = _blocks(SessionTree(session).view(str(b.leaf)))
    shown = {bl.kind: bl for bl in blocks}
    assert [p.text for p in shown["compaction"].parts] == ["[compaction]"]
    summaries = [[p.text for p in bl.parts] for bl in blocks if bl.kind == "branch_summary"]
    assert summaries == [["Tried the other route first."], ["[item]"]]
    assert shown["note"].text == "[item] no type at all"


def test_a_custom_tool_call_is_shown_with_its_input_and_output(tmp_path: Path) -> None:
    """A custom tool call (the Responses API's free-text call: Codex's ``apply_patch`` and
    code-mode ``exec``) is a tool block with its name and input, and its
    ``custom_tool_call_output`` is shown with it, once; before, both were bare
    ``[custom_tool_call]`` and ``[custom_tool_call_output]`` notes, so a transcript of a
    Codex session showed none of its edits. Free text is fenced without a language."""
    b = SessionBuilder(Header(id="patch", created_at="2026-01-01T00:00:00Z"))
    ts = iter(f"2026-01-01T00:00:{n:02d}Z" for n in range(60))
    patch = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n"
    call = {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": patch}
    done = '{"output":"Success. Updated the following files:\\nA hello.txt\\n"}'
    output = {"type": "custom_tool_call_output", "call_id": "c1", "output": done}
    b.append(Item(ts=next(ts), item={"type": "message", "role": "user", "content": "add it"}))
    b.append(Item(ts=next(ts), item=call))
    b.append(Item(ts=next(ts), item=output))
    path = tmp_path / "patch.jsonl"
    write_session(path, b.header, b.entries)
    view = _view_of(path)
    (tool,) = [bl for bl in _blocks(view) if bl.kind == "tool"]
    assert (tool.title, tool.call_id, tool.text) == ("apply_patch", "c1", patch)
    assert [p.text for p in tool.output or ()] == [done]
    assert not [bl for bl in _blocks(view) if bl.kind == "note"]
    md = "".join(render_markdown(transcript(view)))
    assert f"**Tool call** `apply_patch` (`c1`)\n\n```\n{patch}\n```\n" in md


def test_markdown_names_links_notes_and_a_message_without_a_role(tmp_path: Path) -> None:
    """v0.4/extensions.jsonl in Markdown: its sub-agent link and model note read as such; a
    message that names no role is headed ``Message``."""
    session = read_session(SESSIONS / "v0.4" / "extensions.jsonl")
    md = "".join(render_markdown(transcript(SessionTree(session).view(session.leaves()[-1]))))
    lines = md.splitlines()
    assert "**Linked session** (subsession): 01995b2a-0000-7000-8000-0000000000aa" in lines
    assert "*model: gpt-5*" in lines
    b = SessionBuilder(Header(id="roleless", created_at="2026-01-01T00:00:00Z"))
    item = {"type": "message", "content": "who said this?"}
    b.append(Item(ts="2026-01-01T00:00:01Z", item=item), parent=None)
    write_session(tmp_path / "roleless.jsonl", b.header, b.entries)
    session = read_session(tmp_path / "roleless.jsonl")
    md = "".join(render_markdown(transcript(SessionTree(session).view(str(b.leaf)))))
    assert "### Message · 2026-01-01T00:00:01Z" in md.splitlines()


def test_a_calls_input_is_shown_as_given(tmp_path: Path) -> None:
    """A custom tool call's free text is shown verbatim, also when it reads as JSON (a
    function call's arguments are pretty-printed); an input that is no string (a damaged
    file) is shown as JSON; arguments nested deeper than a JSON parser goes are plain text,
    fenced without a language."""
    b = SessionBuilder(Header(id="inputs", created_at="2026-01-01T00:00:00Z"))
    ts = iter(f"2026-01-01T00:00:{n:02d}Z" for n in range(60))
    deep = "[" * 100_000
    calls = [
        {"type": "custom_tool_call", "call_id": "c1", "name": "exec", "input": '{"a":1}'},
        {"type": "custom_tool_call", "call_id": "c2", "name": "exec", "input": {"a": 1}},
        {"type": "function_call", "call_id": "c3", "name": "f", "arguments": deep},
    ]
    b.append(Item(ts=next(ts), item={"type": "message", "role": "user", "content": "go"}))
    for call in calls:
        b.append(Item(ts=next(ts), item=call))
    path = tmp_path / "inputs.jsonl"
    write_session(path, b.header, b.entries)
    view = _view_of(path)
    texts = [bl.text for bl in _blocks(view) if bl.kind == "tool"]
    assert texts == ['{"a":1}', '{\n  "a": 1\n}', deep]
    md = "".join(render_markdown(transcript(view)))
    assert f"**Tool call** `f` (`c3`)\n\n```\n{deep}\n```\n" in md


def test_a_built_in_tools_call_is_shown_with_its_action(tmp_path: Path) -> None:
    """A web search (Codex's ``web_search_call``: an ``action`` with the query, no call id,
    no output item) and a local shell call (an ``action`` with the command, answered by an
    output naming its call id) are tool blocks showing what they did; before, a transcript of
    the Codex 0.104 rollouts showed each search as a bare ``[web_search_call]`` note, without
    its query, and a shell call's output with no command. An item of another kind without an
    action stays a note."""
    b = SessionBuilder(Header(id="builtin", created_at="2026-01-01T00:00:00Z"))
    ts = iter(f"2026-01-01T00:00:{n:02d}Z" for n in range(60))
    query = {"type": "search", "query": "asf format", "queries": ["asf format"]}
    search = {"type": "web_search_call", "status": "completed", "action": query}
    exec_ = {"type": "exec", "command": ["ls", "-a"], "timeout_ms": 1000}
    shell = {"type": "local_shell_call", "call_id": "sh1", "status": "completed", "action": exec_}
    out = {"type": "function_call_output", "call_id": "sh1", "output": "a.txt"}
    bare = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    b.append(Item(ts=next(ts), item={"type": "message", "role": "user", "content": "look"}))
    for item in (search, shell, out, bare):
        b.append(Item(ts=next(ts), item=item))
    path = tmp_path / "builtin.jsonl"
    write_session(path, b.header, b.entries)
    view = _view_of(path)
    tools = [
        (bl.title, bl.call_id, bl.text, bl.output) for bl in _blocks(view) if bl.kind == "tool"
    ]
    assert [t[:2] for t in tools] == [("web_search", ""), ("local_shell", "sh1")]
    assert [json.loads(t[2]) for t in tools] == [query, exec_]
    assert [[p.text for p in t[3]] if t[3] is not None else None for t in tools] == [
        None,
        ["a.txt"],
    ]
    assert [bl.text for bl in _blocks(view) if bl.kind == "note"] == ["[web_search_call]"]
    md = "".join(render_markdown(transcript(view)))
    assert '**Tool call** `web_search`\n\n```json\n{\n  "queries": [' in md
    assert "**Tool call** `local_shell` (`sh1`)\n\n```json\n" in md
    text = "".join(render_text(transcript(view)))
    assert "\n[tool web_search]\n" in text
    assert "\n[tool local_shell sh1]\n" in text
