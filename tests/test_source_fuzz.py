"""Fuzzing the Claude Code and Codex plugins: a hostile transcript or rollout costs only its
damaged lines, never a traceback, a hang, a lost line or an output that does not verify.

Cases are :func:`source_fuzz.plan`'s (real files mutated, reproducible from their number),
checked by :func:`source_fuzz_check.check`. The default run checks a short fixed budget
(``ASF_FUZZ_SOURCES`` cases, 10); the slow test (``ASF_TEST_SLOW=1``) 120 more, the long
files whole in one case of five. The long run, for manual use::

    ASF_TEST_SLOW=1 ASF_FUZZ_SOURCES=5000 .venv/bin/python -m pytest -q \\
        tests/test_source_fuzz.py

``ASF_FUZZ_START=N`` starts at case N; a failure is listed by its case number, which
:func:`source_fuzz.plan` turns back into the same home. The slow tests also run crafted files
(:mod:`source_fuzz_crafted`) of ``ASF_FUZZ_CRAFTED`` lines (5,000) each.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from source_fuzz import Case, Seed, plan, seeds
from source_fuzz_check import check
from source_fuzz_crafted import CRAFTED

SEEDS = seeds()
CASES = int(os.environ.get("ASF_FUZZ_SOURCES") or 10)
START = int(os.environ.get("ASF_FUZZ_START") or 0)
#: Every how many cases the -j 2 conversion runs as a subprocess under a memory limit.
AS_PROCESS = 8
#: Lines of each crafted file (``ASF_FUZZ_CRAFTED``).
CRAFTED_LINES = int(os.environ.get("ASF_FUZZ_CRAFTED") or 5_000)


def _run(first: int, count: int, root: Path, *, most_lines: int) -> None:
    failures = []
    started = time.monotonic()
    for number in range(first, first + count):
        case = plan(number, SEEDS, most_lines=most_lines)
        problems = check(case, root, as_process=number % AS_PROCESS == AS_PROCESS - 1)
        if problems:
            failures.append(f"{case.describe()}\n  " + "\n  ".join(problems))
    print(f"{count} cases from {first} in {time.monotonic() - started:.1f} s")
    assert failures == [], f"{len(failures)} of {count} failed:\n" + "\n".join(failures[:20])


def test_the_seeds_are_every_shared_file() -> None:
    assert {s.fmt for s in SEEDS} == {"claude-code", "codex"}
    assert len(SEEDS) == 11


def test_hostile_sources_short(tmp_path: Path) -> None:
    _run(START, CASES, tmp_path, most_lines=60)


@pytest.mark.slow
def test_hostile_sources_long(tmp_path: Path) -> None:
    _run(START + 100_000, 120, tmp_path, most_lines=150)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(CRAFTED))
def test_crafted_structures(kind: str, tmp_path: Path) -> None:
    """Thousands of lines of one shape (chains, branches, cycles, repeated call ids,
    compactions, rollbacks), through everything a user runs: every rule of the random
    cases, and at most 30 s for all the runs together (each a few seconds when linear)."""
    fmt, make = CRAFTED[kind]
    files = make(CRAFTED_LINES)
    case = Case(-1, Seed(fmt, kind, files), dict(files), done=[f"crafted {kind}"])
    assert check(case, tmp_path, as_process=True, seconds=60) == []
