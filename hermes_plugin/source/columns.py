"""One database row as read: its columns by name, in the table's order.

Hermes adds columns as it needs them, so rows are read by name and every
column is kept, known or not. SQLite is dynamically typed: a cell is kept exactly
as read (text, a number, a blob, or :class:`RawText` for text that is not UTF-8)
and never coerced, so a damaged cell is seen as damaged and written back as it was.
"""

from __future__ import annotations

import base64
import builtins
import json
import math
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from math import isfinite
from typing import Any, ClassVar, TypeAlias

from attrs import field, frozen

from hermes_plugin.source.jsontext import JsonValue, parse

__all__ = [
    "Cell",
    "Columns",
    "RawText",
    "Rows",
    "cell_text",
    "fetch_rows",
    "index_of",
    "json_cell_text",
    "text_cell",
]


class RawText(bytes):
    """A TEXT cell that is not valid UTF-8, kept as its bytes.

    Hermes never writes one, but a foreign or damaged writer can; the bytes
    are kept so a converter can normalise them, and readers see the text with
    U+FFFD in place of each bad sequence.
    """

    #: Whether one was ever made in this process (read, unpickled or built): until one is,
    #: no cell is one, and a reader need not look at each cell of each row for them.
    made: ClassVar[bool] = False

    def __new__(cls, *args: Any) -> RawText:
        RawText.made = True
        return super().__new__(cls, *args)

    def text(self) -> str:
        """The text with each invalid sequence replaced by U+FFFD."""
        return self.decode("utf-8", errors="replace")


#: A cell as the sqlite3 module reads it (with :class:`RawText` for bad text).
Cell: TypeAlias = int | float | str | bytes | None


def text_cell(data: bytes) -> str | RawText:
    """A TEXT cell from its bytes (an sqlite3 ``text_factory``): text, or RawText if not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return RawText(data)


#: How sqlite3 says a TEXT cell is not UTF-8 when it decodes text itself.
_NOT_UTF8 = "Could not decode to UTF-8 column"


Rows: TypeAlias = list[tuple[Cell, ...]]
#: How many rows :func:`fetch_rows` fetches at a time when it hands them to ``each``.
_BATCH = 128


def fetch_rows(
    conn: sqlite3.Connection,
    sql: str,
    params: Sequence[Cell] = (),
    each: Callable[[Rows], Rows] | None = None,
) -> Rows:
    """The rows of a statement, each TEXT cell as :func:`text_cell` reads it; with ``each``,
    fetched a batch at a time, each batch passed through ``each`` before the next is fetched
    (what ``each`` lets go of is never all held at once).

    sqlite3 decodes text in C when its ``text_factory`` is ``str``, giving the very string
    :func:`text_cell` gives for valid UTF-8; a cell that is not UTF-8 makes it fail instead,
    and only then is the statement run again with :func:`text_cell` (a Python call per cell)
    as the connection's factory, which it is otherwise.
    """
    conn.text_factory = str
    try:
        return _fetched(conn.execute(sql, params), each)
    except sqlite3.OperationalError as exc:
        if not str(exc).startswith(_NOT_UTF8):
            raise
    finally:
        conn.text_factory = text_cell
    return _fetched(conn.execute(sql, params), each)


def _fetched(cursor: sqlite3.Cursor, each: Callable[[Rows], Rows] | None) -> Rows:
    if each is None:
        return cursor.fetchall()
    out: Rows = []
    while batch := cursor.fetchmany(_BATCH):
        out += each(batch)
    return out


def cell_text(value: Cell) -> str | None:
    """The text of a text cell (bad UTF-8 replaced); None for any other cell."""
    if isinstance(value, RawText):
        return value.text()
    if isinstance(value, str):
        return value
    return None


def json_cell_text(value: Cell) -> str | None:
    """The text ``json.loads`` reads in a cell: a text cell's, or a BLOB's bytes decoded as
    ``json.loads`` decodes bytes (UTF-8, or UTF-16 or UTF-32 told by their first bytes);
    None for any other cell, and for bytes that spell no text (where ``json.loads`` raises)."""
    if type(value) is bytes:
        try:
            return value.decode(json.detect_encoding(value), "surrogatepass")
        except UnicodeDecodeError:
            return None
    return cell_text(value)


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
    older database lacks the newer columns. ``index`` is :func:`index_of` of the
    names, computed once per table and shared by its rows.
    """

    _names: tuple[str, ...]
    _values: tuple[Cell, ...]
    _index: Mapping[str, builtins.int] = field(eq=False, repr=False, hash=False)

    def __init__(
        self,
        names: tuple[str, ...] = (),
        values: tuple[Cell, ...] = (),
        index: Mapping[str, builtins.int] | None = None,
    ) -> None:
        if len(names) != len(values):
            raise ValueError("a row needs one cell per column name")
        self.__attrs_init__(names, values, index_of(names) if index is None else index)

    def __len__(self) -> builtins.int:
        return len(self._names)

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

    def non_null(self, keep: frozenset[str] = frozenset()) -> dict[str, Cell]:
        """:meth:`mapping` without the null cells (but those of the columns in ``keep``): for
        a reader to whom a null cell reads as an absent column, most of a row's cells."""
        values = self._values
        return {
            name: values[i]
            for name, i in self._index.items()
            if values[i] is not None or name in keep
        }

    def has(self, name: str) -> bool:
        """Whether the row has the column, null or not."""
        return name in self._index

    def get(self, name: str, default: Cell = None) -> Cell:
        """A column's cell; ``default`` when the row has no such column (see :meth:`has`)."""
        i = self._index.get(name)
        return default if i is None else self._values[i]

    def int(self, name: str) -> builtins.int | None:
        """An integer column; None when it is absent, null or holds anything else."""
        value = self.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return None

    def to_json_value(self, json_columns: frozenset[str] = frozenset()) -> dict[str, JsonValue]:
        """The row as one JSON object, a member per column in order.

        A column named in ``json_columns`` holding valid JSON is its value; other text is a string
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
            # Most cells: kept as they are. A tuple, not ``str | int``: three times as fast.
            # A finite REAL (every timestamp) too, told without a call of _exact_cell.
            if isinstance(value, (str, int)) or (type(value) is float and isfinite(value)):
                values[name] = value
                continue
            values[name], encoding = _exact_cell(value)
            if encoding is not None:
                encoded[name] = encoding
        return values, encoded


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
