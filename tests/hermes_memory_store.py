"""A store held in memory: a database's rows, for tests and fuzzing.

:meth:`MemoryStore.from_rows` decodes raw column mappings with the reader
:class:`~hermes_plugin.source.database.SqliteStore` uses (:class:`RowReader`,
:func:`read_sessions`), so a test or a fuzzer can drive everything downstream without SQLite.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from types import TracebackType
from typing import Protocol, Self

from attrs import field, frozen
from hermes_columns import columns_of, flag

from hermes_plugin.source.columns import Cell, Columns, cell_text
from hermes_plugin.source.database import content_text
from hermes_plugin.source.rowreader import RowReader
from hermes_plugin.source.rows import Delegation, Message, Session
from hermes_plugin.source.store import (
    ClosesOnExit,
    RowCounts,
    Store,
    Stray,
    message_stray,
    read_sessions,
)

__all__ = ["Database", "MemoryStore"]


class Database(Store, Protocol):
    """A store read from a file, open until closed; a context manager.

    It is also an ``asf_core.formats.StoreHandle`` (``info`` and ``close``).
    """

    def info(self) -> dict[str, str | int | None]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


@frozen(kw_only=True)
class MemoryStore(ClosesOnExit):
    """The rows of one database, decoded.

    ``messages_of`` holds each session's rows in id order; ``loose`` holds
    rows whose session is not in ``session_rows`` (orphans).
    """

    store_name: str = "memory"
    schema: int | None = None
    session_rows: tuple[Session, ...] = ()
    strays: tuple[Stray, ...] = ()
    messages_of: Mapping[str, tuple[Message, ...]] = field(factory=dict)
    prompts: Mapping[str, str] = field(factory=dict)
    usage: Mapping[str, tuple[Columns, ...]] = field(factory=dict)
    delegated: tuple[Delegation, ...] = ()
    loose: tuple[Message, ...] = ()

    @classmethod
    def from_rows(
        cls,
        *,
        name: str = "memory",
        schema: int | None = None,
        sessions: Iterable[Mapping[str, Cell]] = (),
        messages: Iterable[Mapping[str, Cell]] = (),
        prompts: Mapping[str, str] | None = None,
    ) -> MemoryStore:
        """Decode raw rows (column name to cell, in column order) into a store; ``sessions``
        in the order a file's rows are read (by id)."""
        reader = RowReader(name)
        good, strays = read_sessions(reader, map(columns_of, sessions))
        known = {s.id for s in good}
        by_session: dict[str, list[Message]] = {}
        loose: list[Message] = []
        for position, row in enumerate(messages):
            message = reader.message(columns_of(row), position)
            if message.session_id in known:
                by_session.setdefault(message.session_id, []).append(message)
            else:
                loose.append(message)
        return cls(
            store_name=name,
            schema=schema,
            session_rows=tuple(sorted(good, key=lambda s: s.id)),
            strays=strays,
            messages_of={k: tuple(sorted(v, key=lambda m: m.id)) for k, v in by_session.items()},
            prompts=dict(prompts or {}),
            loose=tuple(loose),
        )

    @property
    def name(self) -> str:
        return self.store_name

    def version(self) -> int | None:
        return self.schema

    def sessions(self) -> tuple[tuple[Session, ...], tuple[Stray, ...]]:
        return self.session_rows, self.strays

    def messages(self, session_id: str) -> tuple[Message, ...]:
        return self.messages_of.get(session_id, ())

    def system_prompt(self, prompt_hash: str) -> str | None:
        return self.prompts.get(prompt_hash)

    def model_usage(self, session_id: str) -> tuple[Columns, ...]:
        return self.usage.get(session_id, ())

    def delegations(self) -> tuple[Delegation, ...]:
        return self.delegated

    def orphans(self, known_ids: Collection[str]) -> tuple[Stray, ...]:
        known = set(known_ids)
        rows = list(self.loose)
        for session_id, messages in self.messages_of.items():
            if session_id not in known:
                rows.extend(messages)
        return tuple(
            message_stray(
                m, None if m.error else f"its session {m.session_id!r} is not in sessions"
            )
            for m in sorted(rows, key=lambda m: m.unit)
            if m.session_id not in known
        )

    def row_counts(self, ids: Collection[str] | None = None) -> Mapping[str, RowCounts]:
        out: dict[str, RowCounts] = {}
        for message in (*self.loose, *(m for ms in self.messages_of.values() for m in ms)):
            key = cell_text(message.cols.get("session_id"))
            if key is None or (ids is not None and key not in ids):
                continue
            counts = out.get(key, RowCounts())
            out[key] = (
                RowCounts(counts.active + 1, counts.inactive)
                if flag(message.cols, "active", True)
                else RowCounts(counts.active, counts.inactive + 1)
            )
        return out

    def first_prompt(self, session_id: str) -> str | None:
        for message in self.messages_of.get(session_id, ()):
            text = content_text(message.content).strip()
            if message.role == "user" and text:
                return text
        return None

    def info(self) -> dict[str, str | int | None]:
        """Facts about the store for a report."""
        return {"name": self.store_name, "schema_version": self.schema, "access": "memory"}

    def close(self) -> None:
        """Nothing to release; here so the store is a Database too."""
