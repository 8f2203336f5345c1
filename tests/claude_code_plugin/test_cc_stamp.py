"""A project directory's stamp (docs/formats/claude-code.md §9): it looks at what the listing
reads, walks no link, and is withheld when part of a session's folder cannot be listed."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from cc_synth import SESSION, Lines, simple
from unprivileged import run_unprivileged

from claude_code_plugin.source.stamp import store_stamp

PROJECT = "-home-u-proj"
OTHER = "99999999-2222-4333-8444-555555555555"


def test_a_link_in_a_session_folders_place_is_not_walked(tmp_path: Path) -> None:
    """A link named like a session's folder (``<id>`` beside ``<id>.jsonl``) pointing at a
    folder elsewhere: the listing does not follow it, so neither does the stamp; a file
    written in the folder it points at leaves the stamp as it was. The link itself counts."""
    project = tmp_path / PROJECT
    simple().write(project)
    simple(Lines(session=OTHER)).write(project)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "subagents").mkdir(parents=True)
    (project / OTHER).symlink_to(elsewhere, target_is_directory=True)
    first = store_stamp(project)
    assert first is not None
    (elsewhere / "subagents" / "agent-x.jsonl").write_text("{}\n")
    assert store_stamp(project) == first
    (project / SESSION).mkdir()
    assert store_stamp(project) != first


def test_every_session_folder_is_walked(tmp_path: Path) -> None:
    """A session's folder is walked whether it is named by a uuid, holds ``subagents/`` or
    has its session file beside it: a session file named otherwise, and sub-agents whose
    session file is missing (the listing converts both), change the stamp when a file in
    their folder does."""
    project = tmp_path / PROJECT
    simple(Lines(session="renamed")).write(project)
    (project / "renamed" / "tool-results").mkdir(parents=True)
    orphan = simple(Lines(agentId="a1", isSidechain=True))
    agent = orphan.write(project / OTHER / "subagents", "agent-a1")
    seen = {store_stamp(project)}
    for change in (
        lambda: (project / "renamed" / "tool-results" / "r1.txt").write_text("x"),
        lambda: agent.write_bytes(agent.read_bytes() + orphan.bytes()[:10]),
    ):
        change()
        now = store_stamp(project)
        assert now is not None
        assert now not in seen
        seen.add(now)


def test_a_session_folder_that_cannot_be_listed_gives_no_stamp(tmp_path: Path) -> None:
    """A folder under a session's directory closed to the user: what is in it cannot be
    known, so the store has no stamp (it is converted as usual, not taken as unchanged)."""
    project = tmp_path / PROJECT
    simple().write(project)
    closed = project / SESSION / "tool-results"
    closed.mkdir(parents=True)
    (closed / "r1.txt").write_text("x")
    code = (
        "from pathlib import Path\n"
        "from claude_code_plugin.source.stamp import store_stamp\n"
        f"print(store_stamp(Path({str(project)!r})))"
    )
    argv = [sys.executable, "-c", code]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    opened = run_unprivileged(argv, env)
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.strip() == store_stamp(project)
    closed.chmod(0)
    try:
        done = run_unprivileged(argv, env)
    finally:
        closed.chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"
