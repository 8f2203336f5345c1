"""The values of a Hermes database that name people, chats or accounts.

Gateway sessions record who wrote and where (``user_id``, ``chat_id``, ``thread_id``, the
routing ``session_key`` built from them, ``display_name``, the ``origin_json`` object) and
every session the billing route (``billing_base_url``, in ``sessions`` and
``session_model_usage``). A converted session hands them to the host as its ``personal``
values, so a redacting host replaces them wherever they occur, in any session of the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from asf_core.model import Custom, Entry
from hermes_plugin.source.columns import Columns, cell_text
from hermes_plugin.source.jsontext import parse
from hermes_plugin.source.rows import Session

__all__ = ["IDENTITY_COLUMNS", "personal_in_entries", "personal_values"]

#: ``sessions`` columns whose whole value names a person, a chat or an account.
IDENTITY_COLUMNS = (
    "user_id",
    "chat_id",
    "thread_id",
    "session_key",
    "display_name",
    "origin_json",
    "billing_base_url",
)
#: Members of ``origin_json`` that say what kind of place, not which one.
_KINDS = frozenset({"platform", "chat_type", "source", "type"})


def _leaves(value: object) -> Iterator[str]:
    """The scalar members of a JSON value as text, but the ones naming a kind of place; in
    document order, walked with a stack of its own (a value may nest deep)."""
    stack: list[tuple[object, str]] = [(value, "")]
    while stack:
        node, key = stack.pop()
        if isinstance(node, dict):
            stack.extend((v, str(k)) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((v, key) for v in reversed(node))
        elif (
            isinstance(node, str | int | float)
            and not isinstance(node, bool)
            and key not in _KINDS
            and str(node).strip()
        ):
            yield str(node)


def _text(cell: object) -> str | None:
    """A cell (or a column's value as an entry keeps it) as the text it names."""
    if isinstance(cell, int | float) and not isinstance(cell, bool):
        return str(cell)
    text = cell_text(cell) if isinstance(cell, str | bytes) else None
    return text if text and text.strip() else None


def personal_values(
    sessions: Iterable[Session], usage: Iterable[Columns] = ()
) -> dict[str, tuple[str, ...]]:
    """Each identity column's values over ``sessions`` (and the billing URLs of ``usage``
    rows), by column; ``origin_json``'s scalar members count as ``origin_json`` values."""
    return _values((s.cols.mapping() for s in sessions), (row.mapping() for row in usage))


def personal_in_entries(entries: Iterable[Entry]) -> dict[str, tuple[str, ...]]:
    """The same values read back from a converted session's entries: the session rows its
    ``custom`` entries keep (``hermes.session_columns``) and the usage rows
    (``hermes.columns`` of a ``session_model_usage`` row)."""
    sessions: list[Mapping[str, object]] = []
    usage: list[Mapping[str, object]] = []
    for entry in entries:
        member = entry.unknown.get("hermes") if isinstance(entry, Custom) else None
        if not isinstance(member, dict):
            continue
        columns = member.get("session_columns")
        if isinstance(columns, dict):
            sessions.append(columns)
        row, columns = member.get("row"), member.get("columns")
        if isinstance(row, str) and ":session_model_usage/" in row and isinstance(columns, dict):
            usage.append(columns)
    return _values(sessions, usage)


def _values(
    sessions: Iterable[Mapping[str, object]], usage: Iterable[Mapping[str, object]]
) -> dict[str, tuple[str, ...]]:
    found: dict[str, dict[str, None]] = {}

    def add(kind: str, value: str | None) -> None:
        if value is not None:
            found.setdefault(kind, {})[value] = None

    for cells in sessions:
        for name in IDENTITY_COLUMNS:
            value = _text(cells.get(name))
            add(name, value)
            if name == "origin_json" and value is not None:
                parsed, ok = parse(value)
                if not ok:
                    continue
                for leaf in _leaves(parsed):
                    add(name, leaf)
    for row in usage:
        add("billing_base_url", _text(row.get("billing_base_url")))
    return {kind: tuple(values) for kind, values in found.items()}
