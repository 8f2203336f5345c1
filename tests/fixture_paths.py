"""Where the reference data the tests read lives, shared by every test module.

``../shared`` beside the repository (or ``$ASF_SHARED``) holds the ASF vectors and the Hermes
fixtures; ``$ASF_HERMES_FIXTURES_EXTRA`` (``os.pathsep``-separated directories, each holding
``hermes-*`` release directories made by ``make_fixtures.py``) adds more Hermes releases, which
``tests/hermes_plugin/test_releases.py`` generates from the package registry.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ASF_SHARED", ROOT.parent / "shared")).resolve()
VECTORS = SHARED / "asf" / "vectors" / "testdata"
HERMES_FIXTURES = SHARED / "hermes" / "fixtures"
#: The shared Claude Code files, laid out as a home directory (``home/.claude/projects``).
CLAUDE_HOME = SHARED / "claude-code" / "home"
#: The shared Codex rollouts, laid out as a home directory (``home/.codex/sessions``).
CODEX_HOME = SHARED / "codex" / "home"

#: Hermes fixture roots and the prefix their releases' test ids get.
ROOTS: dict[Path, str] = {HERMES_FIXTURES: ""} | {
    Path(p).resolve(): f"extra{n}/"
    for n, p in enumerate(os.environ.get("ASF_HERMES_FIXTURES_EXTRA", "").split(os.pathsep), 1)
    if p
}

#: Every Hermes release directory (one holding a ``state.db``), shared ones first.
RELEASES: list[Path] = [
    r for root in ROOTS for r in sorted(root.glob("hermes-*")) if (r / "state.db").is_file()
]

#: Every fixture database as (release directory, path inside it): each release's home
#: database, then its profiles'.
DATABASES: list[tuple[Path, str]] = [
    (release, rel)
    for release in RELEASES
    for rel in [
        "state.db",
        *(
            f"profiles/{p.name}/state.db"
            for p in sorted((release / "profiles").glob("*"))
            if (p / "state.db").is_file()
        ),
    ]
]


def label(release: Path) -> str:
    """A release directory's test id: its name, after ``extra<n>/`` for an extra root."""
    return ROOTS.get(release.parent, "") + release.name


def database_ids() -> list[str]:
    """Test ids for :data:`DATABASES`, e.g. ``hermes-0.19.0/profiles/work/state.db``."""
    return [f"{label(r)}/{db}" for r, db in DATABASES]
