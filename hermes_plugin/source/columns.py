"""One database row as read: its columns by name, in the table's order.

Hermes adds columns as it needs them, so rows are read by name and every
column is kept, known or not. SQLite is dynamically typed: the accessors say
exactly what a cell holds and never coerce (text that spells a number is not
a number, a number is not text), so a damaged cell is seen as damaged.
"""

from __future__ import annotations

import base64
import builtins
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import TypeAlias

from attrs import field, frozen

from hermes_plugin.source.jsontext import JsonValue, compact, parse

__all__ = [
    "JSON_COLUMNS",
    "Cell",
    "Column",
    "Columns",
    "RawText",
    "cell_text",
    "index_of",
    "text_cell",
]


class RawText(bytes):
    """A TEXT cell that is not valid UTF-8, kept as its bytes.

    Hermes never writes one, but a foreign or damaged writer can; the bytes
    are kept so a converter can normalise them, and readers see the text with
    U+FFFD in place of each bad sequence.
    """

    def text(self) -> str:
        """The text with each invalid sequence replaced by U+FFFD."""
        return self.decode("utf-8", errors="replace")


#: A cell as the sqlite3 module reads it (with :class:`RawText` for bad text).
Cell: TypeAlias = int | float | str | bytes | None

#: Columns Hermes writes JSON text into; :meth:`Columns.to_json` inlines them.
JSON_COLUMNS = frozenset(
    {
        "model_config",
        "origin_json",
        "tool_calls",
        "reasoning_details",
        "codex_reasoning_items",
        "codex_message_items",
        "display_metadata",
        "absorbed_message_uids",
        "tool_call_uids",
        "event_json",
        "result_json",
        "task_json",
    }
)


def text_cell(data: bytes) -> str | RawText:
    """A TEXT cell from its bytes (an sqlite3 ``text_factory``): text, or RawText if not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return RawText(data)


def cell_text(value: Cell) -> str | None:
    """The text of a text cell (bad UTF-8 replaced); None for any other cell."""
    if isinstance(value, RawText):
        return value.text()
    if isinstance(value, str):
        return value
    return None


@frozen
class Column:
    """One column of a row: its name and its cell."""

    name: str
    value: Cell


def index_of(names: Iterable[str]) -> dict[str, builtins.int]:
    """Column positions by name (the first of a repeated name wins).

    Computed once per table and shared by its rows.
    """
    index: dict[str, builtins.int] = {}
    for i, name in enumerate(names):
        index.setdefault(name, i)
    return index


@frozen(init=False)
class Columns:
    """A row of a table in the table's column order.

    Absent (the table has no such column), null and empty text are three
    different things: Hermes tells NULL from ``''`` in some columns, and an
    older database lacks the newer columns. Build one from :class:`Column`
    cells, with :meth:`of`, or (fast, for a table's many rows) with
    :meth:`from_values`.
    """

    _names: tuple[str, ...]
    _values: tuple[Cell, ...]
    _index: Mapping[str, builtins.int] = field(eq=False, repr=False, hash=False)

    def __init__(self, cells: Iterable[Column] = ()) -> None:
        cells = tuple(cells)
        names = tuple(c.name for c in cells)
        self.__attrs_init__(names, tuple(c.value for c in cells), index_of(names))

    @classmethod
    def from_values(
        cls,
        names: tuple[str, ...],
        values: tuple[Cell, ...],
        index: Mapping[str, builtins.int] | None = None,
    ) -> Columns:
        """A row from its names and cells; ``index`` is :func:`index_of` of the names."""
        if len(names) != len(values):
            raise ValueError("a row needs one cell per column name")
        row = cls.__new__(cls)
        row.__attrs_init__(names, values, index_of(names) if index is None else index)
        return row

    @classmethod
    def of(cls, row: Mapping[str, Cell] | Iterable[tuple[str, Cell]]) -> Columns:
        """Build a row from a mapping or from (name, cell) pairs, in their order."""
        pairs = tuple(row.items() if isinstance(row, Mapping) else row)
        return cls.from_values(tuple(n for n, _ in pairs), tuple(v for _, v in pairs))

    @property
    def cells(self) -> tuple[Column, ...]:
        """The row's columns, in order."""
        return tuple(Column(n, v) for n, v in zip(self._names, self._values, strict=True))

    def __len__(self) -> builtins.int:
        return len(self._names)

    def __iter__(self) -> Iterator[Column]:
        return iter(self.cells)

    def names(self) -> tuple[str, ...]:
        """The column names, in order."""
        return self._names

    def values(self) -> tuple[Cell, ...]:
        """The cells, in column order."""
        return self._values

    def mapping(self) -> dict[str, Cell]:
        """The cells by name (the first of a repeated name wins), for a reader that looks up
        many columns of one row: one dict lookup each instead of a method call."""
        if len(self._index) == len(self._names):
            return dict(zip(self._names, self._values, strict=True))
        values = self._values
        return {name: values[i] for name, i in self._index.items()}

    def has(self, name: str) -> bool:
        """Whether the row has the column, null or not."""
        return name in self._index

    def get(self, name: str, default: Cell = None) -> Cell:
        """A column's cell; ``default`` when the row has no such column (see :meth:`has`)."""
        i = self._index.get(name)
        return default if i is None else self._values[i]

    def text(self, name: str) -> str | None:
        """A text column's text; None when it is absent, null or not text."""
        return cell_text(self.get(name))

    def string(self, name: str) -> str:
        """A text column's text; empty when it is absent, null or not text."""
        return self.text(name) or ""

    def int(self, name: str) -> builtins.int | None:
        """An integer column; None when it is absent, null or holds anything else."""
        value = self.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return None

    def float(self, name: str) -> builtins.float | None:
        """A numeric column (INTEGER or REAL). Text that spells a number is not one."""
        value = self.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value)

    def flag(self, name: str, default: bool) -> bool:
        """A numeric column as a flag: non-zero is true.

        ``default`` when the column is absent, null or not a number: a
        database older than the flag, or a NULL an old migration left.
        """
        number = self.float(name)
        if number is None:
            return default
        return number != 0

    def without(self, *names: str) -> Columns:
        """The row without the columns named."""
        drop = set(names)
        return Columns(column for column in self.cells if column.name not in drop)

    def to_json_value(self, json_columns: frozenset[str] = JSON_COLUMNS) -> dict[str, JsonValue]:
        """The row as one JSON object, a member per column in order.

        A JSON column holding valid JSON is its value; other text is a string
        (bad UTF-8 replaced); a number is a number (a non-finite REAL, which
        JSON cannot hold, is null); null is null; a blob is base64 text.
        """
        out: dict[str, JsonValue] = {}
        for name, value in zip(self._names, self._values, strict=True):
            if name not in out:
                out[name] = _cell_json(name, value, json_columns)
        return out

    def to_exact_json(self) -> tuple[dict[str, JsonValue], dict[str, str]]:
        """Every cell as JSON the stored cell can be rebuilt from exactly, and how.

        Text and numbers are themselves (JSON text stays text). A cell JSON cannot hold is
        encoded, and the second mapping names its column with the encoding: ``blob`` (a BLOB,
        as base64), ``text`` (TEXT that is not UTF-8, its bytes as base64), ``real`` (a
        non-finite REAL, as ``Infinity``, ``-Infinity`` or ``NaN``).
        """
        values: dict[str, JsonValue] = {}
        encoded: dict[str, str] = {}
        for name, value in zip(self._names, self._values, strict=True):
            if name in values:
                continue
            values[name], encoding = _exact_cell(value)
            if encoding is not None:
                encoded[name] = encoding
        return values, encoded

    def exact_json_kept(
        self, drop: frozenset[str] | set[str]
    ) -> tuple[dict[str, JsonValue], dict[str, str]]:
        """:meth:`to_exact_json` of the non-null cells whose names are not in ``drop``.

        One pass over the row: the converters keep every column but the null ones and a few
        they write elsewhere.
        """
        values: dict[str, JsonValue] = {}
        encoded: dict[str, str] = {}
        pairs: Iterable[tuple[str, Cell]] = zip(self._names, self._values, strict=True)
        if len(self._index) != len(self._names):  # a repeated name: its first cell counts
            pairs = ((name, self._values[i]) for name, i in self._index.items())
        for name, value in pairs:
            if value is None or name in drop:
                continue
            if isinstance(value, str | int):  # most cells: kept as they are
                values[name] = value
                continue
            values[name], encoding = _exact_cell(value)
            if encoding is not None:
                encoded[name] = encoding
        return values, encoded

    def to_json(self, json_columns: frozenset[str] = JSON_COLUMNS) -> str:
        """:meth:`to_json_value` as compact JSON text."""
        return compact(self.to_json_value(json_columns))


def _exact_cell(value: Cell) -> tuple[JsonValue, str | None]:
    """A cell as JSON it can be rebuilt from exactly, and the encoding used (None: as itself).

    Shared by :meth:`Columns.to_exact_json` and :meth:`Columns.exact_json_kept`.
    """
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii"), (
            "text" if isinstance(value, RawText) else "blob"
        )
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity"), "real"
    return value, None


def _cell_json(name: str, value: Cell, json_columns: frozenset[str]) -> JsonValue:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, bytes) and not isinstance(value, RawText):
        return base64.b64encode(value).decode("ascii")
    text = value.text() if isinstance(value, RawText) else value
    if name in json_columns:
        parsed, ok = parse(text)
        if ok:
            return parsed
    return text
