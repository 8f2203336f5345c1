"""The steps of an ATIF document being built, and the record entries that ride along them.

Record entries (runs, dispatches, decisions, outcomes, labels, names, custom state, queued
inputs, environments, extensions) make no step of their own: a record of the entry waits in
``pending`` and lands in the ``extra`` of the next step, or of the document when no step
follows; a call's dispatches and decisions land on the step that made the call. The
reference exporter's member names are kept; where it drops something, it is kept here under
a name of its own (a run's ``trigger`` object as ``run_trigger``, a repeated dispatch under
``dispatches``, a dispatch's ``idempotency_key``, a ``custom`` entry's ``call_id``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from asf_core.export import atif_content as content
from asf_core.model import (
    Custom,
    Decision,
    Dispatch,
    Entry,
    Env,
    Extension,
    Info,
    Label,
    Outcome,
    Queued,
    Run,
)

__all__ = ["StepLog", "unknown_of"]

JSON = dict[str, Any]

#: Entry members a reader knows although the model keeps them among the unknown ones: the
#: migration's ``legacy_id`` and the writer's ``normalised`` log. They are not copied.
_KNOWN_EXTRA: Final = frozenset({"legacy_id", "normalised"})


def unknown_of(entry: Entry) -> JSON:
    """The entry's members this format does not define, for copying under their own names."""
    return {k: v for k, v in entry.unknown.items() if k not in _KNOWN_EXTRA}


class StepLog:
    """The steps so far, what waits for the next one, and where each entry and call went."""

    def __init__(self, name: Callable[[str | None], str], legacy: bool) -> None:
        #: Spells an entry id as the file does.
        self.name = name
        self.legacy = legacy
        #: Copied context (the kept window after a compaction): steps added are marked.
        self.copied = False
        self.steps: list[JSON] = []
        self.root_extra: JSON = {}
        self.outcomes: list[JSON] = []
        self.pending: JSON = {}
        self.step_by_entry: dict[str, int] = {}
        self.call_step: dict[str, int] = {}
        self.current_run: JSON | None = None
        self.saw_env = False

    def record(self, entry: Entry) -> None:
        """Labels, names, custom state, queued inputs, extensions: listed on the next step."""
        if isinstance(entry, Label):
            rec: JSON = {"target": self.name(entry.target), "label": entry.label}
            self.pend_list("labels", {**rec, "entry_id": self.name(entry.id), **unknown_of(entry)})
        elif isinstance(entry, Info):
            rec = {"entry_id": self.name(entry.id)}
            if entry.name:
                rec["name"] = entry.name
            self.pend_list("info", {**rec, **unknown_of(entry)})
        elif isinstance(entry, Custom):
            rec = {"ns": entry.ns, "data": entry.data, "entry_id": self.name(entry.id)}
            if entry.call_id is not None:
                rec["call_id"] = entry.call_id
            self.pend_list("custom", {**rec, **unknown_of(entry)})
        elif isinstance(entry, Queued):
            rec = {"entry_id": self.name(entry.id), "mode": entry.mode, "item": entry.item}
            if entry.trigger is not None:
                rec["trigger"] = entry.trigger
            if entry.ref:
                rec["ref"] = entry.ref
            self.pend_list("queued", {**rec, **unknown_of(entry)})
        elif isinstance(entry, Extension):
            self.pend_list("extensions", content.entry_json(entry, self.name, legacy=self.legacy))

    def run_record(self, entry: Run) -> None:
        if entry.phase == "start":
            rec: JSON = {
                "run_id": entry.run_id,
                "source": entry.source or "",
                "start_entry_id": self.name(entry.id),
            }
            if entry.ref:
                rec["trigger"] = entry.ref
            if entry.trigger is not None:
                rec["run_trigger"] = entry.trigger
            rec.update(unknown_of(entry))
            self.current_run = rec
            self.pend_list("run", rec)
            return
        rec = self.current_run or {}
        if rec.get("run_id") != entry.run_id:
            # An end without its start on this path: recorded on its own.
            rec = {"run_id": entry.run_id}
            self.pend_list("run", rec)
        rec["reason"] = entry.reason
        rec["end_entry_id"] = self.name(entry.id)
        if entry.ref:
            rec["cause"] = entry.ref
        rec["pending"] = list(entry.pending or ())
        rec.update(unknown_of(entry))
        self.current_run = None

    def call_record(self, entry: Dispatch | Decision) -> None:
        call = self._call_extra(entry.call_id or "")
        if isinstance(entry, Dispatch):
            rec: JSON = {"entry_id": self.name(entry.id)}
            if entry.idempotency_key is not None:
                rec["idempotency_key"] = entry.idempotency_key
            rec.update(unknown_of(entry))
            if "dispatch" in call:
                # A second hand-off: the first stays under "dispatch", all under "dispatches".
                call.setdefault("dispatches", [call["dispatch"]]).append(rec)
            else:
                call["dispatch"] = rec
            return
        rec = {"entry_id": self.name(entry.id), "verdict": entry.verdict}
        if entry.by:
            rec["by"] = entry.by
        if entry.reason:
            rec["reason"] = entry.reason
        if entry.args is not None:
            rec["args"] = entry.args
        rec.update(unknown_of(entry))
        call.setdefault("decisions", []).append(rec)

    def _call_extra(self, call_id: str) -> JSON:
        idx = self.call_step.get(call_id)
        extra = self.steps[idx]["extra"] if idx is not None else self.root_extra
        calls: JSON = extra.setdefault("calls", {})
        rec: JSON = calls.setdefault(call_id, {})
        return rec

    def outcome(self, entry: Outcome) -> None:
        rec: JSON = {"kind": entry.kind, "entry_id": self.name(entry.id)}
        if entry.target:
            rec["target"] = self.name(entry.target)
        if entry.score is not None:
            rec["score"] = entry.score
        if entry.pass_ is not None:
            rec["pass"] = entry.pass_
        if entry.label:
            rec["label"] = entry.label
        if entry.details:
            rec["details"] = entry.details
        rec.update(unknown_of(entry))
        self.outcomes.append(rec)
        idx = self.step_by_entry.get(entry.target or "")
        if idx is not None:
            self.steps[idx]["extra"].setdefault("outcome", []).append(rec)

    def env(self, entry: Env) -> None:
        env: JSON = {"entry_id": self.name(entry.id)}
        for member in ("cwd", "vcs", "files", "tools", "workspace"):
            value = getattr(entry, member)
            if value:
                env[member] = value
        env.update(unknown_of(entry))
        if not self.saw_env:
            self.saw_env = True
            self.root_extra["environment"] = env
        else:
            self.pending["environment"] = env

    def pend_list(self, key: str, value: Any) -> None:
        self.pending.setdefault(key, []).append(value)

    def add_step(self, step: JSON, anchor: Entry, extra: JSON) -> int:
        """Number the step, stamp it with its entry, attach what was pending."""
        out: JSON = {"step_id": len(self.steps) + 1, "timestamp": step.pop("timestamp", anchor.ts)}
        out.update(step)
        if self.copied and "is_copied_context" not in out:
            out["is_copied_context"] = True
        if out["source"] == "agent":
            out.setdefault("llm_call_count", 1)
        extra["agentsession"] = {"entry_id": self.name(anchor.id)}
        extra.update(self.pending)
        self.pending = {}
        out["extra"] = extra
        self.steps.append(out)
        idx = len(self.steps) - 1
        self.step_by_entry[str(anchor.id)] = idx
        return idx
