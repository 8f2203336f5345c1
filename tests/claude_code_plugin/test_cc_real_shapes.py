"""Line shapes met in real Claude Code transcripts outside the shared files.

Each test rebuilds, shortened, the lines of a published transcript (the robustness sweep of
issue 13 found them): what the real line holds that matters is kept as written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cc_helpers import context_texts, convert, run, sessions_in
from cc_synth import Lines

from asf_core.cli.main import main
from asf_core.model import Custom, Info, Response


def _responses(out: Path) -> list[Response]:
    (session,) = sessions_in(out).values()
    return [e for e in session.entries if isinstance(e, Response)]


def test_an_api_error_is_a_failed_response(tmp_path: Path) -> None:
    """CLI 2.1.210 writes a refused call as a ``<synthetic>`` assistant line with
    ``isApiErrorMessage``, ``error``, ``apiErrorStatus`` and ``errorDetails``: the call failed,
    it did not complete."""
    lines = Lines(version="2.1.210")
    prompt = lines.user(None, "ping")
    details = '429 {"type":"error","error":{"type":"rate_limit_error","message":"Slow down."}}'
    lines.raw(
        {
            "parentUuid": prompt,
            "isSidechain": False,
            "type": "assistant",
            "uuid": "fd395da0-0a07-4fc4-b426-3117eec7d91e",
            "timestamp": "2026-07-15T17:40:12.594Z",
            "requestId": "req_011Cd4FdpFh4xXSbbicAccrN",
            "error": "rate_limit",
            "apiErrorStatus": 429,
            "isApiErrorMessage": True,
            "errorDetails": details,
            "sessionId": lines.session,
            "version": "2.1.210",
            "message": {
                "model": "<synthetic>",
                "role": "assistant",
                "type": "message",
                "content": [{"type": "text", "text": "You've reached your limit."}],
            },
        }
    )
    lines.write(tmp_path / "in" / "-p")
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    (response,) = _responses(tmp_path / "out")
    assert response.status == "failed"
    assert response.error == {
        "type": "rate_limit",
        "code": "429",
        "message": details,
        "param": None,
    }
    assert main(["verify", str(tmp_path / "out")]) == 0


def test_an_ordinary_response_has_no_error(tmp_path: Path) -> None:
    lines = Lines()
    lines.text(lines.user(None, "hi"), "msg_1", "hello", isApiErrorMessage=False)
    lines.write(tmp_path / "in" / "-p")
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    (response,) = _responses(tmp_path / "out")
    assert response.error is None
    assert response.status is None  # stop_reason null, as 2.1.39 writes it


def test_anonymised_message_ids_do_not_merge_calls(tmp_path: Path) -> None:
    """A published 2.1.92 sub-agent transcript has every ``message.id`` and tool use id
    replaced by ``REDACTED``; only ``requestId`` still tells its calls apart. Each call is its
    own response and each result answers the call before it."""
    lines = Lines(version="2.1.92")
    prompt = lines.user(None, "Map the codebase.")
    text = lines.assistant(prompt, "REDACTED", {"type": "text", "text": "Now let me look:"})
    first = lines.call(text, "REDACTED", "REDACTED")
    lines.objects[-2]["requestId"] = lines.objects[-1]["requestId"] = "req_011CZmCGj3kd"
    done = lines.result(first, "REDACTED", "data/")
    second = lines.call(done, "REDACTED", "REDACTED")
    lines.objects[-1]["requestId"] = "req_011CZmCHZT5B"
    lines.result(second, "REDACTED", "README.md")
    lines.write(tmp_path / "in" / "-p")
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    assert [r.response_id for r in _responses(tmp_path / "out")] == ["REDACTED", "REDACTED"]
    (session,) = sessions_in(tmp_path / "out").values()
    assert context_texts(session) == [
        "user:Map the codebase.",
        "assistant:Now let me look:",
        "call:REDACTED",
        "out:REDACTED",
        "call:REDACTED-2",
        "out:REDACTED-2",
    ]
    assert main(["verify", str(tmp_path / "out")]) == 0


def test_lines_of_one_response_without_request_ids_still_merge(tmp_path: Path) -> None:
    lines = Lines()
    prompt = lines.user(None, "go")
    first = lines.text(prompt, "msg_1", "Looking.")
    lines.call(first, "msg_1", "toolu_1")
    for obj in lines.objects[1:]:
        del obj["requestId"]
    lines.write(tmp_path / "in" / "-p")
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    (response,) = _responses(tmp_path / "out")
    assert response.response_id == "msg_1"


def test_results_with_text_beside_them_stay_with_their_response(tmp_path: Path) -> None:
    """A response calls two tools at once and the user stops both. A captured Claude Code
    request holds one user message of a refused ``tool_result`` followed by the text
    "[Request interrupted by user for tool use]"; a line written so (results and text
    together) still answers open calls: neither result may go off onto a branch, or the
    context holds a call without its result."""
    lines = Lines()
    prompt = lines.user(None, "do two things")
    first = lines.call(prompt, "msg_1", "toolu_a")
    second = lines.call(first, "msg_1", "toolu_b")
    refused = "The user doesn't want to proceed with this tool use."
    notice = {"type": "text", "text": "[Request interrupted by user for tool use]"}
    for parent, call in ((first, "toolu_a"), (second, "toolu_b")):
        result = {"type": "tool_result", "tool_use_id": call, "content": refused, "is_error": True}
        last = lines.user(parent, [result, notice])
    lines.user(last, "try something else")
    lines.write(tmp_path / "in" / "-p")
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    (session,) = sessions_in(tmp_path / "out").values()
    context = context_texts(session)
    assert context[:4] == ["user:do two things", "call:toolu_a", "call:toolu_b", "out:toolu_a"]
    assert "out:toolu_b" in context
    assert context[-1] == "user:try something else"
    assert main(["verify", str(tmp_path / "out")]) == 0


def test_a_summary_of_an_earlier_session_does_not_name_this_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CLI 1.0.17 opens a new session's file with a ``summary`` line per earlier conversation
    of the project, its ``leafUuid`` the last message of that conversation in another file
    (a file may hold nothing else). Such a line names the other session, not this one: it is
    kept as it was written, and only a summary of a leaf in the file titles the session."""
    project = tmp_path / "in" / "-Users-u-music"
    first = Lines(session="ba79134d-b6e9-4867-af0c-6941038c9e4b", version="1.0.17")
    leaf = first.text(first.user(None, "write the program"), "msg_1", "done")
    first.raw({"type": "summary", "summary": "Words into sound", "leafUuid": leaf})
    first.write(project)
    second = Lines(session="d3ad4cdc-5657-435d-98fa-0035d53e383d", version="1.0.17")
    second.raw({"type": "summary", "summary": "Words into sound", "leafUuid": leaf})
    asked = second.user(None, "create a notebook", uuid="7905542b-0bdb-48c8-a306-c0876b08ab6c")
    second.text(asked, "msg_2", "created", uuid="32a76d26-9a71-40c3-8505-14cf7fede521")
    second.write(project)
    only = Lines(session="ff71dbed-a4f2-4284-a4fc-fe2fb90de929")
    only.raw({"type": "summary", "summary": "Music from embeddings", "leafUuid": leaf})
    only.write(project)

    code, stdout, _ = run(capsys, "list", project, "--json")
    assert code == 0
    (store,) = json.loads(stdout)["stores"]
    titles = {s["id"]: s["title"] for s in store["sessions"]}
    assert titles == {
        first.session: "Words into sound",
        second.session: "create a notebook",
        only.session: None,
    }

    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    sessions = sessions_in(tmp_path / "out")
    names = {sid: [e.name for e in s.entries if isinstance(e, Info)] for sid, s in sessions.items()}
    assert names == {first.session: ["Words into sound"], second.session: [], only.session: []}
    (kept,) = [e for e in sessions[only.session].entries if isinstance(e, Custom)]
    assert kept.data == {"object": only.objects[0]}
    assert main(["verify", str(tmp_path / "out")]) == 0


@pytest.mark.parametrize("leaf", [None, 3, ["x"]], ids=["null", "a number", "a list"])
def test_the_latest_summary_of_the_file_titles_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], leaf: object
) -> None:
    """A ``summary`` whose ``leafUuid`` is no uuid (null, a number) names no other session,
    so it titles this one as any summary of a leaf in the file does: the latest of them
    titles the session, as its ``info`` entries say, whichever kind came first."""
    lines = Lines(version="1.0.17")
    answer = lines.text(lines.user(None, "hello"), "msg_1", "hi")
    lines.raw({"type": "summary", "summary": "Earlier", "leafUuid": leaf})
    lines.raw({"type": "summary", "summary": "Latest", "leafUuid": answer})
    lines.write(tmp_path / "in" / "-p")
    code, stdout, _ = run(capsys, "list", tmp_path / "in" / "-p", "--json")
    assert code == 0
    (store,) = json.loads(stdout)["stores"]
    assert [s["title"] for s in store["sessions"]] == ["Latest"]
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    (session,) = sessions_in(tmp_path / "out").values()
    assert [e.name for e in session.entries if isinstance(e, Info)] == ["Earlier", "Latest"]


_BOUNDARY = "7b52ac75-04d8-4608-b7e1-07da94f5146c"


def _compacted_keeping(lines: Lines, **segment: str) -> str:
    """Two turns, then a ``/compact`` that keeps the second (CLI 2.1.226: the boundary names
    the kept messages in ``compactMetadata.preservedSegment`` and hangs, through
    ``logicalParentUuid``, from the last of them), its summary, and a prompt after it."""
    old = lines.text(lines.user(None, "old request"), "msg_1", "old answer")
    head = lines.user(old, "keep this request")
    tail = lines.text(head, "msg_2", "kept answer")
    anchor = "5c42641c-3b0b-41b3-97b7-822914a30b8e"
    kept = {"headUuid": head, "anchorUuid": anchor, "tailUuid": tail, **segment}
    metadata = {
        "trigger": "manual",
        "preTokens": 801920,
        "postTokens": 19650,
        "preservedSegment": kept,
        "preservedMessages": {"anchorUuid": anchor, "uuids": [head, tail]},
    }
    boundary = lines.system(
        None,
        "compact_boundary",
        logicalParentUuid=tail,
        uuid="7b52ac75-04d8-4608-b7e1-07da94f5146c",
    )
    lines.objects[-1]["compactMetadata"] = metadata
    summary = "This session is being continued from a previous conversation."
    lines.user(boundary, summary, isCompactSummary=True, uuid=anchor)
    return lines.user(anchor, "and now?")


@pytest.mark.parametrize(
    ("segment", "kept"),
    [
        ({}, ["user:keep this request", "assistant:kept answer"]),
        ({"headUuid": "4645e36d-8657-4b0e-9d4d-82667f3e4409"}, []),
        ({"anchorUuid": _BOUNDARY}, []),
    ],
    ids=["kept after the summary", "head off the path", "kept before the summary"],
)
def test_a_compaction_keeps_the_messages_it_preserved(
    tmp_path: Path, segment: dict[str, str], kept: list[str]
) -> None:
    """The model sees the summary, then the kept messages as they were, then what follows
    (Claude Code relinks the kept head below the summary when it resumes). A head that is
    not above the boundary (here: not in the file) cannot be kept; a segment kept before the
    summary (its anchor the boundary itself) is not mapped."""
    lines = Lines(version="2.1.226")
    _compacted_keeping(lines, **segment)
    lines.write(tmp_path / "in" / "-p")
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    (session,) = sessions_in(tmp_path / "out").values()
    summary = "user:This session is being continued from a previous conversation."
    assert context_texts(session) == [summary, *kept, "user:and now?"]
    assert main(["verify", str(tmp_path / "out")]) == 0


@pytest.mark.parametrize(
    ("prompts", "title"),
    [
        (["<command-message>init</command-message>\n<command-name>/init</command-name>"], "/init"),
        (
            [
                "<local-command-stdout>Set model to \x1b[1mopus\x1b[22m</local-command-stdout>",
                "<command-name>/review</command-name>\n            <command-message>review"
                "</command-message>\n            <command-args>the parser</command-args>",
            ],
            "/review the parser",
        ),
        (
            ['<bash-input> uv run pytest -m "not tui" -v</bash-input>'],
            '! uv run pytest -m "not tui" -v',
        ),
        (["<local-command-stdout>Set model to opus</local-command-stdout>"], None),
    ],
    ids=["command", "command after output", "bash mode", "output only"],
)
def test_a_session_of_commands_is_named_by_its_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prompts: list[str], title: str | None
) -> None:
    """A session whose user never typed a prompt (CLI 2.1.138 ran ``/init`` and stopped;
    2.0.55 wrote a command's output as a user line, 1.0.55 an input of bash mode) is named as
    Claude Code's session list names it: ``/init``, the command with its arguments,
    ``! <command>``; never by the raw markup or a command's output."""
    lines = Lines(version="2.1.138")
    parent = None
    for prompt in prompts:
        parent = lines.user(parent, prompt)
    lines.user(parent, "Please analyze this codebase and create a CLAUDE.md file.", isMeta=True)
    lines.write(tmp_path / "-p")
    code, stdout, _ = run(capsys, "list", tmp_path / "-p", "--json")
    assert code == 0
    (store,) = json.loads(stdout)["stores"]
    assert [s["title"] for s in store["sessions"]] == [title]


@pytest.mark.parametrize(
    ("prompts", "title"),
    [
        (
            ["<div>hello</div> why is this not centred?"],
            "<div>hello</div> why is this not centred?",
        ),
        (["<local-command-stdout>ok</local-command-stdout>", "<T> as a bound?"], "<T> as a bound?"),
        (["<div>a</div>", "center it"], "center it"),
        (["<ide_opened_file>The user opened a.py</ide_opened_file>"], None),
    ],
    ids=["html", "after a command's output", "a plain prompt first", "IDE markup"],
)
def test_a_prompt_that_begins_with_a_tag_of_its_own_still_names_its_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prompts: list[str], title: str | None
) -> None:
    """A typed prompt may begin with a tag (HTML pasted in, a generic ``<T>``): it is not
    Claude Code's markup (lowercase words joined by ``-`` or ``_``) and names a session that
    has no plain prompt nor command, as it did before commands named sessions."""
    lines = Lines(version="2.1.138")
    parent = None
    for prompt in prompts:
        parent = lines.user(parent, prompt)
    lines.write(tmp_path / "-p")
    code, stdout, _ = run(capsys, "list", tmp_path / "-p", "--json")
    assert code == 0
    (store,) = json.loads(stdout)["stores"]
    assert [s["title"] for s in store["sessions"]] == [title]


def _pasted(text: str, paste_id: str = "9f32") -> str:
    """A prompt holding pasted text, as CLI 2.1.278 writes it."""
    return f'\n\n<pasted_content id="{paste_id}">\n{text}\n</pasted_content id="{paste_id}">\n'


@pytest.mark.parametrize(
    ("prompts", "title"),
    [
        ([_pasted("Run: echo hook fixture run")], "Run: echo hook fixture run"),
        ([_pasted("Read the file .env"), "and then?"], "Read the file .env"),
        (["Look at this:" + _pasted("a\nb")], "Look at this:\n\na\nb"),
    ],
    ids=["paste only", "paste before a plain prompt", "text then a paste"],
)
def test_a_pasted_prompt_names_its_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prompts: list[str], title: str
) -> None:
    """CLI 2.1.278 wraps text pasted into a prompt in ``<pasted_content id="…">`` tags, which
    read as its own markup: a session whose prompts were pastes had no title, and one that
    went on with a typed prompt was named by that later prompt. The paste is the user's: the
    session is named by it, unwrapped, as the CLI's own ``last-prompt`` line gives it."""
    lines = Lines(version="2.1.278")
    parent = None
    for prompt in prompts:
        parent = lines.user(parent, prompt, promptSource="typed", origin={"kind": "human"})
        parent = lines.text(parent, f"msg_{parent[-4:]}", "ok")
    lines.write(tmp_path / "-p")
    code, stdout, _ = run(capsys, "list", tmp_path / "-p", "--json")
    assert code == 0
    (store,) = json.loads(stdout)["stores"]
    assert [s["title"] for s in store["sessions"]] == [title]


def test_thinking_tokens_are_the_reasoning_tokens(tmp_path: Path) -> None:
    """CLI 2.1.280 counts a response's thinking in ``usage.output_tokens_details``
    (``thinking_tokens``, on every line of the response): the Open Responses usage gives it as
    ``reasoning_tokens``, as the other formats' usages do; a usage without it has none."""
    lines = Lines(version="2.1.280")
    prompt = lines.user(None, "Run the command: echo run three")
    thinking = {"type": "thinking", "thinking": "", "signature": "EqACCqgB"}
    lines.assistant(prompt, "msg_011CfKAk", thinking)
    lines.objects[-1]["message"]["usage"] = {
        "input_tokens": 2,
        "cache_creation_input_tokens": 9837,
        "cache_read_input_tokens": 38639,
        "output_tokens": 88,
        "output_tokens_details": {"thinking_tokens": 8},
    }
    lines.write(tmp_path / "in" / "-p")
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    (response,) = _responses(tmp_path / "out")
    assert response.usage is not None
    assert response.usage["output_tokens"] == 88
    assert response.usage["output_tokens_details"] == {"reasoning_tokens": 8}
    assert main(["verify", str(tmp_path / "out")]) == 0


_OPENED = "<ide_opened_file>The user opened the file /w/app.py in the IDE.</ide_opened_file>"
_SELECTED = "<ide_selection>The user selected the lines 3 to 4 from /w/a.py:\nx\n</ide_selection>"


@pytest.mark.parametrize(
    ("content", "title"),
    [
        ([_OPENED, "why does this crash?"], "why does this crash?"),
        ([_SELECTED, _OPENED, "rename x"], "rename x"),
        ([_OPENED, _pasted("Traceback (most recent call)")], "Traceback (most recent call)"),
        ([_OPENED], None),
    ],
    ids=["opened file", "selection", "a paste after it", "nothing typed"],
)
def test_an_ide_prompt_is_named_by_what_was_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: list[str], title: str | None
) -> None:
    """Claude Code's IDE integration sends what the editor shows as text blocks of their own
    (``<ide_opened_file>``, ``<ide_selection>``) before the block the user typed, all in one
    user line: read joined, the prompt began with the CLI's markup and named nothing, so an IDE
    session took its title from a later prompt, or had none. Each block is judged alone."""
    lines = Lines()
    prompt = lines.user(None, [{"type": "text", "text": text} for text in content])
    lines.text(prompt, "msg_1", "Looking.")
    lines.write(tmp_path / "-p")
    code, stdout, _ = run(capsys, "list", tmp_path / "-p", "--json")
    assert code == 0
    (store,) = json.loads(stdout)["stores"]
    assert [s["title"] for s in store["sessions"]] == [title]


@pytest.mark.parametrize(
    ("tool", "task", "about"),
    [
        (
            "Agent",
            {"description": "探索 AMS 服务", "agentType": "general-purpose"},
            {"subagent_type": "general-purpose", "description": "探索 AMS 服务"},
        ),
        ("Agent", {"description": "探索 AMS 服务"}, {"description": "探索 AMS 服务"}),
        # an older CLI's Task call (no types yet); both names: subagent_type's
        ("Task", {"description": "探索 AMS 服务"}, {"description": "探索 AMS 服务"}),
        (
            "Agent",
            {"description": "d", "subagent_type": "Explore", "agentType": "general-purpose"},
            {"subagent_type": "Explore", "description": "d"},
        ),
    ],
    ids=["agentType", "no type", "Task, no type", "both types"],
)
def test_an_agent_call_names_its_sub_agent(
    tmp_path: Path, tool: str, task: dict[str, str], about: dict[str, str]
) -> None:
    """A published 2.1.212 session launches background agents with ``Agent`` calls whose
    input names the type ``agentType`` (not ``subagent_type``), and an ``Agent`` call may name
    no type at all: the sub-agent's header still has the type and description the call gave
    (both were left out, as only a ``subagent_type`` made a call a spawning one). So does an
    older CLI's ``Task`` call naming no type; a call naming both types has ``subagent_type``'s."""
    lines = Lines(version="2.1.212")
    prompt = lines.user(None, "fan out subagents to explore ams/wms/pms")
    call = "call_function_bgveum6nm9hd_1"
    block = {
        "id": call,
        "input": {"prompt": "Explore ~/aosp/base/services/core/java/com/android/server/am", **task},
        "name": tool,
        "type": "tool_use",
    }
    spawn = lines.assistant(prompt, "msg_18c9fb4fa0cbf7e6", block)
    launched = {
        "isAsync": True,
        "status": "async_launched",
        "agentId": "a8604b69de692db0c",
        "description": "探索 AMS 服务",
    }
    done = lines.result(spawn, call, "Async agent launched successfully.", toolUseResult=launched)
    lines.text(done, "msg_18c9fb52", "Six agents are working in the background.")
    project = tmp_path / "in" / "-home-cwtrocks"
    lines.write(project)
    agent = Lines(agentId="a8604b69de692db0c", isSidechain=True, version="2.1.212")
    agent.text(agent.user(None, block["input"]["prompt"]), "msg_a1", "Phase 1: Module Map.")
    agent.write(project / lines.session / "subagents", "agent-a8604b69de692db0c")
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    child = sessions_in(tmp_path / "out")[f"{lines.session}.agent-a8604b69de692db0c"]
    assert child.header.spawned_by == call
    got = child.header.unknown["claude-code"]
    assert {k: got[k] for k in ("subagent_type", "description") if k in got} == about


_BG_AGENT, _BG_CALL = "a2c2aebd015d5171e", "call_function_bgveum6nm9hd_5"


def _launch(lines: Lines, launched: dict[str, object]) -> str:
    """A 2.1.212 prompt fanning out one ``Agent`` call (``agentType``) whose result says
    ``launched``; the uuid of the line waiting for it after."""
    prompt = lines.user(None, "fan out subagents to explore the power service")
    task = {"prompt": "Explore power", "description": "探索 Power 服务", "agentType": "general"}
    block = {"id": _BG_CALL, "input": task, "name": "Agent", "type": "tool_use"}
    spawn = lines.assistant(prompt, "msg_18c9fb4fa0cbf7e6", block)
    done = lines.result(
        spawn, _BG_CALL, "Async agent launched successfully.", toolUseResult=launched
    )
    return lines.text(done, "msg_2", "Waiting for the agent.")


def _joined(
    tmp_path: Path, lines: Lines, agent: Lines
) -> tuple[dict[str, list[tuple[str | None, str]]], list[tuple[str | None, str]]]:
    """Write the session and its background agent, convert them: the entries listing
    parents (by line uuid, their parents), and what the agent's joining entry lists."""
    project = tmp_path / "in" / "-home-cwtrocks"
    lines.write(project)
    agent.write(project / lines.session / "subagents", f"agent-{_BG_AGENT}")
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    sessions = sessions_in(tmp_path / "out")
    child, main_session = sessions[f"{lines.session}.agent-{_BG_AGENT}"], sessions[lines.session]
    joined = {
        e.unknown["claude-code"]["uuid"]: [(p.session, p.entry) for p in e.parents]
        for e in main_session.entries
        if e.parents
    }
    return joined, [(child.header.id, child.resume_leaf())]


def _notice(agent: str, call: str, status: str, result: str) -> str:
    return (
        f"<task-notification>\n<task-id>{agent}</task-id>\n<tool-use-id>{call}</tool-use-id>\n"
        f'<status>{status}</status>\n<summary>Agent "探索 Power 服务" {status}</summary>\n'
        f"<result>\n{result}\n</result>\n</task-notification>"
    )


@pytest.mark.parametrize("queued", [False, True], ids=["user line", "queued attachment"])
def test_a_background_agent_joins_its_notification(tmp_path: Path, queued: bool) -> None:
    """A published 2.1.212 session launches agents in the background: the ``Agent`` call's
    result only says the agent started (``toolUseResult.isAsync``), and what it did comes back
    later as a user line holding a ``<task-notification>`` (one each time it stops; it may be
    resumed after one). The launch's output listed the agent's last entry in ``parents``, an
    entry written after it whose work it does not hold; now the notification written after the
    agent's last line does, and no other entry; also when it arrives during a turn, queued as
    an attachment (``queued_command``)."""
    agent_id, call = _BG_AGENT, _BG_CALL
    lines = Lines(version="2.1.212")
    launched = {"isAsync": True, "status": "async_launched", "agentId": agent_id}
    waiting = _launch(lines, launched)
    early = lines.user(waiting, _notice(agent_id, call, "killed", "读取更多关键字段"))
    resumed = lines.text(early, "msg_3", "Resumed it.")
    lines.text(resumed, "msg_3b", "Still waiting.")
    notice = _notice(agent_id, "call_1d9d6afd", "completed", "Done.")
    if queued:
        attachment = {
            "type": "queued_command",
            "prompt": notice,
            "commandMode": "task-notification",
        }
        later = lines._entry("attachment", resumed, attachment=attachment)
    else:
        later = lines.user(resumed, notice)
    lines.text(later, "msg_4", "The agent finished.")
    agent = Lines(agentId=agent_id, isSidechain=True, version="2.1.212")
    agent.n = 5  # its lines are written between the two notifications
    agent.text(agent.user(None, "Explore power"), "msg_a1", "Done.")
    joined, child = _joined(tmp_path, lines, agent)
    assert joined == {later: child}
    assert main(["verify", str(tmp_path / "out")]) == 0


@pytest.mark.parametrize("named", [True, False], ids=["call in the session", "call elsewhere"])
def test_an_interrupted_agent_is_linked_by_its_meta(tmp_path: Path, named: bool) -> None:
    """A published 2.1.167 sub-agent transcript ends ``[Request interrupted by user]``: its
    ``Agent`` call was interrupted, so no result (nor, since 2.1.1xx, any progress line) names
    the agent, and it hung unlinked from its session's end. Its ``agent-<id>.meta.json`` names
    the call (``toolUseId``): the sub-agent is that call's, when the call is in the family."""
    agent_id, call = "a651d9ec80933f498", "tooluse_ZHSwbwGYD6xW0bdCSNzHIW"
    lines = Lines(version="2.1.167")
    prompt = lines.user(None, "深度探索代码库")
    task = {"description": "深度探索代码库", "prompt": "Perform a comprehensive analysis"}
    block = {"id": call, "input": {**task, "subagent_type": "Explore"}, "name": "Agent"}
    spawn = lines.assistant(prompt, "fd0f7349-b03b-4747-a61c", {**block, "type": "tool_use"})
    interrupted = "[Request interrupted by user for tool use]"
    lines.result(spawn, call, interrupted, toolUseResult=f"Error: {interrupted}", is_error=True)
    project = tmp_path / "in" / "-home-cwtrocks-OpenCoreAnalysisKit"
    lines.write(project)
    side = project / lines.session / "subagents"
    agent = Lines(agentId=agent_id, isSidechain=True, version="2.1.167")
    asked = agent.user(None, task["prompt"])
    agent.user(agent.text(asked, "44153f7b", "Let me start."), "[Request interrupted by user]")
    agent.write(side, f"agent-{agent_id}")
    meta = {"agentType": "Explore", "description": "深度探索代码库"}
    meta["toolUseId"] = call if named else "tooluse_NotInThisSession"
    (side / f"agent-{agent_id}.meta.json").write_text(json.dumps(meta, ensure_ascii=False))
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    sessions = sessions_in(tmp_path / "out")
    child, holder = sessions[f"{lines.session}.agent-{agent_id}"], sessions[lines.session]
    assert child.header.parent_session == holder.header.id
    assert child.header.spawned_by == (call if named else None)
    links = [e for e in holder.entries if e.type == "link"]
    assert [(e.session, e.call_id) for e in links] == [(child.header.id, call if named else None)]
    assert main(["verify", str(tmp_path / "out")]) == 0


@pytest.mark.parametrize(
    ("case", "joins"),
    [("at its last line", "first"), ("untimed notice", "second"), ("untimed agent", "first")],
)
def test_a_background_agent_joins_the_first_timed_notification_at_or_after_it(
    tmp_path: Path, case: str, joins: str
) -> None:
    """Of the notifications written after a background agent's last line, the first holds its
    work (one written at that line's very second too), not a later one; one without a time is
    not known to come after it; an agent whose lines have no time joins its first."""
    agent_id, call = _BG_AGENT, _BG_CALL
    lines = Lines(version="2.1.212")
    launched = {"isAsync": True, "status": "async_launched", "agentId": agent_id}
    waiting = _launch(lines, launched)  # at second 4
    first = lines.user(waiting, _notice(agent_id, call, "completed", "Done."))  # second 5
    resumed = lines.text(first, "msg_3", "It is done; asking it again.")
    second = lines.user(resumed, _notice(agent_id, call, "completed", "Done again."))
    lines.text(second, "msg_4", "The agent finished.")
    if case == "untimed notice":
        del lines.objects[4]["timestamp"]
    agent = Lines(agentId=agent_id, isSidechain=True, version="2.1.212")
    agent.n = 3  # its last line at second 5, the first notification's
    agent.text(agent.user(None, "Explore power"), "msg_a1", "Done.")
    if case == "untimed agent":
        for obj in agent.objects:
            del obj["timestamp"]
    joined, child = _joined(tmp_path, lines, agent)
    notice = first if joins == "first" else second
    assert joined == {notice: child}


@pytest.mark.parametrize(
    ("case", "joins"),
    [
        ("isAsync only", "first"),
        ("status only", "first"),
        ("numeric time", "second"),
        ("sidechain line", "second"),
        ("sidechain attachment", "second"),
    ],
)
def test_what_marks_a_background_agent_and_its_notification(
    tmp_path: Path, case: str, joins: str
) -> None:
    """The launch's result marks the agent as run in the background by ``isAsync`` or by
    ``status: async_launched`` alone; a notification whose time is no string (a damaged line)
    is not known to come after the agent, and one on a sidechain line (a sub-agent's, as older
    CLIs wrote them into the session's file) is not the session's: the next one joins it."""
    agent_id, call = _BG_AGENT, _BG_CALL
    lines = Lines(version="2.1.212")
    launched: dict[str, object] = {"agentId": agent_id}
    if case != "status only":
        launched["isAsync"] = True
    if case != "isAsync only":
        launched["status"] = "async_launched"
    waiting = _launch(lines, launched)
    notice = _notice(agent_id, call, "completed", "Done.")
    if case == "sidechain attachment":
        queued = {"type": "queued_command", "prompt": notice, "commandMode": "task-notification"}
        first = lines._entry("attachment", waiting, attachment=queued)
    else:
        first = lines.user(waiting, notice)
    if case == "numeric time":
        lines.objects[-1]["timestamp"] = 1772359205
    if case.startswith("sidechain"):
        lines.objects[-1]["isSidechain"] = True
    resumed = lines.text(first, "msg_3", "Asking it again.")
    second = lines.user(resumed, _notice(agent_id, call, "completed", "Done again."))
    lines.text(second, "msg_4", "The agent finished.")
    agent = Lines(agentId=agent_id, isSidechain=True, version="2.1.212")
    agent.n = 2  # its last line at second 4, before the first notification
    agent.text(agent.user(None, "Explore power"), "msg_a1", "Done.")
    joined, child = _joined(tmp_path, lines, agent)
    notice_line = first if joins == "first" else second
    assert joined == {notice_line: child}


def test_a_meta_naming_a_call_another_agent_answered_links_no_call(tmp_path: Path) -> None:
    """A sub-agent's ``.meta.json`` names a call whose result names another sub-agent (the
    call's own): the call stays that agent's, and this one hangs from its session unlinked to
    any call, as it did before metas were read."""
    call = "tooluse_ZHSwbwGYD6xW0bdCSNzHIW"
    lines = Lines(version="2.1.167")
    prompt = lines.user(None, "深度探索代码库")
    task = {"description": "深度探索代码库", "prompt": "Explore", "subagent_type": "Explore"}
    block = {"id": call, "input": task, "name": "Agent", "type": "tool_use"}
    spawn = lines.assistant(prompt, "fd0f7349", block)
    answered = {"agentId": "a0000000000000001", "status": "completed"}
    lines.text(lines.result(spawn, call, "Found it.", toolUseResult=answered), "m2", "Done.")
    project = tmp_path / "in" / "-home-cwtrocks-OpenCoreAnalysisKit"
    lines.write(project)
    side = project / lines.session / "subagents"
    for agent_id in ("a0000000000000001", "a0000000000000002"):
        agent = Lines(agentId=agent_id, isSidechain=True, version="2.1.167")
        agent.text(agent.user(None, "Explore"), "44153f7b", "Let me start.")
        agent.write(side, f"agent-{agent_id}")
    meta = {"agentType": "Explore", "description": "深度探索代码库", "toolUseId": call}
    (side / "agent-a0000000000000002.meta.json").write_text(json.dumps(meta, ensure_ascii=False))
    assert convert([tmp_path / "in"], tmp_path / "out") == 0
    sessions = sessions_in(tmp_path / "out")
    own, other = (sessions[f"{lines.session}.agent-a000000000000000{n}"] for n in (1, 2))
    assert own.header.spawned_by == call
    assert other.header.spawned_by is None
    assert other.header.parent_session == sessions[lines.session].header.id
