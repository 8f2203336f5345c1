"""The SQL damage fuzzer in the test suite (``tests/hermes_sql_fuzz.py`` says what a case is
and what it must hold to).

A slow test (``ASF_TEST_SLOW=1``, as CI runs it): a short fixed budget
(``ASF_FUZZ_DATABASES`` damaged databases, 96), the same cases every run, a few of them
through a subprocess. The long budget, for manual runs::

    ASF_TEST_SLOW=1 ASF_FUZZ_DATABASES=2000 .venv/bin/python -m pytest -q \
        tests/hermes_plugin/test_sql_fuzz.py

``ASF_FUZZ_START=N`` starts at case N (a run's cases are N, N+1, ...), ``ASF_FUZZ_SAVE=DIR``
keeps each failing case's damaged database. Every failure found becomes a named test in
``tests/hermes_plugin/test_hostile.py``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hermes_sql_fuzz import Fuzzer

CASES = int(os.environ.get("ASF_FUZZ_DATABASES", "96"))
START = int(os.environ.get("ASF_FUZZ_START", "0"))
#: Every how many cases one runs as a subprocess (the command as a user starts it).
AS_PROCESS = 8


@pytest.mark.slow
def test_damaged_databases_cost_only_the_damage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASF_PLUGINS", "hermes")
    fuzzer = Fuzzer.make(tmp_path)
    failures: list[str] = []
    started = time.monotonic()
    for number in range(START, START + CASES):
        problems = fuzzer.run(number, subprocess_run=number % AS_PROCESS == AS_PROCESS - 1)
        if problems:
            failures.append("\n".join(problems))
    seconds = time.monotonic() - started
    print(f"{CASES} damaged databases in {seconds:.1f} s, {len(failures)} failing")
    assert failures == [], "\n\n".join(failures[:20])
