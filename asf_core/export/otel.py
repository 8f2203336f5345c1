"""OpenTelemetry traces of session paths: OTLP/JSON with the GenAI semantic conventions.

One path is one trace. Every model call (``response`` entry) is a ``chat {model}`` span and
every tool call (``function_call`` or ``custom_tool_call`` item) an ``execute_tool {name}``
span, or an ``invoke_agent {name}`` span when a ``subsession`` link says the call started a
sub-agent: the trace has exactly as many spans as the path has responses and tool calls.
Spans carry ``session.id``, ``gen_ai.conversation.id`` and the entry they stand for
(``asf.entry.id``).

ASF records order by parent links, not by a call stack, so spans relate through links, as
the draft's projection says: a tool span links to the inference span that made the call, an
inference span to the previous one, the first span after a fork to where the path branched
(in the trace of the branch it left), a sub-agent span to its child session's trace.

Ids are derived, not random: the trace id from the session id and the leaf, a span id from
the session id and the entry id, so exporting twice gives the same ids and the spans of a
prefix two paths share have the same ids in both traces. Message content (prompts, outputs,
tool arguments and results) is included only when asked for.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import Any, Final

from attrs import define, field

from asf_core.context import SettingsReplay
from asf_core.export import otel_content
from asf_core.export.items import (
    CALL_TYPES,
    OUTPUT_TYPES,
    call_input,
    is_model_output,
    item_text,
    type_of,
)
from asf_core.export.otel_wire import attributes, envelope, span_id, trace_id
from asf_core.export.paths import PathView, SessionTree
from asf_core.ids import IdError, epoch_nanos
from asf_core.model import (
    BranchSummary,
    Compaction,
    Config,
    Decision,
    Dispatch,
    Entry,
    Item,
    Link,
    Response,
)
from asf_core.request import request_context
from asf_core.session_file import SessionFile

__all__ = ["otel_request", "span_id", "trace_id"]

JSON = dict[str, Any]
Resolver = Callable[[str], SessionFile | None]

#: OTLP span kinds and status codes (the proto's enum numbers, as OTLP/JSON writes them).
_INTERNAL: Final = 1
_CLIENT: Final = 3
_STATUS_ERROR: Final = 2


def _nanos(entry: Entry | None) -> int | None:
    try:
        return epoch_nanos(entry.ts) if entry is not None else None
    except IdError:
        return None


@define
class _Call:
    """A tool call on the path and what happened to it."""

    entry: Item
    position: int
    call_id: str
    name: str
    response: Response | None = None
    dispatches: list[Entry] = field(factory=list)
    output: Item | None = None
    rejected: str | None = None
    subsession: Link | None = None


@define
class _Span:
    position: int
    entry_id: str
    body: JSON


class _Trace:
    """The spans of one path, built in one walk over it."""

    def __init__(self, view: PathView, content: bool, resolver: Resolver | None) -> None:
        self.view = view
        self.session_id = view.session.header.id
        self.trace = trace_id(self.session_id, view.leaf)
        self.content = content
        self.resolver = resolver
        self.spans: list[_Span] = []
        #: Every tool call on the path, in order; a repeated call id binds what follows it to
        #: the latest call with that id (draft 0.11), hence the second index.
        self.calls: list[_Call] = []
        self.latest: dict[str, _Call] = {}
        self.by_entry: dict[str, _Call] = {}
        self.links: dict[int, list[JSON]] = {}

    def run(self) -> list[JSON]:
        path = self.view.path
        replay = SettingsReplay()
        group: list[tuple[int, Item]] = []
        previous_chat: str | None = None
        last_known = 0
        for pos, entry in enumerate(path):
            last_known = _nanos(entry) or last_known
            if isinstance(entry, Config):
                replay = SettingsReplay() if entry.replace else replay
                replay.apply(entry)
            elif isinstance(entry, Compaction):
                replay = SettingsReplay.from_checkpoint(entry)
            elif isinstance(entry, Item):
                self._item(pos, entry, group)
            elif isinstance(entry, Response):
                # Output items naming no response are this call's too (is_model_output).
                outputs = [e for _, e in group if not e.response or e.response == entry.response_id]
                start_at = group[0][0] if group else pos
                for _, item in group:
                    call = self.by_entry.get(str(item.id))
                    if call is not None:
                        call.response = entry
                group.clear()
                span = self._chat(pos, entry, outputs, start_at, replay.model, last_known)
                if previous_chat is not None:
                    self._link(span, self.trace, previous_chat, "previous_turn")
                previous_chat = span.body["spanId"]
            elif isinstance(entry, Dispatch | Decision):
                self._record(entry)
            elif isinstance(entry, Link) and entry.rel == "subsession" and entry.call_id:
                call = self.latest.get(entry.call_id)
                if call is not None:
                    call.subsession = entry
        for call in self.calls:
            self._tool(call)
        self.spans.sort(key=lambda s: s.position)
        self._branch_links()
        return [s.body for s in self.spans]

    def _item(self, pos: int, entry: Item, group: list[tuple[int, Item]]) -> None:
        item = entry.item
        if entry.response or is_model_output(item):
            group.append((pos, entry))
        if type_of(item) in CALL_TYPES:
            call_id = _call_id(entry)
            name = item.get("name") if item else None
            call = _Call(
                entry=entry,
                position=pos,
                call_id=call_id,
                name=name if isinstance(name, str) else "",
            )
            self.calls.append(call)
            self.latest[call_id] = self.by_entry[str(entry.id)] = call
        elif type_of(item) in OUTPUT_TYPES:
            made = self.latest.get(_call_id(entry))
            if made is not None and made.output is None:
                made.output = entry

    def _record(self, entry: Dispatch | Decision) -> None:
        call = self.latest.get(entry.call_id or "")
        if call is None:
            return
        if isinstance(entry, Dispatch):
            call.dispatches.append(entry)
        elif entry.verdict == "reject":
            call.rejected = entry.reason or "rejected"

    # -- spans --------------------------------------------------------------------------

    def _base(self, name: str, kind: int, entry: Entry, start: int, end: int) -> JSON:
        return {
            "traceId": self.trace,
            "spanId": span_id(self.session_id, str(entry.id)),
            "name": name,
            "kind": kind,
            "startTimeUnixNano": str(min(start, end)),
            "endTimeUnixNano": str(end),
        }

    def _common(self, operation: str, entry: Entry) -> dict[str, Any]:
        return {
            "gen_ai.operation.name": operation,
            "gen_ai.conversation.id": self.session_id,
            "session.id": self.session_id,
            "asf.entry.id": self.view.name(entry.id),
        }

    def _chat(
        self,
        pos: int,
        resp: Response,
        outputs: Sequence[Item],
        start_at: int,
        model: str | None,
        fallback: int,
    ) -> _Span:
        end = _nanos(resp) or fallback
        if isinstance(resp.latency_ms, int | float) and resp.latency_ms > 0:
            # No earlier than the epoch: a latency beyond a double's range in nanoseconds
            # (1e303 ms, an I-JSON number) would be infinite.
            start = end - int(min(resp.latency_ms * 1_000_000, end))
        else:
            # Sent after the last entry before the call's first output: the request's end.
            sent = _nanos(self.view.path[start_at - 1]) if start_at > 0 else None
            start = end if sent is None else sent
        request_model = model or resp.model or ""
        body = self._base(f"chat {request_model}".strip(), _CLIENT, resp, max(start, 0), end)
        usage = resp.usage or {}
        attrs = self._common("chat", resp)
        attrs.update(
            {
                "gen_ai.provider.name": otel_content.provider(request_model),
                "gen_ai.request.model": request_model or None,
                "gen_ai.response.model": resp.model,
                "gen_ai.response.id": resp.response_id,
                "gen_ai.response.finish_reasons": [otel_content.finish_reason(resp, outputs)],
                "gen_ai.usage.input_tokens": _int(usage.get("input_tokens")),
                "gen_ai.usage.output_tokens": _int(usage.get("output_tokens")),
                "asf.request_hash": resp.request_hash,
                "asf.response.attempts": resp.attempts,
            }
        )
        if resp.error is not None:
            kind = resp.error.get("type") or resp.error.get("code")
            attrs["error.type"] = kind if isinstance(kind, str) and kind else "error"
            message = resp.error.get("message")
            body["status"] = {"code": _STATUS_ERROR}
            if isinstance(message, str):
                body["status"]["message"] = message
        if self.content:
            attrs.update(self._chat_content(resp, outputs))
        body["attributes"] = attributes(attrs)
        span = _Span(position=pos, entry_id=str(resp.id), body=body)
        self.spans.append(span)
        return span

    def _chat_content(self, resp: Response, outputs: Sequence[Item]) -> dict[str, Any]:
        ctx = request_context(self.view.session, str(resp.id))
        out: dict[str, Any] = {
            "gen_ai.input.messages": otel_content.messages(ctx.items),
            "gen_ai.output.messages": otel_content.output_messages(resp, outputs),
        }
        instructions = ctx.settings.get("instructions")
        if isinstance(instructions, str) and instructions:
            out["gen_ai.system_instructions"] = otel_content.dumps(
                [{"type": "text", "content": instructions}]
            )
        return out

    def _tool(self, call: _Call) -> None:
        made = _nanos(call.response) or _nanos(call.entry) or 0
        start = next((t for t in map(_nanos, call.dispatches) if t is not None), made)
        end = _nanos(call.output) or start
        attrs: dict[str, Any]
        if call.subsession is not None:
            child = call.subsession.session or ""
            body = self._base(
                f"invoke_agent {call.name}".strip(), _INTERNAL, call.entry, start, end
            )
            attrs = self._common("invoke_agent", call.entry)
            attrs["gen_ai.agent.id"] = child
        else:
            body = self._base(
                f"execute_tool {call.name}".strip(), _INTERNAL, call.entry, start, end
            )
            attrs = self._common("execute_tool", call.entry)
        attrs.update(
            {
                "gen_ai.tool.name": call.name,
                "gen_ai.tool.call.id": call.call_id,
                "gen_ai.tool.type": "function",
                "asf.output.entry.id": self.view.name(call.output.id) if call.output else None,
                "asf.call.dispatches": len(call.dispatches) or None,
            }
        )
        if call.rejected is not None:
            attrs["error.type"] = "rejected"
            body["status"] = {"code": _STATUS_ERROR, "message": call.rejected}
        if self.content:
            item = call.entry.item or {}
            attrs["gen_ai.tool.call.arguments"] = call_input(item)
            if call.output is not None:
                attrs["gen_ai.tool.call.result"] = item_text(call.output.item)
        body["attributes"] = attributes(attrs)
        span = _Span(position=call.position, entry_id=str(call.entry.id), body=body)
        self.spans.append(span)
        if call.response is not None:
            self._link(span, self.trace, span_id(self.session_id, str(call.response.id)), "made_by")
        if call.subsession is not None:
            self._child_link(span, call)

    # -- links --------------------------------------------------------------------------

    def _link(self, span: _Span, trace: str, target: str, kind: str, **attrs: Any) -> None:
        values = attributes({"asf.link.type": kind, **attrs})
        link: JSON = {"traceId": trace, "spanId": target, "attributes": values}
        span.body.setdefault("links", []).append(link)

    def _child_link(self, span: _Span, call: _Call) -> None:
        """Link a sub-agent call to the first span of its child session's trace."""
        link = call.subsession
        if self.resolver is None or link is None or not link.session:
            return
        child = self.resolver(link.session)
        if child is None or not child.entries:
            return
        answered = next(
            (
                p.entry
                for p in (call.output.parents if call.output else ())
                if p.session == link.session
            ),
            None,
        )
        leaf = (child.current(answered) if answered else None) or SessionTree(child).main_leaf
        if leaf is None:
            return
        first = next((e for e in child.path_to(leaf) if _spanned(e)), None)
        if first is not None:
            self._link(
                span,
                trace_id(link.session, leaf),
                span_id(link.session, str(first.id)),
                "subsession",
                **{"asf.session.id": link.session},
            )

    def _branch_links(self) -> None:
        """The first span after a fork links to where the path branched off an older branch;
        the first span after a branch summary, to the end of the branch it summarises."""
        path, tree = self.view.path, self.view.tree
        positions = [s.position for s in self.spans]
        for pos, entry in enumerate(path[:-1]):
            after = bisect.bisect_right(positions, pos)
            if after == len(positions):
                break
            span = self.spans[after]
            if isinstance(entry, BranchSummary):
                self._summary_link(span, entry)
            kids = tree.children(str(entry.id))
            if len(kids) < 2 or path[pos + 1].id == kids[0]:
                continue  # no fork, or this path is the fork's first (original) branch
            if after == 0:
                continue  # no span before the fork to link to
            original = max(tree.leaves_under(kids[0]), key=self.view.session.position)
            self._link(
                span,
                trace_id(self.session_id, original),
                self.spans[after - 1].body["spanId"],
                "branched_from",
                **{"asf.entry.id": self.view.name(entry.id)},
            )

    def _summary_link(self, span: _Span, summary: BranchSummary) -> None:
        if summary.from_ is None or summary.from_ not in self.view.session.by_id:
            return
        abandoned = self.view.session.path_to(summary.from_)
        last = next((e for e in reversed(abandoned) if _spanned(e)), None)
        if last is not None:
            self._link(
                span,
                trace_id(self.session_id, summary.from_),
                span_id(self.session_id, str(last.id)),
                "branch_summary",
            )


def _spanned(entry: Entry) -> bool:
    return isinstance(entry, Response) or (
        isinstance(entry, Item) and type_of(entry.item) in CALL_TYPES
    )


def _call_id(entry: Item) -> str:
    call_id = entry.item.get("call_id") if entry.item else None
    return call_id if isinstance(call_id, str) else ""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def otel_request(
    view: PathView, *, content: bool = False, subsessions: Resolver | None = None
) -> JSON:
    """The OTLP/JSON ``ExportTraceServiceRequest`` of one path: a trace of its model and
    tool calls (``content``: with prompts, outputs, arguments and results)."""
    header = view.session.header
    harness = header.harness or {}
    resource = {
        "service.name": harness.get("name") if isinstance(harness.get("name"), str) else "asf",
        "service.version": harness.get("version")
        if isinstance(harness.get("version"), str)
        else None,
    }
    return envelope(resource, _Trace(view, content, subsessions).run())
