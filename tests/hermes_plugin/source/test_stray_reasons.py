"""Why a row is a stray: the column that makes it unreadable, named with what its cell is, for
message rows whose session or role is unusable and for a session row no hook can read."""

from __future__ import annotations

from typing import Any

import pytest
from hermes_columns import columns_of

from hermes_plugin.source.rowreader import RowReader


@pytest.mark.parametrize(
    ("session_id", "role", "why"),
    [
        ("", "user", 'session_id is text ""'),
        (b"s", "user", "session_id is blob (1 bytes)"),
        (None, "user", "session_id is null"),
        ("s", None, "role is null"),
        ("s", b"user", "role is blob (4 bytes)"),
    ],
)
def test_a_message_row_names_the_cell_it_cannot_be_read_for(
    session_id: Any, role: Any, why: str
) -> None:
    """A row of no session (empty text, a BLOB, NULL) or no role is a stray, and its reason
    is that column and what its cell is (not the next column's)."""
    row = {"id": 4, "session_id": session_id, "role": role, "content": "hello"}
    message = RowReader("db").message(columns_of(row), position=2)
    assert message.error == why
    assert message.unit == "db:messages/4"
    assert message.cols == columns_of(row)


def test_a_session_row_no_hook_can_read_is_a_stray_with_cattrs_lines() -> None:
    """No cell SQLite gives fails a session hook; should one, the row is a stray saying where,
    in cattrs' words, keeping its id and cells."""

    class Hostile:
        def __eq__(self, other: object) -> bool:
            raise ValueError("no comparison")

        __hash__ = None  # type: ignore[assignment]

    row: dict[str, Any] = {"id": "s1", "source": "cli", "model_config": Hostile()}
    session = RowReader("db").session(columns_of(row), position=5)
    assert session.error is not None
    assert session.error.startswith("cannot read the row: invalid value for type")
    assert session.error.endswith("@ row.model_config")
    assert (session.id, session.unit) == ("s1", "db:sessions/s1")
    assert session.cols == columns_of(row)
