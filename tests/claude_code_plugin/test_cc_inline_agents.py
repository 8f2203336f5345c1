"""Sub-agents CLI 1.0 and 2.0 wrote into the session file itself (sidechain lines), rebuilt
after a published CLI 2.0.13 session (``tomjnsn/agentlogs``,
``fixtures/claudecode/subagent.jsonl``)."""

from __future__ import annotations

from pathlib import Path

from cc_helpers import NS, convert, sessions_in
from cc_synth import Lines

from asf_core.cli.main import main
from asf_core.context import context_at
from asf_core.model import Entry, ParentRef

ASKS = ("Hey there! Just checking in - how are you doing today?", "Count the files.")


def _task(lines: Lines, parent: str, call: str, prompt: str) -> str:
    block = {
        "type": "tool_use",
        "id": call,
        "name": "Task",
        "input": {"subagent_type": "general-purpose", "description": "d", "prompt": prompt},
    }
    return lines.assistant(parent, "msg_1", block)


def _sidechain(lines: Lines, prompt: str, answer: str, msg: str) -> str:
    start = lines.user(None, prompt, isSidechain=True)
    return lines.text(start, msg, answer, isSidechain=True, model="claude-haiku-4-5")


def _root(by_id: dict[str, Entry], entry: Entry) -> Entry:
    while entry.parent is not None:
        entry = by_id[str(entry.parent)]
    return entry


def test_a_sidechain_in_the_session_file_is_the_work_of_the_call_it_answers(
    tmp_path: Path,
) -> None:
    """CLI 2.0.13 writes a ``Task`` call's sub-agent into the session file: sidechain lines,
    the first a user line without a parent holding the call's prompt; no ``agentId`` in the
    result or the lines. The output of each call lists the last entry of the sidechain whose
    prompt is its own in ``parents`` (two calls in parallel, their sidechains written in the
    other order), as for a sub-agent with a transcript of its own; the context is unchanged."""
    lines = Lines(version="2.0.13")
    asked = lines.user(None, "ask two subagents")
    first = _task(lines, asked, "toolu_01A", ASKS[0])
    second = _task(lines, first, "toolu_01B", ASKS[1])
    _sidechain(lines, ASKS[1], "There are 3 files.", "msg_s2")
    _sidechain(lines, ASKS[0], "Doing well!", "msg_s1")
    done = lines.result(second, "toolu_01A", "Doing well!", toolUseResult={"status": "completed"})
    done = lines.result(done, "toolu_01B", "There are 3 files.")
    lines.text(done, "msg_2", "Both answered.")
    lines.write(tmp_path / "in" / "-Users-u-studio")
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    assert main(["verify", str(tmp_path / "out")]) == 0

    (session,) = sessions_in(tmp_path / "out").values()
    by_id = {str(e.id): e for e in session.entries}
    texts = {
        e.item["output"]: e for e in session.entries if e.type == "item" and "output" in e.item
    }
    for answer in ("Doing well!", "There are 3 files."):
        (ref,) = texts[answer].parents
        assert isinstance(ref, ParentRef)
        assert ref.session is None
        agent = by_id[ref.entry]  # the sidechain's last entry: its response
        assert agent.type == "response"
        assert agent.model == "claude-haiku-4-5"
        start = _root(by_id, agent)
        assert start.unknown[NS]["fields"]["isSidechain"] is True
        assert start.item["content"][0]["text"] == (ASKS[0] if answer == "Doing well!" else ASKS[1])
        assert _root(by_id, texts[answer]) is not start
    # The conversation's context holds no sidechain line.
    leaf = session.resume_leaf()
    assert leaf is not None
    kinds = [(i["type"], i.get("role")) for i in context_at(session, leaf).items]
    assert kinds == [
        ("message", "user"),
        ("function_call", None),
        ("function_call", None),
        ("function_call_output", None),
        ("function_call_output", None),
        ("message", "assistant"),
    ]


def _outputs(tmp_path: Path, lines: Lines) -> tuple[dict[str, Entry], dict[str, Entry]]:
    """The session ``lines`` convert to: its entries by id, its call outputs by text."""
    lines.write(tmp_path / "in" / "-Users-u-studio")
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    (session,) = sessions_in(tmp_path / "out").values()
    by_id = {str(e.id): e for e in session.entries}
    texts = {
        e.item["output"]: e for e in session.entries if e.type == "item" and "output" in e.item
    }
    return by_id, texts


def test_calls_with_one_prompt_take_their_sidechains_in_file_order(tmp_path: Path) -> None:
    """Two ``Task`` calls in parallel with the same prompt: nothing but file order tells
    their sidechains apart, so the first call takes the first sidechain written and the
    second the next; each output lists its own sidechain's last entry, none both."""
    lines = Lines(version="2.0.13")
    asked = lines.user(None, "ask twice")
    first = _task(lines, asked, "toolu_01A", ASKS[1])
    second = _task(lines, first, "toolu_01B", ASKS[1])
    for msg, model in (("msg_s1", "claude-haiku-4-5"), ("msg_s2", "claude-sonnet-4-5")):
        start = lines.user(None, ASKS[1], isSidechain=True)
        lines.text(start, msg, "There are 3 files.", isSidechain=True, model=model)
    done = lines.result(second, "toolu_01A", "first answer")
    lines.result(done, "toolu_01B", "second answer")
    by_id, texts = _outputs(tmp_path, lines)
    for output, model in (
        ("first answer", "claude-haiku-4-5"),
        ("second answer", "claude-sonnet-4-5"),
    ):
        (ref,) = texts[output].parents
        agent = by_id[ref.entry]  # the sidechain's response, told apart by its model
        assert agent.type == "response"
        assert agent.model == model, output


def test_a_call_whose_result_names_its_agent_takes_no_sidechain(tmp_path: Path) -> None:
    """A ``Task`` call whose result names its sub-agent (``agentId``) has that agent's work:
    a sidechain repeating its prompt is the work of the next call with that prompt whose
    result names none, though the named call was made first."""
    lines = Lines(version="2.0.13")
    asked = lines.user(None, "ask twice")
    first = _task(lines, asked, "toolu_01A", ASKS[1])
    second = _task(lines, first, "toolu_01B", ASKS[1])
    _sidechain(lines, ASKS[1], "There are 3 files.", "msg_s1")
    named = {"agentId": "a0001", "status": "completed"}
    done = lines.result(second, "toolu_01A", "named answer", toolUseResult=named)
    done = lines.result(done, "toolu_01B", "sidechain answer")
    by_id, texts = _outputs(tmp_path, lines)
    assert not [p for p in texts["named answer"].parents if p.session is None]
    (ref,) = texts["sidechain answer"].parents
    assert by_id[ref.entry].model == "claude-haiku-4-5"


def test_a_sidechain_whose_parent_is_not_in_the_file_still_starts_one(tmp_path: Path) -> None:
    """A sidechain's first line naming a parent the file does not hold (a line lost or
    never written) is still the first line of a sub-agent: the call's output lists it."""
    lines = Lines(version="2.0.13")
    asked = lines.user(None, "ask one")
    call = _task(lines, asked, "toolu_01A", ASKS[1])
    gone = "00000000-0000-4000-8000-00000000dead"
    start = lines.user(gone, ASKS[1], isSidechain=True)
    lines.text(start, "msg_s1", "There are 3 files.", isSidechain=True, model="claude-haiku-4-5")
    lines.result(call, "toolu_01A", "the answer")
    by_id, texts = _outputs(tmp_path, lines)
    (ref,) = texts["the answer"].parents
    assert by_id[ref.entry].model == "claude-haiku-4-5"


def test_a_task_call_whose_prompt_is_no_string_waits_for_no_sidechain(tmp_path: Path) -> None:
    """A ``Task`` call whose ``prompt`` is a list (a damaged line) converts, and no sidechain
    is taken for its work; the call after it with a string prompt takes its own."""
    lines = Lines(version="2.0.13")
    asked = lines.user(None, "ask two")
    first = _task(lines, asked, "toolu_01A", [ASKS[1]])  # type: ignore[arg-type]
    second = _task(lines, first, "toolu_01B", ASKS[1])
    _sidechain(lines, ASKS[1], "There are 3 files.", "msg_s1")
    done = lines.result(second, "toolu_01A", "damaged answer")
    lines.result(done, "toolu_01B", "the answer")
    by_id, texts = _outputs(tmp_path, lines)
    assert texts["damaged answer"].parents == ()
    (ref,) = texts["the answer"].parents
    assert by_id[ref.entry].model == "claude-haiku-4-5"
