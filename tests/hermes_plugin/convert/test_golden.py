"""Golden files: the full output for a few fixture conversations, pinned byte for byte.

Each case is a folder ``tests/golden/hermes-<name>/`` holding ``case.json`` (which fixture
database, which session) and the ``.jsonl`` files converting that session's conversation
writes (sub-agents included). ``pytest --update-goldens`` rewrites them from the current output.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import goldens
import pytest
from fixture_paths import ROOT, SHARED

from asf_core.formats import ConvertedSession
from asf_core.writer import entry_line, header_line
from hermes_plugin.convert.database import convert_store
from hermes_plugin.source.handle import HermesHandle

FIXTURES = SHARED / "hermes" / "fixtures"
GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(p.parent for p in GOLDEN.glob("hermes-*/case.json"))


def _convert(case: dict[str, str], tmp: Path) -> dict[str, bytes]:
    db = tmp / "home" / case["database"]
    db.parent.mkdir(parents=True)
    shutil.copyfile(FIXTURES / case["release"] / case["database"], db)
    out: dict[str, bytes] = {}
    handle = HermesHandle(db)
    try:
        for item in convert_store(handle.store, [case["session"]]):
            if isinstance(item, ConvertedSession):
                data = header_line(item.header) + b"".join(entry_line(e) for e in item.entries)
                out[f"{item.name}.jsonl"] = data
    finally:
        handle.close()
    return out


@pytest.mark.parametrize("folder", CASES, ids=[c.name for c in CASES])
def test_golden(folder: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    case = json.loads((folder / "case.json").read_text())
    produced = _convert(case, tmp_path)
    goldens.check(folder, produced, request)


def test_golden_cases_exist() -> None:
    assert len(CASES) >= 5
