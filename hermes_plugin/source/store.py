"""The rows of one Hermes database, behind one interface.

:class:`Store` is what a converter reads: a SQLite file
(:mod:`hermes_plugin.source.database`), or in the tests rows held in memory. Rows are read on
demand, one session's
messages at a time. A row that cannot be read is a :class:`Stray`, never an
error; a database that cannot be read at all raises the host's
:class:`~asf_core.formats.StoreError`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from types import TracebackType
from typing import Literal, Protocol, Self

from attrs import frozen

from hermes_plugin.source.columns import Columns
from hermes_plugin.source.rowreader import RowReader
from hermes_plugin.source.rows import Delegation, Message, Session, session_unit

__all__ = [
    "ClosesOnExit",
    "RowCounts",
    "Store",
    "Stray",
    "message_stray",
    "read_sessions",
    "session_prompt",
    "session_stray",
]


@frozen(kw_only=True)
class Stray:
    """A row read that belongs to no session it can be converted with, or cannot be read.

    ``kind`` is "session" or "message"; ``session`` names the session the
    row was read with, when it was; ``malformed`` says the row could not be
    read at all (as opposed to belonging nowhere).
    """

    unit: str
    kind: Literal["session", "message"]
    why: str
    session: str | None = None
    malformed: bool = False
    cols: Columns | None = None


@frozen
class RowCounts:
    """A session's message rows: live (active) and soft-deleted (inactive)."""

    active: int = 0
    inactive: int = 0


class Store(Protocol):
    """The rows of one Hermes database."""

    @property
    def name(self) -> str:
        """How units and findings name the database: its place in the Hermes home
        (``state.db``, ``profiles/<name>/state.db``) when the plugin opened it, else as the
        opener said (a file's default: its path as given)."""
        ...

    def version(self) -> int | None:
        """The schema version the database records; None when it records none."""
        ...

    def sessions(self) -> tuple[tuple[Session, ...], tuple[Stray, ...]]:
        """Every readable row of ``sessions`` (by id), and the rows that are not."""
        ...

    def messages(self, session_id: str) -> tuple[Message, ...]:
        """A session's rows of ``messages`` in id order (Hermes' order, never the
        timestamps'), active and inactive; rows with ``error`` set included."""
        ...

    def system_prompt(self, prompt_hash: str) -> str | None:
        """``system_prompts``' prompt of a hash (schema 25+); None if there is none."""
        ...

    def model_usage(self, session_id: str) -> tuple[Columns, ...]:
        """A session's rows of ``session_model_usage`` (schema 20+)."""
        ...

    def delegations(self) -> tuple[Delegation, ...]:
        """The rows of ``async_delegations`` (schema 21+)."""
        ...

    def orphans(self, known_ids: Collection[str]) -> tuple[Stray, ...]:
        """The rows of ``messages`` whose session is none of ``known_ids``."""
        ...

    def row_counts(self, ids: Collection[str] | None = None) -> Mapping[str, RowCounts]:
        """Active and inactive message rows per session id (of ``ids`` only, when given),
        without reading the rows."""
        ...

    def first_prompt(self, session_id: str) -> str | None:
        """The text of a session's first non-empty ``user`` row (rewound or compacted ones
        too): what a listing shows of a session without a title. Reads that row alone."""
        ...


class ClosesOnExit:
    """``with store:`` closes the store on the way out, error or not (what both stores do)."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def session_prompt(store: Store, session: Session) -> str | None:
    """The session's system prompt as Hermes resolves it.

    The ``system_prompts`` row its hash names (schema 25+), else the row's
    own ``system_prompt`` column (older or partially migrated rows, or a
    dangling hash), else None.
    """
    if session.system_prompt_hash:
        prompt = store.system_prompt(session.system_prompt_hash)
        if prompt is not None:
            return prompt
    return session.system_prompt


def session_stray(session: Session) -> Stray:
    """A session row that cannot be read, as a stray."""
    return Stray(
        unit=session.unit,
        kind="session",
        why=session.error or "unreadable row",
        session=session.id or None,
        malformed=True,
        cols=session.cols,
    )


def read_sessions(
    reader: RowReader, rows: Iterable[Columns]
) -> tuple[tuple[Session, ...], tuple[Stray, ...]]:
    """The rows of ``sessions`` in the order given: the readable ones, and as strays those
    that are not and each repeat of an id read before (ids are Hermes' primary key; the first
    row wins), named by its position."""
    good: list[Session] = []
    strays: list[Stray] = []
    seen: set[str] = set()
    for position, cols in enumerate(rows):
        session = reader.session(cols, position)
        if session.error is not None:
            strays.append(session_stray(session))
        elif session.id in seen:
            strays.append(
                Stray(
                    unit=session_unit(reader.database, f"#{position}"),
                    kind="session",
                    why=f"duplicate id {session.id!r}",
                    session=session.id,
                    malformed=True,
                    cols=cols,
                )
            )
        else:
            seen.add(session.id)
            good.append(session)
    return tuple(good), tuple(strays)


def message_stray(message: Message, why: str | None = None) -> Stray:
    """A message row as a stray: unreadable (``error``) or belonging nowhere (``why``)."""
    return Stray(
        unit=message.unit,
        kind="message",
        why=why or message.error or "unreadable row",
        session=message.session_id or None,
        malformed=message.error is not None,
        cols=message.cols,
    )
