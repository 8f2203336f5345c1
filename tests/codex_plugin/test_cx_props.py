"""Synthetic rollouts (compactions, rollbacks, calls left open, forks): the converted file
verifies, every line is rebuilt from it, and its context is the history the oracle rebuilds
from the raw lines (FORMAT-NOTES §8)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from cx_helpers import (
    context_items,
    convert,
    rebuilt_lines,
    sessions_in,
    source_lines,
    write_rollout,
)
from cx_oracle import rebuild
from cx_synth import rollouts
from hypothesis import given

from asf_core.verify.session import verify_path

ROLLOUT = (
    "sessions/2026/03/01/rollout-2026-03-01T10-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl"
)


def _check(lines: list[Any], *, allowed: tuple[str, ...] = ()) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = write_rollout(root / ".codex" / ROLLOUT, lines)
        out = root / "out"
        assert convert([root / ".codex"], out) == 0
        found = verify_path(out)
        assert [f for f in found if f.severity != "info" and f.code not in allowed] == []
        (session,) = sessions_in(out).values()
        assert context_items(session) == rebuild(source)
        assert rebuilt_lines(session) == source_lines(source)


@given(rollouts())
def test_context_is_the_oracle_history(lines: list[Any]) -> None:
    _check(lines)


def test_kitchen_sink_is_the_oracle_history() -> None:
    from cx_synth import kitchen_sink, legacy_format

    _check(kitchen_sink(), allowed=("output-unbound",))  # its output without a call
    _check(legacy_format())
