"""Golden files: whole conversions pinned byte for byte.

Each case is a folder ``tests/golden/codex-<name>/`` holding ``case.json`` (a shared rollout
by its tag in the notes, or a synthetic one from ``cx_synth``) and the ``.jsonl`` file its
conversion writes, named by its thread id. ``pytest --update-goldens`` rewrites them.
"""

from __future__ import annotations

import json
from pathlib import Path

import cx_synth
import goldens
import pytest
from cx_helpers import by_tag, convert, need_shared, write_rollout

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
CASES = sorted(p.parent for p in GOLDEN.glob("codex-*/case.json"))


def _produce(case: dict[str, str], tmp: Path) -> dict[str, bytes]:
    if case["source"] == "shared":
        need_shared()
        source = by_tag(case["tag"])
    else:
        lines = getattr(cx_synth, case["builder"])()
        source = write_rollout(tmp / "sessions" / case["file"], lines)
    out = tmp / "out"
    assert convert([source], out) == 0
    return goldens.session_files(out)


@pytest.mark.parametrize("folder", CASES, ids=[c.name for c in CASES])
def test_golden(folder: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    case = json.loads((folder / "case.json").read_text())
    goldens.check(folder, _produce(case, tmp_path), request)


def test_golden_cases_exist() -> None:
    assert len(CASES) == 8
