"""Mutation fuzzing of ASF session files, the mutations: hostile bytes from real files.

Seeds are real files: the conformance vectors and the golden conversions of real Hermes and
Claude Code sessions (``tests/golden``). A mutant is a seed changed by a few :data:`MUTATORS`
(byte flips, truncation, line shuffles and repeats, lone surrogates, numbers no double holds,
nesting beyond the recursion limit, wrong types in any member, terminal control sequences), ids
optionally recomputed so the damage reaches the rules behind the id check; :func:`sweep` sets
every member of every line to each hostile value in turn. :func:`asf_fuzz_check.check` runs a
mutant through everything a user can point at a file.

``tests/asf_core/test_fuzz.py`` runs a short fixed budget; ``ASF_FUZZ_CASES`` sets a long one.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from contextlib import suppress
from typing import Any

import attrs
from fixture_paths import ROOT, VECTORS

from asf_core import ids
from asf_core.model import CORE_TYPES, Header

#: Raw JSON literals no Python value round-trips: numbers beyond a double, beyond the int-str
#: digit limit, below the smallest double; nesting beyond the recursion limit and just past
#: the reader's limit; strings with lone surrogates and control sequences.
RAW_VALUES = [
    "1e400",
    "-1e400",
    "1" + "0" * 5000,
    "-" + "9" * 400,
    "1e-400",
    "9007199254740993",
    "0." + "0" * 3000 + "1e3001",
    "[" * 513 + "]" * 513,
    "[" * 1200 + "]" * 1200,
    '{"a":' * 600 + "0" + "}" * 600,
    '"\\ud800"',
    '"x\\udc00y"',
    '"\\ud83d\\ude00\\ud83d"',
    '"\\u001b]0;owned\\u0007\\u001b[2J\\u001b[31mred"',
    '"\\u202eevil\\u2066\\u0085\\u009b1m\\u007f"',
    '"' + "x" * 100_000 + '"',
    '"agentsession/0.' + "1" * 5000 + '"',
    '"agentsession/99999999999999999999.0"',
    '"0000-01-01T00:00:00+23:59"',
]
#: Plain wrong-typed values for any member.
PLAIN_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    "",
    "x",
    "sha256:" + "0" * 64,
    [],
    ["x"],
    [{}],
    {},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": 1}]},
]
#: Every member name the model knows (entries and header), to set where it does not belong.
MEMBERS = sorted(
    {
        f.name.rstrip("_")
        for cls in (*CORE_TYPES.values(), Header)
        for f in attrs.fields(cls)
        if f.init and f.name != "unknown"
    }
    | ids.RESERVED
    | {"legacy_id"}
)
ENTRY_TYPES = [
    "item",
    "response",
    "config",
    "compaction",
    "branch_summary",
    "run",
    "dispatch",
    "decision",
    "queued",
    "label",
    "info",
    "env",
    "outcome",
    "link",
    "custom",
    "ns:ext",
    "session",
]


class Raw(str):
    """A JSON literal written as it is (see :data:`RAW_VALUES`)."""


def seeds() -> dict[str, bytes]:
    """Every seed file by name: the vectors (0.4 ones too) and the golden conversions."""
    paths = [
        *sorted((VECTORS / "sessions").glob("*.jsonl")),
        *sorted((VECTORS / "sessions" / "v0.4").glob("*.jsonl")),
        *sorted((ROOT / "tests" / "golden").glob("*/*.jsonl")),
    ]
    return {f"{p.parent.name}/{p.name}": p.read_bytes() for p in paths}


# --- mutations --------------------------------------------------------------------------

Lines = list[bytes]
Mutator = Callable[[random.Random, Lines], str]


def dumps(obj: Any) -> bytes:
    """One line of JSON; :class:`Raw` strings anywhere in ``obj`` are written verbatim."""
    raws: list[str] = []

    def mark(value: Any) -> Any:
        if isinstance(value, Raw):
            raws.append(value)
            return f"\0raw{len(raws) - 1}\0"
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mark(v) for v in value]
        return value

    text = json.dumps(mark(obj), separators=(",", ":"))
    for n, raw in enumerate(raws):
        text = text.replace(f'"\\u0000raw{n}\\u0000"', raw, 1)
    return text.encode()


def objects(lines: Lines) -> list[tuple[int, dict[str, Any]]]:
    found = []
    for n, line in enumerate(lines):
        with suppress(ValueError, RecursionError):
            obj = json.loads(line)
            if isinstance(obj, dict):
                found.append((n, obj))
    return found


def random_path(value: Any, rng: random.Random) -> list[Any]:
    """A random path of keys/indices from ``value`` down (empty: the value itself)."""
    path: list[Any] = []
    while isinstance(value, dict | list) and value and rng.random() < 0.6:
        key = rng.choice(list(value)) if isinstance(value, dict) else rng.randrange(len(value))
        path.append(key)
        value = value[key]
    return path


def set_path(obj: Any, path: list[Any], value: Any) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


def bad_value(rng: random.Random) -> Any:
    return Raw(rng.choice(RAW_VALUES)) if rng.random() < 0.45 else rng.choice(PLAIN_VALUES)


def set_member(rng: random.Random, lines: Lines) -> str:
    """A member (at the top, or anywhere below) of one line set to a hostile value."""
    objs = objects(lines)
    if not objs:
        return "set: no object line"
    n, obj = rng.choice(objs)
    if rng.random() < 0.3:
        path: list[Any] = [rng.choice(MEMBERS)]
    else:
        path = [rng.choice(list(obj))] if obj else [rng.choice(MEMBERS)]
        path += random_path(obj[path[0]], rng) if path[0] in obj else []
    value = rng.choice(ENTRY_TYPES) if path == ["type"] and rng.random() < 0.5 else bad_value(rng)
    set_path(obj, path, value)
    lines[n] = dumps(obj)
    return f"set line {n + 1} {path[:3]} = {str(value)[:40]!r}"


def flip_bytes(rng: random.Random, lines: Lines) -> str:
    n = rng.randrange(len(lines))
    line = bytearray(lines[n])
    if not line:
        return "flip: empty"
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(line))
        line[at] = rng.choice([rng.randrange(256), line[at] ^ (1 << rng.randrange(8))])
    lines[n] = bytes(line)
    return f"flip line {n + 1}"


def truncate(rng: random.Random, lines: Lines) -> str:
    n = rng.randrange(len(lines))
    cut = rng.randrange(len(lines[n]) + 1)
    del lines[n + 1 :]
    lines[n] = lines[n][:cut]
    return f"truncate at line {n + 1} byte {cut}"


def shuffle(rng: random.Random, lines: Lines) -> str:
    start = rng.randrange(len(lines))
    window = lines[start : start + rng.randint(2, 6)]
    rng.shuffle(window)
    lines[start : start + len(window)] = window
    return f"shuffle from line {start + 1}"


def repeat(rng: random.Random, lines: Lines) -> str:
    n = rng.randrange(len(lines))
    at = rng.randrange(len(lines) + 1)
    lines.insert(at, lines[n])
    return f"repeat line {n + 1} at {at + 1}"


def drop(rng: random.Random, lines: Lines) -> str:
    n = rng.randrange(len(lines))
    del lines[n]
    if not lines:
        lines.append(b"")
    return f"drop line {n + 1}"


def junk(rng: random.Random, lines: Lines) -> str:
    """A line that is no entry: garbage, another JSON type, invalid UTF-8, a bare string."""
    line = rng.choice(
        [b"null", b"[]", b"{}", b"\xff\xfe{}", b'"x"', b"1", b"{", b"\x1b[31m", b" ", b"\r"]
    )
    at = rng.randrange(len(lines) + 1)
    lines.insert(at, line)
    return f"junk {line!r} at {at + 1}"


def escapes(rng: random.Random, lines: Lines) -> str:
    """A lone surrogate or a terminal control sequence spliced into a JSON string."""
    n = rng.randrange(len(lines))
    quotes = [m.start() for m in re.finditer(rb'(?<!\\)"', lines[n])]
    if not quotes:
        return "escape: no string"
    at = rng.choice(quotes) + 1
    text = rng.choice(
        [b"\\ud800", b"\\udfff", b"\\u001b[2J", b"\\u009b", b"\\u202e", b"\\u0000", b"\\u2028"]
    )
    lines[n] = lines[n][:at] + text + lines[n][at:]
    return f"escape {text!r} in line {n + 1}"


MUTATORS: dict[str, Mutator] = {
    "set_member": set_member,
    "flip_bytes": flip_bytes,
    "truncate": truncate,
    "shuffle": shuffle,
    "repeat": repeat,
    "drop": drop,
    "junk": junk,
    "escapes": escapes,
}
#: How often each mutator is picked (member changes find the most).
WEIGHTS = [6, 2, 1, 1, 1, 1, 1, 2]

_REFS = ("parent", "target", "first_kept", "from", "queued_from")


def reseal(lines: Lines) -> None:
    """Recompute every entry's id in file order, renaming references to it on the way, so
    the mutated members are read by the rules rather than stopped at the id check."""
    head = objects(lines[:1])
    if not head or not str(head[0][1].get("format", "")).startswith("agentsession/0.1"):
        return  # pre-0.5 files have opaque ids
    renamed: dict[str, str] = {}
    for n, obj in objects(lines):
        if n == 0 or "ts" not in obj or "type" not in obj:
            continue
        for name in _REFS:
            if isinstance(obj.get(name), str) and obj[name] in renamed:
                obj[name] = renamed[obj[name]]
        old = obj.get("id")
        try:
            obj["id"] = ids.entry_id(obj)
        except (ids.IdError, ValueError, RecursionError, TypeError):
            continue
        if isinstance(old, str):
            renamed[old] = obj["id"]
        with suppress(ValueError, RecursionError):
            lines[n] = dumps(obj)


def mutate(rng: random.Random, data: bytes, steps: int) -> tuple[bytes, list[str]]:
    """``data`` after ``steps`` random mutations (and maybe a reseal), and what was done."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    done = []
    for _ in range(steps):
        if not lines:
            lines.append(b"")
        name = rng.choices(list(MUTATORS), WEIGHTS)[0]
        try:
            done.append(MUTATORS[name](rng, lines))
        except RecursionError:  # a line an earlier step nested too deep to edit in Python
            done.append(f"{name}: skipped")
    if rng.random() < 0.5:
        reseal(lines)
        done.append("reseal")
    end = b"" if rng.random() < 0.1 else b"\n"
    return b"\n".join(lines) + end, done


def sweep(
    data: bytes, values: list[Any], *, resealed: bool, line: int | None = None, deep: bool = True
) -> Iterator[tuple[str, bytes]]:
    """Every member of every line (or of line number ``line`` only; with ``deep`` each member
    of its objects too, one level down) set to each of ``values`` in turn, and each line's
    ``type`` to every other entry type: the systematic half of the fuzzing, where the random
    half samples."""
    lines = data.split(b"\n")
    for n, obj in objects(lines):
        if line is not None and n + 1 != line:
            continue
        paths: list[list[Any]] = []
        for key, value in obj.items():
            paths.append([key])
            if deep and isinstance(value, dict):
                paths.extend([key, inner] for inner in value)
        for path in paths:
            kinds = ENTRY_TYPES if path == ["type"] else []
            for value in [*values, *kinds]:
                changed = json.loads(lines[n])
                set_path(changed, path, value)
                copy = [*lines]
                copy[n] = dumps(changed)
                if resealed:
                    reseal(copy)
                yield f"line {n + 1} {path} = {str(value)[:30]!r}", b"\n".join(copy)
