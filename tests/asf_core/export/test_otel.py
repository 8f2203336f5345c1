"""OpenTelemetry export: OTLP/JSON read back with the official protobuf definitions.

Every path of every fixture conversion and vector session is parsed as an
``ExportTraceServiceRequest`` (``opentelemetry-proto``, ``google.protobuf.json_format``,
unknown fields refused). OTLP/JSON writes trace and span ids as hex where the protobuf JSON
mapping expects base64, so the test converts them first and checks their lengths. Then the
spans are checked against the session: one per response and one per tool call, the GenAI
attributes, the links the draft's projection asks for, and ids that do not change between
runs. ``--endpoint`` is checked against a small HTTP server in the test.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from importlib.metadata import version
from pathlib import Path
from typing import Any

import attrs
import pytest
from export_views import views
from fixture_paths import VECTORS
from otlp_readback import parse_otlp as _parse
from otlp_readback import span_attributes as _attrs

from asf_core import DISTRIBUTION
from asf_core.cli.main import main
from asf_core.export import SessionTree, otel_request
from asf_core.export.otel_wire import span_id, trace_id
from asf_core.export.paths import PathView
from asf_core.export.resolve import DirectoryIndex
from asf_core.model import Dispatch, Item, Link, Response
from asf_core.reader import read_session

JSON = dict[str, Any]


def _check_trace(view: PathView, doc: JSON) -> int:
    request = _parse(doc)
    spans = list(request.resource_spans[0].scope_spans[0].spans)
    session_id = view.session.header.id
    responses = [e for e in view.path if isinstance(e, Response)]
    calls = [
        e
        for e in view.path
        if isinstance(e, Item) and (e.item or {}).get("type") == "function_call"
    ]
    assert len(spans) == len(responses) + len(calls)
    assert len({s.span_id for s in spans}) == len(spans)
    expected_trace = bytes.fromhex(trace_id(session_id, view.leaf))
    by_id = {s.span_id: s for s in spans}
    chats = [s for s in spans if _attrs(s)["gen_ai.operation.name"] == "chat"]
    assert len(chats) == len(responses)
    for span in spans:
        attrs = _attrs(span)
        assert span.trace_id == expected_trace
        assert attrs["session.id"] == session_id == attrs["gen_ai.conversation.id"]
        assert span.start_time_unix_nano <= span.end_time_unix_nano
    for resp, span in zip(responses, chats, strict=True):
        attrs = _attrs(span)
        assert span.span_id == bytes.fromhex(span_id(session_id, str(resp.id)))
        assert attrs["asf.entry.id"] == view.name(resp.id)
        assert span.name.startswith("chat")
        assert span.kind == span.SPAN_KIND_CLIENT
        assert attrs["gen_ai.provider.name"]
        usage = resp.usage or {}
        for member in ("input_tokens", "output_tokens"):
            if isinstance(usage.get(member), int):
                assert attrs[f"gen_ai.usage.{member}"] == usage[member]
        if resp.error is not None:
            assert attrs["error.type"]
            assert span.status.code == span.status.STATUS_CODE_ERROR
    # Each inference span but the first links to the one before it.
    for before, after in itertools.pairwise(chats):
        turns = [ln for ln in after.links if _attrs(ln)["asf.link.type"] == "previous_turn"]
        assert [ln.span_id for ln in turns] == [before.span_id]
    for call in calls:
        span = by_id[bytes.fromhex(span_id(session_id, str(call.id)))]
        attrs = _attrs(span)
        item = call.item or {}
        assert attrs["gen_ai.tool.call.id"] == item["call_id"]
        assert attrs["gen_ai.tool.name"] == item.get("name", "")
        assert attrs["gen_ai.operation.name"] in ("execute_tool", "invoke_agent")
        made = [ln for ln in span.links if _attrs(ln)["asf.link.type"] == "made_by"]
        for link in made:  # the inference span that made the call, in this trace
            assert link.trace_id == expected_trace
            assert _attrs(by_id[link.span_id])["gen_ai.operation.name"] == "chat"
    return len(spans)


def test_every_export_parses_and_matches_its_path(converted_homes: list[Path]) -> None:
    spans = traces = 0
    for root in [*converted_homes, VECTORS / "sessions"]:
        index = DirectoryIndex(root)
        for path, view in views(root):
            spans += _check_trace(view, otel_request(view, subsessions=index.resolver(path)))
            traces += 1
    assert traces > 150
    assert spans > 350


def test_tool_spans_link_to_the_call_that_made_them() -> None:
    session = read_session(VECTORS / "sessions" / "runs.jsonl")
    view = SessionTree(session).view(str(session.entries[-1].id))
    request = _parse(otel_request(view))
    scope = request.resource_spans[0].scope_spans[0].scope
    assert (scope.name, scope.version) == ("asf", version(DISTRIBUTION))
    resource = {
        kv.key: kv.value.string_value for kv in request.resource_spans[0].resource.attributes
    }
    assert resource == {"service.name": "fixture", "service.version": "1"}
    spans = request.resource_spans[0].scope_spans[0].spans
    chat = next(s for s in spans if _attrs(s)["gen_ai.operation.name"] == "chat")
    tools = [s for s in spans if _attrs(s)["gen_ai.operation.name"] == "execute_tool"]
    assert len(tools) == 3
    for tool in tools:
        assert [ln.span_id for ln in tool.links] == [chat.span_id]
    rejected = [t for t in tools if _attrs(t).get("error.type") == "rejected"]
    assert [_attrs(t)["gen_ai.tool.call.id"] for t in rejected] == ["call_3"]
    # Each tool span counts its call's dispatch entries on the path (none: no attribute).
    dispatched = Counter(e.call_id for e in session.entries if isinstance(e, Dispatch))
    assert sum(dispatched.values()) == 2
    for tool in tools:
        call = _attrs(tool)["gen_ai.tool.call.id"]
        assert _attrs(tool).get("asf.call.dispatches") == (dispatched[call] or None), call


def test_a_branch_links_to_where_it_branched() -> None:
    """branch.jsonl forks after resp_1; the leaf's branch is the second child, opened by a
    branch summary of the first branch (which ends at resp_2)."""
    session = read_session(VECTORS / "sessions" / "branch.jsonl")
    tree = SessionTree(session)
    resp = {e.response_id: str(e.id) for e in session.entries if isinstance(e, Response)}
    leaf = str(session.entries[-1].id)
    spans = _parse(otel_request(tree.view(leaf))).resource_spans[0].scope_spans[0].spans
    first_after = next(
        s for s in spans if s.span_id == bytes.fromhex(span_id(session.header.id, resp["resp_3"]))
    )
    links = {_attrs(ln)["asf.link.type"]: ln for ln in first_after.links}
    sid = session.header.id
    branched = links["branched_from"]
    assert branched.span_id == bytes.fromhex(span_id(sid, resp["resp_1"]))
    assert branched.trace_id == bytes.fromhex(trace_id(sid, resp["resp_2"]))
    summary = links["branch_summary"]
    assert summary.trace_id == bytes.fromhex(trace_id(sid, resp["resp_2"]))
    assert summary.span_id == bytes.fromhex(span_id(sid, resp["resp_2"]))
    # The original branch has no branch link.
    other = _parse(otel_request(tree.view(resp["resp_2"]))).resource_spans[0].scope_spans[0].spans
    assert all(_attrs(ln)["asf.link.type"] == "previous_turn" for s in other for ln in s.links)


def test_a_subagent_call_links_to_the_child_trace(converted_homes: list[Path]) -> None:
    found = 0
    for root in converted_homes:
        index = DirectoryIndex(root)
        for path, view in views(root):
            links = [
                e for e in view.path if isinstance(e, Link) and e.rel == "subsession" and e.call_id
            ]
            if not links or view.leaf != view.tree.main_leaf:
                continue
            spans = _parse(otel_request(view, subsessions=index.resolver(path))).resource_spans[0]
            for link in links:
                child = index.find(str(link.session), path)
                assert child is not None
                out = next(
                    (
                        e
                        for e in view.path
                        if isinstance(e, Item)
                        and (e.item or {}).get("call_id") == link.call_id
                        and (e.item or {}).get("type") == "function_call_output"
                    ),
                    None,
                )
                answered = [
                    p.entry for p in (out.parents if out else ()) if p.session == link.session
                ]
                child_leaf = answered[0] if answered else SessionTree(child).main_leaf
                assert child_leaf is not None
                first = next(
                    e
                    for e in child.path_to(child_leaf)
                    if isinstance(e, Response)
                    or (isinstance(e, Item) and (e.item or {}).get("type") == "function_call")
                )
                agent = next(
                    s
                    for s in spans.scope_spans[0].spans
                    if _attrs(s)["gen_ai.operation.name"] == "invoke_agent"
                )
                sub = [ln for ln in agent.links if _attrs(ln)["asf.link.type"] == "subsession"]
                assert [(ln.trace_id, ln.span_id) for ln in sub] == [
                    (
                        bytes.fromhex(trace_id(str(link.session), child_leaf)),
                        bytes.fromhex(span_id(str(link.session), str(first.id))),
                    )
                ]
                found += 1
    assert found >= len(converted_homes) - 1


def test_ids_are_stable_and_content_is_opt_in(converted_homes: list[Path]) -> None:
    root = converted_homes[-1]
    for _, view in list(views(root))[:20]:
        plain = otel_request(view)
        assert plain == otel_request(view)
        assert "gen_ai.input.messages" not in json.dumps(plain)
        rich = otel_request(view, content=True)
        spans = _parse(rich).resource_spans[0].scope_spans[0].spans
        assert [s.span_id for s in spans] == [
            s.span_id for s in _parse(plain).resource_spans[0].scope_spans[0].spans
        ]
        for span in spans:
            attrs = _attrs(span)
            if attrs["gen_ai.operation.name"] == "chat":
                assert isinstance(json.loads(attrs["gen_ai.input.messages"]), list)
                assert json.loads(attrs["gen_ai.output.messages"])[0]["role"] == "assistant"


class _Collector(BaseHTTPRequestHandler):
    received: list[tuple[str, bytes]]
    status = 200

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        type(self).received.append((self.headers["Content-Type"], self.rfile.read(length)))
        self.send_response(type(self).status)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[tuple[str, type[_Collector]]]:
    handler = type("Collector", (_Collector,), {"received": [], "status": 200})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1/traces", handler
    finally:
        server.shutdown()
        server.server_close()


def test_endpoint_posts_each_trace(
    collector: tuple[str, type[_Collector]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, handler = collector
    path = VECTORS / "sessions" / "branch.jsonl"
    assert main(["export", str(path), "--to", "otel", "--all-leaves", "--endpoint", url]) == 0
    assert len(handler.received) == 2  # one trace per leaf
    for content_type, body in handler.received:
        assert content_type == "application/json"
        assert _parse(json.loads(body)).resource_spans
    # Without -o the summary line is all that is printed (docs/export.md).
    assert capsys.readouterr().out == f"sent 2 trace(s), 4 span(s), to {url}\n"


def test_endpoint_refusing_is_one_line_and_exit_2(
    collector: tuple[str, type[_Collector]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, handler = collector
    handler.status = 500
    path = VECTORS / "sessions" / "basic.jsonl"
    assert main(["export", str(path), "--to", "otel", "--endpoint", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "500" in err
    # Nothing listens on a closed port.
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    port = server.server_port
    server.server_close()
    dead = f"http://127.0.0.1:{port}/v1/traces"
    assert main(["export", str(path), "--to", "otel", "--endpoint", dead]) == 2
    assert "cannot send" in capsys.readouterr().err


@pytest.mark.parametrize("latency", [1.7e308, 1e303, 1e13])
def test_a_latency_beyond_the_epoch_starts_the_span_at_it(latency: float) -> None:
    """A response's ``latency_ms`` is any I-JSON number: one that in nanoseconds is beyond a
    double's range (``1.7e308``, a finite number) raised OverflowError (``asf export --to
    otel``, found by fuzzing the export); one longer than the time since the epoch gave a
    negative start. The span starts at the epoch at the earliest."""
    session = read_session(VECTORS / "sessions" / "basic.jsonl")
    entries = [
        attrs.evolve(e, latency_ms=latency) if isinstance(e, Response) else e
        for e in session.entries
    ]
    session = attrs.evolve(session, entries=entries)
    request = otel_request(SessionTree(session).view(str(session.resume_leaf())))
    _parse(request)
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    chats = [s for s in spans if s["name"].startswith("chat")]
    assert chats
    for span in chats:
        assert int(span["startTimeUnixNano"]) == 0 < int(span["endTimeUnixNano"])


@pytest.mark.parametrize(
    "url",
    ["http://[::1", "https://[zz]/", "http://x:port/", "http://x/\r\nX: y", "http://\u202e/"],
)
def test_an_endpoint_that_is_no_url_is_one_line_and_exit_2(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ``--endpoint`` the URL parser or the HTTP client refuses (a bracket left open, a
    port that is no number, a control character) is one ``asf:`` line, exit 2; it was a
    traceback (ValueError, http.client.InvalidURL; found trying endpoints by hand)."""
    path = VECTORS / "sessions" / "basic.jsonl"
    assert main(["export", str(path), "--to", "otel", "--endpoint", url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("asf: ")
    assert err.count("\n") == 1
    assert ": not a valid URL: " in err


def test_a_collector_answering_no_http_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A server that answers with something that is not HTTP: one line, exit 2."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}/v1/traces"
    path = VECTORS / "sessions" / "basic.jsonl"
    try:
        assert main(["export", str(path), "--to", "otel", "--endpoint", url]) == 2
    finally:
        thread.join(10)
        server.close()
    err = capsys.readouterr().err
    assert err.startswith(f"asf: {url}: cannot send: ")
    assert err.count("\n") == 1
