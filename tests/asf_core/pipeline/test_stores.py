"""From the paths a user names to the stores (:func:`asf_core.pipeline.stores.find_stores`):
a path that cannot be searched is named with why, before any plugin looks at it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from unprivileged import run_unprivileged


def test_a_folder_closed_to_the_user_is_named_not_searched(tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    closed.mkdir(mode=0)
    out = tmp_path / "out"
    env = {**os.environ, "ASF_PLUGINS": "hermes"}
    asf = [sys.executable, "-m", "asf_core.cli.main"]
    for argv in (["convert", str(closed), "-o", str(out)], ["list", str(closed)]):
        done = run_unprivileged([*asf, *argv], env)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == f"asf: {closed}: permission denied\n"
    assert not out.exists()
