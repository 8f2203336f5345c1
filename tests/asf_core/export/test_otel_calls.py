"""OTel spans of model calls whose entries the vectors do not spell this way: output items
that name no response or a response that never came, and an error that names no type. Each
trace is read back with the OTLP protobuf definitions."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from fixture_paths import VECTORS
from otlp_readback import parse_otlp as _parse
from otlp_readback import span_attributes as _attrs

from asf_core.export import SessionTree, otel_content, otel_request, otel_wire
from asf_core.model import BranchSummary, Config, Decision, Entry, Header, Item, Response
from asf_core.reader import parse_session, read_session
from asf_core.writer import SessionBuilder, entry_line, header_line

JSON = dict[str, Any]


def _trace(*entries: Entry) -> dict[str, Any]:
    """The spans (by name) of a session of ``entries`` after a config, read back as protobuf,
    exported with content."""
    header = Header(id="01995b2a-0000-7000-8000-00000000a7f3", created_at="2026-10-01T09:00:00Z")
    b = SessionBuilder(header)
    b.append(Config(ts="2026-10-01T09:00:00Z", model="gpt-5"))
    for n, entry in enumerate(entries, start=1):
        b.append(_at(entry, f"2026-10-01T09:00:{n:02d}Z"))
    session = parse_session(header_line(header) + b"".join(entry_line(e) for e in b.entries))
    request = _parse(otel_request(SessionTree(session).view(str(b.leaf)), content=True))
    return {s.name: s for s in request.resource_spans[0].scope_spans[0].spans}


def _at(entry: Entry, ts: str) -> Entry:
    return attrs.evolve(entry, ts=ts)


_USER: JSON = {"type": "message", "role": "user", "content": "What is 2+2?"}
_CALL: JSON = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"}


def test_output_items_naming_no_response_are_the_following_call_s_output() -> None:
    """A tool call item that does not name its response (older converters) belongs to the
    response after it, as in the ATIF export: the chat span ended in a tool call, its output
    messages hold the call, and the tool span was made by it."""
    spans = _trace(
        Item(ts="", item=_USER),
        Item(ts="", item=_CALL),
        Response(ts="", response_id="resp_1", model="gpt-5"),
        Item(ts="", item={"type": "function_call_output", "call_id": "c1", "output": "4"}),
    )
    chat, tool = spans["chat gpt-5"], spans["execute_tool lookup"]
    said = _attrs(chat)
    assert said["gen_ai.response.finish_reasons"] == ["tool_call"]
    (output,) = json.loads(said["gen_ai.output.messages"])
    assert output["finish_reason"] == "tool_call"
    assert [p["type"] for p in output["parts"]] == ["tool_call"]
    assert [link.span_id for link in tool.links] == [chat.span_id]


def test_items_of_another_call_are_not_this_call_s_output() -> None:
    """Items naming an earlier response that never came are not credited to the next one."""
    spans = _trace(
        Item(ts="", item=_USER),
        Item(ts="", item=_CALL, response="resp_lost"),
        Response(ts="", response_id="resp_2", model="gpt-5"),
    )
    said = _attrs(spans["chat gpt-5"])
    assert said["gen_ai.response.finish_reasons"] == ["stop"]
    assert json.loads(said["gen_ai.output.messages"])[0]["parts"] == []


def test_an_error_naming_no_type_is_still_an_error_type() -> None:
    """``error.type`` is the error's ``type``, else its ``code``, else ``error``: never
    empty, which the conventions do not allow."""
    for error in ({"type": "", "code": "", "message": "boom"}, {"message": "boom"}):
        spans = _trace(
            Item(ts="", item=_USER),
            Response(ts="", response_id="resp_1", model="gpt-5", error=error),
        )
        chat = spans["chat gpt-5"]
        assert _attrs(chat)["error.type"] == "error"
        assert (chat.status.code, chat.status.message) == (2, "boom")
    for error, kind in (({"code": "upstream"}, "upstream"), (_BOTH, "server_error")):
        spans = _trace(
            Item(ts="", item=_USER),
            Response(ts="", response_id="resp_1", model="gpt-5", error=error),
        )
        assert _attrs(spans["chat gpt-5"])["error.type"] == kind


_BOTH: JSON = {"type": "server_error", "code": "upstream", "message": "boom"}
_SECOND = 1_000_000_000
_T0 = 1790845200 * _SECOND  # 2026-10-01T09:00:00Z


def test_a_chat_span_lasts_its_latency_else_from_the_request_s_end() -> None:
    """A chat span ends at its response and starts ``latency_ms`` earlier, else at the last
    entry before the call's first output (docs/export.md)."""
    user = Item(ts="", item=_USER)
    said = Item(ts="", item={"type": "message", "role": "assistant", "content": "4"})
    timed = _trace(user, said, Response(ts="", response_id="r", model="gpt-5", latency_ms=250))
    untimed = _trace(user, said, Response(ts="", response_id="r", model="gpt-5"))
    for spans, start in ((timed, _T0 + 3 * _SECOND - 250_000_000), (untimed, _T0 + _SECOND)):
        chat = spans["chat gpt-5"]
        assert (chat.start_time_unix_nano, chat.end_time_unix_nano) == (start, _T0 + 3 * _SECOND)


def test_a_rejected_call_s_span_says_why() -> None:
    """A decision rejecting a call makes its tool span an error, with the decision's reason
    (else ``rejected``) as the status message."""
    for reason, message in (
        ("writes outside the workspace", "writes outside the workspace"),
        (None, "rejected"),
    ):
        spans = _trace(
            Item(ts="", item=_USER),
            Item(ts="", item=_CALL, response="resp_1"),
            Response(ts="", response_id="resp_1", model="gpt-5"),
            Decision(ts="", call_id="c1", verdict="reject", by="user", reason=reason),
        )
        tool = spans["execute_tool lookup"]
        assert _attrs(tool)["error.type"] == "rejected"
        assert (tool.status.code, tool.status.message) == (2, message)


def test_a_branch_summary_of_a_branch_not_in_the_file_links_nowhere() -> None:
    """A summary whose ``from`` names no entry of the file still exports; the span after it
    has no ``branch_summary`` link to a trace that cannot exist."""
    summary = {"type": "message", "role": "user", "content": "Tried another way first."}
    spans = _trace(
        Item(ts="", item=_USER),
        BranchSummary(ts="", from_="sha256:" + "0" * 64, summary=summary),
        Item(ts="", item=_CALL, response="resp_1"),
        Response(ts="", response_id="resp_1", model="gpt-5"),
    )
    assert list(spans["chat gpt-5"].links) == []


def test_an_image_the_model_was_shown_is_a_uri_part() -> None:
    """``gen_ai.input.messages`` (``--content``): an image is a ``uri`` part of modality
    ``image``, text parts are text, as the GenAI conventions' message shape has them."""
    url = "https://example.com/cat.png"
    content = [{"type": "input_text", "text": "What is this?"}, _image(url)]
    spans = _trace(
        Item(ts="", item={"type": "message", "role": "user", "content": content}),
        Response(ts="", response_id="resp_1", model="gpt-5"),
    )
    (asked,) = json.loads(_attrs(spans["chat gpt-5"])["gen_ai.input.messages"])
    assert asked == {
        "role": "user",
        "parts": [
            {"type": "text", "content": "What is this?"},
            {"type": "uri", "modality": "image", "uri": url},
        ],
    }


def _image(url: str) -> JSON:
    return {"type": "input_image", "image_url": url}


def test_an_all_zero_id_is_never_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """OTLP reads an all-zero trace or span id as no id: should a digest begin with zeros
    only, the id ends in 1 instead."""

    class _Zeros:
        def __init__(self, data: bytes) -> None:
            pass

        def digest(self) -> bytes:
            return bytes(32)

    monkeypatch.setattr(otel_wire.hashlib, "sha256", _Zeros)
    assert otel_wire.trace_id("s", "leaf") == "0" * 31 + "1"
    assert otel_wire.span_id("s", "entry") == "0" * 15 + "1"


def test_the_scope_has_a_version_where_the_distribution_has_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Run from a source tree with no installed distribution, the scope still says which
    version wrote the trace: ``unknown``, not a missing value."""
    monkeypatch.setattr(otel_wire, "installed_version", lambda name: None)
    (scope,) = otel_wire.envelope({}, [])["resourceSpans"][0]["scopeSpans"]
    assert scope["scope"] == {"name": "asf", "version": "unknown"}


def test_a_chat_span_names_the_model_requested_and_the_instructions_given() -> None:
    """``gen_ai.request.model`` is the model in force; ``gen_ai.system_instructions`` is
    there only when the settings hold instructions (this session's config has none)."""
    said = _attrs(_trace(Item(ts="", item=_USER), Response(ts="", response_id="r"))["chat gpt-5"])
    assert said["gen_ai.request.model"] == "gpt-5"
    assert "gen_ai.response.model" not in said  # the response named none
    assert "gen_ai.system_instructions" not in said
    basic = read_session(VECTORS / "sessions" / "basic.jsonl")
    doc = otel_request(SessionTree(basic).view(str(basic.entries[-1].id)), content=True)
    chats = [
        {a["key"]: a["value"] for a in span["attributes"]}
        for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        if span["name"].startswith("chat ")
    ]
    assert chats
    for chat in chats:
        given = json.loads(chat["gen_ai.system_instructions"]["stringValue"])
        assert given == [{"type": "text", "content": "Be brief."}]
    # The second call received the first one's output items and the tool's answer.
    asked = json.loads(chats[-1]["gen_ai.input.messages"]["stringValue"])
    assert asked == [
        {"role": "user", "parts": [{"type": "text", "content": "What is 2+2?"}]},
        {
            "role": "assistant",
            "parts": [{"type": "reasoning", "content": "Arithmetic, but the tool is there."}],
        },
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "call_1", "name": "lookup", "arguments": _Q}],
        },
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "call_1", "response": "4"}],
        },
    ]


_Q = {"q": "2+2"}


def test_a_tool_span_of_a_call_without_its_response_starts_when_the_call_was_made() -> None:
    """No response entry and no dispatch: the call's own time is when it started, and its
    output's when it ended (docs/export.md)."""
    spans = _trace(
        Item(ts="", item=_USER),
        Item(ts="", item=_CALL),  # 09:00:02, the call of a response never written
        Item(ts="", item={"type": "function_call_output", "call_id": "c1", "output": "4"}),
    )
    tool = spans["execute_tool lookup"]
    assert (tool.start_time_unix_nano, tool.end_time_unix_nano) == (
        _T0 + 2 * _SECOND,
        _T0 + 3 * _SECOND,
    )


def test_input_messages_keep_each_message_s_role() -> None:
    """What the assistant said before comes back in the next request as the assistant's; a
    message naming no role is the user's."""
    said = {"type": "message", "role": "assistant", "content": "4."}
    spans = _trace(
        Item(ts="", item=_USER),
        Item(ts="", item=said, response="resp_1"),
        Response(ts="", response_id="resp_1", model="gpt-5"),
        Item(ts="", item={"type": "message", "content": "And 3+3?"}),
        Response(ts="", response_id="resp_2", model="gpt-5"),
    )
    # Of two spans of one name, _trace keeps the later: the second call.
    asked = json.loads(_attrs(spans["chat gpt-5"])["gen_ai.input.messages"])
    assert [m["role"] for m in asked] == ["user", "assistant", "user"]


def test_a_vendor_prefix_names_the_provider_before_the_family() -> None:
    """``vendor/model`` names its provider (as the conventions spell it, else as written),
    whatever family the model's own name suggests (docs/export.md)."""
    assert otel_content.provider("google/gemma-3") == "gcp.gen_ai"
    assert otel_content.provider("mistralai/mixtral-8x7b") == "mistral_ai"
    assert otel_content.provider("azure/gpt-4o") == "azure"
    assert otel_content.provider("gpt-4o") == "openai"
