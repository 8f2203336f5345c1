"""A message row read by the positions of its cells: the common row without cattrs' general
structuring.

cattrs' generated code reads a dict of a row's cells by column name: the reader builds that
dict for every row, and the code tests each field's column for presence and guards each hook
call on its own. The columns of a table are in the same places in each of its rows, so a
:class:`MessageLayout`, made once per table, finds each field's cell by position and calls the
same cell hooks in the same order: the same values, the same noted problems. A row whose id,
session or role is not the plain cell Hermes writes, or on which a hook raises, is left to the
general path (:meth:`hermes_plugin.source.rowreader.RowReader.message`), which says why.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from attrs import frozen

from hermes_plugin.source.cellhooks import Hook
from hermes_plugin.source.columns import Columns, index_of
from hermes_plugin.source.rows import Message, message_unit

__all__ = ["NULL_NOTED", "MessageLayout"]

#: The message columns whose NULL cell is noted (Hermes always sets them). In every other
#: column a NULL reads as the field's default, unnoted, as an absent column does: readers
#: leave NULL cells out of what they structure (most cells of a row), and the hooks of their
#: fields are not called.
NULL_NOTED = frozenset({"timestamp"})


@frozen
class MessageLayout:
    """Where the cells of a ``messages`` table's rows are, for :meth:`read`.

    ``fields`` holds, in :class:`Message`'s field order, each decoded field whose column the
    table has: the field, its cell's position, its hook, and whether a NULL cell is read.
    """

    id: int
    session_id: int
    role: int
    fields: tuple[tuple[str, int, Hook, bool], ...]
    has_summary: bool

    @classmethod
    def of(
        cls, names: tuple[str, ...], hooks: Mapping[str, tuple[str, Hook]]
    ) -> MessageLayout | None:
        """The layout of a table with these columns, reading each field with ``hooks`` (by
        field: its column and hook); None for a table lacking an identity column (its rows are
        all strays, read by the general path)."""
        index = index_of(names)
        if not {"id", "session_id", "role"} <= index.keys():
            return None
        fields = []
        for field in attrs.fields(Message):
            if field.name in hooks:
                column, hook = hooks[field.name]
                if column in index:
                    fields.append((field.name, index[column], hook, column in NULL_NOTED))
        return cls(
            id=index["id"],
            session_id=index["session_id"],
            role=index["role"],
            fields=tuple(fields),
            has_summary="_compressed_summary" in index,
        )

    def read(self, cols: Columns, database: str, problems: list[str]) -> Message | None:
        """The row's message, each problem a hook notes added to ``problems`` (the list the
        hooks note to); None when the general path must read it."""
        values = cols.values()
        message_id = values[self.id]
        session_id = values[self.session_id]
        role = values[self.role]
        if type(message_id) is not int or type(session_id) is not str or type(role) is not str:
            return None
        if not session_id:
            return None
        decoded = {}
        try:
            for name, position, hook, null_read in self.fields:
                cell = values[position]
                if cell is not None or null_read:
                    decoded[name] = hook(cell, None)
        except Exception:  # the general path reports it as cattrs does
            return None
        return Message(
            unit=message_unit(database, str(message_id)),
            id=message_id,
            session_id=session_id,
            role=role,
            has_summary=self.has_summary,
            cols=cols,
            problems=tuple(problems),
            **decoded,
        )
