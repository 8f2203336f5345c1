"""Decoding lines: never an exception, every object back as written, damage told apart."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claude_code_plugin.source.index import index_lines
from claude_code_plugin.source.layout import sniff
from claude_code_plugin.source.lines import decode_line, raw_lines, raw_text

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
_objects = st.dictionaries(st.text(max_size=8), _json, max_size=6)


@given(_objects)
def test_objects_decode_as_written(obj: dict[str, object]) -> None:
    for spelled in (json.dumps(obj), json.dumps(obj, ensure_ascii=False, indent=None)):
        decoded = decode_line(spelled.encode())
        assert decoded.obj == obj
        assert decoded.problem is None


@given(st.binary(max_size=200))
def test_any_bytes_decode_or_say_why(data: bytes) -> None:
    decoded = decode_line(data)
    if decoded.obj is None:
        assert decoded.problem
        kept = raw_text(data)
        back = kept["text"].encode() if "text" in kept else base64.b64decode(kept["base64"])
        assert back == data


@given(_json.filter(lambda v: not isinstance(v, dict)))
def test_json_that_is_not_an_object_is_unreadable(value: object) -> None:
    decoded = decode_line(json.dumps(value).encode())
    assert decoded.obj is None
    assert decoded.problem is not None
    assert "not an object" in decoded.problem


def test_lossy_json_is_unreadable_not_guessed() -> None:
    """Duplicate names and non-finite numbers would lose data if a reading were picked."""
    assert decode_line(b'{"a": 1, "a": 2}').obj is None
    assert decode_line(b'{"a": NaN}').obj is None
    assert decode_line(b'{"a": 1e999}').obj is None


def test_bad_utf8_inside_a_sound_line_keeps_the_line() -> None:
    decoded = decode_line(b'{"type": "user", "text": "caf\xe9"}')
    assert decoded.obj is not None
    assert decoded.obj["type"] == "user"
    assert decoded.problem is not None
    assert "UTF-8" in decoded.problem
    assert decoded.obj["text"] == "caf\udce9"  # the byte rides along as a lone surrogate


@given(st.lists(st.binary(max_size=30).filter(lambda b: b"\n" not in b), max_size=8), st.booleans())
def test_raw_lines_keep_places(chunks: list[bytes], final_newline: bool) -> None:
    data = b"\n".join(chunks) + (b"\n" if final_newline and chunks else b"")
    lines = list(raw_lines(io.BytesIO(data)))
    for line in lines:
        assert data[line.offset : line.offset + len(line.data)] == line.data
        assert line.data.strip()
    non_empty = [c for c in chunks if c.strip()]
    assert [line.data for line in lines] == non_empty
    for line in lines:
        after = data[line.offset + len(line.data) : line.offset + len(line.data) + 1]
        assert line.complete == (after == b"\n")


def test_truncated_last_line_is_told_from_a_corrupt_one() -> None:
    good = json.dumps({"type": "user", "uuid": "u1", "parentUuid": None}).encode()
    data = b"{broken\n" + good + b"\n" + good[:10]
    index = index_lines(raw_lines(io.BytesIO(data)))
    assert [(line.unreadable is not None, line.truncated) for line in index.lines] == [
        (True, False),
        (False, False),
        (True, True),
    ]
    assert index.counts["unreadable_lines"] == 1
    assert index.counts["truncated_lines"] == 1


@given(st.binary(max_size=300))
def test_sniff_never_raises(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.jsonl"
        path.write_bytes(data)
        assert sniff(path) in (True, False, None)


@pytest.mark.parametrize("kind", [[], ["user"], {}, {"type": "user"}])
def test_sniff_of_a_line_whose_type_is_not_a_string_is_none(tmp_path: Path, kind: object) -> None:
    """An unhashable ``type`` (an ASF file damaged, any other JSONL) is not a Claude Code line;
    ``discover`` must not raise for it."""
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"type": kind, "uuid": "u1", "sessionId": "s"}) + "\n")
    assert sniff(path) is None
