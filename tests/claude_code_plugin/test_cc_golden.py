"""Golden files: whole conversions pinned byte for byte.

Each case is a folder ``tests/golden/claude-code-<name>/`` holding ``case.json`` (a shared
session file, or a synthetic session built by ``cc_synth``) and the ``.jsonl`` files its
conversion writes, named as the store's report names them (sub-agents included).
``pytest --update-goldens`` rewrites them from the current output.
"""

from __future__ import annotations

import json
from pathlib import Path

import goldens
import pytest
from cc_helpers import PROJECTS, convert
from cc_synth import kitchen_sink

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
CASES = sorted(p.parent for p in GOLDEN.glob("claude-code-*/case.json"))


def _produce(case: dict[str, str], tmp: Path) -> dict[str, bytes]:
    if case["source"] == "shared":
        source = PROJECTS / case["project"] / f"{case['session']}.jsonl"
    else:
        source = kitchen_sink(tmp / "projects" / "-home-u-proj")
    out = tmp / "out"
    assert convert([source], out) == 0
    return goldens.session_files(out)


@pytest.mark.parametrize("folder", CASES, ids=[c.name for c in CASES])
def test_golden(folder: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    case = json.loads((folder / "case.json").read_text())
    produced = _produce(case, tmp_path)
    goldens.check(folder, produced, request)


def test_golden_cases_exist() -> None:
    assert len(CASES) >= 4
