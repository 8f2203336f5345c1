"""The finished ATIF document: totals and notes over the whole path, links, sub-agents.

``total_steps`` follows the draft the file was written under. From draft 0.11 it counts the
path's model calls (responses, folds, branch summaries and ``custom`` entries recording a
call by its usage alone) and ``notes`` says so whenever that is not the number of steps;
files of earlier drafts keep the earlier rule (the steps, plus calls folded away). Either
way ``final_metrics`` totals the whole path, folded calls included, not only the steps shown.

A ``subsession`` link whose child session can be found (a ``SubsessionResolver``, e.g. the
other files of an export directory) embeds the child's trajectory in
``subagent_trajectories`` and references it from the observation of the call that spawned it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

from asf_core.export.atif import Builder, unknown_of
from asf_core.export.paths import PathView, SessionTree
from asf_core.model import BranchSummary, Compaction, Custom, Link, Response
from asf_core.session_file import SessionFile

__all__ = ["SubsessionResolver", "atif_document", "atif_documents", "main_document_name"]

JSON = dict[str, Any]

#: Finds a session by id (``None`` when it cannot be found or read).
SubsessionResolver = Callable[[str], SessionFile | None]

#: The first draft whose ``total_steps`` counts model calls.
_CALLS_RULE: Final = (0, 11)


def main_document_name(session_id: str) -> str:
    """Where a session's own trajectory is looked for when it could not be embedded."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "-" for c in session_id)


def atif_document(
    view: PathView,
    subsessions: SubsessionResolver | None = None,
    *,
    _embedding: Sequence[str] = (),
) -> JSON:
    """The ATIF-v1.8 document of one path (see the package documentation)."""
    builder = Builder(view)
    builder.build()
    _Finish(builder, subsessions, (*_embedding, view.session.header.id)).run()
    return builder.doc


class _Finish:
    def __init__(
        self, builder: Builder, resolver: SubsessionResolver | None, embedding: tuple[str, ...]
    ) -> None:
        self.b = builder
        self.view = builder.view
        self.resolver = resolver
        self.embedding = embedding
        self.subagents: list[JSON] = []

    def run(self) -> None:
        b, view = self.b, self.view
        if not b.steps and view.path:
            # ATIF needs one step: a path with nothing in context still says where it ends.
            b.add_step({"source": "system", "message": ""}, view.path[-1], {})
        self._omitted()
        root = b.root_extra
        root["openresponses"] = {"payload": view.session.header.payload}
        root["agentsession"] = self._agentsession()
        if view.preferred_over:
            root["preferred_over"] = [view.name(i) for i in view.preferred_over]
        if view.abandoned_at:
            root["abandoned_at"] = view.name(view.abandoned_at)
        fork_of = self._fork_of()
        if fork_of:
            root["fork_of"] = fork_of
        root.update(b.pending)
        b.pending = {}
        self._links()
        notes, final = self._final_metrics()
        doc = b.doc
        doc["steps"] = b.steps
        if notes:
            doc["notes"] = notes
        doc["final_metrics"] = final
        doc["extra"] = root
        if self.subagents:
            doc["subagent_trajectories"] = self.subagents

    def _omitted(self) -> None:
        for omitted in self.view.context.omitted:
            rec = {"entry_id": self.view.name(omitted["entry"]), "reason": omitted["reason"]}
            idx = self.b.step_by_entry.get(omitted["entry"])
            extra = self.b.steps[idx]["extra"] if idx is not None else self.b.root_extra
            extra.setdefault("omitted", []).append(rec)

    def _agentsession(self) -> JSON:
        view = self.view
        header = view.session.header
        out: JSON = {"format": header.format, "leaf": view.name(view.leaf)}
        for member in ("cwd", "parent_session", "spawned_by", "base"):
            value = getattr(header, member)
            if value:
                out[member] = value
        if header.records:
            out["records"] = list(header.records)
        if view.tree.session_name:
            out["name"] = view.tree.session_name
        if view.tree.labels:
            out["labels"] = {view.name(t): label for t, label in view.tree.labels.items()}
        if view.main:
            out["main"] = True
        return out

    def _fork_of(self) -> list[JSON]:
        """The other sessions' entries the path's root continues (a pre-0.5 fork)."""
        path = self.view.path
        if not path or path[0].parent is not None:
            return []
        own = self.view.session.header.id
        return [
            {"session": ref.session, "entry": ref.entry}
            for ref in path[0].parents
            if ref.session is not None and ref.session != own
        ]

    # -- totals -----------------------------------------------------------------------

    def _final_metrics(self) -> tuple[str, JSON]:
        view = self.view
        calls_rule = view.session.version >= _CALLS_RULE
        in_context = set(view.context.entries)
        prompt = completion = cached = calls = hidden = 0
        for entry in view.path:
            if isinstance(entry, Response | Compaction | BranchSummary):
                usage = entry.usage
            elif calls_rule and isinstance(entry, Custom) and isinstance(entry.data, dict):
                usage = entry.data.get("usage")
                if not isinstance(usage, dict):
                    continue
            else:
                continue
            calls += 1
            if entry.id not in in_context:
                hidden += 1
            if usage:
                details = usage.get("input_tokens_details")
                prompt += _count(usage.get("input_tokens"))
                completion += _count(usage.get("output_tokens"))
                cached += _count(details.get("cached_tokens") if isinstance(details, dict) else 0)
        steps = len(self.b.steps)
        notes: list[str] = []
        if calls_rule:
            total = calls
            if calls != steps:
                notes.append(
                    f"total_steps counts the path's {calls} model call(s), its responses, "
                    "folds, branch summaries and calls recorded with their usage alone, "
                    f"and not its {steps} steps."
                )
            if hidden:
                notes.append(
                    "The steps are the context after compaction and leave out "
                    f"{hidden} model call(s) that were folded away; final_metrics totals "
                    "the whole path."
                )
        else:
            total = steps + hidden
            if hidden:
                notes.append(
                    "The steps are the context after compaction and leave out "
                    f"{hidden} model call(s) that were folded away; total_steps counts them "
                    "and final_metrics totals the whole path."
                )
        final: JSON = {
            "total_prompt_tokens": prompt,
            "total_completion_tokens": completion,
            "total_cached_tokens": cached,
            "total_steps": total,
        }
        if self.b.outcomes:
            final["extra"] = {"outcome": self.b.outcomes}
        return " ".join(notes), final

    # -- links and sub-agents ---------------------------------------------------------

    def _links(self) -> None:
        others: list[JSON] = []
        name = self.view.name
        for link in self.b.links:
            rec: JSON = {"rel": link.rel, "session": link.session, "entry_id": name(link.id)}
            if link.call_id:
                rec["call_id"] = link.call_id
            if link.target:
                rec["target"] = name(link.target)
            rec.update(unknown_of(link))
            if link.rel != "subsession" or not link.session:
                others.append(rec)
                continue
            ref = self._subagent_ref(link)
            if not self._attach(link.call_id or "", ref):
                rec["subagent_trajectory_ref"] = ref
                others.append(rec)
        if others:
            self.b.root_extra["links"] = others

    def _subagent_ref(self, link: Link) -> JSON:
        session = link.session or ""
        leaf = self._answered_from(link)
        ref: JSON = {"session_id": session, "extra": {"entry_id": self.view.name(link.id)}}
        if leaf:
            ref["extra"]["child_leaf"] = leaf
            ref["trajectory_id"] = f"{session}/{leaf}"
        embedded = self._embed(session, leaf)
        if embedded is not None:
            ref["trajectory_id"] = embedded
        else:
            ref["trajectory_path"] = main_document_name(session) + ".json"
        return ref

    def _answered_from(self, link: Link) -> str:
        """The child entry the call's output converged: the leaf the answer came from."""
        for session, entry in self.b.call_from.get(link.call_id or "", ()):
            if session == link.session:
                return entry
        return ""

    def _embed(self, session_id: str, leaf: str) -> str | None:
        """Embed the child's path (the recorded leaf, else its main path); its id or None."""
        if self.resolver is None or session_id in self.embedding:
            return None
        child = self.resolver(session_id)
        if child is None or not child.entries:
            return None
        tree = SessionTree(child)
        target = child.current(leaf) if leaf else None
        if leaf and target is None:
            return None  # the record names a point this export cannot find: no substitute
        target = target or tree.main_leaf
        if target is None:
            return None
        trajectory_id = f"{session_id}/{tree.name(target)}"
        if all(doc["trajectory_id"] != trajectory_id for doc in self.subagents):
            doc = atif_document(tree.view(target), self.resolver, _embedding=self.embedding)
            doc["trajectory_id"] = trajectory_id
            self.subagents.append(doc)
        return trajectory_id

    def _attach(self, call_id: str, ref: JSON) -> bool:
        idx = self.b.call_step.get(call_id)
        if idx is None:
            return False
        results: list[JSON] = self.b.steps[idx].setdefault("observation", {"results": []})[
            "results"
        ]
        for result in results:
            if result.get("source_call_id") == call_id:
                result.setdefault("subagent_trajectory_ref", []).append(ref)
                return True
        results.append({"source_call_id": call_id, "subagent_trajectory_ref": [ref]})
        return True


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def atif_documents(
    session: SessionFile, leaves: Sequence[str], subsessions: SubsessionResolver | None = None
) -> Iterator[JSON]:
    """The documents of several paths of one session, built one at a time."""
    tree = SessionTree(session)
    for leaf in leaves:
        yield atif_document(tree.view(leaf), subsessions)
