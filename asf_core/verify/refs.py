"""Reference and member rules: members naming entries or sessions, and record members' values.

Each function checks one rule over the whole file and returns findings; none needs more than
the path to the entry it checks. The member checks cover what the rules read: a record whose
required member is missing or mistyped cannot be checked any further, so it is reported here
once instead of silently skipped there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from asf_core import canonical
from asf_core.codec import typed_members
from asf_core.findings import shown
from asf_core.model import (
    BranchSummary,
    Compaction,
    Config,
    Decision,
    Dispatch,
    Entry,
    Env,
    Item,
    Label,
    Link,
    Outcome,
    Queued,
    Response,
    Run,
)
from asf_core.verify.common import ERROR, INFO, WARNING, Finding, SessionView, member

__all__ = [
    "env_findings",
    "first_kept_findings",
    "link_findings",
    "member_findings",
    "omitted_of_findings",
    "queued_findings",
    "target_findings",
]

VERDICTS = frozenset({"proceed", "reject", "hold", "answer"})
DECIDERS = frozenset({"human", "policy", "agent"})
OUTCOME_KINDS = frozenset({"feedback", "test", "task", "tool_error", "eval", "custom"})
LINK_RELS = frozenset({"subsession", "fork_of", "continued_in", "judged_by"})
WORKSPACE_KINDS = frozenset({"local", "container", "remote"})
QUEUE_MODES = frozenset({"steer", "followup"})
RUN_REASONS = frozenset({"error", "interrupted", "input_required", "aborted", "done", "stopped"})


def _finding(
    code: str, entry: Entry, message: str, kind: str = ERROR, member: str | None = None
) -> Finding:
    """A finding on ``entry``; ``member`` names the member it is about (one finding a member)."""
    data = {} if member is None else {"member": member}
    return Finding(code=code, message=message, kind=kind, entry=entry.id, data=data)


def _wrong_type(entry: Entry, name: str, kind: str = ERROR) -> Finding:
    """A typed member the reader kept verbatim (in ``unknown``): its value is of another type."""
    value = shown(entry.unknown[name])
    return _finding(
        "bad-member", entry, f"{entry.type} {name} has the wrong type: {value}", kind, name
    )


def target_findings(session: SessionView) -> Iterable[Finding]:
    """``outcome.target`` names an entry of this file (prefix allowed); label, branch summary
    ``from`` and judged_by targets should too."""
    for entry in session.entries:
        if isinstance(entry, Outcome) and isinstance(entry.target, str):
            if entry.target not in session.by_id:
                yield _finding(
                    "outcome-target",
                    entry,
                    f"outcome target {entry.target} is not an entry of this file",
                )
        elif isinstance(entry, Label) and isinstance(entry.target, str):
            if entry.target not in session.by_id:
                yield _finding(
                    "label-target",
                    entry,
                    f"label target {entry.target} is not an entry of this file",
                    WARNING,
                )
        elif isinstance(entry, BranchSummary) and isinstance(entry.from_, str):
            if entry.from_ not in session.by_id:
                yield _finding(
                    "branch-from",
                    entry,
                    f"branch_summary from {entry.from_} is not an entry of this file",
                    WARNING,
                )
        elif (
            isinstance(entry, Link)
            and entry.rel == "judged_by"
            and isinstance(entry.target, str)
            and entry.target not in session.by_id
        ):
            yield _finding(
                "link-target",
                entry,
                f"judged_by target {entry.target} is not an entry of this file",
                WARNING,
            )


def first_kept_findings(session: SessionView) -> Iterable[Finding]:
    """A compaction's ``first_kept`` is an entry on the path before it (§4.4)."""
    for entry in session.entries:
        if not isinstance(entry, Compaction):
            continue
        kept = member(entry, "first_kept")
        if kept is None:
            continue
        if not isinstance(kept, str) or entry.id is None or not session.above(kept, entry.id):
            yield _finding(
                "first-kept",
                entry,
                f"compaction first_kept {shown(kept)} is not an entry on the path before it",
            )


def queued_findings(session: SessionView) -> Iterable[Finding]:
    """An item's ``queued_from`` names a ``queued`` entry on the path before it, once (§4.9)."""
    drained: dict[str, str] = {}
    for entry in session.entries:
        if not isinstance(entry, Item) or entry.queued_from is None:
            continue
        source = entry.queued_from
        named = session.by_id.get(source) if isinstance(source, str) else None
        above = entry.id is not None and named is not None and session.above(source, entry.id)
        queued = named if above and isinstance(named, Queued) else None
        if queued is None:
            yield _finding(
                "queued-from",
                entry,
                f"queued_from {source} is not a queued entry on the path before the item",
            )
            continue
        if source in drained and entry.id is not None and session.above(drained[source], entry.id):
            yield _finding(
                "queued-drained-twice",
                entry,
                f"queued entry {source} was already drained by {drained[source]} on this path",
                WARNING,
            )
        drained.setdefault(source, entry.id or "")
        if queued.item is not None and entry.item is not None and queued.item != entry.item:
            yield _finding(
                "queued-item",
                entry,
                "the drained item differs from the item its queued entry accepted",
                WARNING,
            )
        if (
            entry.source is not None
            and queued.trigger is not None
            and entry.source != queued.trigger
        ):
            yield _finding(
                "queued-source",
                entry,
                "item source differs from its queued entry's trigger",
                WARNING,
            )


def link_findings(
    session: SessionView, resolver: Callable[[str], SessionView | None] | None
) -> Iterable[Finding]:
    """A resolvable subsession's header names this session and the link's call (§4.13)."""
    if resolver is None:
        return
    own = session.header.id
    for entry in session.entries:
        if not isinstance(entry, Link) or entry.rel != "subsession" or entry.session is None:
            continue
        child = resolver(entry.session)
        if child is None:
            continue  # never started, or not among the files we can see
        head = child.header
        if head.parent_session != own:
            yield _finding(
                "subsession-header",
                entry,
                f"subsession {entry.session} has parent_session {head.parent_session!r}, "
                f"not {own!r}",
            )
        if entry.call_id is not None and head.spawned_by != entry.call_id:
            yield _finding(
                "subsession-header",
                entry,
                f"subsession {entry.session} has spawned_by {head.spawned_by!r}, "
                f"not the link's call_id {entry.call_id!r}",
            )


def _resets(entry: Entry) -> bool:
    """A replace config or a compaction checkpoint discards earlier omitted lists."""
    return isinstance(entry, Compaction) or (isinstance(entry, Config) and entry.replace is True)


def _resets_above(session: SessionView) -> dict[str, str | None]:
    """Entry id -> the nearest entry above it on its path that :func:`_resets`, in one pass
    (a parent is earlier in the file than its children)."""
    found: dict[str, str | None] = {}
    for entry in session.entries:
        ident = entry.id or ""
        up = session.up_of(ident) if entry.id is not None else None
        found[ident] = None if up is None else up if _resets(session.by_id[up]) else found[up]
    return found


def omitted_of_findings(session: SessionView) -> Iterable[Finding]:
    """``{"keep": n, "of": id}`` names a config on the path before, carrying
    ``instructions_omitted``, not discarded since by a replace or checkpoint (0.11)."""
    resets: dict[str, str | None] | None = None
    for entry in session.entries:
        if not isinstance(entry, Config) or not entry.instructions_omitted:
            continue
        ofs = [e["of"] for e in entry.instructions_omitted if isinstance(e, dict) and "of" in e]
        if not ofs:
            continue
        if resets is None:
            resets = _resets_above(session)
        ident = entry.id or ""
        reset = resets.get(ident)  # the nearest list-discarding entry above this config
        for of in ofs:
            named = session.by_id.get(of) if isinstance(of, str) else None
            why = ""
            if named is None or entry.id is None or not session.above(of, ident):
                why = "names no entry on the path before this config"
            elif not isinstance(named, Config) or named.instructions_omitted is None:
                why = "names an entry that is not a config carrying instructions_omitted"
            elif reset is not None and session.above(of, reset):
                why = "names a list discarded since by a replace or a compaction checkpoint"
            elif entry.replace is True:
                why = "sits in a replace entry, which may not keep earlier lists"
            if why:
                yield _finding(
                    "omitted-of",
                    entry,
                    f"instructions_omitted keep of {shown(of)} {why}; kept as written",
                    WARNING,
                )


def _workspace(env: Env) -> dict[str, Any]:
    """The workspace for comparison: absent = {}, empty kind/ref = absent (§4.11)."""
    ws = dict(env.workspace or {})
    for name in ("kind", "ref"):
        if ws.get(name) == "":
            del ws[name]
    return ws


def env_findings(path: Iterable[Entry]) -> Iterable[Finding]:
    """Environment substitutions on a path: an env after a response changing the workspace."""
    in_force: dict[str, Any] = {}
    answered = False
    for entry in path:
        if isinstance(entry, Response):
            answered = True
        elif isinstance(entry, Env):
            ws = _workspace(entry)
            if answered and _differ(ws, in_force):
                yield _finding(
                    "env-substitution",
                    entry,
                    "workspace changed after a model call: what follows cannot be verified "
                    "against what came before",
                    INFO,
                )
            in_force = ws


def _differ(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two workspaces differ as JSON (``1`` is ``1.0``, ``true`` is not ``1``)."""
    try:
        return canonical.dumps(a) != canonical.dumps(b)
    except canonical.JsonError:  # not I-JSON (the reader said so): compare as written
        return a != b


def _want(entry: Entry, name: str, ok: Callable[[Any], bool], what: str) -> Finding | None:
    value = member(entry, name)
    if ok(value):
        return None
    actual = "missing" if value is None else shown(value)
    message = f"{entry.type} {name} must be {what}, is {actual}"
    return _finding("bad-member", entry, message, member=name)


def _is_str(v: Any) -> bool:
    return isinstance(v, str) and v != ""


def _one_of(values: frozenset[str]) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, str) and v in values


def _str_list(v: Any) -> bool:
    return isinstance(v, list | tuple) and all(isinstance(x, str) for x in v)


def _record_checks(entry: Entry) -> list[Finding | None]:
    """Required members of the record entries whose rules the verifier applies."""
    if isinstance(entry, Run):
        checks = [
            _want(entry, "run_id", _is_str, "a string"),
            _want(entry, "phase", _one_of(frozenset({"start", "end"})), "start or end"),
        ]
        if entry.phase == "start":
            checks.append(
                _want(entry, "source", _one_of(frozenset({"input", "resume"})), "input or resume")
            )
        elif entry.phase == "end":
            checks.append(_want(entry, "reason", _one_of(RUN_REASONS), "a run end reason"))
            checks.append(_want(entry, "pending", _str_list, "a list of call ids"))
        return checks
    if isinstance(entry, Dispatch):
        return [
            _want(entry, "call_id", _is_str, "a string"),
            _want(entry, "target", _is_str, "an entry id"),
        ]
    if isinstance(entry, Decision):
        checks = [
            _want(entry, "call_id", _is_str, "a string"),
            _want(entry, "target", _is_str, "an entry id"),
            _want(entry, "verdict", _one_of(VERDICTS), "proceed, reject, hold or answer"),
        ]
        if entry.verdict == "reject":
            checks.append(_want(entry, "reason", _is_str, "a string for a reject"))
        return checks
    if isinstance(entry, Queued):
        return [
            _want(entry, "item", lambda v: isinstance(v, dict), "an item object"),
            _want(entry, "mode", _one_of(QUEUE_MODES), "steer or followup"),
        ]
    if isinstance(entry, Outcome):
        return [
            _want(entry, "kind", _one_of(OUTCOME_KINDS), "an outcome kind"),
            _want(entry, "target", _is_str, "an entry id"),
        ]
    if isinstance(entry, Link):
        return [
            _want(entry, "rel", _is_str, "a string"),
            _want(entry, "session", _is_str, "a session id"),
        ]
    if isinstance(entry, Label):
        return [_want(entry, "target", _is_str, "an entry id")]
    if isinstance(entry, Item):
        return [_want(entry, "item", lambda v: isinstance(v, dict), "an item object")]
    return []


def _soft_checks(entry: Entry) -> Iterable[Finding]:
    """Values outside the draft's enumerations that a future minor might add: warnings."""
    if isinstance(entry, Decision) and entry.by is not None and entry.by not in DECIDERS:
        yield _finding(
            "bad-member",
            entry,
            f"decision by {shown(entry.by)} is not human, policy or agent",
            WARNING,
        )
    if isinstance(entry, Link) and entry.rel is not None and entry.rel not in LINK_RELS:
        yield _finding(
            "bad-member", entry, f"link rel {shown(entry.rel)} is not a rel of the draft", WARNING
        )
    if isinstance(entry, Env) and entry.workspace is not None:
        kind = entry.workspace.get("kind")
        if kind not in (None, "") and not (isinstance(kind, str) and kind in WORKSPACE_KINDS):
            yield _finding(
                "bad-member",
                entry,
                f"workspace kind {shown(kind)} is not local, container or remote",
                WARNING,
            )


#: Typed members the verifier's rules read: one written with a value of another type is an
#: error; any other typed member of the wrong type is a warning.
_READ_BY_RULES: dict[type[Entry], tuple[str, ...]] = {
    Item: ("source", "queued_from"),
    Outcome: ("score", "pass"),
    Response: ("request_hash",),
}


def _mistyped(entry: Entry, told: set[Any]) -> Iterable[Finding]:
    """Each typed member the reader kept verbatim (in ``unknown``) and no check above told
    of: those the rules read first, as errors, then the others, as warnings."""
    read = [n for n in _READ_BY_RULES.get(type(entry), ()) if entry.unknown.get(n) is not None]
    for name in read:
        yield _wrong_type(entry, name)
    for name in sorted(typed_members(type(entry)) & entry.unknown.keys() - {*read, *told}):
        yield _wrong_type(entry, name, WARNING)


def member_findings(session: SessionView) -> Iterable[Finding]:
    """Required members present and of their type; enumerated values known; any other member
    the format types written with a value of another type (a warning: the reader keeps it
    verbatim, but a reader of the format's types would not find it)."""
    for entry in session.entries:
        found = [f for f in (*_record_checks(entry), *_soft_checks(entry)) if f is not None]
        yield from found
        yield from _mistyped(entry, {f.data.get("member") for f in found})
