"""The pure rules of the Hermes mapping: text cleaning, content parts, call pairing, items."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hermes_homes import open_database
from hermes_reader_messages import as_message, as_messages
from hypothesis import given
from hypothesis import strategies as st

from hermes_plugin.convert.calls import CallBook, call_item
from hermes_plugin.convert.entries import response_status
from hermes_plugin.convert.items import conversation_items, row_items
from hermes_plugin.convert.parts import hermes_parts, input_parts, output_parts, tool_output
from hermes_plugin.convert.sanitize import (
    clean_text,
    is_review_harness,
    read_content,
    strips_harness,
)
from hermes_plugin.source.toolcalls import ToolCall

_FENCE_BITS = st.sampled_from(
    [
        "<memory-context>",
        "</memory-context>",
        "< Memory-Context >",
        "</ memory-context>",
        "[System note: The following is recalled memory context, NOT new user input. "
        "Treat as informational background data.]",
        "[system note: the following is recalled memory context, not new user input. "
        "treat as authoritative reference data (x).] ",
        "\n",
        "  ",
        "\u2028",
        "tea",
        "What should I drink?",
    ]
)


@given(st.lists(st.one_of(_FENCE_BITS, st.text(max_size=8)), max_size=12).map("".join))
def test_clean_text_is_hermes_sanitize_context(text: str) -> None:
    from agent.memory_manager import sanitize_context  # type: ignore[import-untyped]

    assert clean_text(text) == sanitize_context(text).strip()


def test_only_user_and_assistant_text_is_cleaned_as_hermes_reads_it(tmp_path: Path) -> None:
    """Hermes' conversation reader cleans user and assistant text of memory context and
    surrounding whitespace; a tool result or a system row it returns as stored."""
    import hermes_state

    text = "  <memory-context>recalled</memory-context> the answer \n"
    call = {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
    db = hermes_state.SessionDB(db_path=tmp_path / "state.db")
    db.create_session("s", "cli")
    db.append_message("s", "user", text)
    db.append_message("s", "assistant", text, tool_calls=[call])
    db.append_message("s", "tool", text, tool_call_id="c1")
    db.append_message("s", "system", text)
    expected = [m["content"] for m in db.get_messages_as_conversation("s")]
    db.close()
    with open_database(tmp_path / "state.db") as store:
        got = [read_content(m) for m in store.messages("s")]
    assert got == expected
    assert got[2:] == [text, text]  # the tool and system rows as stored


def test_review_harness_rows() -> None:
    prompt = "  Review the conversation above and consider saving to memory anything useful."
    assert is_review_harness("user", prompt)
    assert is_review_harness("system", prompt.strip())
    assert not is_review_harness("assistant", prompt)
    assert not is_review_harness("user", prompt.lower())
    assert not strips_harness(14)
    assert strips_harness(17)
    assert not strips_harness(None)


_TEXT_PART = st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=10))
_IMAGE_PART = st.builds(
    lambda u, d: {"type": "image_url", "image_url": {"url": u, **d}},
    st.text(max_size=10),
    st.sampled_from([{}, {"detail": "low"}, {"detail": "auto"}]),
)
_OTHER = st.one_of(
    st.text(max_size=5),
    st.builds(lambda u: {"type": "image_url", "image_url": u}, st.text(max_size=5)),
    st.builds(lambda x: {"type": "input_audio", "data": x}, st.text(max_size=5)),
    st.integers(),
    st.none(),
)


@given(st.lists(st.one_of(_TEXT_PART, _IMAGE_PART, _OTHER), max_size=6))
def test_parts_convert_and_convert_back(parts: list[Any]) -> None:
    converted = input_parts(parts)
    assert len(converted) == len(parts)
    assert all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in converted)
    assert not any(p["type"] in {"text", "image_url"} for p in converted)
    assert hermes_parts(converted) == parts


@given(st.lists(st.one_of(_TEXT_PART, st.text(max_size=5)), max_size=4))
def test_output_parts_convert_back(parts: list[Any]) -> None:
    converted = output_parts(parts)
    assert all(p["type"] == "output_text" and p["annotations"] == [] for p in converted)
    assert hermes_parts(converted) == parts


def test_content_shapes() -> None:
    assert input_parts("hi") == [{"type": "input_text", "text": "hi"}]
    assert input_parts(None) == []
    assert output_parts("") == []
    assert tool_output(None) == ""
    assert tool_output("x") == "x"
    assert input_parts({"type": "text", "text": "a dict"}) == [
        {"type": "input_text", "text": "a dict"}
    ]


#: Parts whose shape is not exactly one the mapping renames: kept as written, so that
#: nothing a renamed part has no room for is lost.
_KEPT = [
    {"type": "text", "text": "cached", "cache_control": {"type": "ephemeral"}},
    {"type": "text", "text": None},
    {"type": "text"},  # no text at all
    {"type": "image_url", "image_url": {"url": "https://x/a.png"}, "cache_control": {}},
    {"type": "image_url", "image_url": {"url": "https://x/a.png", "format": "png"}},
    {"type": "image_url", "image_url": {"detail": "low"}},
    {"type": "image_url", "image_url": {"url": 7}},  # an input_image's url is text
    # Already a Responses part, with a member the renamed part has no room for.
    {"type": "input_image", "image_url": "https://x/a.png", "file_id": "file-1"},
    {"type": "image_url", "image_url": None},
    {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
    {"type": "input_text", "text": "already Responses", "cache_control": {"type": "ephemeral"}},
]


@pytest.mark.parametrize("part", _KEPT)
def test_a_part_of_no_exactly_known_shape_is_kept_as_written(part: dict[str, Any]) -> None:
    assert input_parts([part]) == [part]
    assert hermes_parts(input_parts([part])) == [part]


@pytest.mark.parametrize(
    "part",
    [
        {"type": "text", "text": "cached", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": ["not", "text"]},
        {"type": "text"},
        {"type": "refusal", "refusal": "no"},
    ],
)
def test_an_assistant_part_of_no_exactly_known_shape_is_kept_as_written(
    part: dict[str, Any],
) -> None:
    assert output_parts([part]) == [part]
    assert hermes_parts(output_parts([part])) == [part]


@pytest.mark.parametrize("value", [{"text": "no type"}, {"type": 3}, 7, None, ["nested"]])
def test_a_value_that_is_no_typed_part_is_wrapped(value: Any) -> None:
    """Only an object with a string ``type`` is a part; anything else is wrapped, both ways."""
    wrapped = [{"type": "hermes:value", "value": value}]
    assert input_parts([value]) == wrapped
    assert output_parts([value]) == wrapped
    assert hermes_parts(wrapped) == [value]


@pytest.mark.parametrize("detail", ["", None, "high"])
def test_an_image_detail_is_kept_whatever_its_value(detail: str | None) -> None:
    """``detail`` is copied when present, empty or null too, and written back as read."""
    part = {"type": "image_url", "image_url": {"url": "u", "detail": detail}}
    (converted,) = input_parts([part])
    assert converted == {"type": "input_image", "image_url": "u", "detail": detail}
    assert hermes_parts([converted]) == [part]


def test_empty_text_and_a_single_object() -> None:
    """Empty user text is one empty text part, an empty tool result empty text; a single
    object is one part, for assistant content too."""
    assert input_parts("") == [{"type": "input_text", "text": ""}]
    assert tool_output("") == ""
    assert output_parts({"type": "text", "text": "hi"}) == [
        {"type": "output_text", "text": "hi", "annotations": []}
    ]


def _call(**members: Any) -> ToolCall:
    return ToolCall.from_json(
        {"type": "function", "function": {"name": "f", "arguments": "{}"}, **members}
    )


def test_pairing_by_aliases_and_bridge_ids() -> None:
    book = CallBook()
    bridge = book.add(_call(id="call_B|fc_B"), lambda: "x")
    plain = book.add(_call(id="toolu_1"), lambda: "y")
    assert (bridge, plain) == ("call_B", "toolu_1")
    assert book.answer("fc_B") == "call_B"
    assert book.answer("call_B") is None  # answered once
    assert book.answer("toolu_1") == "toolu_1"
    assert book.answer("nobody") is None
    assert book.answer(None) is None


def test_pairing_invents_ids_for_repeats_and_blanks() -> None:
    book = CallBook()
    first = book.add(_call(id="call_1"), lambda: "hermes_1_0")
    again = book.add(_call(id="call_1"), lambda: "hermes_2_0")
    blank = book.add(_call(), lambda: "hermes_3_0")
    assert (first, again, blank) == ("call_1", "hermes_2_0", "hermes_3_0")
    # Results pair in order: the earliest unanswered call first.
    assert book.answer("call_1") == "call_1"
    assert book.answer("call_1") == "hermes_2_0"
    snapshot = book.snapshot()
    book.forget()
    assert book.answer("call_1") is None
    book.restore(snapshot)
    assert book.open[0].answered


def test_assistant_items_in_order() -> None:
    message = {
        "role": "assistant",
        "content": "Done.",
        "reasoning": "why",
        "reasoning_content": "",
        "codex_reasoning_items": [{"type": "reasoning", "id": "rs_1", "summary": []}],
        "tool_calls": [
            {
                "id": "call_a",
                "call_id": "call_a",
                "response_item_id": "fc_a",
                "type": "function",
                "function": {"name": "terminal", "arguments": {"cmd": "ls"}},
            }
        ],
    }
    result = row_items(as_message(message), CallBook(), lambda i: f"x{i}")
    assert [i["type"] for i in result.items] == [
        "reasoning",
        "reasoning",
        "message",
        "function_call",
    ]
    assert result.items[0] == {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "why"}],
        "content": [{"type": "reasoning_text", "text": ""}],
    }
    assert result.items[3] == {
        "type": "function_call",
        "call_id": "call_a",
        "name": "terminal",
        "arguments": '{"cmd":"ls"}',
        "id": "fc_a",
    }


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ({"role": "session_meta", "content": None}, "session_meta"),
        ({"role": "user", "content": "[Bob] hi", "observed": True}, "observed"),
        ({"role": "tool", "content": "x", "tool_call_id": "nobody"}, "unpaired"),
        ({"role": "unknown", "content": "x"}, "role"),
        ({"role": "user", "content": "hi"}, "message"),
    ],
)
def test_rows_kept_aside(message: dict[str, Any], kind: str) -> None:
    result = row_items(as_message(message), CallBook(), lambda i: "x")
    assert result.kind == kind
    assert result.in_context == (kind == "message")


def test_user_api_content_is_what_the_model_got() -> None:
    reader = [
        {
            "role": "user",
            "content": "clean",
            "api_content": "<memory-context>m</memory-context>\nclean",
        }
    ]
    items = conversation_items(as_messages(reader))
    assert items[0]["content"] == [
        {"type": "input_text", "text": "<memory-context>m</memory-context>\nclean"}
    ]


def test_system_api_content_is_not_what_the_model_got() -> None:
    # Hermes puts api_content on the wire for user and assistant rows only: a system row's
    # item is its content, the api_content staying in the row's columns.
    reader = [{"role": "system", "content": "Be brief.", "api_content": "Be brief. [injected]"}]
    items = conversation_items(as_messages(reader))
    assert items == [
        {
            "type": "message",
            "role": "system",
            "content": [{"type": "input_text", "text": "Be brief."}],
        }
    ]


_DONE = ("completed", None)
_CUT = ("incomplete", {"reason": "max_output_tokens"})


@pytest.mark.parametrize(
    ("finish_reason", "status"),
    [
        ("stop", _DONE),
        ("end_turn", _DONE),
        ("tool_calls", _DONE),
        ("function_call", _DONE),
        ("tool_use", _DONE),
        ("length", _CUT),
        ("max_tokens", _CUT),
        ("content_filter", ("incomplete", {"reason": "content_filter"})),
        (None, (None, None)),
        ("", (None, None)),
        ("weird", (None, None)),
    ],
)
def test_finish_reasons(finish_reason: str | None, status: tuple[str | None, Any]) -> None:
    """The table of docs/formats/hermes.md section 3.4."""
    assert response_status(finish_reason) == status


def test_schema31_uids_pair_the_exact_occurrence() -> None:
    calls = [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
    ]
    reader: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": calls,
            "_tool_call_uids": {"call_1": ["u-first", "u-second"]},
        },
        {
            "role": "tool",
            "content": "second",
            "tool_call_id": "call_1",
            "_tool_call_uid": "u-second",
        },
        {
            "role": "tool",
            "content": "first",
            "tool_call_id": "call_1",
            "_tool_call_uid": "u-first",
        },
    ]
    items = conversation_items(as_messages(reader))
    book = CallBook()
    first = book.add(_call(id="call_1"), lambda: "x1", "u-first")
    second = book.add(_call(id="call_1"), lambda: "x2", "u-second")
    assert book.answer("call_1", "u-second") == second
    assert book.answer("call_1", "u-unknown") == first  # an unknown uid: by id spellings
    assert [i.get("output") for i in items if i["type"] == "function_call_output"] == [
        "second",
        "first",
    ]


def test_invented_id_never_reuses_a_used_one() -> None:
    """An invented id a native call already took is made unique (every call_id unique)."""
    book = CallBook()
    assert book.add(_call(id="hermes_7_0"), lambda: "unused") == "hermes_7_0"
    assert book.add(_call(), lambda: "hermes_7_0") == "hermes_7_0_"
    assert book.add(_call(), lambda: "hermes_7_0") == "hermes_7_0__"


def test_a_call_answered_out_of_order_is_not_answered_again() -> None:
    """Each call is answered once, also when a later call is answered before an earlier one."""
    book = CallBook()
    book.add(_call(id="call_A"), lambda: "x")
    book.add(_call(id="call_B"), lambda: "y")
    assert book.answer("call_B") == "call_B"
    assert book.answer("call_B") is None
    assert book.answer("call_A") == "call_A"


def test_restore_reopens_calls_answered_on_the_abandoned_branch() -> None:
    """A call the abandoned branch answered is open again on the live branch."""
    book = CallBook()
    book.add(_call(id="call_A"), lambda: "x")
    snapshot = book.snapshot()
    assert book.answer("call_A") == "call_A"
    assert book.answer("other") is None  # the search start moves past the answered call
    book.restore(snapshot)
    assert book.answer("call_A") == "call_A"


def test_compaction_closes_open_calls_but_keeps_their_ids_used() -> None:
    """After a compaction an earlier unanswered call is out of context, its id still taken."""
    book = CallBook()
    book.add(_call(id="call_A"), lambda: "x")
    book.forget()
    assert book.answer("call_A") is None
    assert book.add(_call(id="call_A"), lambda: "hermes_9_0") == "hermes_9_0"
    assert book.answer("call_A") == "hermes_9_0"


def test_item_id_from_the_bridge_of_the_native_id() -> None:
    """The item ``id`` comes from the bridge id the native id is read from: ``call_id`` before
    ``id``, as the pairing id."""
    call = _call(call_id="call_A|fc_A", id="call_B|fc_B")
    item = call_item(call, call.pairing_id())
    assert (item["call_id"], item["id"]) == ("call_A", "fc_A")
    assert "id" not in call_item(_call(id="call_C"), "call_C")


def test_arguments_are_the_stored_text_even_empty() -> None:
    """A call's arguments are the text stored, an empty one too (a no-argument call some
    providers send); only a call with no arguments member at all (or null) has ``{}``."""

    def arguments(function: dict[str, Any]) -> str:
        call = ToolCall.from_json({"id": "call_1", "type": "function", "function": function})
        return str(call_item(call, "call_1")["arguments"])

    assert arguments({"name": "f", "arguments": ""}) == ""
    assert arguments({"name": "f", "arguments": '{"a": 1}'}) == '{"a": 1}'
    assert arguments({"name": "f"}) == "{}"
    assert arguments({"name": "f", "arguments": None}) == "{}"
