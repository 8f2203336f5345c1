"""What a run finds in a store's output directory besides its own files: a folder it cannot
look into is passed over, never the end of the run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from fixture_homes import EXAMPLE
from unprivileged import run_unprivileged

from asf_core.cli.main import main

ASF = [sys.executable, "-m", "asf_core.cli.main"]


def test_a_folder_in_the_output_that_cannot_be_listed_is_passed_over(tmp_path: Path) -> None:
    """The run that finds the store unchanged, and one that reads it (``--prune`` looks for
    files earlier runs left), each list the store's folders for session files: one closed to
    the user holds none this run can name, and the run ends as usual."""
    out, store = tmp_path / "out", str(EXAMPLE / "state.db")
    assert main(["convert", store, "-o", str(out), "--quiet"]) == 0
    (dest,) = [p.parent for p in out.glob("hermes/*/report.json")]
    before = (dest / "report.json").read_bytes()
    (dest / "closed").mkdir(mode=0)
    env = {**os.environ, "ASF_PLUGINS": "hermes"}
    for more in [[], ["--prune"]]:
        done = run_unprivileged([*ASF, "convert", store, "-o", str(out), "--quiet", *more], env)
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        report = json.loads((dest / "report.json").read_bytes())
        assert report["complete"]
        assert [f for f in report["findings"] if f.get("code") in ("left", "pruned")] == []
    assert json.loads(before)["files_written"] == report["files_unchanged"]
