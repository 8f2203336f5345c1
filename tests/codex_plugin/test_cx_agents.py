"""Multi-agent rollouts of newer CLIs: the items agents send each other, and the other item
kinds Codex sends that the notes' list lacks, in the context as Codex's resume rebuilds it
(codex-rs ``context_manager/history.rs`` ``is_api_message``, ``is_user_turn_boundary``).

The lines have the shapes of paginated rollouts (``ordinal``, an
``inter_agent_communication_metadata`` line before each delivered ``agent_message``, the
``internal_chat_message_metadata_passthrough`` on items) as CLI 0.150+ writes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cx_helpers import (
    context_items,
    convert,
    rebuilt_lines,
    reports_in,
    sessions_in,
    source_lines,
    write_rollout,
)
from cx_oracle import rebuild

from asf_core.model import Custom
from asf_core.reader import SessionFile

PARENT = "01a0714e-5a1c-7d40-9c1e-3b2f4e6a7c01"
CHILD = "01a07151-0b7e-7f21-8a44-6c0d2e9f1b02"
ROLLOUT = "sessions/2026/09/05/rollout-2026-09-05T11-25-30-{}.jsonl"
TURN = "01a07151-0c00-7000-8000-00000000aa01"

JSON = dict[str, Any]


def _line(n: int, kind: str, payload: JSON) -> JSON:
    return {
        "timestamp": f"2026-09-05T11:25:{30 + n:02d}.000Z",
        "ordinal": n,
        "type": kind,
        "payload": payload,
    }


def _meta(thread: str) -> JSON:
    meta: JSON = {
        "session_id": PARENT,
        "id": thread,
        "timestamp": "2026-09-05T11:25:30.000Z",
        "cwd": "/home/user/proj",
        "originator": "codex-tui",
        "cli_version": "0.152.1",
        "source": "cli",
        "thread_source": "user",
        "model_provider": "openai",
        "history_mode": "paginated",
    }
    if thread == CHILD:
        spawn = {"parent_thread_id": PARENT, "depth": 1, "agent_path": "/root/review"}
        meta |= {
            "parent_thread_id": PARENT,
            "source": {"subagent": {"thread_spawn": spawn}},
            "thread_source": "subagent",
            "agent_path": "/root/review",
            "multi_agent_version": "v2",
        }
    return meta


def _pass(turn: str) -> JSON:
    return {"turn_id": turn}


TASK: JSON = {
    "type": "agent_message",
    "author": "/root",
    "recipient": "/root/review",
    "content": [
        {
            "type": "input_text",
            "text": "Message Type: NEW_TASK\nTask name: /root/review\nSender: /root\nPayload:\n",
        },
        {"type": "input_text", "text": "Review the diff in src/ and report findings."},
    ],
    "internal_chat_message_metadata_passthrough": _pass(TURN),
}
ANSWER: JSON = {
    "type": "agent_message",
    "author": "/root/review",
    "recipient": "/root",
    "content": [
        {
            "type": "input_text",
            "text": "Message Type: FINAL_ANSWER\nTask name: /root\nSender: /root/review\n"
            "Payload:\nNo findings.",
        }
    ],
}


def _msg(role: str, text: str) -> JSON:
    kind = "output_text" if role == "assistant" else "input_text"
    item: JSON = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
    if role == "assistant":
        item["phase"] = "final_answer"
    return item


def _answered(*, trigger_turn: bool) -> list[JSON]:
    """The parent's rollout to the sub-agent's answer (lines 0 to 4): a prompt, the spawn,
    the answer's metadata and the answer."""
    return [
        _line(0, "session_meta", _meta(PARENT)),
        _line(1, "response_item", _msg("user", "review my diff with a sub-agent")),
        _line(2, "response_item", _msg("assistant", "Spawned /root/review.")),
        _line(3, "inter_agent_communication_metadata", {"trigger_turn": trigger_turn}),
        _line(4, "response_item", ANSWER),
    ]


def _child() -> list[JSON]:
    """A sub-agent's rollout: context, then its task delivered by the parent, its answer."""
    return [
        _line(0, "session_meta", _meta(CHILD)),
        _line(1, "event_msg", {"type": "task_started", "turn_id": TURN}),
        _line(2, "response_item", _msg("developer", "<permissions instructions>x")),
        _line(3, "response_item", _msg("user", "<environment_context>cwd")),
        _line(4, "turn_context", {"turn_id": TURN, "cwd": "/home/user/proj", "model": "m"}),
        _line(5, "inter_agent_communication_metadata", {"trigger_turn": True}),
        _line(6, "response_item", TASK),
        _line(7, "response_item", _msg("assistant", "No findings.")),
        _line(8, "event_msg", {"type": "task_complete", "turn_id": TURN}),
    ]


def _converted(root: Path, thread: str, lines: list[Any]) -> tuple[SessionFile, Path]:
    source = write_rollout(root / ".codex" / ROLLOUT.format(thread), lines)
    assert convert([root / ".codex"], root / "out") == 0
    (session,) = sessions_in(root / "out").values()
    assert context_items(session) == rebuild(source)
    return session, source


def test_a_subagents_task_from_its_parent_is_in_its_context(tmp_path: Path) -> None:
    """The task a v2 sub-agent is given arrives as an ``agent_message`` item, which Codex
    sends the model with the rest of the history: the sub-agent's context holds it between
    the injected context and its answer (it was a ``custom`` entry, so the model seemed to
    answer a question it was never asked)."""
    session, _ = _converted(tmp_path, CHILD, _child())
    items = context_items(session)
    assert [i["type"] for i in items] == ["message", "message", "agent_message", "message"]
    assert items[2] == TASK
    (report,) = reports_in(tmp_path / "out")
    assert report["counts"]["items"] == 4


def test_a_subagents_answer_is_in_its_parents_context(tmp_path: Path) -> None:
    """A sub-agent's final answer is an ``agent_message`` in its parent's rollout, which
    the parent's next request holds."""
    turn = "01a0714e-6000-7000-8000-00000000bb01"
    lines = [
        *_answered(trigger_turn=False),
        _line(5, "event_msg", {"type": "task_complete", "turn_id": turn}),
    ]
    session, _ = _converted(tmp_path, PARENT, lines)
    assert context_items(session)[-1] == ANSWER


def test_a_rollback_drops_the_turn_another_agent_started(tmp_path: Path) -> None:
    """Codex counts a message from another agent as the start of a turn: rolling back one
    turn after the sub-agent's task drops the task and its answer; the context messages
    above it stay, as they stay above a first turn that is dropped; the task's entry stays
    in the file, off the live path."""
    lines = [*_child(), _line(9, "event_msg", {"type": "thread_rolled_back", "num_turns": 1})]
    session, _ = _converted(tmp_path, CHILD, lines)
    assert [i["role"] for i in context_items(session)] == ["developer", "user"]
    (report,) = reports_in(tmp_path / "out")
    assert report["counts"]["rollbacks"] == 1
    assert isinstance(session.entries[-1], Custom)
    assert TASK in [getattr(e, "item", None) for e in session.entries]


def test_a_rollback_after_another_agents_message_keeps_the_turn_before(tmp_path: Path) -> None:
    """The parent's turn before the sub-agent's answer stays when one turn is rolled back
    after the answer: the answer was the turn dropped (before, the rollback dropped the
    parent's own prompt and answer too)."""
    lines = [
        *_answered(trigger_turn=True),
        _line(5, "response_item", _msg("assistant", "The review found nothing.")),
        _line(6, "event_msg", {"type": "thread_rolled_back", "num_turns": 1}),
    ]
    session, _ = _converted(tmp_path, PARENT, lines)
    texts = [i["content"][0]["text"] for i in context_items(session)]
    assert texts == ["review my diff with a sub-agent", "Spawned /root/review."]


def test_other_kinds_codex_sends_are_in_the_context(tmp_path: Path) -> None:
    """``additional_tools`` and ``context_compaction`` items are in Codex's history (it
    sends them); a ``compaction_trigger`` is not."""
    tools = {"type": "additional_tools", "tools": [{"type": "function", "name": "lookup"}]}
    state = {"type": "context_compaction", "encrypted_content": "gAAAAABq-opaque"}
    trigger = {"type": "compaction_trigger"}
    lines = [
        _line(0, "session_meta", _meta(PARENT)),
        _line(1, "response_item", _msg("user", "hello")),
        _line(2, "response_item", tools),
        _line(3, "response_item", trigger),
        _line(4, "response_item", state),
        _line(5, "response_item", _msg("assistant", "hi")),
    ]
    session, _ = _converted(tmp_path, PARENT, lines)
    assert [i["type"] for i in context_items(session)] == [
        "message",
        "additional_tools",
        "context_compaction",
        "message",
    ]


# --- legacy history mode: inter_agent_communication lines -------------------------------------


def _delivery(**payload: Any) -> JSON:
    message: JSON = {
        "author": "/root",
        "recipient": "/root/review",
        "other_recipients": [],
        "content": "Review the diff in src/ and report findings.",
        "internal_chat_message_metadata_passthrough": _pass(TURN),
        "trigger_turn": True,
    }
    message |= payload
    return {
        "timestamp": "2026-07-11T00:00:05.000Z",
        "type": "inter_agent_communication",
        "payload": {k: v for k, v in message.items() if v is not None},
    }


def _legacy_child(delivery: JSON) -> list[JSON]:
    """A legacy-mode sub-agent rollout (CLI 0.14x): the task is its own line kind."""
    meta = _meta(CHILD) | {"cli_version": "0.144.4", "history_mode": "legacy"}
    lines = [{k: v for k, v in line.items() if k != "ordinal"} for line in _child()]
    lines[0]["payload"] = meta
    return [*lines[:5], delivery, *lines[7:]]


def test_a_legacy_subagents_task_line_is_in_its_context(tmp_path: Path) -> None:
    """Codex's resume turns an ``inter_agent_communication`` line into an ``agent_message``
    item of its text: the sub-agent's context holds it (a derived item after the line's
    ``custom`` entry) before the answer, and every line is still rebuilt from its entries."""
    session, source = _converted(tmp_path, CHILD, _legacy_child(_delivery()))
    items = context_items(session)
    assert items[2] == {
        "type": "agent_message",
        "author": "/root",
        "recipient": "/root/review",
        "content": [{"type": "input_text", "text": "Review the diff in src/ and report findings."}],
        "internal_chat_message_metadata_passthrough": _pass(TURN),
    }
    assert [i["type"] for i in items] == ["message", "message", "agent_message", "message"]
    assert rebuilt_lines(session) == source_lines(source)
    session, _ = _converted(tmp_path / "with id", CHILD, _legacy_child(_delivery(id="msg_7")))
    assert context_items(session)[2]["id"] == "msg_7"  # an id it has is the item's


def test_an_encrypted_message_from_another_agent(tmp_path: Path) -> None:
    """An encrypted message is a header naming its kind (``NEW_TASK`` when it starts a turn,
    else ``MESSAGE``), task and sender, then the encrypted content."""
    for n, trigger in enumerate((True, False)):
        delivery = _delivery(content="", encrypted_content="gAAAAABq-sealed", trigger_turn=trigger)
        session, _ = _converted(tmp_path / str(n), CHILD, _legacy_child(delivery))
        kind = "NEW_TASK" if trigger else "MESSAGE"
        assert context_items(session)[2]["content"] == [
            {
                "type": "input_text",
                "text": f"Message Type: {kind}\nTask name: /root/review\nSender: /root\nPayload:\n",
            },
            {"type": "encrypted_content", "encrypted_content": "gAAAAABq-sealed"},
        ]


def test_a_message_line_codex_cannot_read_adds_nothing(tmp_path: Path) -> None:
    """A payload that is not a communication Codex reads (no author, no ``trigger_turn``,
    a content, an encrypted content or another recipient that is no string, other recipients
    that are no list) is a ``custom`` entry only, as it was: Codex skips it."""
    bads: tuple[JSON, ...] = (
        {"author": None},
        {"trigger_turn": None},
        {"content": 7},
        {"encrypted_content": 7},
        {"other_recipients": "/root/other"},
        {"other_recipients": ["/root/other", 7]},
    )
    for n, bad in enumerate(bads):
        session, source = _converted(tmp_path / str(n), CHILD, _legacy_child(_delivery(**bad)))
        assert [i["type"] for i in context_items(session)] == ["message", "message", "message"]
        assert rebuilt_lines(session) == source_lines(source)


def test_a_rollback_drops_a_legacy_message_from_another_agent(tmp_path: Path) -> None:
    """A message from another agent on its own line is a turn as the item is: rolling back
    one turn after the parent's prompt and the sub-agent's answer drops the answer only."""
    answer = _delivery(
        author="/root/review",
        recipient="/root",
        content="Message Type: FINAL_ANSWER\nTask name: /root\nSender: /root/review\n"
        "Payload:\nNo findings.",
        trigger_turn=False,
        internal_chat_message_metadata_passthrough=None,
    )
    lines = [
        {"timestamp": "2026-07-11T00:00:00.000Z", "type": "session_meta", "payload": _meta(PARENT)},
        {
            "timestamp": "2026-07-11T00:00:01.000Z",
            "type": "response_item",
            "payload": _msg("user", "go"),
        },
        answer,
        {
            "timestamp": "2026-07-11T00:00:06.000Z",
            "type": "response_item",
            "payload": _msg("assistant", "done"),
        },
        {
            "timestamp": "2026-07-11T00:00:07.000Z",
            "type": "event_msg",
            "payload": {"type": "thread_rolled_back", "num_turns": 1},
        },
    ]
    session, _ = _converted(tmp_path, PARENT, lines)
    assert [i["content"][0]["text"] for i in context_items(session)] == ["go"]


def test_a_rollout_continuing_another_threads_history_is_reported(tmp_path: Path) -> None:
    """A paginated fork or sub-agent (CLI 0.154+) keeps what it inherited in its parent's
    rollout, named by its header's ``history_base``, and holds only its own lines: its
    context here is those lines alone, and the report says so with a warning naming the
    thread and ordinal (a rollout without a base has none). The conversion succeeds."""
    base = {"thread_id": PARENT, "end_ordinal_exclusive": 12, "end_byte_offset": 4096}
    lines = _child()
    lines[0]["payload"] = _meta(CHILD) | {"forked_from_id": PARENT, "history_base": base}
    _converted(tmp_path / "based", CHILD, lines)
    (report,) = reports_in(tmp_path / "based" / "out")
    (finding,) = report["findings"]
    assert finding["kind"] == "warning"
    assert finding["session"] == CHILD
    assert f"thread {PARENT} before ordinal 12 (history_base)" in finding["message"]
    _converted(tmp_path / "whole", CHILD, _child())
    (report,) = reports_in(tmp_path / "whole" / "out")
    assert report["findings"] == []


def test_a_legacy_compaction_keeps_the_users_turns_not_another_agents(tmp_path: Path) -> None:
    """A compaction without a replacement history keeps the user's messages, then its
    summary: a message from another agent starts a turn but is no user message, whether an
    ``agent_message`` item or a line of its own, so it is not kept."""
    answer = _delivery(
        author="/root/review",
        recipient="/root",
        content="No findings.",
        trigger_turn=False,
        internal_chat_message_metadata_passthrough=None,
    )
    for name, told in (("item", _line(2, "response_item", ANSWER)), ("line", answer)):
        lines = [
            _line(0, "session_meta", _meta(PARENT)),
            _line(1, "response_item", _msg("user", "go")),
            told,
            _line(3, "response_item", _msg("assistant", "done")),
            _line(4, "compacted", {"message": "the summary"}),
        ]
        session, _ = _converted(tmp_path / name, PARENT, lines)
        texts = [i["content"][0]["text"] for i in context_items(session)]
        assert texts == ["go", "the summary"], name


def test_a_history_base_is_reported_only_when_it_names_a_thread(tmp_path: Path) -> None:
    """A ``history_base`` naming no thread (no ``thread_id`` string) says nothing to report;
    an ordinal that is no integer (``true``) is left out of the warning."""
    for name, base, said in (
        ("no thread", {"end_ordinal_exclusive": 12}, None),
        ("odd ordinal", {"thread_id": PARENT, "end_ordinal_exclusive": True}, PARENT),
    ):
        lines = _child()
        lines[0]["payload"] = _meta(CHILD) | {"history_base": base}
        _converted(tmp_path / name, CHILD, lines)
        (report,) = reports_in(tmp_path / name / "out")
        messages = [f["message"] for f in report["findings"]]
        if said is None:
            assert messages == [], name
        else:
            (message,) = messages
            assert f"thread {said} (history_base)" in message, name
