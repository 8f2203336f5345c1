"""Fixtures of the Claude Code tests: the shared files converted once per run."""

from __future__ import annotations

import pytest
from cc_helpers import CLAUDE_HOME, Converted, convert, outputs, tree_digest


@pytest.fixture(scope="session")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Converted:
    """The shared Claude Code home converted with ``asf convert <home>/.claude``."""
    if not CLAUDE_HOME.is_dir():
        pytest.fail(f"shared Claude Code files not found at {CLAUDE_HOME} (set ASF_SHARED)")
    before = tree_digest(CLAUDE_HOME)
    out = tmp_path_factory.mktemp("cc") / "out"
    code = convert([CLAUDE_HOME / ".claude"], out)
    return Converted(out=out, files=outputs(out), before=before, code=code)
