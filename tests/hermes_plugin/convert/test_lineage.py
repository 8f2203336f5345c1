"""Which call spawned each sub-agent (``hermes_plugin.convert.lineage.find_spawns``): the
windows from an assistant row's calls to the tool rows answering them, read row by row as
the database holds them."""

from __future__ import annotations

import json
import math
from typing import Any

from hermes_columns import columns_of

from hermes_plugin.convert.background import Background
from hermes_plugin.convert.lineage import Lineage, find_spawns
from hermes_plugin.source.rowreader import RowReader
from hermes_plugin.source.rows import Message, Session

READER = RowReader("db")


def _calls(message_id: int, at: float, *calls: tuple[str, str]) -> Message:
    """An assistant row at ``at`` making ``calls`` (id, function name), in order."""
    made = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}}
        for cid, name in calls
    ]
    return _row(message_id, at, role="assistant", tool_calls=json.dumps(made))


def _answer(message_id: int, at: float | None, call_id: str) -> Message:
    return _row(message_id, at, role="tool", content="done", tool_call_id=call_id)


def _row(message_id: int, at: float | None, **cells: Any) -> Message:
    cols = columns_of({"id": message_id, "session_id": "p", "timestamp": at, **cells})
    return READER.message(cols)


def _child(sid: str, at: float | None) -> Session:
    return READER.session(columns_of({"id": sid, "source": "subagent", "started_at": at}))


def test_a_child_belongs_to_the_call_whose_window_it_started_in() -> None:
    rows = [
        _calls(1, 10.0, ("c1", "terminal"), ("c2", "terminal")),
        _answer(2, 20.0, "c1"),  # c1's window closes; c2's stays open
        _calls(3, 30.0, ("c3", "terminal")),
        _answer(4, 40.0, "c3"),
        _answer(5, None, "c2"),  # a tool row of no time answers nothing: c2 stays open
        _calls(6, None, ("c4", "delegate_task")),  # nor does a call of no time open a window
    ]
    children = [
        _child("during-both", 15.0),
        _child("after-c1", 25.0),
        _child("at-c3s-call", 30.0),  # the bounds are in the window
        _child("at-c3s-answer", 40.0),
        _child("before-any", 5.0),
        _child("untimed", None),
        _child("late", 50.0),
    ]
    assert find_spawns(rows, children) == {
        "during-both": (1, 1),  # the latest call whose window holds it: c2, made after c1
        "after-c1": (1, 1),
        "at-c3s-call": (3, 0),
        "at-c3s-answer": (3, 0),
        "late": (1, 1),
    }


def test_a_delegate_call_wins_over_a_later_call() -> None:
    rows = [
        _calls(1, 10.0, ("c1", "delegate_task")),
        _calls(2, 12.0, ("c2", "terminal")),
    ]
    assert find_spawns(rows, [_child("sub", 15.0)]) == {"sub": (1, 0)}


def test_the_latest_call_is_the_latest_made_then_the_latest_row() -> None:
    """Hermes' times are not monotonic: of two calls holding a child, the one made at the
    later time wins, whatever the rows' order; at one time, the later row."""
    rows = [
        _calls(1, 20.0, ("a", "terminal")),
        _calls(2, 10.0, ("b", "terminal")),  # written after, timed before
        _calls(3, 30.0, ("c", "terminal")),
        _calls(4, 30.0, ("d", "terminal")),
    ]
    children = [_child("before-30", 25.0), _child("at-30", 30.0)]
    assert find_spawns(rows, children) == {"before-30": (1, 0), "at-30": (4, 0)}


def test_a_tool_row_closes_the_first_open_call_it_answers_only() -> None:
    """A call id used three times: each answer closes the first call still open by that id,
    the next answer the next one."""
    rows = [
        _calls(1, 10.0, ("dup", "terminal"), ("dup", "delegate_task"), ("dup", "terminal")),
        _answer(2, 20.0, "dup"),
        _answer(3, 30.0, "dup"),
    ]
    children = [_child("before-30", 25.0), _child("after-30", 35.0)]
    assert find_spawns(rows, children) == {
        "before-30": (1, 1),  # the delegate call, open until the second answer
        "after-30": (1, 2),  # the third call, never answered
    }


def test_a_segments_continuations_end_with_the_one_hermes_resumes_into() -> None:
    """Of several compression continuations, the one Hermes' compression tip resumes into is
    written last (the file's leaf): one that itself ended in compression, then a live one,
    then the newest; each tier oldest first."""
    rows = {
        "root": {"end_reason": "compression", "ended_at": 5.0},
        "ended-new": {"started_at": 9.0, "end_reason": "user_exit", "ended_at": 10.0},
        "ended-old": {"started_at": 6.0, "end_reason": "user_exit", "ended_at": 7.0},
        "live": {"started_at": 7.0},
        "compressed": {"started_at": 6.5, "end_reason": "compression", "ended_at": 8.0},
    }
    sessions = [
        READER.session(
            columns_of(
                {"id": sid, "source": "cli", "parent_session_id": None if sid == "root" else "root"}
                | {"started_at": 1.0, "ended_at": None, "end_reason": None}
                | cells
            )
        )
        for sid, cells in rows.items()
    ]
    lineage = Lineage.of(sessions)
    order = ["ended-old", "ended-new", "live", "compressed"]
    assert lineage.continuations("root") == order
    assert lineage.segments("root") == ["root", *order]


def _ack(message_id: int, at: float, call_id: str, content: str) -> Message:
    return _row(message_id, at, role="tool", content=content, tool_call_id=call_id)


def _dispatched(delegation_id: str) -> str:
    return json.dumps(
        {"status": "dispatched", "mode": "background", "delegation_id": delegation_id}
    )


def _spawns(
    rows: list[Message],
    children: list[Session],
    completed: dict[str, float],
    detached: set[tuple[int, int]] | None = None,
) -> dict[str, tuple[int, int]]:
    """The spawns found with ``completed`` as the session's ``async_delegations`` rows."""
    return find_spawns(rows, children, Background(completed, rows), detached)


def test_a_background_call_holds_its_window_open_until_its_delegation_completed() -> None:
    """Answered at 11 with the delegation's id, the call keeps its window to the delegation's
    completion (an integer time too; open while it has none): a sub-agent started after the
    completion is no one's, one started before it the call's, and ``detached`` gets the call."""
    rows = [
        _calls(1, 10.0, ("bg", "delegate_task")),
        _ack(2, 11.0, "bg", _dispatched("deleg_1")),
        _calls(3, 12.0, ("run", "delegate_task")),
        _ack(4, 13.0, "run", _dispatched("deleg_2")),
    ]
    children = [_child("in-bg", 15.0), _child("after-bg", 25.0)]
    detached: set[tuple[int, int]] = set()
    assert _spawns(rows[:2], children, {"deleg_1": 20}, detached) == {"in-bg": (1, 0)}
    assert detached == {(1, 0)}
    still = {"deleg_1": 20.0, "deleg_2": math.inf}
    assert _spawns(rows, children, still) == {"in-bg": (3, 0), "after-bg": (3, 0)}


def _delivered(message_id: int, at: float, delegation_id: str, batch: bool = False) -> Message:
    """The user row a finished background delegation re-enters its session with."""
    head = f"[ASYNC DELEGATION {'BATCH ' if batch else ''}COMPLETE — {delegation_id}]"
    text = f"{head}\nA background subagent you dispatched earlier has finished."
    return _row(message_id, at, role="user", content=text)


def test_a_pruned_delegation_holds_the_window_until_its_result_came_back() -> None:
    """A dispatch whose ``async_delegations`` row is gone (Hermes prunes a delivered one after
    seven days) keeps the window open until the first row bringing its result back, a batch's
    too (a sub-agent started after it is no one's); with no such row, for good."""
    children = [_child("in-bg", 15.0), _child("after-bg", 25.0)]
    for batch in (False, True):
        rows = [
            _calls(1, 10.0, ("bg", "delegate_task")),
            _ack(2, 11.0, "bg", _dispatched("deleg_1")),
            _delivered(3, 20.0, "deleg_0", batch),  # another delegation's result
            _delivered(4, 21.0, "deleg_1", batch),
            _delivered(5, 30.0, "deleg_1", batch),  # delivered twice: the first counts
        ]
        detached: set[tuple[int, int]] = set()
        assert _spawns(rows, children, {}, detached) == {"in-bg": (1, 0)}, batch
        assert detached == {(1, 0)}
        both = {"in-bg": (1, 0), "after-bg": (1, 0)}
        assert _spawns([*rows[:3], rows[4]], children, {}) == both, batch
    assert _spawns(rows[:2], children, {}) == both


def test_an_answer_naming_no_delegation_of_the_session_closes_the_window() -> None:
    """A delegation id not dispatched in the background with no row, a result that is not
    JSON, one whose id is not a string (a background dispatch's too: null, a list), or a
    delegation completed before its answer was written: the window ends at the answer, as a
    foreground call's does."""
    children = [_child("between", 10.5), _child("after", 15.0)]
    background = {"deleg_1": 9.0}
    for content in (
        json.dumps({"status": "dispatched", "delegation_id": "deleg_9"}),
        'failed: "delegation_id" deleg_1 is unknown',
        json.dumps({"delegation_id": 1}),
        json.dumps({"status": "dispatched", "mode": "background", "delegation_id": None}),
        json.dumps({"status": "dispatched", "mode": "background", "delegation_id": ["deleg_1"]}),
        _dispatched("deleg_1"),
    ):
        rows = [_calls(1, 10.0, ("bg", "delegate_task")), _ack(2, 11.0, "bg", content)]
        detached: set[tuple[int, int]] = set()
        found = _spawns(rows, children, background, detached)
        assert found == {"between": (1, 0)}, content
        assert detached == ({(1, 0)} if content == _dispatched("deleg_1") else set()), content


def test_a_delegation_completes_at_its_completed_at_or_is_still_running() -> None:
    """``async_delegations.completed_at``, a number of seconds (an integer one too); none,
    or a value that is not a time, and the delegation is still running."""
    from hermes_plugin.convert.background import completions

    cells = {"a": 20, "b": 20.5, "c": None, "d": "soon"}
    rows = [
        READER.delegation(columns_of({"delegation_id": k, "completed_at": v}))
        for k, v in cells.items()
    ]
    assert completions(rows) == {"a": 20.0, "b": 20.5, "c": math.inf, "d": math.inf}
