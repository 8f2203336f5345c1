"""Golden files: the full output for a few fixture conversations, pinned byte for byte.

Each case is a folder ``tests/golden/hermes-<name>/`` holding ``case.json`` (which fixture
database, which session) and the ``.jsonl`` files of that session's conversation (sub-agents
included), each named ``<name>.jsonl`` after the session name the report's ``files`` map gives
it. The database is converted the way a user converts it, ``asf convert <db> -o <dir>``
(:func:`asf_core.cli.main.main`: discovery, the plugin, the writer), and each file is read where
the output layout puts it (:mod:`asf_core.layout`). ``pytest --update-goldens`` rewrites them
from the current output.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import goldens
import pytest
from fixture_paths import ROOT, SHARED

from asf_core import layout
from asf_core.cli.main import main
from asf_core.reader import SessionFile, parse_session

FIXTURES = SHARED / "hermes" / "fixtures"
GOLDEN = ROOT / "tests" / "golden"
CASES = sorted(p.parent for p in GOLDEN.glob("hermes-*/case.json"))

#: Hermes' relations whose session is an ASF subsession of its parent's file.
SUBSESSIONS = {"delegate", "tool"}


def _member(session: SessionFile, index: int) -> dict[str, object]:
    member = session.entries[index].unknown.get("hermes") if session.entries else None
    return member if isinstance(member, dict) else {}


def _opened(session: SessionFile) -> set[object]:
    """The session rows whose segments the file holds (each opening entry names its row)."""
    return {
        member.get("session")
        for entry in session.entries
        if isinstance(member := entry.unknown.get("hermes"), dict) and "relation" in member
    }


def _subsession(session: SessionFile) -> bool:
    return _member(session, 0).get("relation") in SUBSESSIONS


def _conversation(files: dict[str, SessionFile], unit: str) -> list[str]:
    """The names of the files of the conversation holding the session row ``unit``: the
    outermost conversation above it (a sub-agent's file is its parent's subsession), and its
    sub-agents' files, theirs, and so on."""
    (root,) = [name for name, session in files.items() if unit in _opened(session)]
    by_id = {session.header.id: name for name, session in files.items()}
    seen = {root}
    while _subsession(files[root]):
        parent = by_id.get(files[root].header.parent_session)
        if parent is None or parent in seen:
            break
        root = parent
        seen.add(root)
    chosen = [root]
    ids = {files[root].header.id}
    grown = True
    while grown:
        grown = False
        for name, session in files.items():
            if name not in chosen and session.header.parent_session in ids and _subsession(session):
                chosen.append(name)
                ids.add(session.header.id)
                grown = True
    return chosen


def _convert(case: dict[str, str], tmp: Path) -> dict[str, bytes]:
    db = tmp / "home" / case["database"]
    db.parent.mkdir(parents=True)
    shutil.copyfile(FIXTURES / case["release"] / case["database"], db)
    out = tmp / "out"
    assert main(["convert", str(db), "-o", str(out), "--quiet"]) == 0
    store = layout.store_dir(out, "hermes", db)
    report = json.loads((store / layout.REPORT_NAME).read_text())
    data: dict[str, bytes] = {}
    files: dict[str, SessionFile] = {}
    for name, where in report["files"].items():
        path = store / where
        data[name] = path.read_bytes()
        files[name] = parse_session(data[name], path=path)
        assert Path(where) == layout.session_path(files[name].header), name
    unit = f"{case['database']}:sessions/{case['session']}"
    return {f"{name}.jsonl": data[name] for name in _conversation(files, unit)}


@pytest.mark.parametrize("folder", CASES, ids=[c.name for c in CASES])
def test_golden(folder: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    case = json.loads((folder / "case.json").read_text())
    produced = _convert(case, tmp_path)
    goldens.check(folder, produced, request)


def test_golden_cases_exist() -> None:
    assert len(CASES) >= 5
