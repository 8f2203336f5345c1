"""docs/library.md: every example runs, in order, on a copy of the shipped example home, and
type-checks as one program under ``mypy --strict``, as a user's program using the API must."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_paths import ROOT

DOC = ROOT / "docs" / "library.md"
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def test_library_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = _BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 6
    shutil.copytree(ROOT / "examples" / "hermes-home", tmp_path / "examples" / "hermes-home")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "library_doc"}
    for number, block in enumerate(blocks, 1):
        code = compile(block, f"{DOC.name} example {number}", "exec")
        exec(code, namespace)  # noqa: S102 - the documentation's own examples
    assert list((tmp_path / "asf-out").rglob("report.json"))


def test_library_examples_type_check(tmp_path: Path) -> None:
    """The examples, as one program, pass ``mypy --strict`` outside the repository (so no
    project configuration helps): a sample a user copies must not need ``# type: ignore``."""
    program = tmp_path / "library_doc.py"
    program.write_text("\n".join(_BLOCK.findall(DOC.read_text(encoding="utf-8"))), "utf-8")
    mypy = [sys.executable, "-m", "mypy", "--strict", "--config-file", ""]
    done = subprocess.run(
        [*mypy, "--cache-dir", str(tmp_path / "cache"), program.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_errors_section_lists_every_exception_the_api_exports() -> None:
    """What a caller catches is on the page, and what the page names exists."""
    from asf_core import api

    section = DOC.read_text(encoding="utf-8").split("\n## Errors\n", 1)[1]
    listed = set(re.findall(r"^\* `api\.(\w+)`", section, re.M))
    exported = {
        name
        for name in api.__all__
        if isinstance(getattr(api, name), type) and issubclass(getattr(api, name), Exception)
    }
    assert listed == exported


def test_the_api_converts_like_the_command(tmp_path: Path) -> None:
    from asf_core import api
    from asf_core.cli.main import main

    home = ROOT / "examples" / "hermes-home"
    assert main(["convert", str(home), "-o", str(tmp_path / "cli"), "--quiet"]) == 0
    report = api.convert(home, tmp_path / "api")
    cli_files = sorted(p.relative_to(tmp_path / "cli") for p in (tmp_path / "cli").rglob("*"))
    api_files = sorted(p.relative_to(tmp_path / "api") for p in (tmp_path / "api").rglob("*"))
    assert cli_files == api_files
    for rel in cli_files:
        a, b = tmp_path / "cli" / rel, tmp_path / "api" / rel
        # The report names its directory; the record of the run, the files' times and inodes.
        if a.is_file() and a.name not in ("report.json", "fingerprints.json"):
            assert a.read_bytes() == b.read_bytes(), rel
    assert report.totals()["sessions_written"] == 23


def test_in_memory_sessions_equal_the_written_files(tmp_path: Path) -> None:
    from asf_core import api

    home = ROOT / "examples" / "hermes-home"
    api.convert(home, tmp_path)
    written = {p.read_bytes() for p in tmp_path.rglob("*.jsonl")}
    stores, problems = api.find_stores(home)
    assert problems == []
    in_memory = {b"".join(api.lines(s)) for store in stores for s in store.sessions()}
    assert in_memory == written


def test_the_api_prunes_like_the_command(tmp_path: Path) -> None:
    """``prune=True`` deletes an earlier run's ASF file the run did not write; it refuses a
    picked run, before anything is written."""
    from asf_core import api
    from asf_core.formats import Selection

    home = ROOT / "examples" / "hermes-home"
    out = tmp_path / "out"
    api.convert(home, out)
    kept = sorted(out.rglob("*.jsonl"))[0]
    earlier = kept.with_name("2020-01-01T00-00-00.000Z_" + kept.name.split("_", 1)[1])
    shutil.copyfile(kept, earlier)
    with pytest.raises(ValueError, match="prune needs a whole run"):
        api.convert(home, out, selection=Selection(ids=("fx",)), prune=True)
    assert earlier.exists()
    report = api.convert(home, out, prune=True)
    assert not earlier.exists()
    codes = [f.code for s in report.stores for f in s.findings if f.path == str(earlier)]
    assert codes == ["pruned"]
