"""ATIF-v1.8 (Harbor's Agent Trajectory Interchange Format): one document per path.

The mapping is the ASF reference exporter's (draft 0.11, "Projections"), reproduced from its
published documents (``vectors/testdata/export``): the steps are the context at the leaf; a
model call's output items and its ``response`` entry make one agent step, whose tool calls
get their outputs as observations; user and system items are steps of their own; a fold or a
branch summary is a system step marked as copied context. Record entries (runs, dispatches,
decisions, queued inputs, labels, ...) make no step: they ride in the ``extra`` of the next
step, or of the document when no step follows. Every step keeps the raw items it was built
from under ``extra.openresponses``, so the path's items can be rebuilt from the document.

The builder walks the context once; :mod:`asf_core.export.atif_assembly` adds what needs the
whole path (totals, notes, links, sub-agents).
"""

from __future__ import annotations

from typing import Any, Final

from asf_core import FORMAT
from asf_core.context import SettingsReplay
from asf_core.export import atif_content as content
from asf_core.export.atif_steps import StepLog, unknown_of
from asf_core.export.items import (
    CALL_TYPES,
    OUTPUT_TYPES,
    is_model_output,
    role_of,
    tool_name,
    type_of,
)
from asf_core.export.paths import PathView
from asf_core.model import (
    BranchSummary,
    Compaction,
    Config,
    Custom,
    Decision,
    Dispatch,
    Entry,
    Env,
    Info,
    Item,
    Label,
    Link,
    Outcome,
    Response,
    Run,
)

__all__ = ["SCHEMA_VERSION", "Builder", "unknown_of"]

SCHEMA_VERSION: Final = "ATIF-v1.8"

JSON = dict[str, Any]

#: Entries skipped when the agent's defaults are read from the leading config entries.
_RECORDS: Final = (Env, Info, Label, Custom, Run, Dispatch, Decision)


def _replay(replay: SettingsReplay, config: Config) -> SettingsReplay:
    out = SettingsReplay() if config.replace else replay
    out.apply(config)
    return out


def _checkpoint(entry: Compaction) -> SettingsReplay:
    return SettingsReplay.from_checkpoint(entry)


class _Group:
    """Model output items waiting for their ``response`` entry."""

    def __init__(self, response_id: str, copied: bool) -> None:
        self.response_id = response_id
        self.entries: list[Item] = []
        self.copied = copied


class Builder(StepLog):
    """Builds the ATIF document of one path; :meth:`build` runs it once."""

    def __init__(self, view: PathView) -> None:
        self.view = view
        super().__init__(view.name, view.tree.legacy_named)
        header = view.session.header
        harness = header.harness or {}
        agent_name = harness.get("name") if isinstance(harness.get("name"), str) else ""
        version = harness.get("version") if isinstance(harness.get("version"), str) else ""
        self.doc: JSON = {
            "schema_version": SCHEMA_VERSION,
            "session_id": header.id,
            "trajectory_id": self.name(view.leaf),
            "agent": {"name": agent_name or "agentsession", "version": version or FORMAT},
        }
        self.group: _Group | None = None
        self.links: list[Link] = []
        #: What each call's output entry converged (``parents``), by call id.
        self.call_from: dict[str, list[tuple[str | None, str]]] = {}
        self.settings = SettingsReplay()
        self.window = SettingsReplay()
        self.compaction_id: str | None = None
        self.entries: list[Entry] = [view.session.by_id[i] for i in view.context.entries]

    # -- the walk ---------------------------------------------------------------------

    def build(self) -> JSON:
        first = self.entries[0] if self.entries else None
        if isinstance(first, Compaction):
            self.settings = _checkpoint(first)
            self.compaction_id = first.id
            self.copied = True
            self.window = self._settings_before(first)
        self._agent_defaults(first)
        for entry in self.entries:
            if self.copied and self.compaction_id and entry.parent == self.compaction_id:
                # The kept window ends here; a group still open in it is closed first.
                self._flush(None)
                self.copied = False
            self._entry(entry)
        self._flush(None)
        for outcome in self.view.outcomes_below:
            self.outcome(outcome)
        return self.doc

    def _settings_before(self, comp: Compaction) -> SettingsReplay:
        """What a call at the start of the kept window ran under: the path replayed up to
        ``first_kept``; the checkpoint when the path does not hold it."""
        replay = SettingsReplay()
        for entry in self.view.path:
            if entry.id == comp.first_kept:
                return replay
            if isinstance(entry, Config):
                replay = _replay(replay, entry)
            elif isinstance(entry, Compaction):
                replay = _checkpoint(entry)
        return _checkpoint(comp)

    def _agent_defaults(self, first: Entry | None) -> None:
        """The agent block: the settings the first step ran under."""
        replay = self.settings
        if not isinstance(first, Compaction):
            replay = SettingsReplay()
            for entry in self.entries:
                if isinstance(entry, Config):
                    replay = _replay(replay, entry)
                elif not isinstance(entry, _RECORDS):
                    break
        agent = self.doc["agent"]
        if replay.model:
            agent["model_name"] = replay.model
        tools = content.tool_definitions(replay.tools)
        if tools:
            agent["tool_definitions"] = tools

    def _in_force(self, copied: bool) -> SettingsReplay:
        return self.window if copied else self.settings

    def _entry(self, entry: Entry) -> None:
        if isinstance(entry, Item):
            self._item(entry)
        elif isinstance(entry, Response):
            self._flush(entry)
        elif isinstance(entry, Config):
            self._config(entry)
        elif isinstance(entry, Compaction):
            self._flush(None)
            self._compaction(entry)
        elif isinstance(entry, BranchSummary):
            self._flush(None)
            self._branch_summary(entry)
        elif isinstance(entry, Run):
            self.run_record(entry)
        elif isinstance(entry, Dispatch | Decision):
            self.call_record(entry)
        elif isinstance(entry, Outcome):
            self.outcome(entry)
        elif isinstance(entry, Link):
            self.links.append(entry)
        elif isinstance(entry, Env):
            self.env(entry)
        else:
            self.record(entry)

    def _config(self, entry: Config) -> None:
        # A config inside the kept window applies to the window alone: the checkpoint
        # already holds its effect on what follows.
        current = self._in_force(self.copied)
        before = {tool_name(t) for t in current.tools}
        after = _replay(current, entry)
        if self.copied:
            self.window = after
        else:
            self.settings = after
        now = {tool_name(t) for t in after.tools}
        change: JSON = {}
        if now - before:
            change["added"] = sorted(now - before)
        if before - now:
            change["removed"] = sorted(before - now)
        if change:
            self.pending["tool_changes"] = change
        self.pend_list("config_entries", self.name(entry.id))
        extra = unknown_of(entry)
        if extra:
            self.pend_list("config_extensions", {"entry_id": self.name(entry.id), **extra})

    def _item(self, entry: Item) -> None:
        item = entry.item
        if entry.response or is_model_output(item):
            open_id = self.group.response_id if self.group else ""
            if open_id and entry.response and open_id != entry.response:
                self._flush(None)
            if self.group is None:
                self.group = _Group(entry.response or "", self.copied)
            if not self.group.response_id:
                self.group.response_id = entry.response or ""
            self.group.entries.append(entry)
            return
        self._flush(None)
        kind = type_of(item)
        if kind == "message":
            user = role_of(item) == "user"
            extra = self._item_extra(entry)
            if not user:
                extra["role"] = role_of(item)
            step = {"source": "user" if user else "system", "message": content.message(item)}
            self.add_step(step, entry, extra)
        elif kind in OUTPUT_TYPES:
            self._output(entry, item or {})
        else:
            extra = self._item_extra(entry)
            extra["item_type"] = kind
            source = "user" if role_of(item) == "user" else "system"
            self.add_step({"source": source, "message": content.item_text(item)}, entry, extra)

    def _output(self, entry: Item, item: JSON) -> None:
        call_id = item.get("call_id")
        call_id = call_id if isinstance(call_id, str) else ""
        if entry.parents:
            self.call_from[call_id] = [(p.session, p.entry) for p in entry.parents]
        idx = self.call_step.get(call_id)
        result_content = content.output(item.get("output"))
        if idx is not None and self.steps[idx]["source"] == "agent":
            result: JSON = {"source_call_id": call_id}
            if result_content != "":
                result["content"] = result_content
            result["extra"] = self._item_extra(entry)
            self.steps[idx].setdefault("observation", {"results": []})["results"].append(result)
            self.step_by_entry[str(entry.id)] = idx
            return
        # An output whose call is not on this path: a system step, so the document validates.
        observation: JSON = {}
        if result_content != "":
            observation["content"] = result_content
        extra = self._item_extra(entry)
        extra["orphan_call_id"] = call_id
        step = {"source": "system", "message": "", "observation": {"results": [observation]}}
        self.add_step(step, entry, extra)

    def _item_extra(self, entry: Item) -> JSON:
        extra: JSON = {"openresponses": {"item": entry.item}}
        if entry.visible is False:
            extra["visible"] = False
        if entry.source is not None:
            extra["source"] = entry.source
        if entry.queued_from:
            extra["queued_from"] = self.name(entry.queued_from)
        extra.update(unknown_of(entry))
        return extra

    # -- model calls ------------------------------------------------------------------

    def _flush(self, response: Response | None) -> None:
        group, self.group = self.group, None
        if group is None and response is None:
            return
        response_id = (response.response_id or "") if response is not None else ""
        if group is None:
            group = _Group(response_id, self.copied)
        elif response is not None and group.response_id and group.response_id != response_id:
            # The open group belongs to another call: it becomes a step of its own first.
            self._agent_step(group, None)
            group = _Group(response_id, self.copied)
        self._agent_step(group, response)

    def _agent_step(self, group: _Group, response: Response | None) -> None:
        settings = self._in_force(group.copied)
        step: JSON = {"source": "agent"}
        if settings.model:
            step["model_name"] = settings.model
        effort = (settings.reasoning or {}).get("effort")
        if isinstance(effort, str) and effort:
            step["reasoning_effort"] = effort
        turn = content.agent_turn(group.entries)
        step["message"] = turn.message
        if turn.reasoning:
            step["reasoning_content"] = turn.reasoning
        if turn.tool_calls:
            step["tool_calls"] = turn.tool_calls
        if group.copied:
            step["is_copied_context"] = True
        openresponses: JSON = {"items": [e.item for e in group.entries]}
        extra: JSON = {"openresponses": openresponses}
        if turn.phases:
            extra["phases"] = turn.phases
        if group.entries:
            extra["item_entry_ids"] = [self.name(e.id) for e in group.entries]
        members = [unknown_of(e) for e in group.entries]
        if any(members):
            # Each entry's own members, in item order: copied under their own names they
            # would overwrite one another.
            extra["item_entry_members"] = members
        anchor: Entry | None = group.entries[0] if group.entries else None
        if response is not None:
            anchor = response
            self._response(step, extra, openresponses, response)
        elif group.response_id:
            extra["response_id"] = group.response_id
        if anchor is None:
            return
        idx = self.add_step(step, anchor, extra)
        for entry in group.entries:
            self.step_by_entry[str(entry.id)] = idx
            if type_of(entry.item) in CALL_TYPES:
                call_id = (entry.item or {}).get("call_id")
                self.call_step[call_id if isinstance(call_id, str) else ""] = idx

    def _response(self, step: JSON, extra: JSON, openresponses: JSON, resp: Response) -> None:
        openresponses["response"] = content.response_body(resp, self.name, legacy=self.legacy)
        if resp.model:
            step["model_name"] = resp.model
        step["timestamp"] = resp.ts
        if resp.attempts is not None and resp.attempts > 1:
            step["llm_call_count"] = resp.attempts
        if resp.usage is not None:
            step["metrics"] = content.metrics(resp.usage)
        if resp.status and resp.status != "completed":
            extra["status"] = resp.status
        if resp.error is not None:
            extra["error"] = resp.error
        if resp.incomplete is not None:
            extra["incomplete"] = resp.incomplete.get("reason")
        if isinstance(resp.latency_ms, int | float) and resp.latency_ms > 0:
            extra["latency_ms"] = resp.latency_ms
        extra.update(unknown_of(resp))

    # -- folds ------------------------------------------------------------------------

    def _compaction(self, entry: Compaction) -> None:
        text = content.item_text(entry.summary)
        payload: JSON = {"item": entry.summary}
        if entry.pinned:
            payload["pinned"] = list(entry.pinned)
        result: JSON = {"content": text} if text else {}
        step: JSON = {
            "source": "system",
            "message": text,
            "observation": {"results": [result]},
            "is_copied_context": True,
        }
        extra: JSON = {
            "context_management": {"type": "compaction", "boundary": "replace"},
            "openresponses": payload,
            "first_kept": self.name(entry.first_kept),
        }
        if isinstance(entry.tokens_before, int) and entry.tokens_before > 0:
            extra["tokens_before"] = entry.tokens_before
        if entry.usage is not None:
            extra["usage"] = entry.usage
        extra.update(unknown_of(entry))
        self.add_step(step, entry, extra)

    def _branch_summary(self, entry: BranchSummary) -> None:
        step = {
            "source": "system",
            "message": content.message(entry.summary),
            "is_copied_context": True,
        }
        extra: JSON = {
            "branch_from": self.name(entry.from_),
            "openresponses": {"item": entry.summary},
        }
        if entry.usage is not None:
            extra["usage"] = entry.usage
        extra.update(unknown_of(entry))
        self.add_step(step, entry, extra)
