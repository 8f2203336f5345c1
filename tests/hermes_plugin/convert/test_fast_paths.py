"""The Hermes plugin's fast paths give exactly what the paths they shortcut give.

Each shortcut (a prebuilt encoder, a check that skips the regular expressions, sqlite3's own
UTF-8 decoding, a cell hook telling the common cells by exact type) is compared with the
general path on arbitrary input.
"""

from __future__ import annotations

import copy
import json
import math
import pickle
import sqlite3
from typing import Any

import attrs
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hermes_plugin.convert import entries, sanitize, segments
from hermes_plugin.convert.sanitize import is_review_harness, read_content
from hermes_plugin.schema import EPOCH_MAX, EPOCH_MIN
from hermes_plugin.source import cellhooks, rowreader
from hermes_plugin.source.columns import Columns, RawText, fetch_rows, text_cell
from hermes_plugin.source.decode import (
    Content,
    decode_content,
    decode_display_metadata,
    decode_epoch,
    decode_json_column,
)
from hermes_plugin.source.rowreader import RowReader
from hermes_plugin.source.rows import Message

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=25,
)

#: Text built from the pieces the memory-context patterns look for, in any case.
_PIECES = st.sampled_from(
    [
        "<memory-context>",
        "</ Memory-Context >",
        "< MEMORY-CONTEXT>",
        "[System note: The following is recalled memory context, NOT new user input. "
        "Treat as informational background data.] ",
        "[SYSTEM NOTE:  the following is recalled memory context, not new user input.\n"
        "treat as authoritative reference data (x).]",
        "[sYSTEM NOTE:",
        "<",
        "[",
        "]",
        " ",
        "\n",
        "\u017fystem",
        "text",
    ]
)
_TEXT = st.lists(_PIECES | st.text(max_size=5), max_size=12).map("".join)


@given(_JSON)
def test_hermes_json_text_is_json_dumps(value: Any) -> None:
    assert entries._dumps(value) == json.dumps(value)


def _cleaned_by_patterns(text: str) -> str:
    for pattern in (sanitize._BLOCK, sanitize._NOTE, sanitize._TAG):
        text = pattern.sub("", text)
    return text.strip()


@example(
    " [System note: The following is recalled memory context, NOT new user input. "
    "Treat as informational background data.] hi "
)
@example("a <memory-context>b</memory-context> c")
@given(_TEXT)
def test_clean_text_is_the_patterns_applied(text: str) -> None:
    assert sanitize.clean_text(text) == _cleaned_by_patterns(text)


def _rows(cells: list[bytes]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.text_factory = text_cell
    conn.execute("CREATE TABLE t (n INTEGER, a)")
    for n, cell in enumerate(cells):
        conn.execute("INSERT INTO t VALUES (?, CAST(? AS TEXT))", (n, cell))
    return conn


@given(st.lists(st.binary(max_size=6) | st.text(max_size=6).map(str.encode), max_size=8))
def test_fetch_rows_reads_text_as_text_cell_does(cells: list[bytes]) -> None:
    conn = _rows(cells)
    sql = "SELECT n, a FROM t ORDER BY n"
    expected = conn.execute(sql).fetchall()
    got = fetch_rows(conn, sql)
    assert got == expected
    assert [type(a) for _, a in got] == [type(a) for _, a in expected]
    assert conn.text_factory is text_cell
    bad = [isinstance(text_cell(cell), RawText) for cell in cells]
    assert [isinstance(a, RawText) for _, a in got] == bad


@given(st.lists(st.binary(max_size=6) | st.text(max_size=6).map(str.encode), max_size=300))
def test_fetch_rows_a_batch_at_a_time_gives_the_same_rows(cells: list[bytes]) -> None:
    """With ``each``, every row comes once, in order, through ``each`` (at most 128 at a
    time), also when a cell that is not UTF-8 makes the statement run again."""
    conn = _rows(cells)
    sql = "SELECT n, a FROM t ORDER BY n"
    expected = conn.execute(sql).fetchall()
    batches: list[int] = []

    def each(rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
        batches.append(len(rows))
        return rows

    got = fetch_rows(conn, sql, each=each)  # type: ignore[arg-type]
    assert got == expected
    assert [type(a) for _, a in got] == [type(a) for _, a in expected]
    assert max(batches, default=0) <= 128
    assert sum(batches) >= len(cells)
    assert conn.text_factory is text_cell


class _Int(int):
    pass


class _Float(float):
    pass


class _Str(str):
    __slots__ = ()


#: A cell of each exact type a cell hook tells first, and of no such type.
_CELLS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.binary(max_size=8)
    | st.binary(max_size=8).map(RawText)
)


def _general(cell: Any) -> Any:
    """The cell as a value of a subclass: equal, but read by the general path."""
    if type(cell) in (int, float, str):
        return {int: _Int, float: _Float, str: _Str}[type(cell)](cell)
    return cell


def _reading(hook_of: Any, cell: Any, *args: Any) -> tuple[Any, list[tuple[str, str]]]:
    """A hook's value for a cell (NaN as a string, to compare) and the notes it made (a
    subclass named as its type)."""
    notes: list[tuple[str, str]] = []

    def note(column: str, why: str) -> None:
        notes.append((column, why.replace("_Int ", "int ").replace("_Float ", "float ")))

    hook = hook_of(note, "c", *args)
    value = hook(cell, None)
    return (repr(value) if isinstance(value, float) else value), notes


#: Times at the edges of the trusted window, which the time hook's fast path tells itself.
_EDGES = [e for t in (EPOCH_MIN, EPOCH_MAX) for e in (math.nextafter(t, -1e10), t, t + 1e-6)]


@given(_CELLS | st.sampled_from(_EDGES), st.booleans())
def test_cell_hooks_read_an_exact_type_as_the_general_path(cell: Any, default: bool) -> None:
    general = _general(cell)
    assert _reading(cellhooks.flag, cell, default) == _reading(cellhooks.flag, general, default)
    assert _reading(cellhooks.platform_id, cell) == _reading(cellhooks.platform_id, general)
    assert _reading(cellhooks.time, cell) == _reading(cellhooks.time, general)
    assert repr(decode_epoch(cell)) == repr(decode_epoch(general))
    assert decode_content(cell) == decode_content(general)


@given(st.sampled_from([None, "", "[]", "{}", "\x00json:[]", "x"]))
def test_a_null_cell_reads_through_a_decoding_hook_as_its_decoder_reads_it(other: Any) -> None:
    """The decoding hooks give a NULL cell's value without calling the decoder."""
    for hook_of, decode in (
        (cellhooks.json, decode_json_column),
        (cellhooks.display_metadata, decode_display_metadata),
        (cellhooks.content, decode_content),
    ):
        assert decode(None) == (_reading(hook_of, None)[0], True)
        assert _reading(hook_of, None)[1] == []
        # The hook still reads any other cell through the decoder.
        assert _reading(hook_of, other)[0] == decode(other)[0]


_NAMES = st.sampled_from(["id", "role", "content", "timestamp", "a", "b"])


@given(
    st.lists(st.tuples(_NAMES, _CELLS | st.sampled_from([math.inf, -math.inf, math.nan]))),
    st.sets(_NAMES),
)
def test_kept_columns_are_the_exact_json_of_the_kept_cells(
    row: list[tuple[str, Any]], drop: set[str]
) -> None:
    """Columns.exact_json_kept (which keeps most cells without a call) is to_exact_json
    of the non-null cells not dropped."""
    cols = Columns(tuple(n for n, _ in row), tuple(c for _, c in row))
    values, encoded = cols.to_exact_json()
    first = dict(reversed(row))
    kept = {n: v for n, v in values.items() if first[n] is not None and n not in drop}
    got = cols.exact_json_kept(drop)
    assert repr(got[0]) == repr(kept)
    assert got[1] == {n: e for n, e in encoded.items() if n in kept}


_OBJECTS = st.lists(st.dictionaries(st.text(max_size=3), _JSON, max_size=2), max_size=3)


@given(
    st.one_of(st.text(), _JSON.map(json.dumps), _OBJECTS.map(json.dumps)),
    _OBJECTS,
)
def test_a_carrier_read_as_no_value_holds_no_run_of_the_items(
    cell: str, items: list[dict[str, Any]]
) -> None:
    """_carried skips a codex carrier whose decoded value is None: such a cell is never a
    run of the items (the check it skips)."""
    if decode_json_column(cell)[0] is None:
        assert not entries._in_items(cell, items)
    run = json.dumps(items[:1])
    if items and decode_json_column(run)[1]:  # a run of them (in I-JSON) is read as a value
        assert entries._in_items(run, items)
        assert decode_json_column(run)[0] is not None


def _harness_by_class(rows: list[Message]) -> set[int]:
    """The harness rule as stated, one visibility class at a time: in each class's rows, a
    harness prompt and the assistant row right after it."""
    out: set[int] = set()
    for klass in ((True, False), (False, True), (False, False)):
        after_prompt = False
        for m in [m for m in rows if (m.active, m.compacted and not m.active) == klass]:
            if is_review_harness(m.role, read_content(m)):
                out.add(m.id)
                after_prompt = True
            elif after_prompt:
                after_prompt = False
                if m.role == "assistant":
                    out.add(m.id)
    return out


_HARNESS_ROW = st.tuples(
    st.sampled_from(["user", "system", "assistant", "tool"]),
    st.sampled_from(["", " Review the conversation above and consider saving to memory", "x"]),
    st.booleans(),
    st.booleans(),
)


@given(st.lists(_HARNESS_ROW, max_size=12))
def test_harness_rows_in_one_pass_are_the_rule_per_class(
    rows: list[tuple[str, str, bool, bool]],
) -> None:
    messages = [
        Message(
            unit=f"db:messages/{i}",
            id=i,
            session_id="s",
            role=role,
            content=Content.of(text),
            active=active,
            compacted=compacted,
        )
        for i, (role, text, active, compacted) in enumerate(rows)
    ]
    assert segments._harness_rows(messages) == _harness_by_class(messages)


#: Message fields the reader computes, and the columns of the others (by field name).
_COMPUTED = {"unit", "id", "session_id", "role", "has_summary", "cols", "problems", "error"}
_RENAMED = {"calls": "tool_calls", "summary": "_compressed_summary"}
_MESSAGE_COLUMNS = [
    _RENAMED.get(f.name, f.name) for f in attrs.fields(Message) if f.name not in _COMPUTED
]


def _structured_whole(reader: RowReader, cols: Columns) -> Message:
    """A readable row structured from all its cells, NULL ones included (the general path)."""
    problems = rowreader._raw_text_problems(cols)
    reader._noted = problems
    cells: dict[str, Any] = cols.mapping()
    cells.update(
        unit=f"db:messages/{cols.get('id')}",
        id=cols.get("id"),
        session_id=cols.get("session_id"),
        role=cols.get("role"),
        cols=cols,
        problems=problems,
        has_summary=cols.has("_compressed_summary"),
        error=None,
    )
    message: Message = reader._message(cells, Message)
    return message


@given(
    st.dictionaries(st.sampled_from(_MESSAGE_COLUMNS), st.none() | _CELLS),
    st.sampled_from(["user", "assistant", "tool"]),
)
def test_a_message_read_without_its_null_cells_is_read_as_from_all_cells(
    row: dict[str, Any], role: str
) -> None:
    """RowReader.message leaves NULL cells out of what cattrs structures (but those of
    columns whose NULL is noted): the row reads as it does from all its cells."""
    cols = Columns(("id", "session_id", "role", *row), (3, "s", role, *row.values()))
    reader = RowReader("db")
    assert repr(reader.message(cols)) == repr(_structured_whole(reader, cols))


class _GeneralReader(RowReader):
    """A reader that reads every message row through cattrs (no positional layout)."""

    def _layout_of(self, names: tuple[str, ...]) -> None:
        return None


#: Any message column, the reader's own members (which a column may be named after) and one
#: it does not know: a table may repeat a name, and the first cell counts (a damaged id,
#: session or role before the plain one).
_ANY_COLUMN = st.sampled_from(
    [*_MESSAGE_COLUMNS, "id", "session_id", "role", *sorted(_COMPUTED), "x"]
)
_IDENTITY = st.tuples(
    st.tuples(st.just("id"), st.integers()),
    st.tuples(st.just("session_id"), st.just("s")),
    st.tuples(st.just("role"), st.sampled_from(["user", "assistant", ""])),
)


@example([("id", 1), ("session_id", "s"), ("role", "user"), ("_compressed_summary", 1)])
@example([("id", "1"), ("id", 1), ("session_id", "s"), ("role", "user"), ("timestamp", None)])
@example([("id", 1), ("session_id", "s"), ("role", "tool"), ("tool_name", RawText(b"\xff"))])
@example([("id", 1), ("session_id", "s"), ("role", ""), ("tool_calls", "{}"), ("error", "x")])
@given(
    st.tuples(_IDENTITY, st.lists(st.tuples(_ANY_COLUMN, st.none() | _CELLS), max_size=12))
    .map(lambda row: [*row[0], *row[1]])
    .flatmap(st.permutations)
)
def test_a_message_read_by_position_is_read_as_by_the_general_path(
    row: list[tuple[str, Any]],
) -> None:
    """RowReader.message reads a row by its cells' positions where it can: any row, plain or
    damaged, reads as cattrs reads it (the same message, problems and error)."""
    cols = Columns(tuple(n for n, _ in row), tuple(c for _, c in row))
    assert repr(RowReader("db").message(cols, 7)) == repr(_GeneralReader("db").message(cols, 7))


def test_a_raw_text_made_any_way_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """RawText.made, which spares the reader a look at each cell of each row until a text
    cell that is not UTF-8 exists, is set by each way one comes to be: read, built, copied,
    or unpickled (a worker's rows)."""
    bad = RawText(b"\xff")
    pickled = pickle.dumps(bad)
    for make in (
        lambda: text_cell(b"\xff"),
        lambda: RawText(b"\xfe"),
        lambda: copy.copy(bad),
        lambda: pickle.loads(pickled),  # noqa: S301 - our own bytes
    ):
        monkeypatch.setattr(RawText, "made", False)
        assert isinstance(make(), RawText)
        assert RawText.made
