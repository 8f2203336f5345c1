"""Any items, any shape: every export target finishes, ATIF stays valid, HTML stays inert.

ASF keeps items exactly as written, so an exporter meets damaged and future items; it must
neither fail nor produce a document its consumer refuses. Hypothesis writes sessions whose
items have the usual types with members of any JSON type, and unknown types.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

from harbor.utils.trajectory_validator import TrajectoryValidator
from hypothesis import given
from hypothesis import strategies as st

from asf_core.export import SessionTree, atif_document, otel_request
from asf_core.export.transcript import transcript
from asf_core.export.transcript_html import render_html
from asf_core.export.transcript_text import render_markdown, render_text
from asf_core.model import Config, Header, Item, Response
from asf_core.reader import parse_session
from asf_core.writer import SessionBuilder, session_lines

_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
_scalar = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _text
_json = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_kind = st.sampled_from(
    ["message", "function_call", "function_call_output", "reasoning", "compaction", "x:note"]
)
_part = st.fixed_dictionaries(
    {"type": st.sampled_from(["input_text", "output_text", "input_image", "refusal", "odd"])},
    optional={"text": _json, "image_url": _text | _json, "refusal": _json},
)
_item = st.fixed_dictionaries(
    {"type": _kind},
    optional={
        "role": st.sampled_from(["user", "assistant", "system", "developer"]) | _json,
        "content": st.lists(_part, max_size=3) | _json,
        "call_id": st.sampled_from(["c1", "c2"]) | _json,
        "name": _json,
        "arguments": _text | _json,
        "output": st.lists(_part, max_size=2) | _json,
        "summary": st.lists(_part, max_size=2) | _json,
    },
)
_step = st.tuples(_item, st.sampled_from([None, "r1", "r2"]), st.booleans(), _json)


def _session(steps: list[tuple[dict[str, Any], str | None, bool, Any]]) -> bytes:
    b = SessionBuilder(Header(id="prop", created_at="2026-01-01T00:00:00Z"))
    b.append(Config(ts="2026-01-01T00:00:00Z", model="gpt-5"), parent=None)
    for n, (item, response, closes, usage) in enumerate(steps):
        ts = f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.5Z"
        b.append(Item(ts=ts, item=item, response=response))
        if closes:
            extra = {"usage": usage} if isinstance(usage, dict) else {}
            b.append(Response(ts=ts, response_id=response, model="m", **extra))
    return b"".join(session_lines(b.header, b.entries))


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


@given(st.lists(_step, min_size=1, max_size=8))
def test_every_target_copes_with_any_items(steps: list[Any]) -> None:
    session = parse_session(_session(steps))
    view = SessionTree(session).view(str(session.resume_leaf()))
    doc = atif_document(view)
    validator = TrajectoryValidator()
    assert validator.validate(json.loads(json.dumps(doc))), validator.get_errors()
    spans = otel_request(view, content=True)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert len(spans) == sum(1 for e in view.path if isinstance(e, Response)) + sum(
        1 for e in view.path if isinstance(e, Item) and e.item and e.item["type"] == "function_call"
    )
    t = transcript(view)
    "".join(render_markdown(t))
    "".join(render_text(t))
    page = _Tags()
    page.feed("".join(render_html(t)))
    assert {tag for tag, _ in page.found}.isdisjoint({"script", "iframe", "object", "embed"})
    for _, attrs in page.found:
        assert not any(name.startswith("on") for name, _ in attrs)
