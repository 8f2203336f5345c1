"""How ATIF steps are made of a model call's entries where the reference documents have no
case: output items that name their response only in part, or not at all, a call whose
``response`` entry never came, a response cut short, each output item's own members, and a
compaction's ``tokens_before``. Every document built here also validates with Harbor."""

from __future__ import annotations

from typing import Any

import attrs
from harbor.utils.trajectory_validator import TrajectoryValidator

from asf_core import FORMAT
from asf_core.export import SessionTree, atif_document
from asf_core.model import Compaction, Config, Entry, Env, Header, Item, Response
from asf_core.reader import parse_session
from asf_core.writer import SessionBuilder, entry_line, header_line

JSON = dict[str, Any]


class _Session:
    """A session under construction, one entry a second, exported at its leaf."""

    def __init__(self) -> None:
        self.header = Header(id="01995b2a-0000-7000-8000-00000000a7f1", created_at=self.ts(0))
        self.b = SessionBuilder(self.header)
        self.b.append(Config(ts=self.ts(0), model="gpt-5"))

    @staticmethod
    def ts(n: int) -> str:
        return f"2026-10-01T09:00:{n:02d}Z"

    def add(self, entry: Entry, **members: Any) -> str:
        ts = self.ts(len(self.b))
        made = attrs.evolve(entry, ts=ts, unknown=members)
        return str(self.b.append(made).id)

    def user(self, text: str) -> str:
        return self.add(Item(ts="", item=_msg("user", text)))

    def said(self, text: str, response: str | None = None, **members: Any) -> str:
        return self.add(Item(ts="", item=_msg("assistant", text), response=response), **members)

    def doc(self) -> JSON:
        data = header_line(self.header) + b"".join(entry_line(e) for e in self.b.entries)
        session = parse_session(data)
        doc = atif_document(SessionTree(session).view(str(self.b.leaf)))
        validator = TrajectoryValidator()
        validator.validate(doc)
        assert validator.get_errors() == []
        return doc


def _msg(role: str, text: str) -> JSON:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _agent_steps(doc: JSON) -> list[JSON]:
    return [s for s in doc["steps"] if s["source"] == "agent"]


def test_a_call_without_its_response_entry_names_the_response_its_items_do() -> None:
    """Output items of an interrupted call (no ``response`` entry): the step says which
    response they belonged to, even when the first item does not name it."""
    s = _Session()
    s.user("hi")
    s.said("one")  # names no response
    s.said("two", response="resp_9")
    s.user("are you there?")  # the call ended without its response entry
    (step,) = _agent_steps(s.doc())
    assert step["message"] == "one\ntwo"
    assert step["extra"]["response_id"] == "resp_9"
    assert step["timestamp"] == s.ts(2)  # when its first item was written
    assert "metrics" not in step


def test_output_items_naming_no_response_join_the_response_that_follows() -> None:
    """Items that do not name their response (older converters) belong to the ``response``
    entry after them: one agent step, with the response's time and usage."""
    s = _Session()
    s.user("hi")
    s.said("hello")
    resp = Response(ts="", response_id="resp_1", model="gpt-5", usage=_usage(7, 3))
    s.add(resp)
    (step,) = _agent_steps(s.doc())
    assert step["message"] == "hello"
    assert step["timestamp"] == s.ts(3)
    assert step["metrics"]["prompt_tokens"] == 7
    assert step["extra"]["openresponses"]["items"] == [_msg("assistant", "hello")]


def test_items_of_another_call_are_a_step_of_their_own() -> None:
    """Output items naming one response, then the ``response`` entry of another: the items
    are not credited to a call they were not part of."""
    s = _Session()
    s.user("hi")
    s.said("lost", response="resp_1")
    s.add(Response(ts="", response_id="resp_2", model="gpt-5", usage=_usage(5, 1)))
    first, second = _agent_steps(s.doc())
    assert first["message"] == "lost"
    assert first["extra"]["response_id"] == "resp_1"
    assert "metrics" not in first
    assert second["message"] == ""
    assert second["metrics"]["prompt_tokens"] == 5


def test_a_response_cut_short_says_why() -> None:
    s = _Session()
    s.user("write a lot")
    s.said("Once upon", response="resp_1")
    cut = {"reason": "max_output_tokens"}
    s.add(Response(ts="", response_id="resp_1", status="incomplete", incomplete=cut))
    (step,) = _agent_steps(s.doc())
    assert step["extra"]["status"] == "incomplete"
    assert step["extra"]["incomplete"] == "max_output_tokens"


def test_each_output_item_keeps_its_own_members() -> None:
    """``item_entry_members`` (docs/export.md): each output item entry's unknown members, in
    item order, so that two items' members of one name do not overwrite one another."""
    s = _Session()
    s.user("hi")
    s.said("one", response="resp_1", x_note="first")
    s.said("two", response="resp_1")
    s.said("three", response="resp_1", x_note="third")
    s.add(Response(ts="", response_id="resp_1", model="gpt-5"))
    (step,) = _agent_steps(s.doc())
    assert step["extra"]["item_entry_members"] == [{"x_note": "first"}, {}, {"x_note": "third"}]
    # Without any, no such member at all.
    plain = _Session()
    plain.user("hi")
    plain.said("one", response="resp_1")
    plain.add(Response(ts="", response_id="resp_1", model="gpt-5"))
    (step,) = _agent_steps(plain.doc())
    assert "item_entry_members" not in step["extra"]


def _usage(prompt: int, completion: int) -> JSON:
    total = prompt + completion
    return {"input_tokens": prompt, "output_tokens": completion, "total_tokens": total}


_SUMMARY = _msg("user", "Earlier: a greeting.")


def _folded(tokens_before: int | None, summary: JSON | None = _SUMMARY) -> JSON:
    s = _Session()
    kept = s.user("keep me")
    s.add(Compaction(ts="", first_kept=kept, summary=summary, tokens_before=tokens_before))
    (fold,) = [st for st in s.doc()["steps"] if "context_management" in st["extra"]]
    assert fold["message"] == ("Earlier: a greeting." if summary else "")
    extra: JSON = fold["extra"]
    return extra


def test_a_compaction_carries_a_positive_tokens_before_only() -> None:
    assert _folded(48000)["tokens_before"] == 48000
    assert _folded(1)["tokens_before"] == 1
    assert "tokens_before" not in _folded(0)
    assert "tokens_before" not in _folded(None)


def test_a_compaction_without_its_summary_still_exports() -> None:
    """The summary is required by the format, but a file lacking it reads: its step says
    nothing rather than the export failing."""
    assert _folded(10, summary=None)["openresponses"] == {"item": None}


def test_the_first_environment_is_the_document_s_and_later_ones_ride_on_a_step() -> None:
    """``extra.environment``: the first ``env`` entry at the document's root, a later one on
    the next step (docs/export.md)."""
    s = _Session()
    s.add(Env(ts="", cwd="/home/u/proj"))
    s.user("hi")
    s.add(Env(ts="", cwd="/home/u/other"))
    s.user("moved")
    doc = s.doc()
    assert doc["extra"]["environment"]["cwd"] == "/home/u/proj"
    first, second = doc["steps"]
    assert "environment" not in first["extra"]
    assert second["extra"]["environment"]["cwd"] == "/home/u/other"


def test_a_session_without_harness_is_the_format_s_agent() -> None:
    """``agent.name`` and ``agent.version`` fall back to ``agentsession`` and the format
    (docs/export.md) when the header names no harness."""
    s = _Session()
    s.user("hi")
    assert s.doc()["agent"] == {"name": "agentsession", "version": FORMAT, "model_name": "gpt-5"}


def test_a_developer_message_is_a_system_step_with_its_role() -> None:
    s = _Session()
    s.add(Item(ts="", item=_msg("developer", "Answer in French.")))
    (step,) = s.doc()["steps"]
    assert step["source"] == "system"
    assert step["message"] == "Answer in French."
    assert step["extra"]["role"] == "developer"


def test_an_output_whose_call_is_not_on_the_path_is_a_system_step() -> None:
    """Its output still shows, as the observation of a system step naming the call."""
    s = _Session()
    s.user("hi")
    output = {"type": "function_call_output", "call_id": "call_gone", "output": "42"}
    s.add(Item(ts="", item=output))
    (_, step) = s.doc()["steps"]
    assert step["source"] == "system"
    assert step["observation"] == {"results": [{"content": "42"}]}
    assert step["extra"]["orphan_call_id"] == "call_gone"


def test_a_zero_latency_is_not_carried() -> None:
    """A converter that knows no latency writes 0: the step says nothing rather than 0."""
    found = []
    for latency in (250, 0):
        s = _Session()
        s.user("hi")
        s.said("hello", response="resp_1")
        s.add(Response(ts="", response_id="resp_1", model="gpt-5", latency_ms=latency))
        (step,) = _agent_steps(s.doc())
        found.append(step["extra"].get("latency_ms"))
    assert found == [250, None]


def test_a_call_in_the_kept_window_ran_under_the_settings_of_its_time() -> None:
    """The kept window after a compaction replays the path up to ``first_kept``, not the
    compaction's checkpoint: a model switched later does not rename the calls before."""
    s = _Session()  # gpt-5
    kept = s.user("hi")
    s.said("hello", response="resp_1")
    s.add(Response(ts="", response_id="resp_1"))  # names no model: the one in force
    s.add(Config(ts="", model="gpt-5-mini"))
    summary = _msg("user", "Earlier: a greeting.")
    checkpoint = {"model": "gpt-5-mini"}
    s.add(Compaction(ts="", first_kept=kept, summary=summary, config=checkpoint))
    s.user("and now?")
    s.said("still here", response="resp_2")
    s.add(Response(ts="", response_id="resp_2"))
    before, after = _agent_steps(s.doc())
    assert (before["message"], before["is_copied_context"]) == ("hello", True)
    assert before["model_name"] == "gpt-5"
    assert (after["message"], after["model_name"]) == ("still here", "gpt-5-mini")
    assert "is_copied_context" not in after
