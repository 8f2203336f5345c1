"""``asf show``'s tree as people read it: one line per entry, what each kind of entry says in
a few words, and the context at the leaf. A session is built here with one entry of every
kind the format defines, so every summary is checked against what the entry holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from fixture_paths import VECTORS

from asf_core.cli.main import ExitCode, main
from asf_core.cli.render import item_summary
from asf_core.model import (
    BranchSummary,
    Compaction,
    Config,
    Custom,
    Decision,
    Dispatch,
    Entry,
    Env,
    Header,
    Info,
    Item,
    Label,
    Link,
    Outcome,
    Queued,
    Response,
    Run,
)
from asf_core.writer import SessionBuilder, write_session

_QUESTION = "What is " + "two plus two, " * 8 + "really?"


def _message(role: str, *parts: Any) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": list(parts)}


def _build(path: Path) -> list[tuple[str, str, str]]:
    """The session, and the (id, type, expected summary) of each entry in file order."""
    b = SessionBuilder(Header(id="every-kind", created_at="2026-01-01T00:00:00Z"))
    ts = iter(f"2026-01-01T00:00:{n:02d}Z" for n in range(60))
    made: list[tuple[str, str, str]] = []

    def add(entry: Entry, summary: str, **where: Any) -> str:
        ident = str(b.append(attrs.evolve(entry, ts=next(ts)), **where).id)
        made.append((ident, entry.type, summary))
        return ident

    tool = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}
    config = Config(ts="", model="gpt-5", instructions="Be brief.", tools_added=(tool,))
    add(config, "model=gpt-5 instructions 9 chars +tools lookup", parent=None)
    add(Run(ts="", run_id="run-1", phase="start"), "start run-1")
    asked = {"type": "message", "role": "user", "content": _QUESTION}  # a bare string
    user = add(Item(ts="", item=asked), "user: " + _QUESTION[:65] + "…")
    said = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Arithmetic."}]}
    add(Item(ts="", item=said, response="r1"), "reasoning: Arithmetic.")
    call_item = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"}
    call = add(Item(ts="", item=call_item, response="r1"), "call lookup({}) [c1]")
    usage = {"input_tokens": 40, "output_tokens": 12}
    answer = Response(ts="", response_id="r1", model="gpt-5", status="completed", usage=usage)
    add(answer, "gpt-5 completed in 40 out 12")
    verdict = Decision(ts="", call_id="c1", target=call, verdict="proceed", by="user")
    add(verdict, "proceed [c1] by user")
    add(Dispatch(ts="", call_id="c1", target=call), f"[c1] -> {call[7:15]}")
    output = {"type": "function_call_output", "call_id": "c1", "output": "4"}
    add(Item(ts="", item=output), "output [c1]: 4")
    failed = Response(ts="", response_id="r2", status="failed", error={"message": "boom"})
    add(failed, "failed error")
    add(Config(ts="", tools_removed=("lookup",), extra={"top_p": 1}), "-tools lookup extra top_p")
    add(Config(ts=""), "(nothing set)")
    summary = _message("system", {"type": "input_text", "text": "Earlier: arithmetic."})
    folded = Compaction(ts="", first_kept=user, summary=summary)
    add(folded, f"first kept {user[7:15]}; system: Earlier: arithmetic.")
    image = {"type": "input_image", "image_url": "https://example.com/y.png"}
    hurry = _message("user", {"type": "input_text", "text": "hurry"}, image)
    add(Queued(ts="", mode="steer", item=hurry), "steer: user: hurry [input_image]")
    add(Label(ts="", target=user, label="question"), f"{user[7:15]} = 'question'")
    add(Info(ts="", name="Sums"), "name 'Sums'")
    add(Env(ts="", cwd="/home/u/proj"), "cwd /home/u/proj")
    judged = Outcome(ts="", kind="test", target=call, pass_=True, score=0.75)
    add(judged, f"test of {call[7:15]} pass score 0.75")
    add(Link(ts="", rel="subsession", session="child-1", call_id="c1"), "subsession child-1")
    add(Custom(ts="", ns="acme", data={"k": 1}), "acme")
    tried = {"type": "message", "role": "user", "content": "Tried X."}
    add(BranchSummary(ts="", from_=call, summary=tried), f"from {call[7:15]}; user: Tried X.")
    add(Run(ts="", run_id="run-1", phase="end", reason="done"), "end run-1 done")
    write_session(path, b.header, b.entries)
    return made


def test_every_kind_of_entry_is_summed_up_in_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = _build(tmp_path / "s.jsonl")
    assert main(["show", str(tmp_path / "s.jsonl")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("session every-kind  agentsession/0.11  created ")
    shown = lines[1 : 1 + len(made)]
    parent = "-"
    for line, (ident, kind, summary) in zip(shown, made, strict=True):
        short = ident[7:15]
        assert line[:23] == f"{short}  <- {parent:8}  ", line
        assert line[23:].split(None, 1)[0] == kind
        said = line[23:].split(None, 1)[1].removesuffix("  [leaf resume]")
        assert said == summary, line
        assert len(said) <= 72
        parent = short
    assert shown[-1].endswith("  [leaf resume]")


def test_the_context_says_the_settings_and_items_in_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """At the first response: the settings the config set, and the items so far."""
    made = _build(tmp_path / "s.jsonl")
    answered = made[5][0]
    assert main(["show", str(tmp_path / "s.jsonl"), "--leaf", answered[7:15]]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines.index(f"context at {answered[7:15]}: 3 items from 6 entries")
    assert lines[at + 1 :] == [
        "  settings: model=gpt-5 instructions 9 chars tools lookup",
        f"  {made[2][0][7:15]}  {made[2][2]}",
        f"  {made[3][0][7:15]}  reasoning: Arithmetic.",
        f"  {made[4][0][7:15]}  call lookup({{}}) [c1]",
    ]


def test_reasoning_without_a_summary_shows_its_text() -> None:
    """Reasoning kept only as its text, with no summary (as Claude Code's thinking is), says
    that text in its line; a summary, where there is one, is what the line says."""
    raw = {
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "Two and two make four."}],
    }
    assert item_summary(raw) == "reasoning: Two and two make four."
    summed = {**raw, "summary": [{"type": "summary_text", "text": "Arithmetic."}]}
    assert item_summary(summed) == "reasoning: Arithmetic."
    opaque = {"type": "reasoning", "summary": [], "encrypted_content": "x"}
    assert item_summary(opaque) == "reasoning:"


def test_an_item_of_another_kind_shows_the_start_of_its_content() -> None:
    """An item of a kind the tree has no words for, holding content parts as a message
    does (Codex's ``agent_message``: a sub-agent's task), shows its kind and the start of
    its text, where it showed the kind alone; one without content, the kind."""
    task = {
        "type": "agent_message",
        "author": "/root",
        "content": [
            {"type": "input_text", "text": "Review the diff."},
            {"type": "encrypted_content", "encrypted_content": "gAAAAABq"},
        ],
    }
    assert item_summary(task) == "agent_message: Review the diff. [encrypted_content]"
    assert item_summary({"type": "web_search_call", "status": "completed"}) == "web_search_call"


def test_a_built_in_tools_call_shows_its_action() -> None:
    """A web search (Codex's ``web_search_call``) shows its kind and what its ``action``
    says (the query), a local shell call its command's words; both showed their kind alone
    (found reading ``asf show`` of the Codex 0.104 rollouts)."""
    query = {"type": "search", "query": "asf format", "queries": ["asf format"]}
    search = {"type": "web_search_call", "status": "completed", "action": query}
    assert item_summary(search) == "web_search_call: search asf format"
    shell = {"type": "local_shell_call", "call_id": "s1", "action": {"type": "exec"}}
    assert item_summary(shell) == "local_shell_call: exec"


def test_a_custom_tool_call_shows_as_a_call_and_its_output_as_an_output() -> None:
    """A custom tool call (Codex's ``apply_patch``) shows its name, free-text input and call
    id as a function call does, and its output the output's text (both showed their kind
    alone)."""
    patch = {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "+hi"}
    assert item_summary(patch) == "call apply_patch(+hi) [c1]"
    done = {"type": "custom_tool_call_output", "call_id": "c1", "output": "Success."}
    assert item_summary(done) == "output [c1]: Success."


def test_a_prefix_two_entries_share_is_ambiguous(capsys: pytest.CaptureFixture[str]) -> None:
    """basic.jsonl has exactly two entry ids starting ``f2``: ``--leaf f2`` names neither."""
    basic = VECTORS / "sessions" / "basic.jsonl"
    ids = [json.loads(line).get("id", "") for line in basic.read_text().splitlines()[1:]]
    assert len([i for i in ids if i.startswith("sha256:f2")]) == 2
    for prefix in ("f2", "sha256:f2"):
        assert main(["show", str(basic), "--leaf", prefix]) == ExitCode.USAGE
        assert (
            capsys.readouterr().err == f"asf: {prefix!r} is ambiguous: 2 entry ids start with it\n"
        )


def test_a_session_without_entries_shows_no_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "header-only.jsonl"
    path.write_bytes((VECTORS / "sessions" / "basic.jsonl").read_bytes().splitlines(True)[0])
    assert main(["show", str(path)]) == ExitCode.OK
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(f"0 entries  ({path})")
    assert out[1:] == ["(no entries, so no context)"]


def test_json_wins_over_a_transcript_format(capsys: pytest.CaptureFixture[str]) -> None:
    """``--json`` with ``--format text`` is the JSON document, as for the tree."""
    basic = str(VECTORS / "sessions" / "basic.jsonl")
    assert main(["show", basic, "--json"]) == ExitCode.OK
    tree = json.loads(capsys.readouterr().out)
    for form in ("text", "markdown"):
        assert main(["show", basic, "--format", form, "--json"]) == ExitCode.OK
        assert json.loads(capsys.readouterr().out) == tree
