"""Fuzzing: a hostile session file costs only itself, never a traceback, a hang or the terminal.

Every case goes through :func:`asf_fuzz_check.check`: ``asf verify`` and ``asf show`` (with and
without ``--json``) in this process, and the library's ``read``, ``verify_path``, contexts at
the leaves and requests; a case fails on an exception, an exit code docs/cli.md does not give,
a raw control character on stdout or stderr, output that is not JSON, a verifier that gave up
on a file, request checks that differ from rebuilding each request on its own, or a time bound.

* :func:`test_random_mutants`: a seeded generator, ``ASF_FUZZ_CASES`` mutants (default 300);
* :func:`test_every_member_of_every_entry_type`: systematically, every member of one line of
  each entry type (and of the headers) set to each hostile value in turn
  (``ASF_FUZZ_SWEEP=all``: every line of every seed file, one level into objects too);
* :func:`test_hypothesis_mutants`: hypothesis over the same mutators, the regressions found as
  explicit examples.

The long run (figures in docs/cli.md), from the repository::

    ASF_FUZZ_CASES=20000 ASF_FUZZ_SWEEP=all .venv/bin/python -m pytest -q \
        tests/asf_core/test_fuzz.py

A failing case is written to ``ASF_FUZZ_SAVE`` (default: the test's temporary directory) and
listed with its seed, its mutations and what went wrong, to become a named regression test.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from asf_fuzz import ENTRY_TYPES, MUTATORS, PLAIN_VALUES, Raw, mutate, reseal, seeds, sweep
from asf_fuzz_check import check
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

SEEDS = seeds()
NAMES = sorted(SEEDS)
#: The vectors first: small files, so the default sweep is quick.
BY_SIZE = sorted(NAMES, key=lambda n: len(SEEDS[n]))
CASES = int(os.environ.get("ASF_FUZZ_CASES") or 300)
FULL_SWEEP = os.environ.get("ASF_FUZZ_SWEEP") == "all"

#: The sweep's hostile values: every plain wrong type, and the raw literals that broke things.
SWEEP_VALUES = [
    *PLAIN_VALUES,
    Raw("1e400"),
    Raw("1" + "0" * 5000),
    Raw("[" * 600 + "]" * 600),
    Raw('"\\ud800"'),
    Raw('"\\u001b]0;x\\u0007\\u001b[2J\\u202e"'),
    Raw("9007199254740993"),
]


def _save(where: Path, label: str, data: bytes) -> Path:
    folder = Path(os.environ.get("ASF_FUZZ_SAVE") or where)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{label}.jsonl"
    path.write_bytes(data)
    return path


def _fail(failures: list[str], total: int) -> None:
    if failures:
        shown = "\n".join(failures[:20])
        pytest.fail(f"{len(failures)} of {total} cases failed:\n{shown}", pytrace=False)


def test_random_mutants(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    failures: list[str] = []
    for case in range(CASES):
        rng = random.Random(case)
        name = rng.choice(NAMES)
        data, done = mutate(rng, SEEDS[name], rng.randint(1, 4))
        problems = check(data, work)
        if problems:
            saved = _save(tmp_path, f"case-{case}", data)
            failures.append(f"case {case} ({name}: {'; '.join(done)}) -> {problems} [{saved}]")
    _fail(failures, CASES)


def _representative_lines() -> list[tuple[str, int]]:
    """The first line of each entry type among the seeds, and the first header of each format
    generation (0.4 and 0.11), as (seed, line number)."""
    wanted = {kind: None for kind in ENTRY_TYPES if kind != "session"}
    picks: list[tuple[str, int]] = [("sessions/basic.jsonl", 1), ("v0.4/basic.jsonl", 1)]
    for name in BY_SIZE:
        for number, line in enumerate(SEEDS[name].split(b"\n"), 1):
            for kind in [k for k, v in wanted.items() if v is None]:
                if f'"type":"{kind}"'.encode() in line:
                    wanted[kind] = (name, number)
                    picks.append((name, number))
    return picks


SWEPT = [(name, None) for name in NAMES] if FULL_SWEEP else _representative_lines()


@pytest.mark.parametrize(("name", "line"), SWEPT, ids=[f"{n}:{line}" for n, line in SWEPT])
def test_every_member_of_every_entry_type(name: str, line: int | None, tmp_path: Path) -> None:
    """Each member of the line, each hostile value: ids recomputed (so the value reaches the
    rules behind the id check), and in the full sweep also left stale."""
    work = tmp_path / "work"
    work.mkdir()
    failures: list[str] = []
    total = 0
    for resealed in (True, False) if FULL_SWEEP else (True,):
        cases = sweep(SEEDS[name], SWEEP_VALUES, resealed=resealed, line=line, deep=FULL_SWEEP)
        for description, data in cases:
            total += 1
            problems = check(data, work, thorough=False)
            if problems:
                saved = _save(tmp_path, f"sweep-{total}", data)
                failures.append(
                    f"{name} {description} (resealed={resealed}) -> {problems} [{saved}]"
                )
    assert total
    _fail(failures, total)


def test_the_sweep_covers_every_entry_type_and_both_headers() -> None:
    kinds = set()
    for name, number in _representative_lines():
        line = SEEDS[name].split(b"\n")[number - 1]
        kinds |= {k for k in ENTRY_TYPES if f'"type":"{k}"'.encode() in line}
    assert kinds == set(ENTRY_TYPES) - {"ns:ext"} | {"session"}


_STEPS = st.lists(
    st.tuples(st.sampled_from(sorted(MUTATORS)), st.integers(min_value=0, max_value=2**32)),
    min_size=1,
    max_size=4,
)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(name=st.sampled_from(NAMES), steps=_STEPS, resealed=st.booleans())
# What the fuzzer found in the code before issue 12, each an example run every time:
# a bidi override reached the terminal raw through asf show --json,
@example(name="sessions/basic.jsonl", steps=[("escapes", 15)], resealed=False)
# a header media that is an object stopped verification ("unhashable type: 'dict'"),
@example(name="sessions/basic.jsonl", steps=[("set_member", 9141)], resealed=False)
# a lone surrogate in queued_from was a UnicodeEncodeError traceback in show and verify,
@example(name="sessions/queued.jsonl", steps=[("set_member", 1682)], resealed=True)
# and a format spelled with thousands of digits a ValueError traceback in show.
@example(name="sessions/basic.jsonl", steps=[("set_member", 4131)], resealed=False)
def test_hypothesis_mutants(
    name: str,
    steps: list[tuple[str, int]],
    resealed: bool,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    lines = SEEDS[name].split(b"\n")[:-1]
    done = []
    for mutator, seed in steps:
        try:
            done.append(MUTATORS[mutator](random.Random(seed), lines))
        except RecursionError:
            done.append(f"{mutator}: skipped")
        if not lines:
            lines.append(b"")
    if resealed:
        reseal(lines)
    data = b"\n".join(lines) + b"\n"
    work = tmp_path_factory.mktemp("hypothesis")
    assert check(data, work) == [], (name, done)
