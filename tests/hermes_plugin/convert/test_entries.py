"""A ``messages`` row as entries (``hermes_plugin.convert.entries``): which columns an entry
carries and which stay in ``columns`` as stored, the principal entry, the ``hermes`` member of
each entry, and a row kept aside whole."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hermes_columns import columns_of

from asf_core.model import Compaction, Custom, Item, Response
from hermes_plugin.convert.calls import CallBook
from hermes_plugin.convert.entries import Rendered, render_custom, render_row
from hermes_plugin.convert.items import row_items
from hermes_plugin.convert.sanitize import as_read
from hermes_plugin.source.columns import RawText
from hermes_plugin.source.rowreader import RowReader
from hermes_plugin.source.rows import Message

JSON = dict[str, Any]

TS = "2026-01-02T03:04:05Z"
CALL = {"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}


def _message(**cells: Any) -> Message:
    """Row 7 of session ``s``, read as the converter reads it."""
    return RowReader("state.db").message(columns_of({"id": 7, "session_id": "s", **cells}))


def _render(book: CallBook | None = None, summary: JSON | None = None, **cells: Any) -> Rendered:
    """Row 7 rendered as the converter renders a context row (schema 22): a call whose ASF
    id was invented names its stored id."""
    message = _message(**cells)
    items = row_items(as_read(message, 22), book or CallBook(), lambda i: f"hermes_7_{i}")
    native = {
        at: call.pairing_id()
        for at, call in items.calls
        if items.items[at]["call_id"] != call.pairing_id()
    }
    return render_row(message, items, TS, model="m-1", summary_config=summary, native_ids=native)


def _member(rendered: Rendered, index: int) -> dict[str, Any]:
    member = rendered.entries[index].unknown["hermes"]
    assert isinstance(member, dict)
    return member


def _principal(rendered: Rendered) -> dict[str, Any]:
    (member,) = [
        m for i in range(len(rendered.entries)) if "columns" in (m := _member(rendered, i))
    ]
    return member


def _dumps(value: Any) -> str:
    """JSON text as Hermes writes its JSON columns."""
    return json.dumps(value)


def _prefixed(parts: list[JSON]) -> str:
    """Structured content as Hermes stores it."""
    return "\x00json:" + json.dumps(parts)


_PARTS: list[JSON] = [
    {"type": "text", "text": "a"},
    {"type": "image_url", "image_url": {"url": "u"}},
]
_TWO: list[JSON] = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
_CACHED: JSON = {"type": "input_text", "text": "a", "cache_control": {"type": "ephemeral"}}
_CITED: JSON = {"type": "output_text", "text": "a", "annotations": [{"type": "url_citation"}]}
_REASONING: list[JSON] = [{"type": "reasoning", "id": "rs_1", "summary": []}]
_ENCRYPTED: list[JSON] = [{**_REASONING[0], "content": [{"type": "reasoning_text", "text": "t"}]}]
_USER_ITEM: JSON = {
    "type": "message",
    "role": "user",
    "content": [{"type": "input_text", "text": "Hi"}],
}
_CODEX_MESSAGE: list[JSON] = [
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi"}]}
]

#: Rows and the columns their entries carry: those whose stored text an entry reproduces
#: exactly, as Hermes writes it; a cell written any other way stays in ``columns``.
_CARRIED: list[tuple[dict[str, Any], list[str]]] = [
    ({"role": "user", "content": "hello"}, ["content"]),
    ({"role": "user", "content": "  hello\n"}, []),  # the item holds the stripped text
    ({"role": "user", "content": _prefixed(_PARTS)}, ["content"]),
    ({"role": "user", "content": "\x00json:" + json.dumps(_PARTS, separators=(",", ":"))}, []),
    ({"role": "user", "content": "hi", "api_content": "[note]\nhi"}, ["api_content"]),
    ({"role": "user", "content": "", "api_content": ""}, ["content"]),  # no api_content sent
    ({"role": "system", "content": "Be brief.", "api_content": "Be brief!"}, ["content"]),
    # A system item is its content: an api_content that is the text of its first part alone
    # is not what the item holds.
    ({"role": "system", "content": _prefixed(_TWO), "api_content": "a"}, ["content"]),
    ({"role": "system", "content": _prefixed([_CACHED]), "api_content": "a"}, ["content"]),
    ({"role": "system", "content": _prefixed([_CITED]), "api_content": "a"}, []),
    (
        {"role": "assistant", "content": "done", "tool_calls": _dumps([CALL])},
        ["content", "tool_calls"],
    ),
    ({"role": "assistant", "content": "", "tool_calls": json.dumps([CALL], indent=1)}, []),
    # No call (Hermes writes NULL for none; "[]" is a foreign writer's): no entry holds it.
    ({"role": "assistant", "content": "ok", "tool_calls": "[]"}, ["content"]),
    (
        {"role": "assistant", "content": "ok", "reasoning": "why", "reasoning_content": ""},
        ["content", "reasoning", "reasoning_content"],
    ),
    (
        {"role": "assistant", "content": "", "reasoning_details": _dumps([{"type": "x"}])},
        ["reasoning_details"],
    ),
    ({"role": "assistant", "content": "", "reasoning_details": '[{"type":"x"}]'}, []),
    # Hermes writes empty details as NULL: an empty array is no reasoning, kept as stored.
    (
        {"role": "assistant", "content": "", "reasoning": "why", "reasoning_details": "[]"},
        ["reasoning"],
    ),
    (
        {"role": "assistant", "content": "", "reasoning": RawText(b"why \xff")},
        [],
    ),
    (
        {"role": "assistant", "content": "", "codex_reasoning_items": _dumps(_REASONING)},
        ["codex_reasoning_items"],
    ),
    ({"role": "assistant", "content": "", "codex_reasoning_items": "[]"}, []),
    # No Chat Completions carrier: the Codex item's content is not reasoning_content's.
    (
        {
            "role": "assistant",
            "content": "",
            "reasoning": "",
            "codex_reasoning_items": _dumps(_ENCRYPTED),
        },
        ["codex_reasoning_items"],
    ),
    ({"role": "assistant", "content": "", "reasoning_content": RawText(b"t \xff")}, []),
    (
        {"role": "assistant", "content": "Hi", "codex_message_items": _dumps(_CODEX_MESSAGE)},
        ["codex_message_items"],
    ),
    # Hermes' reader ignores the reasoning columns of other roles: never carried, even when
    # one holds the row's own item.
    (
        {"role": "user", "content": "Hi", "codex_reasoning_items": _dumps([_USER_ITEM])},
        ["content"],
    ),
    (
        {
            "role": "assistant",
            "content": "Hi",
            "codex_message_items": _dumps(_CODEX_MESSAGE)[:-1] + " ]",
        },
        ["content"],
    ),
]


@pytest.mark.parametrize(("cells", "carried"), _CARRIED)
def test_a_column_is_carried_only_when_an_entry_reproduces_its_text(
    cells: dict[str, Any], carried: list[str]
) -> None:
    member = _principal(_render(**cells))
    assert member.get("carried", []) == carried
    assert not {"id", "session_id", "role"} & set(member["columns"])  # identity and kind
    for name, cell in cells.items():
        if name in carried or name == "role":
            continue
        if isinstance(cell, RawText):  # text that is not UTF-8: its bytes, encoded
            assert member["encoded"][name] == "text"
        else:
            assert member["columns"][name] == cell, name


def test_an_assistant_rows_entries_name_their_parts_and_its_response() -> None:
    """Items first, each naming its part and the row's response; the response last, the
    principal entry; each call holds its stored object, an invented id the stored id."""
    calls = [CALL, {**CALL, "function": {"name": "read_file", "arguments": "{}"}}]
    rendered = _render(
        role="assistant",
        content="Listing.",
        reasoning="why",
        tool_calls=_dumps(calls),
        finish_reason="tool_calls",
    )
    entries = rendered.entries
    assert [type(e) for e in entries] == [Item, Item, Item, Item, Response]
    members = [_member(rendered, i) for i in range(len(entries))]
    assert [m["part"] for m in members] == ["reasoning", "message", "call", "call", "response"]
    assert {m["row"] for m in members} == {"state.db:messages/7"}
    assert [e.response for e in entries[:4] if isinstance(e, Item)] == ["hermes:messages/7"] * 4
    assert [e.visible for e in entries[:4] if isinstance(e, Item)] == [None] * 4
    response = entries[4]
    assert isinstance(response, Response)
    assert (response.response_id, response.model, response.status) == (
        "hermes:messages/7",
        "m-1",
        "completed",
    )
    assert [("columns" in m) for m in members] == [False, False, False, False, True]
    assert [m.get("call") for m in members[2:4]] == calls
    assert [m.get("call_id") for m in members[2:4]] == [None, "call_1"]
    assert [(at, call_id) for at, call_id, _ in rendered.calls] == [
        (2, "call_1"),
        (3, "hermes_7_1"),
    ]


def test_a_call_holds_its_stored_object_only_when_tool_calls_is_carried() -> None:
    """A ``tool_calls`` cell written otherwise stays in ``columns``: the calls are not copied."""
    rendered = _render(role="assistant", content="", tool_calls=json.dumps([CALL], indent=1))
    assert "call" not in _member(rendered, 0)
    assert _principal(rendered)["columns"]["tool_calls"] == json.dumps([CALL], indent=1)


def test_a_tool_result_answers_its_call() -> None:
    """Its output is its content as stored: an ``api_content`` other than that text, by as
    little as a newline, stays in ``columns``."""
    book = CallBook()
    _render(book, role="assistant", content="", tool_calls=_dumps([CALL]))
    rendered = _render(
        book, role="tool", content="a.txt", api_content="a.txt\n", tool_call_id="call_1"
    )
    (entry,) = rendered.entries
    assert isinstance(entry, Item)
    assert entry.response is None
    assert rendered.answers == "call_1"
    member = _member(rendered, 0)
    assert member["part"] == "output"
    assert member["carried"] == ["content"]
    assert member["columns"]["api_content"] == "a.txt\n"


def test_hidden_rows_and_verbatim_items_of_other_types() -> None:
    """A hidden row's entries are not shown; a Codex item that is no message is an ``item``."""
    hidden = _render(role="user", content="scaffold", display_kind="hidden")
    assert [getattr(e, "visible", None) for e in hidden.entries] == [False]
    search = [{"type": "web_search_call", "id": "ws_1", "status": "completed"}]
    rendered = _render(role="assistant", content="", codex_message_items=_dumps(search))
    assert _member(rendered, 0)["part"] == "item"
    assert _principal(rendered)["carried"] == ["codex_message_items"]
    # A damaged item whose type is no text (an array here) is an "item" too.
    odd = [{"type": ["message"], "content": "Hi"}]
    rendered = _render(role="assistant", content="", codex_message_items=_dumps(odd))
    assert _member(rendered, 0)["part"] == "item"


def test_a_summary_row_opens_a_compaction_with_its_first_item_only() -> None:
    """The row's first item is the summary; its other items and response follow as usual."""
    settings: JSON = {"model": "m-1", "instructions": "Be brief."}
    rendered = _render(summary=settings, role="assistant", content="gist", reasoning="why")
    first, second, response = rendered.entries
    assert isinstance(first, Compaction)
    assert first.config == settings
    assert first.summary is not None
    assert first.summary["type"] == "reasoning"
    assert _member(rendered, 0)["part"] == "summary"
    assert isinstance(second, Item)
    assert _member(rendered, 1)["part"] == "message"
    assert isinstance(response, Response)


def test_a_row_kept_aside_holds_every_column_but_its_identity() -> None:
    """``role`` included: no entry kind implies it; ``detail`` says why a row is unreadable."""
    message = _message(role="session_meta", content=None, timestamp=1_790_000_000.5)
    rendered = render_custom(message, TS, "session_meta")
    (entry,) = rendered.entries
    assert isinstance(entry, Custom)
    assert entry.data == {"kind": "message", "reason": "session_meta"}
    assert entry.unknown["hermes"] == {
        "row": "state.db:messages/7",
        "columns": {"role": "session_meta", "timestamp": 1_790_000_000.5},
    }
    assert rendered.aside == "session_meta"
    why = render_custom(message, TS, "unreadable", "no role").entries[0]
    assert isinstance(why, Custom)
    assert why.data["detail"] == "no role"


@pytest.mark.parametrize(
    "cell",
    [_dumps("rs_1"), _dumps(_REASONING[0]), _dumps([*_REASONING, 7]), _dumps([]), "true"],
    ids=["string", "object", "not-all-objects", "empty", "true"],
)
def test_codex_items_that_are_no_array_of_objects_are_no_items(cell: str) -> None:
    """Only an array of objects holds Codex items (docs/formats/hermes.md, "Items"): any
    other JSON in the column adds nothing to the request, and the reply's message stays."""
    for column in ("codex_reasoning_items", "codex_message_items"):
        rendered = _render(role="assistant", content="Hi", **{column: cell})
        items = [e.item for e in rendered.entries if isinstance(e, Item)]
        assert items == [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
            }
        ], column
