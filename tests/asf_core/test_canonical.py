"""Canonical JSON (RFC 8785), strict parsing, I-JSON checks and the writer's normalisation."""

from __future__ import annotations

import base64
import copy
import json
import math
import pickle
import re
import struct
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from fixture_paths import SHARED
from hypothesis import assume, example, given
from hypothesis import strategies as st

from asf_core import canonical, strict_json
from asf_core.canonical import (
    MAX_DEPTH,
    JsonError,
    TooDeep,
    dumps,
    dumps_if_normal,
    dumps_str,
    ijson_problems,
)
from asf_core.ids import body_of
from asf_core.strict_json import normalise, parse

SESSIONS = SHARED / "asf" / "vectors" / "testdata" / "sessions"
NORMALISED = SESSIONS / "normalised.jsonl"

# ----------------------------------------------------------------------------- strategies

# Characters biased towards the interesting ones: controls, quotes, the E000-FFFF block and
# supplementary characters (where code-point order and UTF-16 order disagree).
_chars = st.one_of(
    st.characters(codec="utf-8"),
    st.sampled_from(['"', "\\", "\x00", "\x1f", "\x7f", "\u2028", "\ue000", "\uffff"]),
    st.characters(min_codepoint=0xE000, max_codepoint=0xFFFF, codec="utf-8"),
    st.characters(min_codepoint=0x10000, codec="utf-8"),
)
_text = st.text(_chars, max_size=12)
_safe_int = st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
_finite = st.floats(allow_nan=False, allow_infinity=False)
_scalars = st.one_of(st.none(), st.booleans(), _safe_int, _finite, _text)
_fast_scalars = st.one_of(st.none(), st.booleans(), _safe_int, _text)


def _json(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=5), st.dictionaries(_text, inner, max_size=5)
        ),
        max_leaves=25,
    )


_values = _json(_scalars)
# Without floats and supplementary keys most of these take the C-encoder fast path.
_fast_values = _json(_fast_scalars)


def _uses_fast_path(value: Any) -> bool:
    return canonical._scan_value(value) == canonical._C_OK


# ----------------------------------------------------------------------------- dumps


@given(_values)
def test_dumps_matches_rfc8785(value: Any) -> None:
    expected = rfc8785.dumps(value)
    assert dumps(value) == expected
    assert canonical._dumps_slow(value) == expected
    assert dumps_str(value) == expected.decode("utf-8")


@given(_fast_values)
def test_dumps_fast_path_matches_rfc8785(value: Any) -> None:
    expected = rfc8785.dumps(value)
    assert dumps(value) == expected
    if _uses_fast_path(value):
        assert canonical._compiled(value) == expected
        assert canonical._stdlib_bytes(value) == expected


def test_both_paths_are_exercised() -> None:
    body = {"text": "x" * 10, "n": [1, 2, {"b": None, "a": True}]}
    assert _uses_fast_path(body)
    for slow in (
        {"t": 1.0},
        {"t": 1e-7},
        {"\U0001f600": 1, "\ue000": 2},
        {"n": 2**53},
        {1: 2},
        (b"x",),
    ):
        assert not _uses_fast_path(slow), slow


@given(st.lists(_text, min_size=2, max_size=8, unique=True))
def test_member_order_is_utf16(keys: list[str]) -> None:
    text = dumps_str(dict.fromkeys(keys, 0))
    order = list(json.loads(text))
    assert order == sorted(keys, key=lambda k: k.encode("utf-16-be"))


@pytest.mark.parametrize(
    "keys",
    [
        ["a\U0001f600", "a\ue000"],
        ["\U0001f600", "\ue000", "\uffff", "z", ""],
        ["x\ue000\U00010000", "x\ue000\uffff", "x"],
    ],
)
def test_member_order_supplementary_vs_high_bmp(keys: list[str]) -> None:
    value = dict.fromkeys(keys, 1)
    order = list(json.loads(dumps_str(value)))
    assert order == sorted(keys, key=lambda k: k.encode("utf-16-be"))
    assert order != sorted(keys)
    assert dumps(value) == rfc8785.dumps(value)
    assert dumps({"n": [value]}) == rfc8785.dumps({"n": [value]})


def test_subclasses_render_as_their_base_type() -> None:
    import enum

    class Level(enum.IntEnum):
        HIGH = 3

    class Text(str):
        pass

    assert (
        dumps({"a": Level.HIGH, Text("k"): Text("v"), "f": [1.5]}) == b'{"a":3,"f":[1.5],"k":"v"}'
    )


@given(st.integers(min_value=2**53, max_value=2**1000) | st.integers(max_value=-(2**53)))
def test_big_ints_render_as_nearest_double(value: int) -> None:
    assert dumps(value) == rfc8785.dumps(float(value))
    assert dumps({"k": [value]}) == rfc8785.dumps({"k": [float(value)]})


@given(_values)
def test_parse_round_trips(value: Any) -> None:
    text = dumps(value)
    again = parse(text)
    assert _as_doubles(again) == _as_doubles(value)
    assert dumps(again) == text
    assert parse(text.decode("utf-8")) == again


def _as_doubles(value: Any) -> Any:
    """Numbers as doubles: a float of 2**53 or more may come back as an int of equal value."""
    if isinstance(value, dict):
        return {k: _as_doubles(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_doubles(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


# RFC 8785 appendix B: IEEE 754 bit patterns and their ECMAScript renderings.
_APPENDIX_B = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "text"), _APPENDIX_B)
def test_rfc8785_appendix_b_numbers(bits: str, text: str) -> None:
    (value,) = struct.unpack(">d", bytes.fromhex(bits))
    assert dumps(value) == text.encode()
    assert dumps([value]) == f"[{text}]".encode()


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (0.1, "0.1"),
        (100, "100"),
        (100.0, "100"),
        (123456789012345680000, "123456789012345680000"),
        (123456789012345680000.0, "123456789012345680000"),
        (-0.0, "0"),
        (1e-6, "0.000001"),
        (1e16, "10000000000000000"),
        (0.0001, "0.0001"),
        (0.00001, "0.00001"),
        (2**53, "9007199254740992"),
        (1152921504606846976, "1152921504606847000"),
        (10**21, "1e+21"),
        (9007199254740993, "9007199254740992"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
    ],
)
def test_ecmascript_numbers(value: Any, text: str) -> None:
    assert dumps(value) == text.encode()
    assert dumps({"v": value}) == f'{{"v":{text}}}'.encode()


def test_string_escaping_is_minimal() -> None:
    value = '"\\\b\f\n\r\t\x00\x1f\x7f\u2028é\U0001f600/'
    expected = '"\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f\x7f\u2028é\U0001f600/"'
    assert dumps_str(value) == expected
    assert dumps_str({value: value}) == "{" + expected + ":" + expected + "}"


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"a": [1, math.nan]}, "/a/1"),
        ({"a": {"b": math.inf}}, "/a/b"),
        ([-math.inf], "/0"),
        ({"x": "ok\ud800"}, "/x"),
        ({"a/b~": {"\udc00": 1}}, "/a~1b~0/\udc00"),
        ({"a": {1: 2}}, "/a"),
        ({"a": {1, 2}}, "/a"),
        ({"a": b"bytes"}, "/a"),
        ({"a": 10**400}, "/a"),
    ],
)
def test_dumps_refuses_with_pointer(value: Any, where: str) -> None:
    with pytest.raises(JsonError, match="^" + re.escape(where) + ": "):
        dumps(value)


@pytest.mark.parametrize("depth", [MAX_DEPTH, 100_000])
@pytest.mark.parametrize("bad", ['"a":1,"a":2', '"a":NaN', '"a":1e400'])
def test_too_deep_wins_over_what_else_a_line_breaks(bad: str, depth: int) -> None:
    """A line nested too deep is refused as such (the reader's ``too-deep``), also when it
    breaks I-JSON elsewhere too, and however deep (past the interpreter's recursion limit)."""
    text = "{" + bad + ',"b":' + "[" * depth + "]" * depth + "}"
    with pytest.raises(TooDeep):
        parse(text)
    shallow = "{" + bad + ',"b":[[]]}'
    with pytest.raises(JsonError, match=r"^/a: "):
        parse(shallow)


def test_dumps_refuses_cycles_and_deep_nesting() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    deep: Any = 1
    for _ in range(100_000):
        deep = {"k": [deep]}
    too_deep = f"nested deeper than {MAX_DEPTH} levels"
    for value in (cycle, {"a": cycle}, deep):
        with pytest.raises(JsonError, match=too_deep):
            dumps(value)
        with pytest.raises(TooDeep, match=too_deep):
            normalise(value)
        (problem,) = ijson_problems(value)
        assert problem.endswith("/...: arrays and objects " + too_deep)
    with pytest.raises(TooDeep, match=too_deep):
        parse("[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1])
@pytest.mark.parametrize("inner", ["", "x" * (canonical._LONG + 1)], ids=["empty", "long"])
def test_the_depth_limit_is_the_same_for_reading_and_writing(depth: int, inner: str) -> None:
    """A line the writer writes, the reader reads: one level more is refused by both. A long
    string (a large tool output) sends a value to another encoder, one with no depth limit of
    its own: the limit is the same there."""
    innermost = f'"{inner}"' if inner else ""
    text = '{"a":' + "[" * (depth - 1) + innermost + "]" * (depth - 1) + "}"
    value: Any = [inner] if inner else []
    for _ in range(depth - 2):
        value = [value]
    if depth <= MAX_DEPTH:
        assert dumps(parse(text)) == text.encode()
        assert dumps_if_normal(value, depth=1) == text[5:-1].encode()
        assert dumps_if_normal({"a": value}) == text.encode()
        assert normalise({"a": value}) == ({"a": value}, [])
    else:
        with pytest.raises(TooDeep):
            parse(text)
        for refuse in (
            lambda: dumps({"a": value}),
            lambda: dumps_if_normal(value, depth=1),
            lambda: dumps_if_normal({"a": value}),
            lambda: normalise({"a": value}),
        ):
            with pytest.raises(JsonError, match=f"nested deeper than {MAX_DEPTH} levels"):
                refuse()


@pytest.mark.parametrize("depth", [1, 2, MAX_DEPTH])
def test_the_depth_limit_counts_nesting_not_brackets(depth: int) -> None:
    """A line with more containers than ``MAX_DEPTH`` side by side (a long tool list, a
    transcript of many small blocks) is as readable as any other: only nesting counts."""
    deep: Any = []
    for _ in range(depth - 2):
        deep = [deep]
    value = {"tools": [{"name": f"t{i}", "parameters": {}} for i in range(MAX_DEPTH)]}
    if depth > 1:
        value["deep"] = deep
    text = dumps(value)
    assert text.count(b"[") + text.count(b"{") > MAX_DEPTH
    assert parse(text) == value
    assert parse(text.decode("utf-8")) == value
    assert normalise(value) == (value, [])
    assert ijson_problems(value) == []


def test_sha256_of_is_over_canonical_bytes() -> None:
    import hashlib

    value = {"b": [1.0, "é"], "a": None}
    assert (
        canonical.sha256_of(value)
        == "sha256:" + hashlib.sha256(b'{"a":null,"b":[1,"\xc3\xa9"]}').hexdigest()
    )


# ----------------------------------------------------------------------------- parse


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a":1,"a":2}', "/a: duplicate member name"),
        ('{"x":[0,{"k~/":1,"k~/":2}]}', "/x/1/k~0~1: duplicate member name"),
        ('{"a":{"b":1},"a":{"b":2}}', "/a: duplicate member name"),
        ("[1,NaN]", "/1: NaN is not JSON"),
        ("[NaN,1]", "/0: NaN is not JSON"),
        ('{"a":Infinity}', "/a: Infinity is not JSON"),
        ("-Infinity", "(root): -Infinity is not JSON"),
        ('{"big":1e400}', "/big: number 1e400 overflows a double"),
        ('{"a":1} x', "char 8"),
        ('{"a":1}{}', "char 7"),
        ("", "char 0"),
        ('{"a":01}', "char"),
        ('{"a":"\x01"}', "char"),
        ("\ufeff{}", "char 0"),
        ("[1,]", "char"),
        ("{'a':1}", "char"),
        ("[1" + "0" * 5000 + "]", "invalid JSON: "),  # beyond the int-str digit limit
        ("[NaN,1" + "0" * 5000 + "]", "invalid JSON"),  # refused, then unreadable
    ],
)
def test_parse_refuses(text: str, message: str) -> None:
    with pytest.raises(JsonError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(text)
    with pytest.raises(JsonError):
        parse(text.encode("utf-8"))


@pytest.mark.parametrize(
    ("data", "offset"),
    [(b'"\xff"', 1), (b'{"a":"\xe2\x82"}', 6), (b'"\xed\xa0\x80"', 1), (b'["ok","\xc0\xaf"]', 7)],
)
def test_parse_refuses_invalid_utf8(data: bytes, offset: int) -> None:
    with pytest.raises(JsonError, match=f"invalid UTF-8 at byte {offset}"):
        parse(data)


def test_parse_keeps_integers_exact() -> None:
    value = parse(b'{"a":9007199254740993,"b":-0,"c":1.5,"d":1e20,"e":12345678901234567890123}')
    assert value == {
        "a": 9007199254740993,
        "b": 0,
        "c": 1.5,
        "d": 1e20,
        "e": 12345678901234567890123,
    }
    assert type(value["a"]) is int
    assert type(value["d"]) is float


def test_parse_keeps_unsafe_integral_literals_exact() -> None:
    value = parse("[9.007199254740993e15, 9007199254740993.0, 9007199254740992.5, 1e20]")
    assert value == [9007199254740993, 9007199254740993, 9007199254740992.0, 1e20]
    assert [isinstance(v, int) for v in value] == [True, True, False, False]
    negative = parse("[-9.007199254740993e15, -9007199254740992.0]")
    assert negative == [-9007199254740993, -9007199254740992]
    assert [isinstance(v, int) for v in negative] == [True, False]
    assert [p.split(": ")[0] for p in ijson_problems(negative)] == ["/0"]
    assert copy.deepcopy(value) == value
    assert pickle.loads(pickle.dumps(value)) == value  # noqa: S301 (our own bytes)
    assert normalise(copy.deepcopy(value))[1][0]["was"] == "9.007199254740993e15"


@given(_values, st.booleans())
def test_parse_agrees_with_json_module(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=1 if ascii_only else None)
    assert parse(text) == json.loads(text)


# ----------------------------------------------------------------------------- I-JSON


@pytest.mark.parametrize(
    ("value", "problems"),
    [
        ({"a": 9007199254740993}, ["/a"]),
        ({"a": -9007199254740993}, ["/a"]),
        ({"a": 9007199254740992, "b": 10**20, "c": 1152921504606847000, "d": 2**64}, []),
        ({"a": 10**21, "b": 1152921504606846977, "c": 10**400}, ["/b", "/c"]),
        ({"a": math.nan, "b": [math.inf]}, ["/a", "/b/0"]),
        ({"s": "x\ud800", "\udfff": "y"}, ["/s", "/\udfff"]),
        ({"fine": ["\U0001f600", 1e300, -0.0, True, None]}, []),
    ],
)
def test_ijson_problems(value: Any, problems: list[str]) -> None:
    found = ijson_problems(value)
    assert [p.split(": ")[0] for p in found] == problems


def test_ijson_problems_see_spellings() -> None:
    text = '{"a":9.007199254740993e15,"b":9007199254740993.0,"c":1e20,"d":1.152921504606847e18}'
    assert [p.split(": ")[0] for p in ijson_problems(parse(text))] == ["/a", "/b"]


# ----------------------------------------------------------------------------- normalise


def _lines(path: Path) -> list[dict[str, Any]]:
    return [parse(line) for line in path.read_bytes().splitlines()[1:] if line]


def _tokens(pointer: str) -> list[str]:
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def _set(doc: Any, pointer: str, value: Any) -> None:
    *parents, last = _tokens(pointer)
    for token in parents:
        doc = doc[int(token)] if isinstance(doc, list) else doc[token]
    if isinstance(doc, list):
        doc[int(last)] = value
    else:
        doc[last] = value


def _normalised_lines() -> list[dict[str, Any]]:
    return [line for line in _lines(NORMALISED) if "normalised" in line]


def test_normalised_vector_verifies() -> None:
    lines = _lines(NORMALISED)
    assert len(_normalised_lines()) == 4
    for line in lines:
        assert ijson_problems(line) == []
        fixed, records = normalise(body_of(line))
        assert (fixed, records) == (body_of(line), [])


@pytest.mark.parametrize("index", range(4))
def test_normalise_reproduces_reference_records(index: int) -> None:
    """Rebuild the reference writer's raw input from its records and normalise it again."""
    line = _normalised_lines()[index]
    body = {k: v for k, v in body_of(line).items() if k != "normalised"}
    raw_body = copy.deepcopy(body)
    for record in line["normalised"]:
        if "raw" in record:
            quoted = base64.b64decode(record["raw"])
            assert quoted[:1] == quoted[-1:] == b'"'
            _set(raw_body, record["at"], quoted[1:-1])
        else:
            _set(raw_body, record["at"], parse(record["was"]))
    assert ijson_problems(raw_body) or any("raw" in r for r in line["normalised"])
    fixed, records = normalise(raw_body)
    assert records == line["normalised"]
    assert fixed == body
    assert dumps({**fixed, "normalised": records}) == dumps(body_of(line))


def test_normalise_from_source_text() -> None:
    """Parse the raw line text (with the recorded spellings) and normalise the result."""
    for line in _normalised_lines():
        if any("raw" in r for r in line["normalised"]):
            continue
        body = copy.deepcopy({k: v for k, v in body_of(line).items() if k != "normalised"})
        marks = {}
        for n, record in enumerate(line["normalised"]):
            marks[f"@@{n}@@"] = record["was"]
            _set(body, record["at"], f"@@{n}@@")
        text = dumps_str(body)
        for mark, was in marks.items():
            text = text.replace(json.dumps(mark), was)
        value = parse(text)
        problems = [p.split(": ")[0] for p in ijson_problems(value)]
        assert problems == [r["at"] for r in line["normalised"]]
        fixed, records = normalise(value)
        assert records == line["normalised"]
        assert dumps({**fixed, "normalised": records}) == dumps(body_of(line))


def test_vector_lines_are_canonical() -> None:
    """The reference writer's lines are canonical: re-serialising gives the same bytes."""
    checked = 0
    for path in sorted(SESSIONS.glob("*.jsonl")):
        if path.name in {"fork.jsonl", "corrupt-middle.jsonl", "truncated.jsonl"}:
            continue
        for raw in path.read_bytes().splitlines()[1:]:
            value = parse(raw)
            assert dumps(value) == raw
            assert canonical._dumps_slow(value) == raw
            checked += 1
    assert checked > 400


def test_normalise_leaves_vector_bodies_alone() -> None:
    for path in sorted(SESSIONS.glob("*.jsonl")):
        if path.name in {"fork.jsonl", "corrupt-middle.jsonl", "truncated.jsonl"}:
            continue
        for line in _lines(path):
            body = body_of(line)
            fixed, records = normalise(body)
            assert records == []
            assert dumps(fixed) == dumps(body)
            assert fixed is not body


def test_normalise_bytes_and_surrogates() -> None:
    value = {
        "ok": b"caf\xc3\xa9",
        "cut": b"a\xe2\x82 b",
        "surr": b"\xed\xa0\x80",
        "lone": ["x\ud83d", "\ude00y"],
        "pair": "\U0001f600",
        "n": {"a/b": 2**53 + 1},
    }
    fixed, records = normalise(value)
    assert fixed == {
        "ok": "café",
        "cut": "a\ufffd b",
        "surr": "\ufffd\ufffd\ufffd",
        "lone": ["x\ufffd", "\ufffdy"],
        "pair": "\U0001f600",
        "n": {"a/b": 2**53},
    }
    assert records == [
        {"at": "/cut", "raw": base64.b64encode(b'"a\xe2\x82 b"').decode()},
        {"at": "/lone/0", "was": '"x\\ud83d"'},
        {"at": "/lone/1", "was": '"\\ude00y"'},
        {"at": "/n/a~1b", "was": "9007199254740993"},
        {"at": "/surr", "raw": base64.b64encode(b'"\xed\xa0\x80"').decode()},
    ]
    assert ijson_problems(fixed) == []


def test_normalise_keys() -> None:
    fixed, records = normalise({"k\ud800": {b"\xff": 1}, "\U0001f600": 1, "\ue000": 2})
    assert fixed == {"k\ufffd": {"\ufffd": 1}, "\U0001f600": 1, "\ue000": 2}
    assert records == [
        {"at": "/k\ufffd", "was": '"k\\ud800"'},
        {"at": "/k\ufffd/\ufffd", "raw": base64.b64encode(b'"\xff"').decode()},
    ]


def test_normalise_sorts_records_in_utf16_order() -> None:
    _, records = normalise({"\U0001f600": 2**60 + 1, "\ue000": 2**60 + 1})
    assert [r["at"] for r in records] == ["/\U0001f600", "/\ue000"]


@pytest.mark.parametrize(
    "value",
    [
        {"a": math.nan},
        {"a": [math.inf]},
        {chr(0xD800): 1, chr(0xDBFF): 2},
        {"\ufffd": 1, b"\xff": 2},
        {"a": object()},
        {"a": 10**400},
        {"a": {1: "x"}},
    ],
)
def test_normalise_refuses(value: Any) -> None:
    with pytest.raises(JsonError):
        normalise(value)


@given(_values)
def test_normalise_is_identity_on_ijson(value: Any) -> None:
    assume(not ijson_problems(value))
    fixed, records = normalise(value)
    assert records == []
    assert dumps(fixed) == dumps(value)


@given(
    _json(
        st.one_of(
            _scalars,
            st.binary(max_size=6),
            st.text(st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010), max_size=4),
            st.integers(),
        )
    )
)
def test_normalise_output_is_ijson(value: Any) -> None:
    try:
        fixed, records = normalise(value)
    except JsonError:
        return
    assert ijson_problems(fixed) == []
    assert ijson_problems(records) == []
    ats = [r["at"] for r in records]
    assert ats == sorted(ats, key=lambda a: a.encode("utf-16-be"))
    fixed_again, again = normalise(fixed)
    assert again == []
    assert dumps(fixed_again) == dumps(fixed)


@pytest.mark.parametrize("text", [b'{"a":1,"a":2} x', b'{"a":NaN}]', b"[1,1e999] ]"])
def test_parse_reports_rejects_followed_by_garbage_as_json_errors(text: bytes) -> None:
    with pytest.raises(canonical.JsonError):
        strict_json.parse(text)


_writer_scalars = st.one_of(
    _scalars,
    st.integers(),  # unsafe and big-but-exact integers
    st.text(st.characters(codec=None), max_size=6),  # lone surrogates
    st.binary(max_size=6),  # raw bytes, valid UTF-8 or not
)


@given(_json(_writer_scalars))
@example({"n": [2**53 + 1]})  # an unsafe integer: normalised to its double, and recorded
@example({"n": [2**60, 1.0]})  # big but exact, and integral: the exact path, nothing to fix
@example([{"k": "x" * (canonical._LONG + 1)}, 2**53 + 1])  # a long string beside a fix
def test_dumps_if_normal_is_dumps_exactly_when_normalise_changes_nothing(value: Any) -> None:
    """The writer's one-pass encoding agrees with normalise-then-dumps on every value."""
    fixed, records = normalise(value)
    got = canonical.dumps_if_normal(value)
    if records:
        assert got is None
    else:
        assert got == dumps(fixed)
