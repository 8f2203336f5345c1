"""Property tests for every decoder: content, tool calls, display metadata, epoch, Columns.

Where Hermes 0.19 has the same reader (``SessionDB._decode_content``), it is
the oracle.
"""

from __future__ import annotations

import base64
import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import hermes_columns
import pytest
from hermes_columns import columns_of, to_json
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from hermes_plugin.schema import CONTENT_PREFIX, EPOCH_MAX
from hermes_plugin.source.columns import Columns, RawText, cell_text
from hermes_plugin.source.database import SqliteStore
from hermes_plugin.source.decode import (
    Content,
    decode_content,
    decode_display_metadata,
    decode_epoch,
    decode_json_column,
    epoch,
)
from hermes_plugin.source.jsontext import JsonValue
from hermes_plugin.source.rowreader import RowReader
from hermes_plugin.source.toolcalls import decode_tool_calls, result_aliases

hermes_state = pytest.importorskip("hermes_state")

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
cells = (
    st.none()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats()
    | st.text()
    | st.binary(max_size=16)
    | st.binary(max_size=16).map(RawText)
)


def _hermes_shape(content: Content) -> Any:
    if content.null:
        return None
    return content.value if content.structured else content.text


# -- content -------------------------------------------------------------------------------


@given(st.lists(json_values) | json_objects)
def test_content_round_trips_what_hermes_writes(value: JsonValue) -> None:
    stored = hermes_state.SessionDB._encode_content(value)
    content, ok = decode_content(stored)
    assert ok
    assert content.structured
    assert content.value == value
    assert list(content.parts) == (value if isinstance(value, list) else [value])


@given(st.text())
def test_content_matches_hermes_reader(text: str) -> None:
    for stored in (text, CONTENT_PREFIX + text):
        assume("NaN" not in stored and "Infinity" not in stored)  # strict JSON: see jsontext
        content, ok = decode_content(stored)
        assert _hermes_shape(content) == hermes_state.SessionDB._decode_content(stored)
        if not stored.startswith(CONTENT_PREFIX):
            assert ok
            assert content.text == stored


@given(st.text())
def test_a_json_string_behind_the_prefix_is_text(text: str) -> None:
    """JSON behind the prefix that is a string is text, as Hermes' reader returns it: plain
    content, not a structured list of one part."""
    stored = CONTENT_PREFIX + json.dumps(text)
    assert hermes_state.SessionDB._decode_content(stored) == text
    content, ok = decode_content(stored)
    assert ok
    assert not content.structured
    assert (content.text, content.parts, content.value) == (text, (), text)


def test_json_null_behind_the_prefix_is_null_content() -> None:
    """``null`` behind the prefix is no content, as Hermes' reader returns None for it."""
    stored = CONTENT_PREFIX + "null"
    assert hermes_state.SessionDB._decode_content(stored) is None
    content, ok = decode_content(stored)
    assert ok
    assert content.null
    assert not content.structured


@pytest.mark.parametrize(
    ("cell", "text", "value"),
    [
        (b"caf\xc3\xa9 \xff", "café \ufffd", "café \ufffd"),
        (42, "42", 42),
        (2.5, "2.5", 2.5),
        (math.inf, "inf", "inf"),
        (-math.inf, "-inf", "-inf"),
    ],
)
def test_content_that_is_no_text_reads_as_its_text(cell: Any, text: str, value: Any) -> None:
    """A blob or a number in the content column is what Hermes hands back unchanged: it reads
    as its text and is flagged; a number keeps its value, but an infinity (which no JSON holds)
    and a blob (no JSON value) are their text."""
    content, ok = decode_content(cell)
    assert not ok
    assert not content.structured
    assert not content.null
    assert content.text == text
    assert content.value == value
    assert type(content.value) is type(value)


@given(st.text())
def test_bad_prefix_stays_text(junk: str) -> None:
    stored = CONTENT_PREFIX + "{" + junk
    content, ok = decode_content(stored)
    if not ok:
        assert content.text == stored
        assert not content.structured


@given(cells)
def test_content_never_raises(cell: Any) -> None:
    content, ok = decode_content(cell)
    assert isinstance(hermes_columns.content_text(content), str)
    if cell is None:
        assert content.null
        assert ok


def test_content_null_absent_and_empty() -> None:
    assert decode_content(None)[0].null
    assert decode_content("x", present=False)[0].null
    empty, ok = decode_content("")
    assert ok
    assert not empty.null
    assert empty.text == ""
    parts, _ = decode_content(CONTENT_PREFIX + '[{"type": "text", "text": "a"}, "b", {"x": 1}]')
    assert hermes_columns.content_text(parts) == "a\nb"


# -- tool calls ----------------------------------------------------------------------------

ids = st.text(st.sampled_from("ab|_ 1"), max_size=8)
calls = st.fixed_dictionaries(
    {},
    optional={
        "id": ids | st.integers(),
        "call_id": ids,
        "response_item_id": ids,
        "type": st.just("function"),
        "function": st.fixed_dictionaries(
            {}, optional={"name": st.text(max_size=5), "arguments": json_values}
        )
        | json_scalars,
        "extra_content": json_values,
    },
)


@given(st.lists(calls | json_scalars, max_size=5))
# The same id twice (as call_id and id, and both halves of a bridge id): named once.
@example([{"id": "a", "call_id": "a", "response_item_id": "a|a"}])
def test_tool_calls_array(entries: list[JsonValue]) -> None:
    decoded = decode_tool_calls(json.dumps(entries))
    assert decoded.error is None
    assert [c.raw for c in decoded.calls] == [e for e in entries if isinstance(e, dict)]
    assert list(decoded.bad) == [e for e in entries if not isinstance(e, dict)]
    for call in decoded.calls:
        aliases = call.aliases()
        assert len(set(aliases)) == len(aliases)
        assert all(a and a == a.strip() for a in aliases)
        if call.pairing_id():
            assert call.pairing_id() in aliases
            assert set(result_aliases(call.pairing_id())) & set(aliases)
        arguments = call.arguments_text()
        given_args = call.function.arguments if call.function else None
        if isinstance(given_args, str):
            assert arguments == given_args
        elif given_args is None:
            assert arguments == "{}"
        else:
            assert json.loads(arguments) == given_args


@given(calls)
def test_single_object_is_a_list_of_one(call: dict[str, JsonValue]) -> None:
    decoded = decode_tool_calls(json.dumps(call))
    assert decoded.single
    assert [c.raw for c in decoded.calls] == [call]


@given(json_scalars.filter(lambda v: v is not None and v != ""))
def test_tool_calls_not_an_array(value: JsonValue) -> None:
    decoded = decode_tool_calls(json.dumps(value))
    assert decoded.calls == ()
    assert decoded.error == "not a JSON array"


@given(cells)
def test_tool_calls_never_raise(cell: Any) -> None:
    decoded = decode_tool_calls(cell)
    assert decoded.calls == () or decoded.error is None


def test_bridge_ids() -> None:
    (call,) = decode_tool_calls('[{"id": " call_a|fc_b ", "type": "function"}]').calls
    assert call.pairing_id() == "call_a"
    assert call.aliases() == ("call_a|fc_b", "call_a", "fc_b")
    assert result_aliases("call_a") == ("call_a",)
    (call,) = decode_tool_calls('[{"id": "x", "call_id": "y", "response_item_id": "fc_z"}]').calls
    assert call.pairing_id() == "y"
    assert call.aliases() == ("y", "x", "fc_z")


# -- display metadata ----------------------------------------------------------------------


@given(json_objects, st.integers(0, 2))
def test_display_metadata_unwraps_two_string_layers(
    value: dict[str, JsonValue], layers: int
) -> None:
    text = json.dumps(value)
    for _ in range(layers):
        text = json.dumps(text)
    assert decode_display_metadata(text) == (value, True)


@given(json_objects)
def test_display_metadata_three_layers_dropped(value: dict[str, JsonValue]) -> None:
    text = json.dumps(json.dumps(json.dumps(json.dumps(value))))
    assert decode_display_metadata(text) == (None, False)


@given(json_values.filter(lambda v: not isinstance(v, dict | str) and v is not None))
def test_display_metadata_non_objects_dropped(value: JsonValue) -> None:
    assert decode_display_metadata(json.dumps(value)) == (None, False)
    assert decode_display_metadata(json.dumps(json.dumps(value))) == (None, False)


@pytest.mark.parametrize("inner", ["{not json", '{"a": 1', ""])
def test_display_metadata_whose_inner_layer_is_no_json_is_reported(inner: str) -> None:
    """A double-encoded display_metadata whose string holds no JSON is dropped and said to be:
    the row's problems name the column, it is never dropped silently."""
    assert decode_display_metadata(json.dumps(inner)) == (None, False)
    row = {"id": 1, "session_id": "s", "role": "user", "display_metadata": json.dumps(inner)}
    message = RowReader("db").message(columns_of(row))
    assert message.error is None
    assert [p.split(":", 1)[0] for p in message.problems] == ["display_metadata"]


@given(cells)
def test_json_decoders_never_raise(cell: Any) -> None:
    decode_display_metadata(cell)
    value, ok = decode_json_column(cell)
    if ok and value is not None:
        json.dumps(value, allow_nan=False)


# -- epoch ---------------------------------------------------------------------------------


@given(st.floats(min_value=0.0, max_value=EPOCH_MAX))
def test_epoch_in_window(seconds: float) -> None:
    when = epoch(seconds)
    assert when is not None
    assert when.tzinfo is not None
    assert abs(when.timestamp() - seconds) < 1e-3
    assert decode_epoch(seconds) == (seconds, True)


@given(st.floats().filter(lambda f: not (0.0 <= f <= EPOCH_MAX)))
def test_epoch_out_of_window(seconds: float) -> None:
    assert epoch(seconds) is None
    assert decode_epoch(seconds) == (None, False)


@given(st.text() | st.binary())
def test_epoch_text_is_not_a_time(cell: str | bytes) -> None:
    assert decode_epoch(cell) == (None, False)


def test_epoch_integers_and_null() -> None:
    assert decode_epoch(None) == (None, True)
    assert decode_epoch(1_700_000_000) == (1_700_000_000.0, True)
    assert decode_epoch(True) == (None, False)


# -- Columns -------------------------------------------------------------------------------

names = st.text(st.sampled_from("abc_"), min_size=1, max_size=3)
rows = st.dictionaries(names | st.sampled_from(["tool_calls", "model_config"]), cells, max_size=8)


@given(rows, names)
def test_columns_accessors(row: dict[str, Any], probe: str) -> None:
    cols = columns_of(row)
    assert cols.names() == tuple(row)
    assert cols.has(probe) == (probe in row)
    cell = row.get(probe)
    assert cols.get(probe) is cell or cols.get(probe) == cell
    text = hermes_columns.text(cols, probe)
    if isinstance(cell, RawText):
        assert text == cell.decode("utf-8", "replace")
    elif isinstance(cell, str):
        assert text == cell
    else:
        assert text is None
    assert hermes_columns.string(cols, probe) == (text or "")
    assert cols.int(probe) == (cell if type(cell) is int else None)
    number = hermes_columns.number(cols, probe)
    if isinstance(cell, int | float):
        assert number is not None or math.isnan(cell)
        assert number == float(cell) or math.isnan(cell)
    else:
        assert number is None
        assert hermes_columns.flag(cols, probe, True) is True
        assert hermes_columns.flag(cols, probe, False) is False
    assert not hermes_columns.without(cols, probe).has(probe)
    assert len(hermes_columns.without(cols, probe)) == len(row) - (probe in row)


@given(st.lists(st.tuples(names | st.just("role"), cells), max_size=8))
def test_a_repeated_column_name_reads_as_its_first_cell(pairs: list[tuple[str, Any]]) -> None:
    """A result with a name twice (a join's ``SELECT *``) reads as its first cell in every
    view of the row, as ``get`` reads it; the later cell is never seen."""
    cols = columns_of(pairs)
    first: dict[str, Any] = {}
    for name, cell in pairs:
        first.setdefault(name, cell)
    mapping = cols.mapping()
    assert list(mapping) == list(first)
    assert all(mapping[name] is cell for name, cell in first.items())
    assert all(cols.get(name) is cell for name, cell in first.items())
    set_cells = {name: cell for name, cell in first.items() if cell is not None}
    non_null = cols.non_null()
    assert list(non_null) == list(set_cells)
    assert all(non_null[name] is cell for name, cell in set_cells.items())
    values, encoded = cols.to_exact_json()
    kept, kept_encoded = cols.exact_json_kept(frozenset())
    assert list(kept) == list(set_cells)
    assert repr(kept) == repr({name: values[name] for name in set_cells})
    assert kept_encoded == {name: how for name, how in encoded.items() if name in set_cells}


@pytest.mark.parametrize(("names", "values"), [(("a", "b"), (1,)), (("a",), (1, 2)), ((), (None,))])
def test_a_row_needs_one_cell_per_column_name(
    names: tuple[str, ...], values: tuple[Any, ...]
) -> None:
    """Names and cells that do not pair up are refused, never zipped short."""
    with pytest.raises(ValueError, match="one cell per column name"):
        Columns(names, values)


def test_a_message_row_with_a_repeated_column_reads_the_first() -> None:
    """The reader reads a repeated column's first cell: the row is the user's, not a stray."""
    row = [("id", 3), ("session_id", "s"), ("role", "user"), ("role", None), ("content", "hi")]
    message = RowReader("db").message(columns_of(row))
    assert message.error is None
    assert (message.unit, message.role) == ("db:messages/3", "user")


@given(rows)
def test_columns_to_json(row: dict[str, Any]) -> None:
    cols = columns_of(row)
    out = json.loads(to_json(cols))
    assert list(out) == list(row)
    for name, cell in row.items():
        member = out[name]
        if cell is None:
            assert member is None
        elif isinstance(cell, RawText):
            assert isinstance(member, str) or name in {"tool_calls", "model_config"}
        elif isinstance(cell, bytes):
            assert base64.b64decode(member) == cell
        elif isinstance(cell, float):
            assert member == (cell if math.isfinite(cell) else None)
        elif isinstance(cell, int):
            assert member == cell
        elif name in {"tool_calls", "model_config"}:
            parsed = decode_json_column(cell)
            assert member == (parsed[0] if parsed[1] and cell != "" else cell)
        else:
            assert member == cell


def test_columns_absent_null_empty() -> None:
    cols = columns_of({"a": None, "b": "", "n": 1, "t": "1"})
    assert cols.has("a")
    assert not cols.has("z")
    assert hermes_columns.text(cols, "a") is None
    assert hermes_columns.text(cols, "b") == ""
    assert cols.int("t") is None  # text is not a number
    assert hermes_columns.text(cols, "n") is None  # a number is not text
    assert hermes_columns.flag(cols, "a", True)
    assert hermes_columns.flag(cols, "z", True)
    assert not hermes_columns.flag(cols, "a", False)


# -- rows through SQLite ---------------------------------------------------------------------

sql_cells = st.none() | st.integers(-(2**63), 2**63 - 1) | st.floats() | st.text() | st.binary()
MESSAGE_COLUMNS = [
    "session_id",
    "role",
    "content",
    "tool_calls",
    "timestamp",
    "active",
    "display_metadata",
    "reasoning_content",
    "extra",
]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.fixed_dictionaries(dict.fromkeys(MESSAGE_COLUMNS, sql_cells)), max_size=6))
def test_rows_read_back_exactly(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    """Any cells written to SQLite read back as written, and decode without raising."""
    path = tmp_path / "fuzz.db"
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sessions (id TEXT, source TEXT, started_at REAL)")
    conn.execute(f"CREATE TABLE messages (id INTEGER PRIMARY KEY, {', '.join(MESSAGE_COLUMNS)})")
    marks = ", ".join("?" for _ in MESSAGE_COLUMNS)
    conn.executemany(
        f"INSERT INTO messages ({', '.join(MESSAGE_COLUMNS)}) VALUES ({marks})",
        [tuple(r[c] for c in MESSAGE_COLUMNS) for r in rows],
    )
    conn.commit()
    conn.close()
    with SqliteStore(path) as store:
        reader = RowReader("x")
        read = [reader.message(o.cols) if o.cols else None for o in store.orphans(())]
    assert len(read) == len(rows)
    back = sorted((m for m in read if m is not None), key=lambda m: m.cols.int("id") or 0)
    for written, message in zip(rows, back, strict=True):
        for name, cell in written.items():
            got = message.cols.get(name)
            if isinstance(cell, float) and math.isnan(cell):
                assert got is None  # SQLite stores NaN as NULL
            else:
                assert got == cell, name


def _rows(*columns: str) -> st.SearchStrategy[dict[str, Any]]:
    """Rows of some of the columns, each cell anything SQLite may hold."""
    return st.dictionaries(st.sampled_from(columns), cells)


@given(
    _rows(
        "id",
        "source",
        "parent_session_id",
        "model_config",
        "started_at",
        "ended_at",
        "archived",
        "title",
    )
)
def test_session_from_row_never_raises(row: dict[str, Any]) -> None:
    session = RowReader("db").session(columns_of(row))
    assert session.unit.startswith("db:sessions/")
    readable = isinstance(row.get("id"), str) and bool(row["id"])  # RawText is bytes
    assert (session.error is None) == readable
    if session.error is None:
        assert session.unit == f"db:sessions/{session.id}"


@given(
    _rows(
        "id",
        "session_id",
        "role",
        "content",
        "tool_calls",
        "timestamp",
        "reasoning_details",
        "display_metadata",
        "tool_call_uids",
        "platform_message_id",
        "active",
        "_compressed_summary",
    )
)
def test_message_reading_never_raises(row: dict[str, Any]) -> None:
    message = RowReader("db").message(columns_of(row))
    assert message.unit.startswith("db:messages/")
    readable = (
        type(row.get("id")) is int
        and bool(cell_text(row.get("session_id")))
        and cell_text(row.get("role")) is not None
    )
    assert (message.error is None) == readable
    assert message.cols == columns_of(row)  # every cell kept as read
    for problem in message.problems:  # each names a column of the row
        assert problem.split(":", 1)[0] in row


@pytest.mark.parametrize(
    ("cell", "said"),
    [
        (b"\x00" * 5000, "blob (5000 bytes)"),
        (RawText(b"\xff" * 3000), "text with invalid UTF-8 (3000 bytes)"),
        ("7" * 5000, f"text {json.dumps('7' * 37 + '...')}"),
        (None, "null"),
        (2.5, "float 2.5"),
    ],
)
def test_a_stray_says_what_its_id_cell_is_never_the_whole_cell(cell: Any, said: str) -> None:
    """A message row whose id is no integer is a stray whose reason names the cell's kind (and
    a blob's or bad text's size, long text cut to 40 characters): a large cell is never
    copied into the message."""
    row = {"id": cell, "session_id": "s", "role": "user"}
    message = RowReader("db").message(columns_of(row), position=3)
    assert message.unit == "db:messages/#3"
    assert message.error == f"id is {said}"


def test_a_cell_no_hook_can_read_makes_a_stray_with_cattrs_lines() -> None:
    """No cell SQLite gives fails a hook; should one, the row is a stray saying where, in
    cattrs' words, and the rest of the database still reads."""

    class Hostile:
        def __eq__(self, other: object) -> bool:
            raise ValueError("no comparison")

        __hash__ = None  # type: ignore[assignment]

    row = {"id": 1, "session_id": "s", "role": "user", "reasoning_details": Hostile()}
    message = RowReader("db").message(columns_of(row))
    assert message.error is not None
    assert message.error.startswith("cannot read the row: invalid value for type")
    assert message.error.endswith("@ row.reasoning_details")
    assert (message.unit, message.session_id, message.role) == ("db:messages/1", "s", "user")


@given(
    st.dictionaries(
        st.sampled_from(["error", "has_summary", "unit", "problems", "cols"]), cells, min_size=1
    ),
    st.booleans(),
)
def test_columns_named_as_computed_members_are_kept_not_read(
    extra: dict[str, Any], summary_column: bool
) -> None:
    """A column named as a member the reader computes (``error``, ``has_summary``, ...) stays
    in ``cols`` and never sets that member."""
    row = {"id": 7, "session_id": "s", "role": "user", **extra}
    if summary_column:
        row["_compressed_summary"] = 1
    message = RowReader("db").message(columns_of(row))
    assert message.error is None
    assert message.has_summary is summary_column
    assert message.summary is summary_column
    assert message.unit == "db:messages/7"
    assert all(p.endswith("invalid UTF-8 (kept as bytes)") for p in message.problems)
    assert message.cols == columns_of(row)


# ----------------------------------------------------------------------------- JSON text


def test_json_text_holds_what_ijson_can_and_says_why_not() -> None:
    """A cell's JSON reads only when the writer can write it: no NaN or Infinity, no number
    beyond the double range (2**1024 and up, exactly), and the reason is told."""
    from hermes_plugin.source.jsontext import parse, why_not

    largest = 2**1024 - 1  # rounds to the largest double's neighbourhood: normalisable
    assert parse(f"[{largest}]") == ([largest], True)
    for text, why in [
        ("[NaN]", "JSON holding the constant NaN"),
        ('{"a":-Infinity}', "JSON holding the constant -Infinity"),
        ("[1e400]", "JSON holding a number beyond the double range (1e400)"),
        (f"[{2**1024}]", "JSON holding an integer beyond the double range (309 digits)"),
        (f"[-{2**1024}]", "JSON holding an integer beyond the double range (310 digits)"),
        ("[1" + "0" * 5000 + "]", "JSON holding an integer too long to read"),
        ("[1,", "invalid JSON"),
    ]:
        assert parse(text) == (None, False), text
        assert why_not(text) == why, text
    assert why_not("[1]") == "valid JSON"


@pytest.mark.parametrize("wide", [0, 600])
def test_json_text_nesting_limit_counts_depth_not_brackets(wide: int) -> None:
    """``MAX_DEPTH`` levels read, one more does not; a cell with many shallow containers side
    by side (a long list of calls) is no deeper for it, and brackets in strings count not."""
    from hermes_plugin.source.jsontext import MAX_DEPTH, parse, too_deep, why_not

    siblings = ",{}" * wide + ',"' + "[" * 300 + '"'
    for levels, fits in ((MAX_DEPTH, True), (MAX_DEPTH + 1, False)):
        text = "[" * levels + "]" * levels
        text = "[" + text[1:-1] + siblings + "]" if levels > 1 else text
        assert too_deep(text) is not fits
        assert parse(text)[1] is fits
        if not fits:
            assert (
                why_not(text)
                == f"JSON holding arrays and objects nested deeper than {MAX_DEPTH} levels"
            )
    shallow = "[" + ",".join(["[{}]"] * 400) + "]"
    assert not too_deep(shallow)
    assert parse(shallow)[1]
