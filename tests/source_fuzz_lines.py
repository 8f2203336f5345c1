"""Mutation fuzzing of Claude Code transcripts and Codex rollouts, the line mutations (see
:mod:`source_fuzz`): the ASF fuzzer's (:mod:`asf_fuzz`) and what source files meet besides:
invalid UTF-8, a cut inside a character, NUL bytes, CRLF, a line of another JSON type, a member
set to a hostile value, to another line's id or nested just past what an entry holds, a
timestamp out of range, ``parentUuid`` cycles, a damaged, missing or repeated ``session_meta``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from asf_fuzz import (
    Lines,
    Raw,
    bad_value,
    drop,
    dumps,
    escapes,
    flip_bytes,
    junk,
    objects,
    random_path,
    repeat,
    set_path,
    shuffle,
    truncate,
)

__all__ = ["LINE_MUTATORS", "lines_of", "mutate_lines"]

#: Timestamps a line may carry: malformed, out of range, of another type.
TIMESTAMPS: list[Any] = [
    "",
    "yesterday",
    "2026-13-45T25:61:61Z",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999Z",
    "99999-01-01T00:00:00Z",
    "-0001-01-01T00:00:00Z",
    "2026-02-12T15:36:08.028+25:00",
    "2026-02-12T15:36:08.0000000000000000000001Z",
    "2026-02-12 15:36:08",
    "1970-01-01T00:00:00Z",
    0,
    -1,
    1e300,
    Raw("1e400"),
    None,
    [],
    {},
]
#: Members holding an identity another line may be made to share.
_ID_MEMBERS = ("uuid", "parentUuid", "sessionId", "leafUuid", "id", "call_id", "tool_use_id")


def _ids(lines: Lines) -> list[str]:
    """Every id-like string the file's lines carry (to make another line collide with)."""
    found: set[str] = set()
    for _, obj in objects(lines):
        stack: list[Any] = [obj]
        while stack and len(found) < 200:
            value = stack.pop()
            if isinstance(value, dict):
                for key, inner in value.items():
                    if key in _ID_MEMBERS and isinstance(inner, str):
                        found.add(inner)
                    elif isinstance(inner, dict | list):
                        stack.append(inner)
            elif isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, dict | list))
    return sorted(found)


def set_member(rng: random.Random, lines: Lines) -> str:
    """A member of one line (at the top, or anywhere below) set to a hostile value, to
    another line's id, or removed."""
    objs = objects(lines)
    if not objs:
        return "set: no object line"
    n, obj = rng.choice(objs)
    if not obj:
        return "set: empty object"
    path = [rng.choice(sorted(obj))]
    if rng.random() < 0.6:
        path += random_path(obj[path[0]], rng)
    roll = rng.random()
    ids = _ids(lines)
    if roll < 0.2 and ids:
        value: Any = rng.choice(ids)
    elif roll < 0.3:
        value = rng.choice(TIMESTAMPS)
    elif roll < 0.4:
        value = "DELETE"
    elif roll < 0.45:  # just under and over what an entry holds two levels down
        depth = rng.randint(505, 512)
        value = Raw("[" * depth + "]" * depth)
    else:
        value = bad_value(rng)
    if value == "DELETE":
        target = obj
        for key in path[:-1]:
            target = target[key]
        if isinstance(target, dict):
            del target[path[-1]]
        else:
            target.pop(path[-1])
    else:
        set_path(obj, path, value)
    lines[n] = dumps(obj)
    return f"set line {n + 1} {path[:4]} = {str(value)[:40]!r}"


def timestamp(rng: random.Random, lines: Lines) -> str:
    objs = [(n, o) for n, o in objects(lines) if "timestamp" in o]
    if not objs:
        return "timestamp: none"
    n, obj = rng.choice(objs)
    obj["timestamp"] = value = rng.choice(TIMESTAMPS)
    lines[n] = dumps(obj)
    return f"timestamp line {n + 1} = {str(value)[:40]!r}"


def parent_cycle(rng: random.Random, lines: Lines) -> str:
    """Claude Code's ``parentUuid``: a self-parent, or a loop through two to five lines."""
    objs = [(n, o) for n, o in objects(lines) if isinstance(o.get("uuid"), str)]
    if not objs:
        return "cycle: no uuid"
    picked = rng.sample(objs, min(len(objs), rng.randint(1, 5)))
    for (n, obj), (_, nxt) in zip(picked, [*picked[1:], picked[0]], strict=True):
        obj["parentUuid"] = nxt["uuid"]
        lines[n] = dumps(obj)
    return f"cycle through lines {[n + 1 for n, _ in picked]}"


def wrong_type(rng: random.Random, lines: Lines) -> str:
    """A line replaced by valid JSON that is no object."""
    n = rng.randrange(len(lines))
    lines[n] = rng.choice([b"[]", b"[{}]", b"1", b"-0.5", b'"x"', b"null", b"true", b"1e400"])
    return f"line {n + 1} = {lines[n]!r}"


def bad_utf8(rng: random.Random, lines: Lines) -> str:
    """Bytes that are no UTF-8 spliced into a line: a stray byte, a cut sequence, an encoded
    surrogate, an overlong form, a code point past U+10FFFF."""
    n = rng.randrange(len(lines))
    at = rng.randrange(len(lines[n]) + 1)
    bad = rng.choice(
        [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80"]
    )
    lines[n] = lines[n][:at] + bad + lines[n][at:]
    return f"bad utf-8 {bad!r} in line {n + 1}"


def cut_in_char(rng: random.Random, lines: Lines) -> str:
    """The file ends inside a multi-byte character (Claude Code writing a line)."""
    spots = [(n, i) for n, line in enumerate(lines) for i, b in enumerate(line[:4000]) if b >= 0xC0]
    if not spots:
        return "cut: no multi-byte character"
    n, at = rng.choice(spots)
    del lines[n + 1 :]
    lines[n] = lines[n][: at + 1]
    return f"cut inside a character, line {n + 1} byte {at + 1}"


def nul(rng: random.Random, lines: Lines) -> str:
    n = rng.randrange(len(lines))
    if rng.random() < 0.3:
        lines[n] = b"\x00" * rng.randint(1, 64)
    else:
        at = rng.randrange(len(lines[n]) + 1)
        lines[n] = lines[n][:at] + b"\x00" + lines[n][at:]
    return f"NUL in line {n + 1}"


def crlf(rng: random.Random, lines: Lines) -> str:
    if rng.random() < 0.5:
        lines[:] = [line + b"\r" for line in lines]
        return "CRLF throughout"
    n = rng.randrange(len(lines))
    lines[n] += b"\r"
    return f"CRLF line {n + 1}"


def session_meta(rng: random.Random, lines: Lines) -> str:
    """Codex's header line: removed, repeated elsewhere, or its payload damaged."""
    metas = [(n, o) for n, o in objects(lines) if o.get("type") == "session_meta"]
    if not metas:
        return "session_meta: none"
    n, obj = metas[0]
    how = rng.choice(["drop", "repeat", "payload", "id", "move"])
    if how == "drop":
        del lines[n]
    elif how == "repeat":
        lines.insert(rng.randrange(len(lines) + 1), lines[n])
    elif how == "move":
        line = lines.pop(n)
        lines.insert(rng.randrange(len(lines) + 1), line)
    elif how == "payload" or not isinstance(obj.get("payload"), dict):
        obj["payload"] = bad_value(rng)
        lines[n] = dumps(obj)
    else:
        obj["payload"][rng.choice(["id", "timestamp", "cwd", "source", "forked_from_id"])] = (
            bad_value(rng)
        )
        lines[n] = dumps(obj)
    if not lines:
        lines.append(b"")
    return f"session_meta line {n + 1}: {how}"


Mutator = Callable[[random.Random, Lines], str]
LINE_MUTATORS: dict[str, tuple[Mutator, int]] = {
    "set_member": (set_member, 8),
    "timestamp": (timestamp, 1),
    "parent_cycle": (parent_cycle, 1),
    "wrong_type": (wrong_type, 1),
    "bad_utf8": (bad_utf8, 1),
    "cut_in_char": (cut_in_char, 1),
    "nul": (nul, 1),
    "crlf": (crlf, 1),
    "session_meta": (session_meta, 1),
    "flip_bytes": (flip_bytes, 2),
    "truncate": (truncate, 1),
    "shuffle": (shuffle, 1),
    "repeat": (repeat, 1),
    "drop": (drop, 1),
    "junk": (junk, 1),
    "escapes": (escapes, 2),
}


def mutate_lines(rng: random.Random, data: bytes, fmt: str, steps: int) -> tuple[bytes, list[str]]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    names = [
        n
        for n in LINE_MUTATORS
        if not (n == "session_meta" and fmt != "codex")
        and not (n == "parent_cycle" and fmt != "claude-code")
    ]
    done = []
    for _ in range(steps):
        if not lines:
            lines.append(b"")
        name = rng.choices(names, [LINE_MUTATORS[n][1] for n in names])[0]
        try:
            done.append(LINE_MUTATORS[name][0](rng, lines))
        except RecursionError:  # a line an earlier step nested too deep to edit in Python
            done.append(f"{name}: skipped")
    end = b"" if rng.random() < 0.1 else b"\n"
    return b"\n".join(lines) + end, done


def lines_of(data: bytes) -> list[bytes]:
    """A file's physical lines as the plugins number them (the last without its newline)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines
