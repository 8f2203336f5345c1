"""Call rules: what may follow what for one function call on a path (RFC 0001 §4.1, §4.7, §4.8).

A call is the ``item`` entry holding a ``function_call``. On a root-first path, a ``decision``
or ``dispatch`` belongs to the call its ``target`` names (falling back to its ``call_id`` when
the target names no call, which is itself reported), an output to the latest earlier call with
its ``call_id``. The order rules: after a reject only the refusal output; after an answer only
the output; after the output nothing that ends or runs the call; a reject only for a call never
dispatched. With ``dispatch`` in the header's ``records``, an answered call needs a dispatch
(anywhere in the session, 0.10) and an output needs one unless a reject or answer stood in for
the run. Those promise rules cover only what this session wrote: a fork's prefix is another
session's record.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from attrs import define, field, frozen

from asf_core.model import Decision, Dispatch, Entry, Item
from asf_core.verify.common import (
    ERROR,
    WARNING,
    Finding,
    SessionView,
    call_id_of,
    function_call,
    function_output,
)

__all__ = [
    "Call",
    "CallTrace",
    "CallTracer",
    "call_id_findings",
    "dispatched_anywhere",
    "promise_findings",
]


@define
class Call:
    """One function call on a path and what the path holds for it, in path order."""

    entry: Item
    call_id: str
    decisions: list[Decision] = field(factory=list)
    dispatches: list[Dispatch] = field(factory=list)
    output: Item | None = None
    #: A dispatch came after the latest decision (so that decision no longer holds the call).
    dispatched_since_decision: bool = False

    @property
    def id(self) -> str:
        return self.entry.id or ""

    @property
    def pending(self) -> bool:
        return self.output is None

    def _latest_is(self, verdict: str) -> bool:
        return (
            bool(self.decisions)
            and not self.dispatched_since_decision
            and self.decisions[-1].verdict == verdict
        )

    @property
    def held(self) -> bool:
        """Waiting on someone: the latest decision is ``hold`` and no dispatch followed it."""
        return self._latest_is("hold")

    @property
    def in_flight(self) -> bool:
        """Handed to its tool with no output yet, and not since held or answered (0.8)."""
        return (
            self.output is None
            and bool(self.dispatches)
            and not self._latest_is("hold")
            and not self._latest_is("answer")
        )

    def has_verdict(self, verdict: str) -> bool:
        return any(d.verdict == verdict for d in self.decisions)


@frozen
class CallTrace:
    """The calls of a path, which call each bound entry belongs to, and the order findings."""

    calls: list[Call]
    #: Output, decision and dispatch entry id -> the call it is bound to.
    part_of: dict[str, Call]
    findings: list[Finding]
    #: Function-call entry id -> its call.
    by_entry: dict[str, Call] = field(factory=dict)


def _bad(code: str, entry: Entry, message: str, kind: str = ERROR) -> Finding:
    return Finding(code=code, message=message, kind=kind, entry=entry.id)


class CallTracer:
    """Walks a path once, binding records to calls and checking each against what came before.

    Fed entry by entry (:meth:`feed`), its state at any point is the state of the path so far,
    which is what a run's end reason is computed from.
    """

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.by_call_id: dict[str, Call] = {}
        self.by_entry: dict[str, Call] = {}
        self.part_of: dict[str, Call] = {}
        self.findings: list[Finding] = []
        self.calling_responses: set[str] = set()
        self.pending_count = 0

    def feed(self, entry: Entry) -> None:
        """Take the next entry of the path."""
        if isinstance(entry, Item):
            self.item(entry)
        elif isinstance(entry, Decision):
            self.decision(entry)
        elif isinstance(entry, Dispatch):
            self.dispatch(entry)

    def trace(self) -> CallTrace:
        """The calls so far."""
        return CallTrace(self.calls, self.part_of, self.findings, by_entry=self.by_entry)

    def run_calls(self, segment: Sequence[Entry]) -> list[Call]:
        """A run's calls: made in its segment, or taken up there by a bound entry (§4.6)."""
        found: dict[int, Call] = {}
        for entry in segment:
            key = entry.id or ""
            call = self.by_entry.get(key) or self.part_of.get(key)
            if call is not None:
                found.setdefault(id(call), call)
        return list(found.values())

    def made_calls(self, response_id: str | None) -> bool:
        """The response with this id has a function_call among its output items."""
        return bool(response_id) and response_id in self.calling_responses

    def item(self, entry: Item) -> None:
        call = function_call(entry)
        if call is not None:
            made = Call(entry=entry, call_id=call_id_of(call))
            self.calls.append(made)
            self.pending_count += 1
            if entry.response:
                self.calling_responses.add(entry.response)
            if made.call_id:
                self.by_call_id[made.call_id] = made
            if entry.id is not None:
                self.by_entry[entry.id] = made
            return
        output = function_output(entry)
        if output is None:
            return
        cid = call_id_of(output)
        bound = self.by_call_id.get(cid)
        if bound is None:
            self.findings.append(
                _bad(
                    "output-unbound",
                    entry,
                    f"function_call_output for call_id {cid!r} has no function_call before it "
                    "on the path",
                    WARNING,
                )
            )
            return
        if bound.output is not None:
            self.findings.append(
                _bad("output-repeated", entry, f"call {cid} already has an output", WARNING)
            )
            return
        bound.output = entry
        self.pending_count -= 1
        if entry.id is not None:
            self.part_of[entry.id] = bound

    def _bind(self, entry: Decision | Dispatch) -> Call | None:
        """The call a decision/dispatch is for; reports a target that does not name it."""
        kind = entry.type
        target, cid = entry.target, entry.call_id or ""
        named = self.by_entry.get(target) if target is not None else None
        if target is not None and named is None:
            self.findings.append(
                _bad(
                    "bad-target",
                    entry,
                    f"{kind} target {target} is not a function_call before it on the path",
                )
            )
        elif named is not None and named.call_id != cid:
            self.findings.append(
                _bad(
                    "bad-target",
                    entry,
                    f"{kind} for call_id {cid!r} targets the call {named.call_id!r}",
                )
            )
        return named if named is not None else self.by_call_id.get(cid)

    def decision(self, entry: Decision) -> None:
        call = self._bind(entry)
        if call is None:
            return
        verdict, cid = entry.verdict, call.call_id
        if call.has_verdict("reject"):
            self.findings.append(
                _bad("decision-after-reject", entry, f"decision follows a reject of call {cid}")
            )
        if call.has_verdict("answer"):
            self.findings.append(
                _bad("decision-after-answer", entry, f"decision follows an answer to call {cid}")
            )
        if verdict == "reject" and call.dispatches:
            self.findings.append(
                _bad(
                    "reject-after-dispatch",
                    entry,
                    f"reject of call {cid}, which was dispatched (a call that may have run "
                    "is ended by an answer)",
                )
            )
        if verdict in ("reject", "answer") and call.output is not None:
            self.findings.append(
                _bad(f"{verdict}-after-output", entry, f"{verdict} of call {cid} after its output")
            )
        call.decisions.append(entry)
        call.dispatched_since_decision = False
        if entry.id is not None:
            self.part_of[entry.id] = call

    def dispatch(self, entry: Dispatch) -> None:
        call = self._bind(entry)
        if call is None:
            return
        cid = call.call_id
        if call.output is not None:
            self.findings.append(
                _bad("dispatch-after-output", entry, f"dispatch of call {cid} after its output")
            )
        if call.has_verdict("reject"):
            self.findings.append(
                _bad("dispatch-after-reject", entry, f"dispatch of call {cid} after a reject")
            )
        if call.has_verdict("answer"):
            self.findings.append(
                _bad("dispatch-after-answer", entry, f"dispatch of call {cid} after an answer")
            )
        call.dispatches.append(entry)
        call.dispatched_since_decision = True
        if entry.id is not None:
            self.part_of[entry.id] = call


def dispatched_anywhere(session: SessionView) -> tuple[frozenset[str], frozenset[str]]:
    """Targets and call ids of every dispatch in the file, on any branch (0.10 rebase case)."""
    targets: set[str] = set()
    call_ids: set[str] = set()
    for entry in session.entries:
        if isinstance(entry, Dispatch):
            if entry.target is not None:
                targets.add(entry.target)
            if entry.call_id:
                call_ids.add(entry.call_id)
    return frozenset(targets), frozenset(call_ids)


def promise_findings(
    session: SessionView,
    trace: CallTrace,
    *,
    prefix: Collection[str],
    dispatched: tuple[frozenset[str], frozenset[str]],
) -> list[Finding]:
    """The ``records: ["dispatch"]`` rules for the calls of one path."""
    if "dispatch" not in (session.header.records or ()):
        return []
    targets, call_ids = dispatched
    out: list[Finding] = []
    for call in trace.calls:
        ran = bool(call.dispatches) or call.id in targets or call.call_id in call_ids
        if ran:
            continue
        answer = next((d for d in call.decisions if d.verdict == "answer"), None)
        if answer is not None and call.id not in prefix:
            out.append(
                _bad(
                    "answer-not-dispatched",
                    answer,
                    f"answer to call {call.call_id}, which the record shows never started "
                    "(dispatch is in records and the call has no dispatch)",
                )
            )
        output = call.output
        if (
            output is not None
            and output.id not in prefix
            and not call.has_verdict("reject")
            and answer is None
        ):
            out.append(
                _bad(
                    "records-promise",
                    output,
                    f"call {call.call_id} has an output and no dispatch, but the header "
                    "promises dispatch records",
                )
            )
    return out


def call_id_findings(session: SessionView) -> list[Finding]:
    """Every function_call has a non-empty call_id, unique in the session on all branches."""
    out: list[Finding] = []
    first: dict[str, str] = {}
    for entry in session.entries:
        call = function_call(entry)
        if call is None:
            continue
        cid = call_id_of(call)
        if not cid:
            out.append(_bad("call-id-empty", entry, "function_call without a call_id"))
        elif cid in first:
            out.append(
                _bad(
                    "call-id-repeated",
                    entry,
                    f"call_id {cid} is already used by the function_call {first[cid]}",
                )
            )
        else:
            first[cid] = entry.id or ""
    return out
