"""Mutation fuzzing of Claude Code transcripts and Codex rollouts, the cases: hostile homes made
from the real files in ``../shared`` (``claude-code/home``, ``codex/home``).

A *case* is one seed (a Claude Code session file with its sub-agents' transcripts, or one Codex
rollout) copied into a fresh home, long files sometimes cut at a line (a short session of the
same shapes, so most cases stay quick), then one to four line mutations of one of its files
(:mod:`source_fuzz_lines`) and sometimes one file mutation (a sub-agent without its session
or with another session's id, a hostile ``.meta.json`` beside one, a copy of the session
elsewhere in the home, a transcript that is a link, a FIFO, a device or a folder).
Everything is drawn from ``random.Random(number)``: a case reproduces from its number.
:func:`source_fuzz_check.check` runs the home through what a user runs.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from attrs import define, field, frozen
from fixture_paths import CLAUDE_HOME, CODEX_HOME
from source_fuzz_lines import lines_of, mutate_lines

__all__ = ["Case", "Seed", "lines_of", "plan", "seeds"]


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


#: What a sub-agent's ``agent-<id>.meta.json`` may hold.
METAS = [
    b'{"agentType": "Explore", "description": "look"}',
    b"[]",
    b"{",
    b'{"a": -' + b"9" * 400 + b"}",
    b'{"\\ud800": 1, "\\udfff": 2}',
    b'{"a":' * 509 + b"1" + b"}" * 509,
    b'{"a":' * 511 + b"1" + b"}" * 511,
    b'{"a": "\xff"}',
    b"\x00",
]


def _file_mutation(rng: random.Random, case: Case) -> None:
    rels = sorted(case.files)
    main = rels[0] if case.seed.fmt == "codex" else min(rels, key=len)
    subs = [r for r in rels if "/subagents/" in r]
    how = rng.choice(
        ["orphan", "mismatch", "meta", "copy", "special"] if subs else ["copy", "special"]
    )
    if how == "meta":
        sub = rng.choice(subs)
        case.files[sub.removesuffix(".jsonl") + ".meta.json"] = data = rng.choice(METAS)
        case.done.append(f"{sub.rsplit('/', 1)[1]} has a meta.json {data[:30]!r}")
    elif how == "copy":  # the same session twice: a backup copy, an archived thread
        if case.seed.fmt == "codex":
            copy = main.replace(
                ".codex/sessions/",
                rng.choice([".codex/archived_sessions/", ".codex/sessions/2026/01/01/"]),
            )
        else:
            copy = main.replace("/projects/", "/projects/-copy-")
        case.files[copy] = case.files[main]
        case.done.append(f"copied to {copy}")
    elif how == "orphan":
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
    if rng.random() < 0.15:
        _file_mutation(rng, case)
    return case
