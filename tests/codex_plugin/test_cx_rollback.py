"""Rollbacks on the live path, each checked against the oracle (FORMAT-NOTES §8) and for the
shape the mapping gives them (docs/formats/codex.md §4): where the rollback's entry hangs,
and what it counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cx_helpers import context_items, convert, reports_in, sessions_in, write_rollout
from cx_oracle import rebuild
from cx_synth import Rollout, _msg

from asf_core.model import Compaction, Custom
from asf_core.reader import SessionFile

THREAD = "0199aaaa-0000-7000-8000-0000000000f1"
ROLLOUT = f"sessions/2026/03/01/rollout-2026-03-01T10-00-00-{THREAD}.jsonl"


def _converted(root: Path, lines: list[Any]) -> tuple[SessionFile, dict[str, int]]:
    source = write_rollout(root / ".codex" / ROLLOUT, lines)
    assert convert([root / ".codex"], root / "out") == 0
    (session,) = sessions_in(root / "out").values()
    assert context_items(session) == rebuild(source)
    (report,) = reports_in(root / "out")
    return session, report["counts"]


def test_a_rollback_with_no_turn_to_drop_changes_nothing(tmp_path: Path) -> None:
    """Only Codex's own context messages so far: the rollback drops nothing, so its entry
    is an event kept below the last item, no fold, and the report counts no rollback."""
    rollout = Rollout(THREAD)
    rollout.meta(THREAD)
    rollout.item(_msg("developer", "<permissions instructions>sandboxed"))
    rollout.item(_msg("user", "<environment_context>cwd</environment_context>"))
    rollout.rollback(1)
    rollout.item(_msg("user", "now the real prompt"))
    session, counts = _converted(tmp_path, rollout.lines)
    assert counts["rollbacks"] == 0
    assert not [e for e in session.entries if isinstance(e, Compaction)]
    by_line = {e.unknown["codex"]["line"]: e for e in session.entries}
    assert isinstance(by_line[4], Custom)
    assert by_line[4].parent == by_line[3].id
    assert by_line[5].parent == by_line[4].id


def test_a_rollback_of_no_turns_after_a_compaction_changes_nothing(tmp_path: Path) -> None:
    """``num_turns`` 0, -1 (no ``u32``: Codex's loader skips the line) or not a number, after
    a remote compaction: no rollback, the context stays the replacement history and what
    follows it (rebuilding from the top would bring back the turns compacted away)."""
    rollout = Rollout(THREAD)
    rollout.meta(THREAD)
    rollout.turn(["say", "call"], True)
    rollout.turn(["say"], False)
    rollout.remote(1, False)
    for turns in (0, -1, "2", 1.0, True):
        rollout.event("thread_rolled_back", num_turns=turns)
    session, counts = _converted(tmp_path, rollout.lines)
    assert counts["rollbacks"] == 0
    assert len([e for e in session.entries if isinstance(e, Compaction)]) == 1
    items = context_items(session)
    assert [i.get("role") for i in items] == ["assistant", "developer", "user", None]
    assert items[-1]["type"] == "compaction"


def test_a_rollback_past_an_empty_compaction_keeps_renamed_call_ids(tmp_path: Path) -> None:
    """A compaction to nothing, then a rollback reaching back past it: Codex's resume rebuilds
    the turns before it, which the path holds no more, so they come back as a fold (made
    from the lines read again), a repeated call id there renamed as its entries have it."""
    rollout = Rollout(THREAD)
    rollout.meta(THREAD)
    call = {"type": "function_call", "name": "x", "arguments": "{}", "call_id": "c"}
    output = {"type": "function_call_output", "call_id": "c", "output": "ok"}
    for item in (_msg("user", "one"), call, output, call, output, _msg("user", "two")):
        rollout.item(item)
    rollout.put("compacted", {"message": "", "replacement_history": []})
    rollout.item(_msg("user", "three"))
    rollout.rollback(2)
    source = write_rollout(tmp_path / ".codex" / ROLLOUT, rollout.lines)
    assert convert([tmp_path / ".codex"], tmp_path / "out") == 0
    (session,) = sessions_in(tmp_path / "out").values()
    items = context_items(session)
    assert [i.get("call_id") for i in items] == [None, "c", "c", "c-2", "c-2"]
    native = [{**i, "call_id": "c"} if "call_id" in i else i for i in items]
    assert native == rebuild(source)
    assert isinstance(session.entries[-1], Compaction)


def test_a_call_left_open_in_a_rollback_fold_is_answered_aborted(tmp_path: Path) -> None:
    """A rollback past a compaction to nothing brings back a call that never got its output:
    Codex answers it ``aborted`` before sending (notes §8 step 4), in the fold as anywhere;
    one answered after the rollback is not. The output made for a call with an item id
    takes an id derived from it there too."""
    rollout = Rollout(THREAD)
    rollout.meta(THREAD)
    open_call = {"type": "function_call", "name": "x", "arguments": "{}", "call_id": "open"}
    late = {**open_call, "call_id": "late"}
    open_call["id"] = "fc_open"
    for item in (_msg("user", "one"), open_call, late, _msg("user", "two")):
        rollout.item(item)
    rollout.put("compacted", {"message": "", "replacement_history": []})
    rollout.item(_msg("user", "three"))
    rollout.rollback(2)
    rollout.item({"type": "function_call_output", "call_id": "late", "output": "done"})
    session, counts = _converted(tmp_path, rollout.lines)
    assert counts["aborted_calls"] == 1
    assert counts["rollbacks"] == 1
    outputs = [(i["call_id"], i["output"]) for i in context_items(session) if "output" in i]
    assert outputs == [("open", "aborted"), ("late", "done")]
    made = next(i for i in context_items(session) if i.get("output") == "aborted")
    assert made["id"].startswith("fco_")


def test_a_rollback_after_a_legacy_compaction_without_a_summary(tmp_path: Path) -> None:
    """A legacy compaction whose ``message`` is missing or no string keeps the user turns
    and ``(no summary available)``; a rollback after it drops the turn after it from that,
    not from the turns the compaction replaced."""
    for n, payload in enumerate(({}, {"message": None}, {"message": 7})):
        rollout = Rollout(THREAD)
        rollout.meta(THREAD)
        rollout.turn(["say", "call"], True)
        rollout.turn(["say"], False)
        rollout.put("compacted", payload)
        rollout.turn(["reason", "say"], False)
        rollout.rollback(1)
        _, counts = _converted(tmp_path / str(n), rollout.lines)
        assert counts["rollbacks"] == 1


def test_a_rollback_takes_only_the_context_right_above_the_turn(tmp_path: Path) -> None:
    """The context messages right above the first dropped turn go with it, however many
    (one, three), and nothing above them: the answer before stays."""
    for n, context in enumerate((1, 3)):
        rollout = Rollout(THREAD)
        rollout.meta(THREAD)
        rollout.turn(["say"], False)
        for _ in range(context):
            rollout.item(_msg("user", "<environment_context>cwd</environment_context>"))
        rollout.turn(["say"], False)
        rollout.rollback(1)
        session, _ = _converted(tmp_path / str(n), rollout.lines)
        roles = [i["role"] for i in context_items(session)]
        assert roles == ["user", "assistant"]


CODEX_WRITES = (
    "<environment_context>cwd</environment_context>",
    "<user_instructions>be terse</user_instructions>",
    "# AGENTS.md instructions for /home/u/proj",
    "<INSTRUCTIONS>x</INSTRUCTIONS>",
    "<permissions instructions>sandboxed",
    "<user_shell_command>ls</user_shell_command>",
    "<turn_aborted>interrupted</turn_aborted>",
    "<skill>review</skill>",
    "<subagent_notification>done</subagent_notification>",
    '<hook_prompt hook_run_id="stop:2:/work/.codex/hooks.json">Run the tests.</hook_prompt>',
    "<recommended_plugins>- Notes</recommended_plugins>",
    "<external_ticket>PROJ-12: flaky login test</external_ticket>",
    '<codex_internal_context source="goal">keep going</codex_internal_context>',
    "<subagents>/root/review: running</subagents>",
    "<goal_context>\nThe thread goal is still active: ship the parser.\n</goal_context>",
    "<agent_message_board_notification>\nNew post 01a0c3e1-0000-7000-8000-000000000001 in"
    " discussion 01a0c3e1-0000-7000-8000-000000000002. Use collaboration.read_post or"
    " collaboration.read_thread to read it.\n</agent_message_board_notification>",
    "Warning: apply_patch was requested via exec_command. Use the apply_patch tool instead of"
    " exec_command.",
    "Warning: The maximum number of unified exec processes you can keep open is 64.",
    "Warning: Your account was flagged for potentially high-risk cyber activity.",
)


def test_user_messages_codex_writes_are_no_turns(tmp_path: Path) -> None:
    """A user message Codex writes itself as context is no turn a rollback drops: rolling
    back one turn after it drops the typed turn before it, and it with that turn."""
    for n, text in enumerate(CODEX_WRITES):
        rollout = Rollout(THREAD)
        rollout.meta(THREAD)
        rollout.item(_msg("user", "kept prompt"))
        rollout.turn(["say"], False)
        rollout.item(_msg("user", f"\n  {text}"))
        rollout.rollback(1)
        session, _ = _converted(tmp_path / str(n), rollout.lines)
        texts = [i["content"][0]["text"] for i in context_items(session)]
        assert texts == ["kept prompt"]


def test_context_in_any_part_makes_a_message_no_turn(tmp_path: Path) -> None:
    """Codex calls a user message context when any one of its parts is: a message whose
    first part is the plugin list (CLI 0.151) and whose second is the environment is no
    turn, so rolling back one turn after it drops the typed turn before it (and the oracle
    agrees, as ``_converted`` checks)."""
    rollout = Rollout(THREAD)
    rollout.meta(THREAD)
    rollout.item(_msg("user", "kept prompt"))
    rollout.turn(["say"], False)
    both = _msg("user", "<recommended_plugins>- Notes</recommended_plugins>")
    both["content"].append({"type": "input_text", "text": "<environment_context>cwd"})
    rollout.item(both)
    rollout.rollback(1)
    session, _ = _converted(tmp_path, rollout.lines)
    texts = [i["content"][0]["text"] for i in context_items(session)]
    assert texts == ["kept prompt"]


def _legacy_context(root: Path, prompts: list[str]) -> list[str]:
    rollout = Rollout(THREAD)
    rollout.meta(THREAD)
    for prompt in prompts:
        rollout.item(_msg("user", prompt))
        rollout.item(_msg("assistant", "ok"))
    rollout.put("compacted", {"message": "the summary"})
    session, counts = _converted(root, rollout.lines)
    assert counts["compactions"] == 1
    return [i["content"][0]["text"] for i in context_items(session)]


def test_a_legacy_compaction_keeps_the_newest_turns_that_fit(tmp_path: Path) -> None:
    """A compaction without a replacement history keeps the newest user turns while they fit
    in 20,000 tokens of four bytes (80,000 bytes), then its summary: two that fill it exactly
    leave out the one before; one that does not fit is cut to what is left, on a whole
    character (``é`` is two bytes)."""
    full = ["first", "b" * 40_000, "c" * 40_000]
    assert _legacy_context(tmp_path / "full", full) == [*full[1:], "the summary"]
    over = ["a" * 39_999 + "é" + "a" * 100, "c" * 40_000]
    assert _legacy_context(tmp_path / "over", over) == ["a" * 39_999, over[1], "the summary"]
    small = ["one", "two"]
    assert _legacy_context(tmp_path / "small", small) == [*small, "the summary"]


def test_only_user_and_developer_messages_are_context(tmp_path: Path) -> None:
    """An answer that happens to open like Codex's context (the model quoting it) is no
    context: right above a dropped turn, it stays."""
    rollout = Rollout(THREAD)
    rollout.meta(THREAD)
    rollout.item(_msg("user", "what does Codex send first?"))
    rollout.item(_msg("assistant", "<environment_context> comes first"))
    rollout.item(_msg("user", "thanks"))
    rollout.rollback(1)
    session, _ = _converted(tmp_path, rollout.lines)
    assert [i["role"] for i in context_items(session)] == ["user", "assistant"]


def test_messages_without_a_content_list(tmp_path: Path) -> None:
    """A user message whose ``content`` is missing, null or a number has no text: a turn
    (nothing Codex writes opens so); one whose content is a bare string is read by that
    string. A rollback weighs each so, as the oracle does."""
    odd: list[dict[str, Any]] = [
        {"type": "message", "role": "user"},
        {"type": "message", "role": "user", "content": None},
        {"type": "message", "role": "user", "content": 5},
        {"type": "message", "role": "user", "content": "<environment_context>x"},
        {"type": "message", "role": "user", "content": [None, {"text": 3}, {"text": "a"}]},
    ]
    for n, message in enumerate(odd):
        rollout = Rollout(THREAD)
        rollout.meta(THREAD)
        rollout.item(_msg("user", "first"))
        rollout.item(message)
        rollout.rollback(1)
        session, _ = _converted(tmp_path / str(n), rollout.lines)
        left = context_items(session)  # the odd message dropped; context with the turn above
        assert left == ([] if n == 3 else [_msg("user", "first")]), n


def test_rolling_back_the_first_turn_leaves_nothing(tmp_path: Path) -> None:
    """The first turn dropped, with Codex's context written after it: nothing is left, a
    new root (the context after the turn goes with it)."""
    rollout = Rollout(THREAD)
    rollout.meta(THREAD)
    rollout.item(_msg("user", "the only prompt"))
    rollout.item(_msg("user", "<environment_context>cwd</environment_context>"))
    rollout.rollback(1)
    session, counts = _converted(tmp_path, rollout.lines)
    assert context_items(session) == []
    assert counts["rollbacks"] == 1


def test_a_rollback_over_a_compaction_of_as_many_items(tmp_path: Path) -> None:
    """A compaction inside the dropped turn does not count (Codex rebuilds from before it):
    the history rebuilt is the first turn's two items, not the compaction's two, although
    both hold as many."""
    rollout = Rollout(THREAD)
    rollout.meta(THREAD)
    rollout.item(_msg("user", "one"))
    rollout.item(_msg("assistant", "done one"))
    rollout.item(_msg("user", "two"))
    history = [_msg("user", "two"), {"type": "compaction", "encrypted_content": "e"}]
    rollout.put("compacted", {"message": "", "replacement_history": history})
    rollout.rollback(1)
    session, _ = _converted(tmp_path, rollout.lines)
    assert context_items(session) == [_msg("user", "one"), _msg("assistant", "done one")]


def test_rolling_back_every_turn_keeps_the_context_above_the_first(tmp_path: Path) -> None:
    """Editing the first prompt (the TUI's backtrack) rolls back every turn: Codex cuts at
    the first turn and keeps what came before it, the permissions and environment it wrote
    when the thread started (``trim_pre_turn_context_updates`` never walks above the first
    turn); rolling back more turns than there are does the same."""
    for n, turns in enumerate((2, 5)):
        rollout = Rollout(THREAD)
        rollout.meta(THREAD)
        rollout.turn(["reason", "say"], True)
        rollout.turn(["say"], True)
        rollout.rollback(turns)
        session, _ = _converted(tmp_path / str(n), rollout.lines)
        texts = [i["content"][0]["text"] for i in context_items(session)]
        assert texts == [
            "<permissions instructions>sandboxed",
            "<environment_context>cwd</environment_context>",
        ]


def test_a_task_written_as_an_assistant_message_is_a_turn(tmp_path: Path) -> None:
    """Multi-agent runs of about CLI 0.13x hand a sub-agent its task as an assistant
    message whose one text is the JSON of the parent's message (author, recipient,
    content, trigger_turn). Codex counts it as the start of a turn
    (``is_inter_agent_instruction_content``): rolling back one turn drops the task and its
    answer, the context above it stays; a legacy compaction keeps no such message, as it
    keeps only the user's. An answer merely shaped like JSON is no turn."""
    task = {"author": "/root", "recipient": "/root/review_fix", "other_recipients": []}
    task |= {"content": "Review the local unstaged diff.", "trigger_turn": True}
    assigned = _msg("assistant", json.dumps(task))
    assigned["content"][0]["type"] = "output_text"
    plain = _msg("assistant", '{"author": "me", "content": "not a task"}')
    for n, end in enumerate(("rollback", "legacy")):
        rollout = Rollout(THREAD)
        rollout.meta(THREAD)
        rollout.item(_msg("developer", "<permissions instructions>sandboxed"))
        rollout.item(_msg("user", "# AGENTS.md instructions for /tmp/w\n\n<INSTRUCTIONS>x"))
        for item in (assigned, _msg("assistant", "No actionable findings."), plain):
            rollout.item(item)
        rollout.rollback(1) if end == "rollback" else rollout.legacy()
        session, _ = _converted(tmp_path / str(n), rollout.lines)
        texts = [i["content"][0]["text"] for i in context_items(session)]
        if end == "rollback":
            assert texts == [
                "<permissions instructions>sandboxed",
                rollout.lines[2]["payload"]["content"][0]["text"],
            ]
        else:
            assert texts == [rollout.lines[-1]["payload"]["message"]]


def test_a_compactions_summary_is_a_turn_to_a_rollback(tmp_path: Path) -> None:
    """A compaction without a replacement history (older CLIs) leaves the user's prompts
    and its summary as a user message. Codex's rollback tells turns by
    ``is_user_turn_boundary``, which knows no summary: it is a turn there, so rolling back
    the turn after it and one more drops the summary and keeps the prompts before it (the
    converter took the summary for no turn and dropped the last prompt too); a compaction
    still carries over no summary among the prompts it keeps."""
    for end in ("rollback", "legacy"):
        rollout = Rollout(THREAD)
        rollout.meta(THREAD, cli_version="0.41.0")
        rollout.turn(["say"], False)
        rollout.turn(["say"], False)
        rollout.put("compacted", {"message": SUMMARY})
        rollout.turn(["say"], False)
        prompts = [m["content"][0]["text"] for m in rollout.said if m["role"] == "user"]
        rollout.rollback(2) if end == "rollback" else rollout.legacy()
        session, _ = _converted(tmp_path / end, rollout.lines)
        texts = [i["content"][0]["text"] for i in context_items(session)]
        if end == "rollback":
            assert texts == prompts[:2]
        else:  # the first summary is not carried over, the second closes the history
            assert texts == [*prompts, rollout.lines[-1]["payload"]["message"]]


SUMMARY = "Another language model started to solve this problem.\nWe fixed the parser."


def test_a_rollback_takes_only_the_settings_codex_writes_before_a_turn(tmp_path: Path) -> None:
    """Codex's rollback takes with a dropped turn the developer messages right above it that
    hold a setting it writes (permissions, collaboration mode, a model switch, ...; a bundle
    with one such part among others too), in any case, and stops at any other developer
    message (apps instructions, a client's developer text): that one stays in context."""
    apps = _msg("developer", "<apps_instructions>\nConnectors: calendar\n</apps_instructions>")
    bundle = _msg("developer", "<PERMISSIONS INSTRUCTIONS>sandboxed")
    bundle["content"].append({"type": "input_text", "text": "Be brief."})
    mode = _msg("developer", "<collaboration_mode>plan</collaboration_mode>")
    rollout = Rollout(THREAD)
    rollout.meta(THREAD)
    rollout.turn(["say"], False)
    for item in (apps, bundle, mode):
        rollout.item(item)
    rollout.turn(["say"], False)
    rollout.rollback(1)
    session, _ = _converted(tmp_path, rollout.lines)
    assert context_items(session)[-1] == apps
    assert [i["role"] for i in context_items(session)] == ["user", "assistant", "developer"]


SETTINGS = (
    "<permissions instructions>sandboxed",
    "<model_switch>gpt-5.2</model_switch>",
    "<collaboration_mode>plan</collaboration_mode>",
    "<realtime_conversation>on</realtime_conversation>",
    "<skills_instructions>\n## Skills</skills_instructions>",
    "<personality_spec>terse</personality_spec>",
    "<token_budget>200000</token_budget>",
)


def test_each_setting_codex_writes_goes_with_the_turn_below_it(tmp_path: Path) -> None:
    """Each setting Codex writes before a turn (``CONTEXTUAL_DEVELOPER_PREFIXES``), as it
    writes it, upper case, or after blank lines (Codex trims the start and lowers the case
    before it compares): the developer message holding it right above the dropped turn goes
    with it, and the apps instructions above that stay."""
    apps = _msg("developer", "<apps_instructions>\nConnectors: calendar\n</apps_instructions>")
    forms = (str, str.upper, lambda text: "\n\n  " + text)
    for n, (text, form) in enumerate((t, f) for t in SETTINGS for f in forms):
        rollout = Rollout(THREAD)
        rollout.meta(THREAD)
        rollout.turn(["say"], False)
        rollout.item(apps)
        rollout.item(_msg("developer", form(text)))
        rollout.turn(["say"], False)
        rollout.rollback(1)
        session, _ = _converted(tmp_path / str(n), rollout.lines)
        assert context_items(session)[-1] == apps, (text, form)


def _told(text: str, kind: str = "output_text", role: str = "assistant") -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def test_only_the_json_of_an_agents_message_makes_an_assistant_message_a_turn() -> None:
    """An assistant message is a turn when its one text part is the JSON of Codex's
    ``InterAgentCommunication``: an author and recipients that are agent paths (``/root``
    and below), a string content and a boolean ``trigger_turn``; ``other_recipients`` may be
    left out (Codex defaults it to none). Any field off, a second part, or another role,
    and it is an answer like any other."""
    from codex_plugin.convert.history import is_turn

    task: dict[str, Any] = {"author": "/root", "recipient": "/root/worker", "content": "Go."}
    task |= {"trigger_turn": False, "other_recipients": ["/root/other"]}
    assert is_turn(_told(json.dumps(task)))
    assert is_turn(_told("\n " + json.dumps(task), "input_text"))
    assert is_turn(_told(json.dumps({k: v for k, v in task.items() if k != "other_recipients"})))
    for key, value in (
        ("author", "root"),
        ("author", "/rooted"),
        ("recipient", "worker"),
        ("content", 5),
        ("trigger_turn", "yes"),
        ("other_recipients", ["other"]),
        ("other_recipients", "/root/other"),
    ):
        assert not is_turn(_told(json.dumps(task | {key: value}))), key
    two = _told(json.dumps(task))
    two["content"].append({"type": "output_text", "text": "and more"})
    assert not is_turn(two)
    assert not is_turn(_told(json.dumps(task), "refusal"))
    assert not is_turn(_told(json.dumps(task), role="developer"))
