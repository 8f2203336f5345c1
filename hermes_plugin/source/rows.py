"""Rows of ``sessions`` and ``messages``, decoded: the fields a converter reads.

A row keeps every column as read (``cols``), so nothing Hermes wrote is lost,
and lists in ``problems`` each column that does not hold what Hermes writes
(the column is then read as Hermes reads it). A row that cannot be read at
all (no usable id, session or role) carries ``error`` and is a stray.
"""

from __future__ import annotations

from datetime import datetime

from attrs import field, frozen

from hermes_plugin.schema import MARKER_BRANCH, MARKER_DELEGATE, MARKER_RESET
from hermes_plugin.source.columns import Cell, Columns, RawText, cell_text
from hermes_plugin.source.decode import (
    Content,
    decode_content,
    decode_display_metadata,
    decode_epoch,
    decode_json_column,
    describe,
    epoch,
)
from hermes_plugin.source.jsontext import JsonValue
from hermes_plugin.source.toolcalls import ToolCall, decode_tool_calls

__all__ = ["Message", "Session", "message_unit", "session_unit"]

_MARKERS = (MARKER_BRANCH, MARKER_DELEGATE, MARKER_RESET)

#: Cell types that are never invalid text.
_PLAIN_CELLS = frozenset({type(None), str, int, float})


def session_unit(database: str, key: str) -> str:
    """How findings name a session row: ``<database>:sessions/<id>``."""
    return f"{database}:sessions/{key}"


def message_unit(database: str, key: str) -> str:
    """How findings name a message row: ``<database>:messages/<id>``."""
    return f"{database}:messages/{key}"


class _Reader:
    """Reads typed fields from a row and records what does not fit.

    The cells are looked up in a dict made once per row: a reader asks for some thirty
    columns of every row, mostly absent or null.
    """

    def __init__(self, cols: Columns) -> None:
        self.cols = cols
        self.cells = cols.mapping()
        self.problems: list[str] = []
        # Most rows hold only plain cells: look at the (few) types present before each cell.
        if not set(map(type, cols.values())) <= _PLAIN_CELLS:
            self.problems = [
                f"{name}: invalid UTF-8 (kept as bytes)"
                for name, value in zip(cols.names(), cols.values(), strict=True)
                if isinstance(value, RawText)
            ]

    def problem(self, name: str, why: str) -> None:
        self.problems.append(f"{name}: {why}")

    def text(self, name: str) -> str | None:
        value = self.cells.get(name)
        if value is None or type(value) is str:
            return value
        text = cell_text(value)
        if text is None:
            self.problem(name, f"{describe(value)}, not text")
        return text

    def flag(self, name: str, default: bool) -> bool:
        value = self.cells.get(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.problem(name, f"{describe(value)}, not a number; read as {int(default)}")
            return default
        return float(value) != 0

    def time(self, name: str) -> float | None:
        value = self.cells.get(name)
        seconds, ok = decode_epoch(value)
        if not ok:
            self.problem(name, f"{describe(value)}, not a time in [0, 4.2e9]")
        return seconds

    def json(self, name: str) -> JsonValue:
        value, ok = decode_json_column(self.cells.get(name))
        if not ok:
            self.problem(name, "invalid JSON")
        return value

    def json_object(self, name: str) -> dict[str, JsonValue] | None:
        value = self.json(name)
        if value is None or isinstance(value, dict):
            return value
        self.problem(name, "not a JSON object")
        return None


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
    parent_id: str | None = None
    model: str | None = None
    model_config: dict[str, JsonValue] | None = None
    system_prompt: str | None = None
    system_prompt_hash: str | None = None
    started_at: float | None = None
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

    def marker(self, name: str) -> str | None:
        """A model_config marker naming another session (``_branched_from`` ...); None if unset."""
        if self.model_config is None:
            return None
        value = self.model_config.get(name)
        return value if isinstance(value, str) and value else None

    @classmethod
    def from_row(cls, cols: Columns, *, database: str, position: int = 0) -> Session:
        """Decode a row of ``sessions``; ``position`` names a row whose id is unusable."""
        r = _Reader(cols)
        raw_id = cols.get("id")
        # An id that is not valid UTF-8 names no row a query can find again.
        session_id = raw_id if isinstance(raw_id, str) else None
        if not session_id:
            return cls(
                unit=session_unit(database, f"#{position}"),
                id="",
                cols=cols,
                problems=tuple(r.problems),
                error=f"id is {describe(raw_id) if cols.has('id') else 'absent'}",
            )
        source = r.text("source")
        if source is None:
            r.problem("source", "null")
        model_config = r.json_object("model_config")
        if model_config is not None:
            for marker in _MARKERS:
                value = model_config.get(marker)
                if value is not None and not isinstance(value, str):
                    r.problem("model_config", f"{marker} is not text")
        started_at = r.time("started_at")
        if cols.has("started_at") and cols.get("started_at") is None:
            r.problem("started_at", "null")
        return cls(
            unit=session_unit(database, session_id),
            id=session_id,
            source=source or "",
            parent_id=r.text("parent_session_id") or None,
            model=r.text("model"),
            model_config=model_config,
            system_prompt=r.text("system_prompt"),
            system_prompt_hash=r.text("system_prompt_hash") or None,
            started_at=started_at,
            ended_at=r.time("ended_at"),
            end_reason=r.text("end_reason"),
            session_key=r.text("session_key"),
            cwd=r.text("cwd"),
            git_branch=r.text("git_branch"),
            git_repo_root=r.text("git_repo_root"),
            title=r.text("title"),
            archived=r.flag("archived", False),
            cols=cols,
            problems=tuple(r.problems),
        )


@frozen(kw_only=True)
class Message:
    """One row of ``messages``.

    ``content`` is decoded (see :func:`~hermes_plugin.source.decode.decode_content`);
    ``tool_calls`` are the entries that decoded and ``bad_calls`` the
    entries that are not objects. ``reasoning_content`` None is a NULL
    column, which Hermes tells from ``''``. The JSON carriers
    (``reasoning_details``, ``codex_*``) hold the JSON value, None when unset
    or invalid. ``active`` is true for a NULL cell and in a database without
    the column; ``has_summary`` says the database has ``_compressed_summary``.
    """

    unit: str
    id: int
    session_id: str
    role: str
    content: Content = field(factory=lambda: Content(null=True))
    tool_calls: tuple[ToolCall, ...] = ()
    bad_calls: tuple[JsonValue, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    timestamp: float | None = None
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
    display_metadata: dict[str, JsonValue] | None = None
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
    def time(self) -> datetime | None:
        return None if self.timestamp is None else epoch(self.timestamp)

    @property
    def has_api_content(self) -> bool:
        """The row holds a non-empty ``api_content``, which Hermes replays instead of content."""
        return bool(self.api_content)

    @classmethod
    def from_row(cls, cols: Columns, *, database: str, position: int = 0) -> Message:
        """Decode a row of ``messages``; ``position`` names a row whose id is unusable."""
        r = _Reader(cols)
        cells = r.cells
        raw_id = cells.get("id")
        message_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
        unit = message_unit(database, f"#{position}" if message_id is None else str(message_id))
        session_id = cell_text(cells.get("session_id"))
        role = cell_text(cells.get("role"))
        if message_id is None or not session_id or role is None:
            return cls(
                unit=unit,
                id=-1 if message_id is None else message_id,
                session_id=session_id or "",
                role=role or "",
                cols=cols,
                problems=tuple(r.problems),
                error=_why_unreadable(cols),
            )
        content, ok = decode_content(cells.get("content"), "content" in cells)
        if not ok:
            value = cells.get("content")
            r.problem(
                "content",
                "'\\x00json:' prefix without valid JSON; kept as text"
                if isinstance(value, str | RawText)
                else f"{describe(value)}, not text",
            )
        calls = decode_tool_calls(cells.get("tool_calls"))
        if calls.error is not None:
            r.problem("tool_calls", f"{calls.error}; read as no calls")
        elif calls.bad:
            r.problem("tool_calls", f"{len(calls.bad)} entries are not objects")
        elif calls.single:
            r.problem("tool_calls", "a single object, not an array; read as a list of one")
        display_metadata, ok = decode_display_metadata(cells.get("display_metadata"))
        if not ok:
            r.problem("display_metadata", "not a JSON object; dropped")
        timestamp = r.time("timestamp")
        if "timestamp" in cells and cells["timestamp"] is None:
            r.problem("timestamp", "null")
        return cls(
            unit=unit,
            id=message_id,
            session_id=session_id,
            role=role,
            content=content,
            tool_calls=calls.calls,
            bad_calls=calls.bad,
            tool_call_id=r.text("tool_call_id"),
            tool_name=r.text("tool_name"),
            timestamp=timestamp,
            finish_reason=r.text("finish_reason"),
            reasoning=r.text("reasoning"),
            reasoning_content=r.text("reasoning_content"),
            reasoning_details=r.json("reasoning_details"),
            codex_reasoning_items=r.json("codex_reasoning_items"),
            codex_message_items=r.json("codex_message_items"),
            api_content=r.text("api_content"),
            effect_disposition=r.text("effect_disposition"),
            platform_message_id=_text_or_number(r, cells.get("platform_message_id")),
            display_kind=r.text("display_kind"),
            display_metadata=display_metadata,
            message_uid=r.text("message_uid"),
            absorbed_message_uids=r.json("absorbed_message_uids"),
            tool_call_uids=r.json_object("tool_call_uids"),
            tool_call_uid=r.text("tool_call_uid"),
            active=r.flag("active", True),
            compacted=r.flag("compacted", False),
            observed=r.flag("observed", False),
            summary=r.flag("_compressed_summary", False),
            has_summary="_compressed_summary" in cells,
            cols=cols,
            problems=tuple(r.problems),
        )


def _why_unreadable(cols: Columns) -> str:
    """Why a message row cannot be read: no integer id, no session, or no role."""
    if cols.int("id") is None:
        return f"id is {describe(cols.get('id')) if cols.has('id') else 'absent'}"
    if not cell_text(cols.get("session_id")):
        return f"session_id is {describe(cols.get('session_id'))}"
    return f"role is {describe(cols.get('role'))}"


def _text_or_number(r: _Reader, value: Cell) -> str | None:
    """platform_message_id: a platform's id, which callers may have bound as a number."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return r.text("platform_message_id")
