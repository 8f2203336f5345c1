"""Run rules: a run's written ``source``, ``reason`` and ``pending`` against its segment (§4.6).

A path is cut into runs at each ``run`` start; a run's segment runs from its start to the end
entry with its ``run_id`` (or to the end of the path when it was cut off). The recomputed values
follow the draft's first-match cascade; the written-only reasons ``error`` and ``interrupted``
stand over any segment. The run's calls are the calls of its segment plus earlier calls the
segment takes up (a decision, dispatch or output for them); ``pending`` lists those without an
output on the path up to the run's end.

Everything is computed in one walk of the path, feeding a :class:`CallTracer` as it goes: the
tracer's state when a run's end is reached is exactly the path up to that end.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from attrs import define, field

from asf_core.model import Decision, Entry, Response, Run
from asf_core.verify.calls import Call, CallTracer
from asf_core.verify.common import ERROR, WARNING, Finding, function_output, member

__all__ = [
    "COMPUTED_REASONS",
    "WRITTEN_ONLY_REASONS",
    "check_runs",
    "recompute_reason",
    "recompute_source",
]

#: Reasons only a writer can know (a harness failure, a person stopping the run).
WRITTEN_ONLY_REASONS = frozenset({"error", "interrupted"})
COMPUTED_REASONS = frozenset({"input_required", "aborted", "done", "stopped"})
SOURCES = frozenset({"input", "resume"})


@define
class _Span:
    """One run on the path being walked."""

    start: Run
    start_at: int
    end: Run | None = None
    segment: list[Entry] = field(factory=list)


def _has(entry: Entry, name: str) -> bool:
    return member(entry, name) is not None


def recompute_reason(
    tracer: CallTracer, segment: Sequence[Entry], last_on_path: Response | None
) -> str:
    """The end reason the segment reads as: never ``interrupted``, ``error`` only from a
    response's error. ``tracer`` has been fed the path up to the segment's end;
    ``last_on_path`` is the last response on that path."""
    last = next((e for e in reversed(segment) if isinstance(e, Response)), None)
    if last is not None and _has(last, "error"):
        return "error"
    pending = [c for c in tracer.run_calls(segment) if c.pending]
    if any(c.held for c in pending) and not any(c.in_flight for c in pending):
        return "input_required"
    if pending or (last is not None and _has(last, "incomplete")):
        return "aborted"
    if last is not None and not tracer.made_calls(last.response_id):
        return "done"
    answered = any(isinstance(e, Decision) or function_output(e) is not None for e in segment)
    if (
        last_on_path is not None
        and tracer.made_calls(last_on_path.response_id)
        and tracer.pending_count == 0
        and answered
    ):
        return "stopped"
    return "aborted"


def recompute_source(
    part_of: dict[str, Call],
    position: dict[str, int],
    span_start: int,
    segment: Sequence[Entry],
) -> str:
    """``resume`` iff the segment's first output/decision/dispatch takes up a call that was
    unanswered on the path when the run began; otherwise ``input``."""

    def before(entry_id: str | None) -> bool:
        return entry_id is not None and position.get(entry_id, span_start) < span_start

    for entry in segment:
        call = part_of.get(entry.id or "")
        if call is None:
            if function_output(entry) is not None:
                return "input"
            continue
        answered_before = call.output is not None and before(call.output.id)
        return "resume" if before(call.id) and not answered_before else "input"
    return "input"


def _mismatch(code: str, run: Run, message: str) -> Finding:
    return Finding(code=code, message=message, kind=ERROR, entry=run.id)


def _check_span(
    span: _Span,
    tracer: CallTracer,
    last_on_path: Response | None,
    position: dict[str, int],
) -> list[Finding]:
    out: list[Finding] = []
    run_id = span.start.run_id
    written = span.start.source
    inner = [e for e in span.segment[1:] if e is not span.end]
    if written in SOURCES and not (written == "resume" and not inner):
        got = recompute_source(tracer.part_of, position, span.start_at, span.segment)
        if got != written:
            out.append(
                _mismatch(
                    "run-source",
                    span.start,
                    f"run {run_id} starts as {written} but its segment is the shape of {got}",
                )
            )
    end = span.end
    if end is None:
        return out
    if end.reason is not None and end.reason not in WRITTEN_ONLY_REASONS:
        got = recompute_reason(tracer, span.segment, last_on_path)
        if got != end.reason:
            out.append(
                _mismatch(
                    "run-reason",
                    end,
                    f"run {run_id} ends {end.reason} but its segment reads {got}",
                )
            )
    if end.pending is not None:
        want = sorted(c.call_id for c in tracer.run_calls(span.segment) if c.pending)
        if sorted(end.pending) != want:
            out.append(
                _mismatch(
                    "run-pending",
                    end,
                    f"run {run_id} ends with pending {list(end.pending)} but its calls without "
                    f"an output are {want}",
                )
            )
    return out


def check_runs(
    path: Sequence[Entry],
    tracer: CallTracer,
    *,
    records: Collection[str],
    prefix: Collection[str],
) -> list[Finding]:
    """Check every run on a root-first path, feeding ``tracer`` every entry of the path."""
    out: list[Finding] = []
    position = {e.id: i for i, e in enumerate(path) if e.id is not None}
    current: _Span | None = None
    last_span: _Span | None = None
    last_response: Response | None = None
    for i, entry in enumerate(path):
        tracer.feed(entry)
        if isinstance(entry, Response):
            last_response = entry
        run = entry if isinstance(entry, Run) else None
        if run is not None and run.phase == "start":
            if current is not None:
                out.extend(_check_span(current, tracer, last_response, position))
                out.append(
                    Finding(
                        code="run-unclosed",
                        message=f"run {run.run_id} starts while run {current.start.run_id} "
                        "is open (a writer must end it first)",
                        entry=run.id,
                    )
                )
            current = last_span = _Span(start=run, start_at=i)
        elif (
            run is not None
            and run.phase == "end"
            and (current is None or run.run_id != current.start.run_id)
        ):
            out.append(
                Finding(
                    code="run-end-unmatched",
                    message=f"run end for {run.run_id} with no open run of that id",
                    entry=run.id,
                )
            )
        if current is None:
            if "run" in records and isinstance(entry, Response) and entry.id not in prefix:
                out.append(
                    Finding(
                        code="records-promise",
                        message="model call outside any run, but the header promises run records",
                        entry=entry.id,
                    )
                )
            continue
        current.segment.append(entry)
        if run is not None and run.phase == "end" and run.run_id == current.start.run_id:
            current.end = run
            out.extend(_check_span(current, tracer, last_response, position))
            current = None
    if current is not None:
        out.extend(_check_span(current, tracer, last_response, position))
    if last_span is not None and last_span.end is None and "run" in records:
        out.append(
            Finding(
                code="run-open",
                message=f"run {last_span.start.run_id} has no end on this path: cut off unless "
                "a writer is still running it",
                kind=WARNING,
                entry=last_span.start.id,
            )
        )
    return out
