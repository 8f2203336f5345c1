"""Fixtures of the Codex tests: the shared rollouts converted once per run."""

from __future__ import annotations

import pytest
from cx_helpers import CODEX_HOME, SESSIONS, Converted, convert, tree_digest


@pytest.fixture(scope="session")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Converted:
    """The shared Codex home converted with ``asf convert <home>/.codex``."""
    if not SESSIONS.is_dir():
        pytest.skip(f"shared Codex rollouts not found at {SESSIONS} (set ASF_SHARED)")
    before = tree_digest(CODEX_HOME)
    out = tmp_path_factory.mktemp("codex") / "out"
    code = convert([CODEX_HOME / ".codex"], out)
    return Converted(out=out, before=before, code=code)
