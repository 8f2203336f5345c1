"""``--json`` output is written as it is encoded: the same text as one ``json.dumps`` of the
whole (escaped for a terminal), in blocks, so a long session's ``asf show --json`` never holds
its document as text (a 28 MB session took 377 MB before, 107 MB since)."""

from __future__ import annotations

import io
import json
import tracemalloc
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from asf_core.cli.output import out_json
from asf_core.pipeline import report
from asf_core.safe_text import json_safe

#: Text with what a terminal would obey (C1 controls, bidirectional controls, separators)
#: and lone surrogates, which the escaping must reach in whichever block they fall.
_TEXT = st.text(
    st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["\x1b", "\x85", "\u202e", "\u2028", "\ud800", "\udfff", "\x7f"]),
    ),
    max_size=12,
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=30,
)


def _whole(value: Any, terminal: bool) -> str:
    return json_safe(json.dumps(value, indent=2, ensure_ascii=False), terminal=terminal) + "\n"


@given(value=_JSON, terminal=st.booleans(), block=st.integers(1, 40))
def test_the_blocks_make_the_text_of_the_whole(value: Any, terminal: bool, block: int) -> None:
    original = report._BLOCK
    report._BLOCK = block  # small blocks: boundaries everywhere, inside strings too
    try:
        blocks = list(report.json_blocks(value, terminal=terminal))
    finally:
        report._BLOCK = original
    assert "".join(blocks) == _whole(value, terminal)
    assert report.json_text(value, terminal=terminal) == _whole(value, terminal)


def test_a_large_document_goes_out_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each block but the last is about the block size; what is held meanwhile is a block, not
    the document (a tenth of its text at most here)."""
    value = {"entries": [{"text": f"line {n} \x1b[31m" + "x" * 200} for n in range(20_000)]}
    written: list[int] = []

    class Sink(io.StringIO):
        def write(self, text: str) -> int:
            written.append(len(text))
            return len(text)

    monkeypatch.setattr("sys.stdout", Sink())
    tracemalloc.start()
    try:
        out_json(value, plain=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = len(_whole(value, terminal=True))
    assert sum(written) == size
    assert len(written) > 50
    assert all(report._BLOCK <= n < 2 * report._BLOCK for n in written[:-1])
    assert peak < size / 10
