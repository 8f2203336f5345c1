"""Rows of ``sessions``, ``messages`` and ``async_delegations``, decoded: the one shape a row
has from the reader to the mapping.

A row keeps every column as read (``cols``), known or not, so nothing Hermes wrote is lost,
and lists in ``problems`` each column that does not hold what Hermes writes (the column is
then read as Hermes reads it). A row that cannot be read at all (no usable id, session or
role) carries ``error`` and is a stray. :mod:`hermes_plugin.source.rowreader` structures rows
into these classes; their decoded fields are listed in the order their problems are.
"""

from __future__ import annotations

from datetime import datetime

from attrs import field, frozen

from hermes_plugin.source.columns import Columns
from hermes_plugin.source.decode import NULL_CONTENT, Content, epoch
from hermes_plugin.source.jsontext import JsonValue
from hermes_plugin.source.toolcalls import NO_CALLS, ToolCall, ToolCalls

__all__ = ["Delegation", "Message", "Session", "message_unit", "session_unit"]


def session_unit(database: str, key: str) -> str:
    """How findings name a session row: ``<database>:sessions/<id>``."""
    return f"{database}:sessions/{key}"


def message_unit(database: str, key: str) -> str:
    """How findings name a message row: ``<database>:messages/<id>``."""
    return f"{database}:messages/{key}"


@frozen(kw_only=True)
class Session:
    """One row of ``sessions``.

    Text fields are None when the column is NULL or absent. ``started_at`` and
    ``ended_at`` are seconds since the epoch, None when unset or outside the
    trusted window. ``system_prompt`` is the row's own column; resolve the
    prompt with :func:`hermes_plugin.source.store.session_prompt`.
    """

    unit: str
    id: str
    source: str = ""
    model_config: dict[str, JsonValue] | None = None
    started_at: float | None = None
    parent_id: str | None = None
    model: str | None = None
    system_prompt: str | None = None
    system_prompt_hash: str | None = None
    ended_at: float | None = None
    end_reason: str | None = None
    session_key: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    git_repo_root: str | None = None
    title: str | None = None
    archived: bool = False
    cols: Columns = field(factory=Columns)
    problems: tuple[str, ...] = ()
    error: str | None = None

    @property
    def started(self) -> datetime | None:
        return None if self.started_at is None else epoch(self.started_at)

    @property
    def ended(self) -> datetime | None:
        return None if self.ended_at is None else epoch(self.ended_at)

    @property
    def working_dir(self) -> str | None:
        """The directory the session ran in: its ``cwd`` column, else a ``cwd`` text in its
        ``model_config`` (where Hermes' ACP adapter keeps an editor session's directory, the
        column left empty, and reads it back to list and resume the session); None if
        neither."""
        if self.cwd:
            return self.cwd
        value = None if self.model_config is None else self.model_config.get("cwd")
        return value if isinstance(value, str) and value else None

    def marker(self, name: str) -> str | None:
        """A model_config marker naming another session (``_branched_from`` ...); None if unset."""
        if self.model_config is None:
            return None
        value = self.model_config.get(name)
        return value if isinstance(value, str) and value else None


@frozen(kw_only=True)
class Message:
    """One row of ``messages``, as the converter and the mapping rule read it.

    ``content`` is decoded (see :func:`~hermes_plugin.source.decode.decode_content`); ``calls``
    is the decoded ``tool_calls`` column, ``tool_calls`` its entries that are objects.
    ``reasoning_content`` None is a NULL column, which Hermes tells from ``''``. The JSON
    carriers (``reasoning_details``, ``codex_*``) hold the JSON value, None when unset or
    invalid. ``active`` is true for a NULL cell and in a database without the column;
    ``has_summary`` says the database has ``_compressed_summary``.
    """

    unit: str
    id: int
    session_id: str
    role: str
    content: Content = NULL_CONTENT
    calls: ToolCalls = NO_CALLS
    display_metadata: dict[str, JsonValue] | None = None
    timestamp: float | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    reasoning_content: str | None = None
    reasoning_details: JsonValue = None
    codex_reasoning_items: JsonValue = None
    codex_message_items: JsonValue = None
    api_content: str | None = None
    effect_disposition: str | None = None
    platform_message_id: str | None = None
    display_kind: str | None = None
    message_uid: str | None = None
    absorbed_message_uids: JsonValue = None
    tool_call_uids: dict[str, JsonValue] | None = None
    tool_call_uid: str | None = None
    active: bool = True
    compacted: bool = False
    observed: bool = False
    summary: bool = False
    has_summary: bool = False
    cols: Columns = field(factory=Columns)
    problems: tuple[str, ...] = ()
    error: str | None = None

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The calls of ``tool_calls`` (a single object counts as a list of one)."""
        return self.calls.calls


@frozen(kw_only=True)
class Delegation:
    """A row of ``async_delegations``: the parent session of a background delegation.

    ``origin_session`` is the gateway routing key that dispatched it (not a
    session id); ``origin_session_id`` exists from schema 30.
    """

    id: str = ""
    parent_session_id: str | None = None
    origin_session: str | None = None
    origin_session_id: str | None = None
    state: str | None = None
    cols: Columns = field(factory=Columns)
