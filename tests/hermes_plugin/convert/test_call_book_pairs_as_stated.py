"""Call pairing (``hermes_plugin.convert.calls.CallBook``) against the rule of
docs/formats/hermes.md section 3.3 stated plainly: a result answers the earliest
still-unanswered open call sharing a spelling (a result's uid first); compactions close the
open calls, an abandoned branch's answers are undone. ``CallBook`` keeps a search start and
other shortcuts; any sequence of calls, results, compactions and branches pairs as the plain
rule does."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from asf_fuzz_check import time_bound
from hypothesis import example, given
from hypothesis import strategies as st

from asf_core.cli.main import ExitCode, main
from hermes_plugin.convert.calls import CallBook, call_item
from hermes_plugin.source.toolcalls import ToolCall


def _spellings(value: str) -> set[str]:
    """An id, stripped, and each non-empty part of a ``call|fc`` bridge id, stripped."""
    value = value.strip()
    if not value:
        return set()
    return {value} | {part.strip() for part in value.split("|") if part.strip()}


class _Plain:
    """The rule as stated, with no shortcut: the open calls in order, each a dict."""

    def __init__(self) -> None:
        self.open: list[dict[str, Any]] = []

    def answer(self, tool_call_id: str | None, uid: str | None) -> str | None:
        names = _spellings(tool_call_id or "")
        waiting = [c for c in self.open if not c["answered"]]
        found = [c for c in waiting if uid and c["uid"] == uid]
        found = found or [c for c in waiting if names & c["spellings"]]
        if not found:
            return None
        found[0]["answered"] = True
        return str(found[0]["call_id"])


_IDS = st.sampled_from(["call_1", "call_2", "call_1|fc_1", " call_2 ", "fc_1", ""])
_CALL = st.tuples(
    st.just("call"),
    _IDS,
    st.sampled_from(["", "call_1", "call_2|fc_2"]),
    st.sampled_from(["", "fc_1"]),
    st.sampled_from([None, "u1", "u2"]),
)
_RESULT = st.tuples(
    st.just("result"),
    st.sampled_from(["call_1", "call_2", "fc_1", "fc_2", "call_1|fc_9", " call_2", "", None]),
    st.sampled_from([None, "u1", "u2", "u3"]),
)
_OTHER = st.tuples(st.sampled_from(["compaction", "branch", "abandon"]))


_A, _ANSWER_A = ("call", "call_1", "", "", None), ("result", "call_1", None)


@given(st.lists(st.one_of(_CALL, _RESULT, _OTHER), max_size=30))
# Answered calls, then a compaction or an abandoned branch: the search starts again.
@example([_A, _ANSWER_A, ("result", "x", None), ("compaction",), _A, _ANSWER_A])
@example([_A, ("branch",), _ANSWER_A, ("result", "x", None), ("abandon",), _ANSWER_A])
# Calls of one id answered on a branch after a compaction, the branch abandoned: a new call
# of that id is found again.
@example([("compaction",), ("branch",), _A, _ANSWER_A, _A, _ANSWER_A, ("abandon",), _A, _ANSWER_A])
def test_results_pair_as_the_plain_rule_does(steps: list[tuple[Any, ...]]) -> None:
    book, plain = CallBook(), _Plain()
    saved: list[tuple[Any, list[dict[str, Any]]]] = []
    for n, step in enumerate(steps):
        if step[0] == "call":
            _, id_, call_id, item_id, uid = step
            call = ToolCall.from_json(
                {"id": id_, "call_id": call_id, "response_item_id": item_id, "type": "function"}
            )
            asf_id = book.add(call, lambda n=n: f"hermes_{n}_0", uid)
            spellings = _spellings(id_) | _spellings(call_id) | _spellings(item_id)
            plain.open.append(
                {"spellings": spellings, "call_id": asf_id, "answered": False, "uid": uid}
            )
        elif step[0] == "result":
            assert book.answer(step[1], step[2]) == plain.answer(step[1], step[2]), step
        elif step[0] == "compaction":
            book.forget()
            plain.open = []
        elif step[0] == "branch":
            saved.append((book.snapshot(), [dict(c) for c in plain.open]))
        elif saved:  # the branch is abandoned: back to where it began
            snapshot, opened = saved.pop()
            book.restore(snapshot)
            plain.open = opened


def test_an_item_id_is_the_stored_one_stripped_or_the_rest_of_a_bridge_id() -> None:
    """``response_item_id``, else what follows the first bar of the native id, stripped;
    blank is none."""

    def item(**members: str) -> dict[str, Any]:
        call = ToolCall.from_json({"type": "function", **members})
        return call_item(call, call.pairing_id())

    assert item(id="call_1", response_item_id=" fc_1 ")["id"] == "fc_1"
    assert "id" not in item(id="call_1", response_item_id="  ")
    assert item(id="call_1| fc_1 ")["id"] == "fc_1"
    assert item(id="call_1|fc_1|x")["id"] == "fc_1|x"


def test_thousands_of_unanswered_calls_and_results_naming_none_pair_in_linear_time(
    tmp_path: Path,
) -> None:
    """A session Hermes wrote, then grown by SQL to 9,000 calls no result answers followed by
    9,000 results naming none of them, and one naming the first call: each result used to
    walk every open call (11 s for these rows); the first call is still the one answered."""
    import hermes_state

    home = tmp_path / "home"
    home.mkdir()
    db = hermes_state.SessionDB(db_path=home / "state.db")
    try:
        db.create_session("s", "cli", model="m-1")
        db.append_message("s", "user", "go")
        call = {"id": "", "type": "function", "function": {"name": "t", "arguments": "{}"}}
        db.append_message("s", "assistant", "", tool_calls=[call])
        db.append_message("s", "tool", "out", tool_call_id="other")
    finally:
        db.close()
    calls, results = 9_000, 9_000
    with sqlite3.connect(home / "state.db") as conn:
        (assistant,) = conn.execute("SELECT max(id) - 1 FROM messages").fetchone()
        columns = [r[1] for r in conn.execute("PRAGMA table_info(messages)") if r[1] != "id"]
        names = ", ".join(columns)

        def clone(row: int, changes: dict[str, str], count: int) -> None:
            picks = ", ".join(f":{c}" if c in changes else c for c in columns)
            sql = f"INSERT INTO messages ({names}) SELECT {picks} FROM messages WHERE id = {row}"
            conn.executemany(
                sql, ({k: v.replace("#", str(n)) for k, v in changes.items()} for n in range(count))
            )

        first = json.dumps([{**call, "id": "call_#"}])
        clone(assistant, {"tool_calls": first}, calls)
        clone(assistant + 1, {"tool_call_id": "other_#"}, results)
        clone(assistant + 1, {"tool_call_id": "call_0"}, 1)
    out = tmp_path / "out"
    with time_bound(6):  # linear: about a second here
        assert main(["convert", str(home), "-o", str(out), "-j", "1", "--quiet"]) == ExitCode.OK
    (path,) = out.rglob("*.jsonl")
    lines = [json.loads(line) for line in path.read_bytes().splitlines()[1:]]
    outputs = [e["item"] for e in lines if e.get("item", {}).get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == ["call_0"]
    unpaired = [e for e in lines if e.get("data", {}).get("reason") == "unpaired"]
    assert len(unpaired) == results + 1
