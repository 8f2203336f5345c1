"""The ASF data model: the session header and every core entry type of draft 0.11.

Every class is open: a member the class does not define, or a defined member whose value is
not of the type the draft gives it (a damaged or future file), is kept verbatim in
``unknown`` and written back unchanged, so reading and re-writing an entry never changes its
hash. Payload objects (Open Responses items, usage, tools, settings) stay plain JSON values:
ASF hashes them as written, so the model must not reshape them.

Field conventions (see :mod:`asf_core.codec`):

* an optional member is ``None`` when absent; a required member is always written, ``null``
  included (``label.label: null`` clears a label);
* JSON arrays are tuples, JSON objects plain ``dict``\\ s;
* members named with Python keywords carry a trailing underscore (``from_``, ``pass_``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import field, frozen

from asf_core import FORMAT, PAYLOAD

JSONObject = dict[str, Any]

__all__ = [
    "CONTEXT_TYPES",
    "CORE_TYPES",
    "RECORD_TYPES",
    "BranchSummary",
    "Compaction",
    "Config",
    "Custom",
    "Decision",
    "Dispatch",
    "Entry",
    "Env",
    "Extension",
    "Header",
    "Info",
    "Item",
    "JSONObject",
    "Label",
    "Link",
    "Outcome",
    "ParentRef",
    "Queued",
    "Response",
    "Run",
]


def _unknown() -> JSONObject:
    return {}


@frozen(kw_only=True)
class ParentRef:
    """One extra predecessor in ``parents``: provenance only, never walked for context."""

    entry: str
    session: str | None = None
    unknown: JSONObject = field(factory=_unknown)


@frozen(kw_only=True)
class Header:
    """Line 1 of a session file. Not hashed; unknown members survive any rewrite."""

    id: str
    created_at: str
    format: str = FORMAT
    payload: str = PAYLOAD
    type: str = "session"
    harness: JSONObject | None = None
    records: tuple[str, ...] | None = None
    cwd: str | None = None
    parent_session: str | None = None
    base: str | None = None
    spawned_by: str | None = None
    media: str | None = None
    redacted: bool | None = None
    unknown: JSONObject = field(factory=_unknown)


@frozen(kw_only=True)
class Entry:
    """The envelope every entry shares. ``id`` is ``None`` until a writer computes it."""

    TYPE: ClassVar[str] = ""
    #: Members a core entry requires; written even when ``None`` (as ``null``).
    REQUIRED: ClassVar[tuple[str, ...]] = ()

    ts: str
    id: str | None = None
    parent: str | None = None
    parents: tuple[ParentRef, ...] = ()
    #: The writer's record of what it normalised to keep the entry I-JSON.
    normalised: tuple[JSONObject, ...] | None = None
    unknown: JSONObject = field(factory=_unknown)
    #: The canonical line, kept by the writer that sealed the entry so it is encoded once.
    #: Not a member: never compared, never copied by ``attrs.evolve`` (a changed entry must
    #: be sealed again).
    _line: bytes | None = field(default=None, init=False, eq=False, repr=False)

    @property
    def type(self) -> str:
        return self.TYPE


# --- context entries -------------------------------------------------------------------


@frozen(kw_only=True)
class Item(Entry):
    """One Open Responses item in context."""

    TYPE: ClassVar[str] = "item"
    REQUIRED: ClassVar[tuple[str, ...]] = ("item",)

    item: JSONObject | None = None
    #: The provider's ``response_id`` of the call that produced the item (not an entry id).
    response: str | None = None
    visible: bool | None = None
    source: JSONObject | None = None
    queued_from: str | None = None


@frozen(kw_only=True)
class Response(Entry):
    """One model call; written after its output items."""

    TYPE: ClassVar[str] = "response"

    response_id: str | None = None
    model: str | None = None
    status: str | None = None
    usage: JSONObject | None = None
    error: JSONObject | None = None
    incomplete: JSONObject | None = None
    request_hash: str | None = None
    latency_ms: int | float | None = None
    attempts: int | None = None


@frozen(kw_only=True)
class Config(Entry):
    """A settings delta (or, with ``replace``, a full reset of the settings)."""

    TYPE: ClassVar[str] = "config"

    model: str | None = None
    instructions: str | None = None
    instructions_parts: tuple[JSONObject, ...] | None = None
    instructions_omitted: tuple[JSONObject, ...] | None = None
    omit: JSONObject | None = None
    reasoning: JSONObject | None = None
    text: JSONObject | None = None
    tools_added: tuple[JSONObject, ...] | None = None
    tools_removed: tuple[str, ...] | None = None
    #: Passthrough request members, merged key by key; a null value deletes the key.
    extra: JSONObject | None = None
    replace: bool | None = None


@frozen(kw_only=True)
class Compaction(Entry):
    """A fold: context restarts from ``summary`` + ``pinned`` + entries from ``first_kept``."""

    TYPE: ClassVar[str] = "compaction"
    REQUIRED: ClassVar[tuple[str, ...]] = ("summary",)

    first_kept: str | None = None
    summary: JSONObject | None = None
    pinned: tuple[JSONObject, ...] | None = None
    #: Full settings checkpoint (settings shape, not a delta).
    config: JSONObject | None = None
    tokens_before: int | None = None
    usage: JSONObject | None = None


@frozen(kw_only=True)
class BranchSummary(Entry):
    """The summary of an abandoned branch, entering context where the new branch continues."""

    TYPE: ClassVar[str] = "branch_summary"
    REQUIRED: ClassVar[tuple[str, ...]] = ("summary",)

    from_: str | None = None
    summary: JSONObject | None = None
    usage: JSONObject | None = None


# --- record entries ------------------------------------------------------------------


@frozen(kw_only=True)
class Run(Entry):
    """The start or end of one run of the agent loop."""

    TYPE: ClassVar[str] = "run"
    REQUIRED: ClassVar[tuple[str, ...]] = ("run_id", "phase")

    run_id: str | None = None
    phase: str | None = None
    source: str | None = None
    ref: str | None = None
    trigger: JSONObject | None = None
    reason: str | None = None
    pending: tuple[str, ...] | None = None


@frozen(kw_only=True)
class Dispatch(Entry):
    """A call handed to its tool."""

    TYPE: ClassVar[str] = "dispatch"
    REQUIRED: ClassVar[tuple[str, ...]] = ("call_id", "target")

    call_id: str | None = None
    target: str | None = None
    idempotency_key: str | None = None


@frozen(kw_only=True)
class Decision(Entry):
    """A verdict on a call: proceed, reject, hold or answer."""

    TYPE: ClassVar[str] = "decision"
    REQUIRED: ClassVar[tuple[str, ...]] = ("call_id", "target", "verdict")

    call_id: str | None = None
    target: str | None = None
    verdict: str | None = None
    by: str | None = None
    reason: str | None = None
    args: Any = None


@frozen(kw_only=True)
class Queued(Entry):
    """An input accepted while the agent was busy; enters context when drained."""

    TYPE: ClassVar[str] = "queued"
    REQUIRED: ClassVar[tuple[str, ...]] = ("item", "mode")

    item: JSONObject | None = None
    mode: str | None = None
    trigger: JSONObject | None = None
    ref: str | None = None


@frozen(kw_only=True)
class Label(Entry):
    """A bookmark on an entry; ``label`` None clears it, ``"leaf"`` marks the live branch."""

    TYPE: ClassVar[str] = "label"
    REQUIRED: ClassVar[tuple[str, ...]] = ("target", "label")

    target: str | None = None
    label: str | None = None
    synthetic: bool | None = None


@frozen(kw_only=True)
class Info(Entry):
    """Names the session."""

    TYPE: ClassVar[str] = "info"

    name: str | None = None


@frozen(kw_only=True)
class Env(Entry):
    """The environment in force from this entry on."""

    TYPE: ClassVar[str] = "env"

    cwd: str | None = None
    vcs: JSONObject | None = None
    files: JSONObject | None = None
    tools: JSONObject | None = None
    workspace: JSONObject | None = None


@frozen(kw_only=True)
class Outcome(Entry):
    """A judgement of an entry: feedback, test, task, tool error, eval."""

    TYPE: ClassVar[str] = "outcome"
    REQUIRED: ClassVar[tuple[str, ...]] = ("kind", "target")

    kind: str | None = None
    target: str | None = None
    score: int | float | None = None
    pass_: bool | None = None
    label: str | None = None
    details: JSONObject | None = None


@frozen(kw_only=True)
class Link(Entry):
    """A link to another session: subsession, fork_of, continued_in, judged_by."""

    TYPE: ClassVar[str] = "link"
    REQUIRED: ClassVar[tuple[str, ...]] = ("rel", "session")

    rel: str | None = None
    session: str | None = None
    call_id: str | None = None
    target: str | None = None


@frozen(kw_only=True)
class Custom(Entry):
    """Application state outside context, under a namespace."""

    TYPE: ClassVar[str] = "custom"
    REQUIRED: ClassVar[tuple[str, ...]] = ("ns",)

    ns: str | None = None
    data: Any = None
    call_id: str | None = None


@frozen(kw_only=True)
class Extension(Entry):
    """An ``ns:name`` entry (or any type this library does not know): kept, never in context."""

    TYPE: ClassVar[str] = ""

    kind: str = ""

    @property
    def type(self) -> str:
        return self.kind


CORE_TYPES: dict[str, type[Entry]] = {
    cls.TYPE: cls
    for cls in (
        Item,
        Response,
        Config,
        Compaction,
        BranchSummary,
        Run,
        Dispatch,
        Decision,
        Queued,
        Label,
        Info,
        Env,
        Outcome,
        Link,
        Custom,
    )
}
CONTEXT_TYPES = frozenset({"item", "response", "config", "compaction", "branch_summary"})
RECORD_TYPES = frozenset(CORE_TYPES) - CONTEXT_TYPES
