"""The verifier on the conformance vectors and on small sessions built for one rule each."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
import pytest
from asf_fuzz import reseal, seeds
from asf_fuzz_check import compare_request_checks
from fixture_paths import ROOT, SHARED
from hypothesis import given
from hypothesis import strategies as st

from asf_core import canonical, ids, strict_json
from asf_core.model import (
    BranchSummary,
    Compaction,
    Config,
    Decision,
    Dispatch,
    Entry,
    Env,
    Header,
    Item,
    Label,
    Link,
    Outcome,
    Queued,
    Response,
    Run,
)
from asf_core.reader import SessionFile, parse_session, read_session
from asf_core.verify import requests
from asf_core.verify.session import Finding, verify_path, verify_session
from asf_core.writer import (
    LEAF,
    SessionBuilder,
    entry_line,
    header_line,
    seal,
    write_session,
)

SESSIONS = SHARED / "asf" / "vectors" / "testdata" / "sessions"
FUZZ_SEEDS = seeds()

#: Negative vectors (path relative to SESSIONS) -> the finding code and severity they must give.
NEGATIVE: dict[str, tuple[str, str]] = {
    "truncated.jsonl": ("truncated", "warning"),
    "corrupt-middle.jsonl": ("corrupt-line", "error"),
    "duplicate-id.jsonl": ("duplicate-id", "error"),
    "missing-id.jsonl": ("missing-id", "error"),
    "bad-parent.jsonl": ("missing-parent", "error"),
    "bad-parents.jsonl": ("bad-parents", "error"),
    "bad-first-kept.jsonl": ("first-kept", "error"),
    "bad-records.jsonl": ("records-promise", "error"),
    "bad-resume.jsonl": ("run-source", "error"),
    "bad-omit.jsonl": ("request-hash", "error"),
    "bad-handback.jsonl": ("omitted-of", "warning"),
    "bad-handback-folded.jsonl": ("omitted-of", "warning"),
    "bad-base-root.jsonl": ("base-root", "error"),
    "bad-base-prefix.jsonl": ("base-prefix", "error"),
    "bad-base-parent.jsonl": ("base-parent", "error"),
    "unsupported-format.jsonl": ("unreadable", "error"),
    "v0.4/bad-first-kept.jsonl": ("first-kept", "error"),
    "v0.4/bad-parent.jsonl": ("missing-parent", "error"),
    "v0.4/bad-parents.jsonl": ("bad-parents", "error"),
    "v0.4/missing-id.jsonl": ("missing-id", "error"),
}


def _vector_names() -> list[str]:
    return sorted(str(p.relative_to(SESSIONS)) for p in SESSIONS.rglob("*.jsonl"))


POSITIVE = [name for name in _vector_names() if name not in NEGATIVE]


def errors(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


def codes(findings: Iterable[Finding], severity: str | None = "error") -> set[str]:
    return {f.code for f in findings if severity is None or f.severity == severity}


# ----------------------------------------------------------------------------- vectors


def test_vector_lists_are_complete() -> None:
    names = set(_vector_names())
    assert set(NEGATIVE) <= names
    # Every positive vector the README lists is found, so the positive test really runs.
    for name in ("basic.jsonl", "runs.jsonl", "replay.jsonl", "empty-resume.jsonl", "fork.jsonl"):
        assert name in POSITIVE


@pytest.mark.parametrize("name", POSITIVE)
def test_positive_vector_has_no_error(name: str) -> None:
    findings = verify_path(SESSIONS / name)
    assert errors(findings) == []


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_negative_vector_gives_its_finding(name: str) -> None:
    code, severity = NEGATIVE[name]
    findings = verify_path(SESSIONS / name)
    assert code in codes(findings, severity), findings


@pytest.mark.parametrize(
    ("name", "code", "line"),
    [
        ("bad-records.jsonl", "records-promise", 6),
        ("bad-resume.jsonl", "run-source", 9),
        ("bad-omit.jsonl", "request-hash", 16),
        ("bad-handback.jsonl", "omitted-of", 18),
        ("bad-first-kept.jsonl", "first-kept", 3),
    ],
)
def test_negative_vector_points_at_the_line(name: str, code: str, line: int) -> None:
    found = [f for f in verify_path(SESSIONS / name) if f.code == code]
    assert [f.line for f in found] == [line]
    assert found[0].path == str(SESSIONS / name)
    assert found[0].entry is not None


def test_handback_resolvable_of_gives_no_warning() -> None:
    # bad-handback has three `of` references; only the all-zero one is unresolvable.
    found = [f for f in verify_path(SESSIONS / "bad-handback.jsonl") if f.code == "omitted-of"]
    assert len(found) == 1
    assert "0000000000" in found[0].message


def test_parts_vector_reports_env_substitution_as_info() -> None:
    found = [f for f in verify_path(SESSIONS / "parts.jsonl") if f.code == "env-substitution"]
    assert [f.severity for f in found] == ["info"]


def test_tampered_request_hash_is_a_mismatch(tmp_path: Path) -> None:
    session = read_session(SESSIONS / "basic.jsonl")
    assert codes(verify_session(session), None) == set()
    lines = (SESSIONS / "basic.jsonl").read_bytes().splitlines(keepends=True)
    # Change one letter of the user message: its id no longer matches, and each later
    # response's request_hash no longer matches the request rebuilt from the file.
    changed = [line.replace(b"What is 2+2?", b"What is 3+3?") for line in lines]
    assert changed != lines
    target = tmp_path / "basic.jsonl"
    target.write_bytes(b"".join(changed))
    found = verify_path(target)
    assert "request-hash" in codes(found)
    assert "bad-id" in codes(found)


def _with_request_hashes(data: bytes, value: str | None) -> bytes:
    """The file with every response's request_hash set to ``value`` (or, None, left as it is),
    the ids resealed so the file still reads."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for n, line in enumerate(lines[1:], 1):
        obj = json.loads(line)
        if obj.get("type") == "response" and value is not None:
            obj["request_hash"] = value
            lines[n] = json.dumps(obj).encode()
    reseal(lines)
    return b"\n".join(lines) + b"\n"


#: The well-formed seed files (vectors, goldens) that record request hashes.
HASHED = [
    name
    for name, data in sorted(FUZZ_SEEDS.items())
    if b'"request_hash"' in data and name.removeprefix("sessions/") not in NEGATIVE
]


@pytest.mark.parametrize("name", HASHED)
@pytest.mark.parametrize("recorded", [None, "sha256:" + "0" * 64])
def test_the_one_walk_request_check_agrees_with_rebuilding_each_request(
    name: str, recorded: str | None
) -> None:
    """The request rule hashes every request in one walk of the tree (a running hash, plain
    rebuilds where that cannot hold); what it finds must be what rebuilding each request on
    its own finds: nothing for the recorded hashes, and, with every recorded hash wrong, each
    request's own hash."""
    session = parse_session(_with_request_hashes(FUZZ_SEEDS[name], recorded))
    assert compare_request_checks(session) == []
    if recorded is not None:
        assert codes(requests.request_findings(session)) >= {"request-hash"}


def test_a_request_whose_instructions_cannot_be_known_is_unbuildable() -> None:
    """A settings entry whose instructions are mistyped leaves what the model was sent
    unknown: each recorded request_hash under it is reported unbuildable, not passed."""
    lines = FUZZ_SEEDS["sessions/fork.jsonl"].split(b"\n")
    for n, line in enumerate(lines[1:], 1):
        obj = json.loads(line) if line else {}
        if obj.get("type") == "config":
            obj["instructions"] = 5
            lines[n] = json.dumps(obj).encode()
    reseal(lines)
    session = parse_session(b"\n".join(lines))
    found = list(requests.request_findings(session))
    assert found
    assert {f.code for f in found} == {"request-unbuildable"}
    assert all("cannot be rebuilt" in f.message for f in found)


@pytest.mark.parametrize("kept", [5, ["x"], True])
def test_a_mistyped_first_kept_is_read_as_written(kept: Any) -> None:
    """A compaction's ``first_kept`` that is no string (kept verbatim by the reader) is still
    read by the rule: it names no entry on the path, an error, not skipped as absent."""
    lines = FUZZ_SEEDS["sessions/compaction.jsonl"].split(b"\n")
    for n, line in enumerate(lines[1:], 1):
        obj = json.loads(line) if line else {}
        if obj.get("type") == "compaction":
            obj["first_kept"] = kept
            lines[n] = json.dumps(obj).encode()
    reseal(lines)
    found = verify_session(parse_session(b"\n".join(lines)))
    assert "first-kept" in codes(found)


#: One step of a random session: what to add, under which earlier entry (an index, wrapped).
request_steps = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "user",
                "output",
                "output",
                "call",
                "response",
                "response",
                "summary",
                "compaction",
                "config",
                "omit",
                "root",
            ]
        ),
        st.integers(0, 40),
        st.sampled_from(["resp_1", "resp_2", ""]),
    ),
    max_size=24,
)


def _random_session(steps: list[tuple[str, int, str]]) -> bytes:
    """A tree of messages, model outputs (some sharing a response id), branch summaries,
    compactions, settings changes and extra roots; every response records a wrong
    request_hash, so each request's own hash is reported."""
    b = Build()
    made = [b.last]
    wrong = "sha256:" + "0" * 64
    for n, (kind, under, rid) in enumerate(steps):
        parent = made[under % len(made)]
        text = [{"type": "output_text", "text": f"a{n}", "annotations": []}]
        if kind == "user":
            content = [{"type": "input_text", "text": f"u{n}"}]
            item = {"type": "message", "role": "user", "content": content}
            made.append(b.add(Item(ts="", item=item), parent))
        elif kind == "output":
            item = {"type": "message", "role": "assistant", "content": text}
            made.append(b.add(Item(ts="", item=item, response=rid or None), parent))
        elif kind == "call":
            call = {"type": "function_call", "call_id": f"c{n}", "name": "f", "arguments": "{}"}
            made.append(b.add(Item(ts="", item=call, response=rid or None), parent))
        elif kind == "response":
            response = Response(ts="", response_id=rid or None, model="m", request_hash=wrong)
            made.append(b.add(response, parent))
        elif kind == "summary":
            summary = {
                "type": "message",
                "role": "user",
                "content": [text[0] | {"type": "input_text"}],
            }
            made.append(b.add(BranchSummary(ts="", summary=summary), parent))
        elif kind == "compaction":
            summary = {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "s"}],
            }
            kept = made[(under * 7) % len(made)]
            made.append(b.add(Compaction(ts="", summary=summary, first_kept=kept), parent))
        elif kind == "config":
            made.append(b.add(Config(ts="", instructions=f"Be brief {n}."), parent))
        elif kind == "omit":
            made.append(b.add(Config(ts="", omit={"output": True}), parent))
        else:
            made.append(b.add(Config(ts="", model="gpt-5", instructions="Root."), None))
    return b.data()


@given(request_steps)
def test_the_one_walk_request_check_agrees_on_random_trees(
    steps: list[tuple[str, int, str]],
) -> None:
    """The one walk's running hash, its plain rebuilds where a response's outputs straddle a
    summary or a settings change, and its path kept across branches and roots, hash each
    request as rebuilding it on its own does."""
    session = parse_session(_random_session(steps))
    assert compare_request_checks(session) == []


def test_request_hashes_past_the_budget_are_counted_not_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    b = Build(records=None)
    kept = b.user()
    summary = {"type": "message", "role": "user", "content": []}
    b.add(Compaction(ts="", first_kept=kept, summary=summary))
    b.answer("hi", "resp_1")
    b.response("resp_1", request_hash="sha256:" + "1" * 64)  # not the request's hash
    assert codes(b.verify()) == {"request-hash"}
    # Rebuilding after the compaction costs more than a budget of nothing: not checked,
    # and said so, rather than passed in silence.
    monkeypatch.setattr(requests, "BUDGET", 0)
    monkeypatch.setattr(requests, "BUDGET_PER_ENTRY", 0)
    found = b.verify()
    assert errors(found) == []
    unchecked = [f for f in found if f.code == "requests-unchecked"]
    assert [(f.severity, f.message.split()[0]) for f in unchecked] == [("warning", "1")]


def _with_last_line(name: str, tmp_path: Path, **changes: Any) -> Path:
    """A copy of a vector whose last entry (a leaf: nothing names it) is changed and resealed."""
    lines = (SESSIONS / name).read_bytes().splitlines(keepends=True)
    obj = strict_json.parse(lines[-1])
    obj.update(changes)
    obj["id"] = ids.entry_id(obj)
    target = tmp_path / name
    target.write_bytes(b"".join(lines[:-1]) + canonical.dumps(obj) + b"\n")
    return target


@pytest.mark.parametrize(
    ("name", "changes", "code"),
    [
        ("replay.jsonl", {"reason": "stopped"}, "run-reason"),
        ("resume.jsonl", {"reason": "aborted"}, "run-reason"),
        ("replay.jsonl", {"pending": ["call_deploy"]}, "run-pending"),
        ("empty-resume.jsonl", {"pending": ["call_charge"]}, "run-pending"),
    ],
)
def test_changed_run_end_of_a_vector(
    tmp_path: Path, name: str, changes: dict[str, Any], code: str
) -> None:
    assert errors(verify_path(SESSIONS / name)) == []
    found = verify_path(_with_last_line(name, tmp_path, **changes))
    assert codes(found) == {code}


def test_findings_are_sorted_and_unique() -> None:
    found = verify_path(SESSIONS)
    keys = [(f.path, f.line, f.code) for f in found]
    assert keys == sorted(keys)
    assert len(set(found)) == len(found)


def test_a_fault_shared_by_two_branches_is_reported_once() -> None:
    """Path rules are read along each root-to-leaf path: a fault in the prefix two branches
    share is one finding, not one per branch."""
    b = Build()
    b.user()
    b.output("call_9")  # answers no call: a warning on every path through it
    fork = b.last
    b.user("left")
    b.add(
        Item(ts="", item={"type": "message", "role": "user", "content": []}),
        parent=fork,
    )
    found = b.verify()
    assert len(b.session().leaves()) == 2
    assert [f.code for f in found] == ["output-unbound"]


# ----------------------------------------------------------------------------- verify_path


def test_verify_path_over_a_mixed_directory(tmp_path: Path) -> None:
    for name in ("basic.jsonl", "bad-records.jsonl", "truncated.jsonl"):
        shutil.copy(SESSIONS / name, tmp_path / name)
    nested = tmp_path / "deeper" / "still"
    nested.mkdir(parents=True)
    shutil.copy(SESSIONS / "bad-resume.jsonl", nested / "bad-resume.jsonl")
    (tmp_path / "garbage.jsonl").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "other.jsonl").write_text('{"role": "user", "content": "hi"}\n{"x": 1}\n')
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("not looked at")

    found = verify_path(tmp_path)

    unreadable = sorted(Path(f.path).name for f in found if f.code == "unreadable")
    assert unreadable == ["empty.jsonl", "garbage.jsonl", "other.jsonl"]
    by_file = {(Path(f.path).name, f.code) for f in found}
    assert ("bad-records.jsonl", "records-promise") in by_file
    assert ("bad-resume.jsonl", "run-source") in by_file
    assert ("truncated.jsonl", "truncated") in by_file
    assert not any(Path(f.path).name in ("basic.jsonl", "notes.txt") for f in found)


def test_verify_path_on_a_missing_file(tmp_path: Path) -> None:
    found = verify_path(tmp_path / "nope.jsonl")
    assert [f.code for f in found] == ["unreadable"]


# ----------------------------------------------------------------------------- builder

ALL = ("run", "dispatch", "decision")


class Build:
    """A session built entry by entry with real ids, read back through the reader."""

    def __init__(self, records: tuple[str, ...] | None = ("dispatch", "decision")) -> None:
        self.header = Header(
            id="01995b2a-0000-7000-8000-00000000f001",
            created_at="2026-10-01T09:00:00Z",
            records=records,
        )
        self.builder = SessionBuilder(self.header)
        self.ticks = 0
        self.last: str | None = None
        self.add(Config(ts="", model="gpt-5", instructions="Be brief."))

    def add(self, entry: Entry, parent: Any = LEAF) -> str:
        """Append under ``parent``, by default under the entry added last (a branch moves it)."""
        self.ticks += 1
        stamp = f"2026-10-01T09:{self.ticks // 60:02d}:{self.ticks % 60:02d}Z"
        under = self.last if parent is LEAF else parent
        sealed = self.builder.append(attrs.evolve(entry, ts=stamp), parent=under)
        assert sealed.id is not None
        self.last = sealed.id
        return sealed.id

    def user(self, text: str = "go") -> str:
        content = [{"type": "input_text", "text": text}]
        return self.add(Item(ts="", item={"type": "message", "role": "user", "content": content}))

    def call(self, call_id: str, response: str = "resp_1", parent: Any = LEAF) -> str:
        item = {"type": "function_call", "call_id": call_id, "name": "bash", "arguments": "{}"}
        return self.add(Item(ts="", item=item, response=response), parent)

    def answer(self, text: str, response: str) -> str:
        content = [{"type": "output_text", "text": text, "annotations": []}]
        item = {"type": "message", "role": "assistant", "content": content}
        return self.add(Item(ts="", item=item, response=response))

    def response(self, response_id: str = "resp_1", **kw: Any) -> str:
        return self.add(Response(ts="", response_id=response_id, model="gpt-5", **kw))

    def output(self, call_id: str, text: str = "ok") -> str:
        item = {"type": "function_call_output", "call_id": call_id, "output": text}
        return self.add(Item(ts="", item=item))

    def decide(self, call_id: str, target: str, verdict: str, reason: str | None = None) -> str:
        if verdict == "reject" and reason is None:
            reason = "not allowed"
        return self.add(
            Decision(
                ts="", call_id=call_id, target=target, verdict=verdict, by="policy", reason=reason
            )
        )

    def dispatch(self, call_id: str, target: str, parent: Any = LEAF) -> str:
        return self.add(Dispatch(ts="", call_id=call_id, target=target), parent)

    def start(self, run_id: str, source: str = "input") -> str:
        return self.add(Run(ts="", run_id=run_id, phase="start", source=source))

    def end(self, run_id: str, reason: str, pending: tuple[str, ...] = ()) -> str:
        return self.add(Run(ts="", run_id=run_id, phase="end", reason=reason, pending=pending))

    def data(self) -> bytes:
        return header_line(self.header) + b"".join(entry_line(e) for e in self.builder.entries)

    def session(self) -> SessionFile:
        return parse_session(self.data())

    def verify(self) -> list[Finding]:
        return verify_session(self.session())


def one_call(b: Build, call_id: str = "call_1") -> str:
    """A user message, a model call making one function call, its response."""
    b.user()
    target = b.call(call_id)
    b.response()
    return target


def two_calls(b: Build) -> tuple[str, str]:
    """A user message, a model call making call_1 and call_2, its response."""
    b.user()
    targets = b.call("call_1"), b.call("call_2")
    b.response()
    return targets


def held_for_input(b: Build) -> str:
    """Run-1 makes call_1, holds it and ends needing input; returns the call's entry id."""
    b.start("run-1")
    t = one_call(b)
    b.decide("call_1", t, "hold")
    b.end("run-1", "input_required", ("call_1",))
    return t


# ----------------------------------------------------------------------------- call rules


def test_clean_call_lifecycle() -> None:
    b = Build(ALL)
    b.start("run-1")
    t = one_call(b)
    b.decide("call_1", t, "proceed")
    b.dispatch("call_1", t)
    b.output("call_1")
    b.answer("done", "resp_2")
    b.response("resp_2")
    b.end("run-1", "done")
    assert b.verify() == []


def end_call(b: Build, target: str, ending: str) -> None:
    """End call_1 by ``ending``: a reject, or a dispatch then an answer or its output."""
    if ending == "reject":
        b.decide("call_1", target, "reject")
        return
    b.dispatch("call_1", target)
    if ending == "output":
        b.output("call_1")
    else:
        b.decide("call_1", target, ending)


@pytest.mark.parametrize("ending", ["reject", "answer", "output"])
def test_dispatch_after_the_call_ended(ending: str) -> None:
    b = Build()
    t = one_call(b)
    end_call(b, t, ending)
    assert errors(b.verify()) == []
    b.dispatch("call_1", t)
    assert codes(b.verify()) == {f"dispatch-after-{ending}"}


@pytest.mark.parametrize(("ending", "verdict"), [("reject", "proceed"), ("answer", "hold")])
def test_decision_after_the_call_ended(ending: str, verdict: str) -> None:
    b = Build()
    t = one_call(b)
    end_call(b, t, ending)
    b.decide("call_1", t, verdict)
    assert codes(b.verify()) == {f"decision-after-{ending}"}


def test_reject_after_dispatch_but_answer_after_dispatch_is_fine() -> None:
    b = Build()
    t = one_call(b)
    b.dispatch("call_1", t)
    branch = b.last
    b.decide("call_1", t, "answer")
    assert errors(b.verify()) == []
    b.add(Decision(ts="", call_id="call_1", target=t, verdict="reject", reason="no"), parent=branch)
    assert codes(b.verify()) == {"reject-after-dispatch"}


@pytest.mark.parametrize("verdict", ["reject", "answer"])
def test_ending_a_call_after_its_output(verdict: str) -> None:
    b = Build(records=None)
    t = one_call(b)
    b.output("call_1")
    b.decide("call_1", t, verdict)
    assert codes(b.verify()) == {f"{verdict}-after-output"}


def test_hold_then_proceed_after_output_is_not_an_ending() -> None:
    b = Build(records=None)
    t = one_call(b)
    b.output("call_1")
    b.decide("call_1", t, "hold")
    assert errors(b.verify()) == []


def test_target_naming_another_call() -> None:
    b = Build()
    b.user()
    first = b.call("call_1")
    second = b.call("call_2")
    b.response()
    b.dispatch("call_1", first)
    assert errors(b.verify()) == []
    b.dispatch("call_2", first)
    found = b.verify()
    assert codes(found) == {"bad-target"}
    assert len(found) == 1
    assert "targets the call 'call_1'" in found[0].message
    b.dispatch("call_2", second)
    assert codes(b.verify()) == {"bad-target"}


def test_target_naming_no_call() -> None:
    b = Build(ALL)
    b.start("run-1")
    one_call(b)
    user = b.user("more")
    b.dispatch("call_1", user)
    b.output("call_1")
    found = b.verify()
    assert "bad-target" in codes(found)
    # The dispatch still binds by call_id, so the promise is kept.
    assert "records-promise" not in codes(found)


def test_repeated_call_id_on_another_branch() -> None:
    b = Build(records=None)
    b.user()
    fork = b.last
    b.call("call_1")
    b.response()
    assert errors(b.verify()) == []
    b.call("call_1", response="resp_9", parent=fork)
    found = b.verify()
    assert codes(found) == {"call-id-repeated"}


def test_empty_call_id() -> None:
    b = Build(records=None)
    b.user()
    b.add(Item(ts="", item={"type": "function_call", "call_id": "", "name": "x"}, response="r"))
    assert codes(b.verify()) == {"call-id-empty"}


def test_output_with_no_call_before_it_is_a_warning() -> None:
    b = Build(records=None)
    b.user()
    b.output("call_7")  # no function_call with that id on the path
    found = b.verify()
    assert errors(found) == []
    assert codes(found, "warning") == {"output-unbound"}


def test_second_output_for_one_call_is_a_warning() -> None:
    b = Build(records=None)
    one_call(b)
    b.output("call_1")
    assert b.verify() == []
    b.output("call_1", "again")
    found = b.verify()
    assert errors(found) == []
    assert codes(found, "warning") == {"output-repeated"}


# ----------------------------------------------------------------------------- records promise


def test_output_without_dispatch_breaks_the_promise_only_when_made() -> None:
    for records, expected in ((("dispatch",), {"records-promise"}), (None, set())):
        b = Build(records=records)
        one_call(b)
        b.output("call_1")
        assert codes(b.verify()) == expected


def test_rejected_call_owes_no_dispatch() -> None:
    b = Build(records=("dispatch",))
    t = one_call(b)
    b.decide("call_1", t, "reject")
    b.output("call_1", "not allowed")
    assert errors(b.verify()) == []


def test_answer_without_dispatch() -> None:
    for records, expected in ((("dispatch",), {"answer-not-dispatched"}), (None, set())):
        b = Build(records=records)
        t = one_call(b)
        b.decide("call_1", t, "answer")
        b.output("call_1", "outcome unknown")
        assert codes(b.verify()) == expected


def test_off_path_dispatch_satisfies_answer() -> None:
    b = Build(records=("dispatch",))
    t = one_call(b)
    here = b.last
    b.dispatch("call_1", t)  # on a branch that is then abandoned
    b.add(Decision(ts="", call_id="call_1", target=t, verdict="answer"), parent=here)
    b.output("call_1", "outcome unknown")
    assert errors(b.verify()) == []


@pytest.mark.parametrize("wrong", ["call_id", "target"])
def test_off_path_dispatch_half_naming_its_call_still_satisfies_answer(wrong: str) -> None:
    """A dispatch on an abandoned branch whose call_id or target alone names the call counts
    as its start: the one fault is the bad target, not also an answer never dispatched."""
    b = Build(records=("dispatch",))
    user = b.user()
    t = b.call("call_1")
    here = b.response()
    call_id, target = ("call_9", t) if wrong == "call_id" else ("call_1", user)
    b.add(Dispatch(ts="", call_id=call_id, target=target), parent=here)
    b.add(Decision(ts="", call_id="call_1", target=t, verdict="answer"), parent=here)
    b.output("call_1", "outcome unknown")
    assert codes(b.verify()) == {"bad-target"}


def answered(b: Build) -> Build:
    """A user message and the model's answer, its response after it."""
    b.user()
    b.answer("hi", "resp_1")
    b.response("resp_1")
    return b


def test_response_outside_any_run_breaks_the_run_promise() -> None:
    assert codes(answered(Build(records=("run",))).verify()) == {"records-promise"}
    assert answered(Build(records=None)).verify() == []


# ----------------------------------------------------------------------------- runs


def test_run_reason_done_and_mismatch() -> None:
    def session(reason: str) -> Build:
        b = Build(ALL)
        b.start("run-1")
        answered(b)
        b.end("run-1", reason)
        return b

    assert session("done").verify() == []
    found = session("stopped").verify()
    assert codes(found) == {"run-reason"}
    assert "reads done" in found[0].message


def test_run_reason_written_only_values_stand() -> None:
    for reason in ("error", "interrupted"):
        b = Build(ALL)
        b.start("run-1")
        b.user()
        b.end("run-1", reason)
        assert b.verify() == []


def test_run_reason_error_from_the_response() -> None:
    b = Build(ALL)
    b.start("run-1")
    b.user()
    b.response("resp_1", error={"type": "server_error", "code": "x", "message": "down"})
    b.end("run-1", "done")
    assert "run-reason" in codes(b.verify())


def test_run_input_required_when_held_and_aborted_when_in_flight() -> None:
    b = Build(ALL)
    b.start("run-1")
    t1, t2 = two_calls(b)
    b.decide("call_1", t1, "hold")
    held = b.last
    b.end("run-1", "input_required", ("call_1", "call_2"))
    assert errors(b.verify()) == []
    # The other call dispatched and still out: the run did not stop for input.
    b.dispatch("call_2", t2, parent=held)
    b.end("run-1", "input_required", ("call_1", "call_2"))
    found = b.verify()
    assert codes(found) == {"run-reason"}
    assert "reads aborted" in found[0].message


def test_run_stopped_after_a_refusal() -> None:
    b = Build(ALL)
    t = held_for_input(b)
    b.start("run-2", "resume")
    b.decide("call_1", t, "reject")
    b.output("call_1", "not allowed")
    b.end("run-2", "stopped")
    assert b.verify() == []


def test_run_pending_mismatch() -> None:
    b = Build(ALL)
    b.start("run-1")
    one_call(b)
    b.end("run-1", "aborted", ())
    found = b.verify()
    assert codes(found) == {"run-pending"}
    assert "call_1" in found[0].message


def test_run_source_resume_must_take_up_a_call() -> None:
    def session(source: str, take_up: bool) -> Build:
        b = Build(ALL)
        t = held_for_input(b)
        b.start("run-2", source)
        b.user("also this")  # a message before the take-up does not matter
        if take_up:
            b.dispatch("call_1", t)
            b.output("call_1")
        b.answer("ok", "resp_2")
        b.response("resp_2")
        b.end("run-2", "done")
        return b

    assert session("resume", take_up=True).verify() == []
    assert codes(session("resume", take_up=False).verify()) == {"run-source"}
    assert codes(session("input", take_up=True).verify()) == {"run-source"}
    assert session("input", take_up=False).verify() == []


def test_empty_resume_is_accepted() -> None:
    b = Build(ALL)
    held_for_input(b)
    b.start("run-2", "resume")
    b.end("run-2", "error")
    assert b.verify() == []


def test_run_left_open_and_run_started_inside_another() -> None:
    b = Build(ALL)
    b.start("run-1")
    b.user()
    found = b.verify()
    assert codes(found, "warning") == {"run-open"}
    assert errors(found) == []
    b.start("run-2")
    b.user()
    assert "run-unclosed" in codes(b.verify())


def test_run_end_without_its_start() -> None:
    b = Build(ALL)
    b.start("run-1")
    b.user()
    b.end("run-9", "done")
    assert "run-end-unmatched" in codes(b.verify())


def test_run_reason_aborted_by_an_incomplete_response() -> None:
    """Cascade step 3: a last response with ``incomplete`` reads aborted, not done."""
    b = Build(ALL)
    b.start("run-1")
    b.user()
    b.answer("partial", "resp_1")
    b.response("resp_1", incomplete={"reason": "max_output_tokens"})
    b.end("run-1", "aborted")
    assert b.verify() == []


def test_run_stopped_needs_every_call_on_the_path_answered() -> None:
    """Step 5 reads the whole path: a call of an earlier run still without output means the
    run that refused another one is aborted, not stopped."""
    b = Build(ALL)
    b.start("run-1")
    t1, t2 = two_calls(b)
    b.decide("call_1", t1, "hold")
    b.decide("call_2", t2, "hold")
    b.end("run-1", "input_required", ("call_1", "call_2"))
    b.start("run-2", "resume")
    b.decide("call_1", t1, "reject")
    b.output("call_1", "not allowed")
    b.end("run-2", "aborted")
    assert b.verify() == []


def test_run_stopped_needs_an_output_or_decision_in_its_segment() -> None:
    """Step 5: a run that only adds a message after a stopped run is aborted."""
    b = Build(ALL)
    b.start("run-1")
    t = one_call(b)
    b.dispatch("call_1", t)
    b.output("call_1")
    b.end("run-1", "stopped")
    b.start("run-2")
    b.user("and now?")
    b.end("run-2", "aborted")
    assert b.verify() == []


def test_run_source_reads_the_first_output_even_an_unbound_one() -> None:
    """An output of no call taking up nothing comes first, so the run is ``input`` even though a
    held call is taken up after it."""
    b = Build(ALL)
    t = held_for_input(b)
    b.start("run-2", "input")
    b.output("call_9")  # no such call: a warning, and it takes up nothing
    b.dispatch("call_1", t)
    b.output("call_1")
    b.answer("ok", "resp_2")
    b.response("resp_2")
    b.end("run-2", "done")
    found = b.verify()
    assert errors(found) == []
    assert codes(found, "warning") == {"output-unbound"}


def test_a_run_resuming_with_a_dispatch_alone_takes_up_the_held_call() -> None:
    """A dispatch takes up the call it starts: a run whose segment only dispatches a held call
    is a resume, and with that call in flight it ends aborted."""
    b = Build(ALL)
    t = held_for_input(b)
    b.start("run-2", "resume")
    b.dispatch("call_1", t)
    b.end("run-2", "aborted", ("call_1",))
    assert b.verify() == []
    b2 = Build(ALL)
    t = held_for_input(b2)
    b2.start("run-2", "input")
    b2.dispatch("call_1", t)
    b2.end("run-2", "aborted", ("call_1",))
    assert codes(b2.verify()) == {"run-source"}


def test_run_source_taking_up_an_answered_call_is_input() -> None:
    """A decision on a call that already had its output before the run resumes nothing."""
    b = Build(ALL)
    b.start("run-1")
    t = one_call(b)
    b.dispatch("call_1", t)
    b.output("call_1")
    b.end("run-1", "stopped")
    b.start("run-2", "input")
    b.decide("call_1", t, "hold")
    b.end("run-2", "stopped")
    assert b.verify() == []


def test_run_open_is_only_a_warning_when_run_records_are_promised() -> None:
    b = Build(("dispatch", "decision"))
    b.start("run-1")
    b.user()
    assert b.verify() == []


def test_a_run_left_open_is_still_checked() -> None:
    """The run another run cut short keeps its own rules: its written source is checked."""
    b = Build(ALL)
    first = b.start("run-1", "resume")
    b.user()  # a message and no call taken up: the shape of input
    b.start("run-2")
    b.user()
    b.end("run-2", "aborted")
    found = b.verify()
    assert codes(found) == {"run-source", "run-unclosed"}
    assert [f.entry for f in found if f.code == "run-source"] == [first]


def fork(origin: Build, records: tuple[str, ...], *more: Entry) -> SessionFile:
    """A fork of ``origin`` at its last entry: the prefix copied, then ``more`` under it."""
    assert origin.last is not None
    header = Header(
        id="01995b2a-0000-7000-8000-00000000f002",
        created_at="2026-10-01T10:00:00Z",
        records=records,
        base=origin.last,
        parent_session=origin.header.id,
    )
    entries = list(origin.builder.entries)
    for n, entry in enumerate(more):
        stamp = f"2026-10-01T10:00:{n:02d}Z"
        entries.append(seal(attrs.evolve(entry, ts=stamp), parent=entries[-1].id))
    return parse_session(header_line(header) + b"".join(entry_line(e) for e in entries))


def test_promises_do_not_cover_a_forks_prefix() -> None:
    """A fork promising dispatch and run records answers only for what it wrote itself."""
    origin = Build(records=None)
    t = one_call(origin)
    origin.decide("call_1", t, "answer")
    origin.output("call_1", "outcome unknown")
    origin.call("call_2", response="resp_2")
    origin.response("resp_2")
    origin.output("call_2")
    assert errors(origin.verify()) == []
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}
    found = verify_session(fork(origin, ALL, Item(ts="", item=item)))
    assert errors(found) == []


def test_answered_call_is_not_in_flight() -> None:
    """A dispatched call a decision answered waits on nothing: with another call held, the run
    needs input."""
    b = Build(ALL)
    b.start("run-1")
    t1, t2 = two_calls(b)
    b.decide("call_1", t1, "hold")
    b.dispatch("call_2", t2)
    b.decide("call_2", t2, "answer")
    b.end("run-1", "input_required", ("call_1", "call_2"))
    assert b.verify() == []


def test_hold_after_dispatch_holds_the_call() -> None:
    """A decision after a dispatch is the latest word: the call is held, not in flight."""
    b = Build(ALL)
    b.start("run-1")
    t = one_call(b)
    b.dispatch("call_1", t)
    b.decide("call_1", t, "hold")
    b.end("run-1", "input_required", ("call_1",))
    assert b.verify() == []


def test_a_dispatch_with_a_bad_target_still_binds_by_call_id() -> None:
    b = Build()
    t = one_call(b)
    b.dispatch("call_1", t)
    b.output("call_1")
    user = b.user("more")
    b.dispatch("call_1", user)
    assert codes(b.verify()) == {"bad-target", "dispatch-after-output"}


# ----------------------------------------------------------------------------- references

#: An entry id no file holds.
_NOWHERE = "sha256:" + "0" * 64


def test_outcome_target_must_be_in_the_file() -> None:
    b = Build(records=None)
    user = b.user()
    b.add(Outcome(ts="", kind="feedback", target=user))
    assert b.verify() == []
    b.add(Outcome(ts="", kind="feedback", target=_NOWHERE))
    assert codes(b.verify()) == {"outcome-target"}


def test_label_branch_summary_and_judged_by_must_name_entries_of_the_file() -> None:
    b = Build(records=None)
    user = b.user()
    summary = {"type": "message", "role": "user", "content": []}
    b.add(Label(ts="", target=user, label="start"))
    b.add(BranchSummary(ts="", from_=user, summary=summary))
    judge = "01995b2a-0000-7000-8000-00000000f002"
    b.add(Link(ts="", rel="judged_by", session=judge, target=user))
    assert b.verify() == []
    b.add(Label(ts="", target=_NOWHERE, label="lost"))
    b.add(BranchSummary(ts="", from_=_NOWHERE, summary=summary))
    b.add(Link(ts="", rel="judged_by", session=judge, target=_NOWHERE))
    found = b.verify()
    assert errors(found) == []
    assert codes(found, "warning") == {"label-target", "branch-from", "link-target"}


def test_first_kept_must_be_on_the_path() -> None:
    b = Build(records=None)
    fork = b.last
    aside = b.user("aside")
    b.add(Item(ts="", item={"type": "message", "role": "user", "content": []}), parent=fork)
    kept = b.user("kept")
    summary = {"type": "message", "role": "system", "content": []}
    b.add(Compaction(ts="", first_kept=kept, summary=summary))
    assert errors(b.verify()) == []
    b.add(Compaction(ts="", first_kept=aside, summary=summary))
    assert codes(b.verify()) == {"first-kept"}


def test_queued_from_must_name_a_queued_entry_on_the_path() -> None:
    b = Build(records=None)
    msg = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}
    queued = b.add(Queued(ts="", item=msg, mode="steer"))
    b.add(Item(ts="", item=msg, queued_from=queued))
    assert b.verify() == []
    user = b.user()
    b.add(Item(ts="", item=msg, queued_from=user))
    assert codes(b.verify()) == {"queued-from"}


def test_queued_entry_drained_twice_on_one_path_is_a_warning() -> None:
    b = Build(records=None)
    msg = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}
    queued = b.add(Queued(ts="", item=msg, mode="steer"))
    fork = b.add(Item(ts="", item=msg, queued_from=queued))
    # Drained again on another branch: each path drains it once.
    b.add(Item(ts="", item=msg, queued_from=queued), parent=queued)
    assert b.verify() == []
    b.add(Item(ts="", item=msg, queued_from=queued), parent=fork)
    found = b.verify()
    assert errors(found) == []
    assert codes(found, "warning") == {"queued-drained-twice"}


def test_missing_required_member() -> None:
    b = Build(records=None)
    t = one_call(b)
    b.add(Decision(ts="", call_id="call_1", target=t, verdict="reject"))
    found = b.verify()
    assert codes(found) == {"bad-member"}
    assert "reason" in found[0].message


def test_queued_drain_that_differs_is_a_warning() -> None:
    b = Build(records=None)
    msg = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}
    other = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "y"}]}
    trigger = {"kind": "human", "ref": "chat:1"}
    queued = b.add(Queued(ts="", item=msg, mode="followup", trigger=trigger))
    b.add(Item(ts="", item=other, queued_from=queued, source={"kind": "cron"}))
    found = b.verify()
    assert errors(found) == []
    assert codes(found, "warning") == {"queued-item", "queued-source"}


def test_values_outside_the_drafts_lists_are_warnings() -> None:
    b = Build(records=None)
    t = one_call(b)
    b.add(Decision(ts="", call_id="call_1", target=t, verdict="hold", by="robot"))
    b.add(Env(ts="", workspace={"kind": "moon", "ref": "x"}))
    found = b.verify()
    assert errors(found) == []
    assert [f.code for f in found if f.severity == "warning"] == ["bad-member", "bad-member"]
    # The env follows a model call and changes the workspace: also a substitution.
    assert codes(found, "info") == {"env-substitution"}


def test_a_member_of_the_wrong_type_is_a_warning() -> None:
    """The reader keeps it verbatim (in ``unknown``), but a reader of the format's types finds
    no value there: a producer's mistake worth telling. A member the rules read is an error
    instead, told once."""
    b = Build(records=None)
    kept = b.user()
    summary = {"type": "message", "role": "user", "content": []}
    b.add(Compaction(ts="", first_kept=kept, summary=summary, tokens_before=True))  # type: ignore[arg-type]
    b.add(Response(ts="", response_id="resp_1", model=7))  # type: ignore[arg-type]
    found = b.verify()
    assert errors(found) == []
    assert sorted(f.message for f in found if f.code == "bad-member") == [
        "compaction tokens_before has the wrong type: True",
        "response model has the wrong type: 7",
    ]
    msg = {"type": "message", "role": "user", "content": []}
    b.add(Item(ts="", item=msg, queued_from=5))  # type: ignore[arg-type]
    told = [(f.severity, f.message) for f in b.verify() if "queued_from" in f.message]
    assert told == [("error", "item queued_from has the wrong type: 5")]


def test_env_substitution_only_after_a_model_call() -> None:
    b = Build(records=None)
    b.add(Env(ts="", workspace={"kind": "local", "ref": ""}))
    b.add(Env(ts="", workspace={"kind": "container", "ref": "sha256:1"}))  # no call yet
    answered(b)
    b.add(Env(ts="", workspace={"kind": "container", "ref": "sha256:1", "host": ""}))
    found = b.verify()
    assert [(f.code, f.severity) for f in found] == [("env-substitution", "info")]
    assert found[0].line == len(b.builder.entries) + 1


# ----------------------------------------------------------------------------- subsessions


def _parent_and_child(parent_session: str, spawned_by: str) -> tuple[Build, Header, list[Entry]]:
    b = Build(records=None)
    t = one_call(b, "call_9")
    child_id = "01995b2a-0000-7000-8000-00000000f002"
    b.add(Link(ts="", rel="subsession", session=child_id, call_id="call_9"))
    b.output("call_9", "child said hi")
    del t
    child = Header(
        id=child_id,
        created_at="2026-10-01T09:05:00Z",
        parent_session=parent_session,
        spawned_by=spawned_by,
    )
    kid = SessionBuilder(child)
    kid.append(Config(ts="2026-10-01T09:05:01Z", model="gpt-5"))
    return b, child, kid.entries


def test_subsession_header_must_agree(tmp_path: Path) -> None:
    own = "01995b2a-0000-7000-8000-00000000f001"
    for parent_session, spawned_by, expected in (
        (own, "call_9", set()),
        ("someone-else", "call_9", {"subsession-header"}),
        (own, "call_1", {"subsession-header"}),
    ):
        b, child, entries = _parent_and_child(parent_session, spawned_by)
        child_session = parse_session(header_line(child) + b"".join(entry_line(e) for e in entries))

        def resolve(sid: str, found: SessionFile = child_session) -> SessionFile | None:
            return found if sid == found.header.id else None

        assert codes(verify_session(b.session(), resolver=resolve)) == expected
        # Without a resolver the rule cannot be checked.
        assert codes(b.verify()) == set()

    # verify_path finds the child among the directory's files by header id.
    b, child, entries = _parent_and_child("someone-else", "call_9")
    (tmp_path / "parent.jsonl").write_bytes(b.data())
    write_session(tmp_path / "sub" / "child.jsonl", child, entries)
    found = verify_path(tmp_path)
    assert [(Path(f.path).name, f.code) for f in errors(found)] == [
        ("parent.jsonl", "subsession-header")
    ]


def test_a_subsession_is_found_among_files_that_are_no_sessions(tmp_path: Path) -> None:
    """Looking a child up by header id skips any ``*.jsonl`` whose first line is no session
    header (another tool's log, a line without an id, one naming the child's id as another
    type): the child is still found and checked, and only those files are unreadable."""
    b, child, entries = _parent_and_child("someone-else", "call_9")
    (tmp_path / "parent.jsonl").write_bytes(b.data())
    write_session(tmp_path / "sub" / "child.jsonl", child, entries)
    (tmp_path / "a-log.jsonl").write_text('{"type": "summary", "leafUuid": "x"}\n')
    (tmp_path / "a-decoy.jsonl").write_text(json.dumps({"type": "note", "id": child.id}) + "\n")
    (tmp_path / "a-list.jsonl").write_text("[1, 2]\n")
    found = verify_path(tmp_path)
    assert sorted((Path(f.path).name, f.code) for f in errors(found)) == [
        ("a-decoy.jsonl", "unreadable"),
        ("a-list.jsonl", "unreadable"),
        ("a-log.jsonl", "unreadable"),
        ("parent.jsonl", "subsession-header"),
    ]


# ----------------------------------------------------------------------------- docs

_CODE = re.compile(r'(?:code=|_bad\(|_finding\(|_mismatch\()\s*"([a-z][a-z-]+)"')


def _emitted_codes() -> set[str]:
    """Every finding code the verifier's modules write, the f-string ones of the call rules
    included."""
    sources = sorted((ROOT / "asf_core" / "verify").glob("*.py"))
    emitted = {m for p in sources for m in _CODE.findall(p.read_text())}
    return emitted | {"reject-after-output", "answer-after-output"}


def test_every_code_is_documented() -> None:
    emitted = _emitted_codes()
    assert {"records-promise", "run-source", "first-kept", "omitted-of"} <= emitted
    docs = (ROOT / "docs" / "verify.md").read_text()
    module_doc = (ROOT / "asf_core" / "verify" / "session.py").read_text()
    for code in sorted(emitted):
        assert f"`{code}`" in docs, code
        assert f"``{code}``" in module_doc, code


#: Codes whose tests build them from a parameter (``f"dispatch-after-{ending}"``).
_PARAMETRISED = {
    "dispatch-after-reject",
    "dispatch-after-answer",
    "dispatch-after-output",
    "decision-after-reject",
    "decision-after-answer",
    "reject-after-output",
    "answer-after-output",
}


def test_every_code_is_exercised_by_a_test() -> None:
    emitted = _emitted_codes()
    tests = "".join(p.read_text() for p in sorted((ROOT / "tests").rglob("*.py")))
    shown = {c for c in emitted if f'"{c}"' in tests}
    assert emitted - shown - _PARAMETRISED == set()


# ----------------------------------------------------------------------------- robustness

_SOME_VECTORS = ["runs.jsonl", "replay.jsonl", "queued.jsonl", "converge.jsonl", "handback.jsonl"]
_MEMBERS = [
    "target",
    "call_id",
    "verdict",
    "pending",
    "reason",
    "source",
    "phase",
    "run_id",
    "queued_from",
    "first_kept",
    "item",
    "request_hash",
    "parent",
    "kind",
    "rel",
]
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@given(
    name=st.sampled_from(_SOME_VECTORS),
    edits=st.lists(
        st.tuples(st.integers(min_value=1, max_value=40), st.sampled_from(_MEMBERS), _JSON),
        max_size=4,
    ),
    reseal=st.booleans(),
    drop=st.sets(st.integers(min_value=1, max_value=40), max_size=3),
)
def test_verify_never_raises_on_damaged_sessions(
    name: str, edits: list[tuple[int, str, Any]], reseal: bool, drop: set[int]
) -> None:
    lines = (SESSIONS / name).read_bytes().splitlines()
    objs = [strict_json.parse(line) for line in lines]
    for at, key, value in edits:
        obj = objs[1 + at % (len(objs) - 1)]
        obj[key] = value
        if reseal:
            with contextlib.suppress(ids.IdError):
                obj["id"] = ids.entry_id(obj)
    kept = [o for i, o in enumerate(objs) if i == 0 or i not in drop]
    data = b"".join(canonical.dumps(o) + b"\n" for o in kept)
    session = parse_session(data)
    found = verify_session(session)
    keys = [(f.path, f.line, f.code) for f in found]
    assert keys == sorted(keys)
    assert all(f.severity in ("error", "warning", "info") for f in found)
