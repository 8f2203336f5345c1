"""Small rules of the export modules that whole-document checks do not reach: media types,
which reasoning text is read, blank arguments, WebP sidecars, where a path left the preferred
route, which outcomes below a leaf count, which copy of a sub-agent is found, how ATIF joins
messages and names data URLs, OTel roles, providers and finish reasons, OTLP bool values.

Items are taken from the ASF vectors where they hold the case; a session or item built here
covers what they do not (two abandoned forks, a WebP blob, an incomplete response).
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from fixture_paths import VECTORS
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from asf_core.export import SessionTree, atif_document, otel_request
from asf_core.export.atif_content import agent_turn, message
from asf_core.export.items import image_media_type, parse_arguments, reasoning_text, type_of
from asf_core.export.media import inline_image
from asf_core.export.otel_content import finish_reason, messages, provider
from asf_core.export.otel_wire import envelope
from asf_core.export.resolve import DirectoryIndex
from asf_core.model import Config, Header, Item, Outcome, Response
from asf_core.reader import read_session
from asf_core.session_file import SessionFile
from asf_core.writer import SessionBuilder, write_session

SESSIONS = VECTORS / "sessions"


def _items(session: SessionFile, kind: str) -> list[Item]:
    return [e for e in session.entries if isinstance(e, Item) and type_of(e.item) == kind]


# -- items ---------------------------------------------------------------------------------


def test_jpg_data_urls_are_jpeg() -> None:
    """``image/jpg`` is a common misspelling of ``image/jpeg``: the image is still one of the
    accepted types, named as the registry names it."""
    assert image_media_type("data:image/jpg;base64,/9j/") == "image/jpeg"
    assert image_media_type("DATA:IMAGE/JPG;base64,/9j/") == "image/jpeg"


def test_reasoning_prefers_content_to_summary() -> None:
    """A reasoning item holding both is read from its content (the docstring's order); the
    summary is the fallback when the content says nothing."""
    (item,) = _items(read_session(SESSIONS / "basic.jsonl"), "reasoning")
    summary = item.item["summary"][0]["text"]
    assert reasoning_text(item.item) == summary  # the vector holds a summary only
    full = {**item.item, "content": [{"type": "reasoning_text", "text": "step one"}]}
    assert reasoning_text(full) == "step one"
    assert reasoning_text({**item.item, "content": []}) == summary


def test_blank_arguments_are_an_empty_object() -> None:
    """A call sent without arguments has none, not a malformed ``_arguments`` string."""
    entry = _items(read_session(SESSIONS / "basic.jsonl"), "function_call")[0]
    call = entry.item
    assert parse_arguments(call["arguments"]) == json.loads(call["arguments"])
    for blank in ("", "  \n"):
        assert parse_arguments(blank) == {}
        (made,) = agent_turn([attrs.evolve(entry, item={**call, "arguments": blank})]).tool_calls
        assert made["arguments"] == {}
    assert parse_arguments("[1]") == {"_arguments": "[1]"}


# -- media ---------------------------------------------------------------------------------

#: A 1x1 lossless WebP (RIFF container, ``WEBP`` form type, one ``VP8L`` chunk).
_WEBP: bytes = base64.b64decode("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")


def test_webp_sidecar_is_inlined_as_webp(tmp_path: Path) -> None:
    """WebP is one of the four inline types; a sidecar blob is told to be one by its RIFF
    header, whose size field (bytes 4-8) varies, so the sniff must skip it."""
    assert _WEBP[:4] == b"RIFF"
    assert _WEBP[8:12] == b"WEBP"
    digest = hashlib.sha256(_WEBP).hexdigest()
    session = tmp_path / "s.jsonl"
    (tmp_path / "sid").mkdir()
    (tmp_path / "sid" / digest).write_bytes(_WEBP)
    shown = inline_image(f"sidecar:sha256:{digest}", session, "sid")
    assert shown == "data:image/webp;base64," + base64.b64encode(_WEBP).decode("ascii")
    # RIFF of another form (a WAVE file) is no image.
    (tmp_path / "sid" / digest).write_bytes(_WEBP[:8] + b"WAVE" + _WEBP[12:])
    assert inline_image(f"sidecar:sha256:{digest}", session, "sid") is None


# -- paths ---------------------------------------------------------------------------------


def _forking(session_id: str) -> tuple[SessionBuilder, Callable[[str, str | None], str], str]:
    """A session to grow by hand: its builder, ``say(text, parent)`` appending a user message
    (a second later each) and returning its id, and the id of the config at its root."""
    b = SessionBuilder(Header(id=session_id, created_at="2026-01-01T00:00:00Z"))
    ts = iter(f"2026-01-01T00:00:{n:02d}Z" for n in range(60))

    def say(text: str, parent: str | None) -> str:
        msg = {"type": "message", "role": "user", "content": text}
        return str(b.append(Item(ts=next(ts), item=msg), parent=parent).id)

    return b, say, str(b.append(Config(ts=next(ts), model="gpt-5"), parent=None).id)


def test_abandoned_at_is_the_first_fork_left(tmp_path: Path) -> None:
    """A path that leaves the preferred route at two forks was abandoned at the first: from
    there on, nothing of it is on the preferred route."""
    b, say, root = _forking("forks")
    first = say("first", root)
    second = say("second", first)
    old = say("old leaf", second)
    say("newer at the second fork", second)
    say("newest at the first fork", first)  # the preferred route at ``first``
    path = tmp_path / "forks.jsonl"
    write_session(path, b.header, b.entries)
    tree = SessionTree(read_session(path))
    assert len(tree.children(first)) == len(tree.children(second)) == 2
    assert tree.view(old).abandoned_at == first
    assert tree.view(second).abandoned_at == first


def test_the_continued_branch_holds_the_newest_entry_not_the_newest_child(
    tmp_path: Path,
) -> None:
    """At a fork the branch holding the newest entry anywhere below it is the continued
    one, though its first entry is older than the other branch's (docs/export.md)."""
    b, say, root = _forking("newest")
    first = say("first child", root)
    second = say("second child, written later", root)
    newest = say("the newest entry, under the first child", first)
    path = tmp_path / "newest.jsonl"
    write_session(path, b.header, b.entries)
    tree = SessionTree(read_session(path))
    assert tree.children(root) == [first, second]
    continued = tree.view(newest)
    assert (continued.preferred_over, continued.abandoned_at) == ([second], None)
    left = tree.view(second)
    assert (left.preferred_over, left.abandoned_at) == ([], root)


def test_outcomes_below_judge_the_path_only() -> None:
    """An outcome written below the leaf counts only when it judges an entry of the path: on
    the path up to the response it judges it is shown, on the path ending just before, not."""
    session = read_session(SESSIONS / "runs.jsonl")
    tree = SessionTree(session)
    (outcome,) = [e for e in session.entries if isinstance(e, Outcome)]
    target = next(e for e in session.entries if e.id == outcome.target)
    assert isinstance(target, Response)
    assert tree.view(str(target.id)).outcomes_below == [outcome]
    before = tree.view(str(target.parent))
    assert str(outcome.id) in {str(e) for e in _below(tree, str(target.parent))}
    assert before.outcomes_below == []


def _below(tree: SessionTree, entry_id: str) -> list[str]:
    found: list[str] = []
    stack = list(tree.children(entry_id))
    while stack:
        ident = stack.pop()
        found.append(ident)
        stack.extend(tree.children(ident))
    return found


# -- resolve -------------------------------------------------------------------------------


def test_the_copy_sharing_the_longest_leading_directories_is_found(tmp_path: Path) -> None:
    """Of two copies of a child, the one in the same store wins: directories count only while
    they match from the top, not wherever they happen to line up again."""
    near = tmp_path / "a" / "x" / "s" / "parent.jsonl"
    same_store = tmp_path / "a" / "y" / "child.jsonl"
    elsewhere = tmp_path / "b" / "x" / "s" / "child.jsonl"
    for copy in (same_store, elsewhere):
        copy.parent.mkdir(parents=True)
        shutil.copyfile(SESSIONS / "basic.jsonl", copy)
    session_id = read_session(same_store).header.id
    index = DirectoryIndex(tmp_path)
    assert sorted(index.paths[session_id]) == sorted([same_store, elsewhere])
    assert index.path_of(session_id, near) == same_store


def test_a_copy_below_the_file_s_own_directory_is_found(tmp_path: Path) -> None:
    """One directory list holding the other whole (the file's own directory and a folder
    inside it) shares all of the shorter one: that copy wins, and the lengths differing is
    no error."""
    near = tmp_path / "a" / "parent.jsonl"
    inside = tmp_path / "a" / "subagents" / "child.jsonl"
    elsewhere = tmp_path / "b" / "c" / "child.jsonl"
    for copy in (inside, elsewhere):
        copy.parent.mkdir(parents=True)
        shutil.copyfile(SESSIONS / "basic.jsonl", copy)
    session_id = read_session(inside).header.id
    assert DirectoryIndex(tmp_path).path_of(session_id, near) == inside


# -- ATIF content --------------------------------------------------------------------------


def test_text_messages_of_one_call_are_joined_by_newlines() -> None:
    """``agent_turn``: text-only messages are joined by a newline (its docstring)."""
    said = [
        e
        for name in ("basic.jsonl", "runs.jsonl")
        for e in _items(read_session(SESSIONS / name), "message")
        if e.item["role"] == "assistant"
    ]
    texts = [message(e.item) for e in said]
    assert len(texts) == 2
    assert all(isinstance(t, str) and t for t in texts)
    assert agent_turn(said).message == "\n".join(texts)  # type: ignore[arg-type]


def _placeholder(url: str) -> Any:
    return message({"type": "message", "role": "user", "content": [_image(url)]})


def _image(url: str) -> dict[str, str]:
    return {"type": "input_image", "image_url": url}


def test_unshown_data_urls_are_named_by_media_type_only() -> None:
    """An image ATIF cannot carry becomes a placeholder naming its media type, never its
    payload, whether the data URL says ``;base64`` or goes straight to the comma."""
    assert _placeholder("data:image/bmp;base64,Qk0=") == "[image: data URL image/bmp]"
    assert _placeholder("data:image/bmp,BM") == "[image: data URL image/bmp]"


# -- OTel content and wire ------------------------------------------------------------------


def test_developer_messages_are_system_messages() -> None:
    """The GenAI conventions have no ``developer`` role; it is the system role renamed."""
    session = read_session(SESSIONS / "pinned.jsonl")
    developer = [e.item for e in _items(session, "message") if e.item["role"] == "developer"]
    assert developer
    assert {m["role"] for m in json.loads(messages(developer))} == {"system"}


def test_an_unknown_model_family_is_other() -> None:
    """``gen_ai.provider.name`` is ``_OTHER`` when the model name names no provider
    (docs/export.md), and the family when it does."""
    assert provider("llama-3.1-70b") == "_OTHER"
    assert provider("") == "_OTHER"
    model = read_session(SESSIONS / "basic.jsonl").entries[0].model  # type: ignore[attr-defined]
    assert provider(model) == "openai"


def test_an_incomplete_response_finishes_with_its_reason() -> None:
    """An incomplete response's finish reason is the reason it gives (docs/export.md)."""
    session = read_session(SESSIONS / "basic.jsonl")
    resp = [e for e in session.entries if isinstance(e, Response)][-1]
    assert finish_reason(resp, []) == "stop"
    cut = attrs.evolve(resp, incomplete={"reason": "max_output_tokens"})
    assert finish_reason(cut, []) == "max_output_tokens"
    assert finish_reason(attrs.evolve(resp, incomplete={}), []) == "incomplete"
    assert finish_reason(attrs.evolve(resp, incomplete={"reason": ""}), []) == "incomplete"


def test_bool_attributes_are_bool_values() -> None:
    """OTLP's ``AnyValue`` has a ``bool_value``: a bool must not arrive as an integer; a
    float is a ``double_value``, an integer an ``int_value``."""
    doc = envelope({"asf.flag": True, "asf.other": False}, [])
    request = json_format.ParseDict(doc, ExportTraceServiceRequest())
    values = request.resource_spans[0].resource.attributes
    assert [v.value.WhichOneof("value") for v in values] == ["bool_value", "bool_value"]
    assert [v.value.bool_value for v in values] == [True, False]
    doc = envelope({"asf.ratio": 0.5, "asf.count": 3}, [])
    values = json_format.ParseDict(doc, ExportTraceServiceRequest()).resource_spans[0]
    kinds = [(v.value.WhichOneof("value"), v.value) for v in values.resource.attributes]
    assert [kind for kind, _ in kinds] == ["double_value", "int_value"]
    assert (kinds[0][1].double_value, kinds[1][1].int_value) == (0.5, 3)


def test_the_package_names_its_exporters_before_they_load() -> None:
    """The exporters load when used, yet ``dir()`` lists them; and a name that is both a
    module's and a function's would be the module once that module loads: none is."""
    import asf_core.export as package
    from asf_core.export import atif_assembly, otel, paths

    assert set(package.__all__) <= set(dir(package))
    for name in package.__all__:
        assert not isinstance(getattr(package, name), type(paths)), name
    assert package.atif_document is atif_assembly.atif_document
    assert package.otel_request is otel.otel_request


def test_a_custom_tool_call_is_a_tool_call_in_atif_and_otel(tmp_path: Path) -> None:
    """A Codex ``apply_patch`` is a custom tool call (free-text ``input``) among the model's
    output items, answered by a ``custom_tool_call_output``: in ATIF it is one of the agent
    step's ``tool_calls`` (its input as ``{"input": text}``, as Harbor's own Codex converter
    gives it) and its output that step's observation; in OTel an ``execute_tool`` span, made
    by the call's inference span. Before, the call and its output were each a system step
    with an empty message and no span, so an export of a Codex session held none of its
    edits (21 of them in the 0.104 rollout 019c8a59, all 49 calls of that kind)."""
    b = SessionBuilder(Header(id="patch", created_at="2026-01-01T00:00:00Z"))
    ts = iter(f"2026-01-01T00:00:{n:02d}Z" for n in range(60))
    patch = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n"
    call = {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": patch}
    done = "Success. Updated the following files:\nA hello.txt\n"
    b.append(Config(ts=next(ts), model="gpt-5.3-codex"), parent=None)
    b.append(Item(ts=next(ts), item={"type": "message", "role": "user", "content": "add it"}))
    b.append(Item(ts=next(ts), item=call))
    b.append(Response(ts=next(ts), model="gpt-5.3-codex", usage={"input_tokens": 9}))
    b.append(
        Item(
            ts=next(ts),
            item={"type": "custom_tool_call_output", "call_id": "c1", "output": done},
        )
    )
    path = tmp_path / "patch.jsonl"
    write_session(path, b.header, b.entries)
    session = read_session(path)
    view = SessionTree(session).view(str(b.leaf))
    doc = atif_document(view)
    assert [s["source"] for s in doc["steps"]] == ["user", "agent"]
    agent = doc["steps"][1]
    assert agent["tool_calls"] == [
        {"tool_call_id": "c1", "function_name": "apply_patch", "arguments": {"input": patch}}
    ]
    (result,) = agent["observation"]["results"]
    assert (result["source_call_id"], result["content"]) == ("c1", done)
    request = otel_request(view, content=True)
    json_format.Parse(json.dumps(request), ExportTraceServiceRequest())
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    tool, chat_span = sorted(spans, key=lambda s: str(s["name"]), reverse=True)
    assert (tool["name"], chat_span["name"]) == ("execute_tool apply_patch", "chat gpt-5.3-codex")
    assert tool["links"][0]["spanId"] == chat_span["spanId"]  # made_by
    attrs_ = {a["key"]: a["value"] for a in tool["attributes"]}
    assert attrs_["gen_ai.tool.call.arguments"] == {"stringValue": patch}
    assert attrs_["gen_ai.tool.call.result"] == {"stringValue": done}
    chat = {a["key"]: a["value"] for a in chat_span["attributes"]}
    assert chat["gen_ai.response.finish_reasons"]["arrayValue"]["values"] == [
        {"stringValue": "tool_call"}
    ]
    (output,) = json.loads(chat["gen_ai.output.messages"]["stringValue"])
    assert output["parts"] == [
        {"type": "tool_call", "id": "c1", "name": "apply_patch", "arguments": {"input": patch}}
    ]
