"""Mutation fuzzing of Claude Code transcripts and Codex rollouts, the cases: hostile homes made
from the real files in ``../shared`` (``claude-code/home``, ``codex/home``).

A *case* is one seed (a Claude Code session file with its sub-agents' transcripts, or one Codex
rollout) copied into a fresh home, long files sometimes cut at a line (a short session of the
same shapes, so most cases stay quick), then one to four line mutations of one of its files
(:data:`LINE_MUTATORS`: the ASF fuzzer's byte flips, truncations, shuffles, repeats, drops,
junk lines and escapes, plus what source files meet: invalid UTF-8, a cut inside a character,
NUL bytes, CRLF, a line of another JSON type, a member set to a hostile value or to another
line's id, a timestamp out of range, ``parentUuid`` cycles, a damaged, missing or repeated
``session_meta``) and sometimes one file mutation (:data:`FILE_MUTATORS`: a sub-agent without
its session or with another session's id, a transcript that is a link, a FIFO or a folder).
Everything is drawn from ``random.Random(number)``: a case reproduces from its number.
:func:`source_fuzz_check.check` runs the home through what a user runs.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
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
from attrs import define, field, frozen
from fixture_paths import CLAUDE_HOME, CODEX_HOME

__all__ = ["Case", "Seed", "plan", "seeds"]

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


@frozen
class Seed:
    """Real files of one native session, by their path relative to the home."""

    fmt: str
    name: str
    files: dict[str, bytes]


def seeds() -> list[Seed]:
    """Every shared Claude Code session (with its sub-agents) and every shared rollout."""
    found = []
    for session in sorted(CLAUDE_HOME.glob(".claude/projects/*/*.jsonl")):
        files = {str(session.relative_to(CLAUDE_HOME)): session.read_bytes()}
        for sub in sorted(session.with_suffix("").glob("subagents/*.jsonl")):
            files[str(sub.relative_to(CLAUDE_HOME))] = sub.read_bytes()
        found.append(Seed("claude-code", session.stem[:8], files))
    for rollout in sorted(CODEX_HOME.glob(".codex/sessions/**/rollout-*.jsonl")):
        files = {str(rollout.relative_to(CODEX_HOME)): rollout.read_bytes()}
        found.append(Seed("codex", rollout.stem[-8:], files))
    return found


# --- line mutations ---------------------------------------------------------------------


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


# --- cases ------------------------------------------------------------------------------


@define
class Case:
    """One mutated home: what to write, and how it was made."""

    number: int
    seed: Seed
    files: dict[str, bytes]
    done: list[str] = field(factory=list)
    #: A file replaced by something that is no regular file: (path, kind).
    special: tuple[str, str] | None = None
    #: Where :func:`source_fuzz_check.check` wrote it.
    home: str = ""

    def describe(self) -> str:
        return f"case {self.number} ({self.seed.fmt} {self.seed.name}): {'; '.join(self.done)}"

    def write(self, home: Path) -> None:
        for rel, data in self.files.items():
            path = home / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if self.special is not None:
            rel, kind = self.special
            path = home / rel
            path.unlink(missing_ok=True)
            if kind == "fifo":
                os.mkfifo(path)
            elif kind == "dir":
                path.mkdir()
                (path / "x.jsonl").write_bytes(b"{}\n")
            elif kind == "dangling":
                path.symlink_to(home / "nowhere.jsonl")
            elif kind == "zero":
                path.symlink_to("/dev/zero")
            else:  # a link to another file of the home
                other = sorted(r for r in self.files if r != rel) or [rel]
                if other[0] != rel:
                    path.symlink_to(home / other[0])
                else:
                    path.write_bytes(self.files[rel])


def _cut(rng: random.Random, data: bytes, most: int) -> bytes:
    lines = data.split(b"\n")
    if len(lines) <= most:
        return data
    return b"\n".join(lines[: rng.randint(20, most)]) + b"\n"


def _file_mutation(rng: random.Random, case: Case) -> None:
    rels = sorted(case.files)
    main = rels[0] if case.seed.fmt == "codex" else min(rels, key=len)
    subs = [r for r in rels if "/subagents/" in r]
    how = rng.choice(["orphan", "mismatch", "special"] if subs else ["special"])
    if how == "orphan":
        del case.files[main]
        case.done.append("session file removed, sub-agents left")
    elif how == "mismatch":
        sub = rng.choice(subs)
        other = "00000000-0000-4000-8000-000000000000"
        case.files[sub] = case.files[sub].replace(
            main.rsplit("/", 1)[1][:36].encode(), other.encode()
        )
        case.done.append(f"{sub.rsplit('/', 1)[1]} names session {other}")
    else:
        target = rng.choice(rels)
        kind = rng.choice(["fifo", "dir", "dangling", "zero", "link"])
        case.special = (target, kind)
        case.done.append(f"{target.rsplit('/', 1)[1]} is a {kind}")


def plan(number: int, all_seeds: list[Seed], *, most_lines: int = 150) -> Case:
    """Case ``number``: its seed, its files mutated (``most_lines``: files longer than that
    are cut at a line up to it, except in one case of five, which keeps them whole)."""
    rng = random.Random(number)
    seed = rng.choice(all_seeds)
    whole = rng.random() < 0.2
    files = {
        rel: data if whole else _cut(rng, data, most_lines) for rel, data in seed.files.items()
    }
    case = Case(number, seed, files)
    if not whole:
        case.done.append(f"cut to {most_lines} lines at most")
    rels = sorted(files)
    weights = [4 if "/subagents/" not in r else 1 for r in rels]
    for _ in range(rng.choice([1, 1, 2])):
        rel = rng.choices(rels, weights)[0]
        data, done = mutate_lines(rng, files[rel], seed.fmt, rng.randint(1, 4))
        files[rel] = data
        case.done.append(f"{rel.rsplit('/', 1)[1]}: {'; '.join(done)}")
    if rng.random() < 0.12:
        _file_mutation(rng, case)
    return case


def lines_of(data: bytes) -> list[bytes]:
    """A file's physical lines as the plugins number them (the last without its newline)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines
