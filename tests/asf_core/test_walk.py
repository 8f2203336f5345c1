"""The one folder walk: any depth, no link cycles, a folder that cannot be listed skipped."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from asf_core.export.resolve import session_files
from asf_core.walk import files_under
from claude_code_plugin.source.layout import stores_at

DEPTH = sys.getrecursionlimit() + 200


@contextmanager
def _deep(root: Path) -> Iterator[Path]:
    """A chain of folders deeper than the recursion limit, made and removed one level at a
    time (``os.makedirs`` and ``shutil.rmtree``, pytest's cleanup included, recurse)."""
    levels = [root]
    for _ in range(DEPTH):
        levels.append(levels[-1] / "d")
        levels[-1].mkdir(parents=True)
    bottom = levels[-1] / "deep.jsonl"
    bottom.write_text("{}\n")
    try:
        yield bottom
    finally:
        bottom.unlink()
        for level in reversed(levels[1:]):
            level.rmdir()


def test_a_tree_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    (tmp_path / "top.jsonl").write_text("{}\n")
    (tmp_path / "loop").symlink_to(tmp_path)  # a link to a folder is not followed
    with _deep(tmp_path) as bottom:
        walk = files_under(tmp_path, lambda name: name.endswith(".jsonl"))
        assert walk.files == (bottom, tmp_path / "top.jsonl")
        assert session_files(tmp_path) == list(walk.files)


def test_a_folder_that_cannot_be_listed_is_named_and_skipped(tmp_path: Path) -> None:
    walk = files_under(tmp_path / "missing")
    assert walk.files == ()
    assert [(folder.name, why) for folder, why in walk.skipped] == [
        ("missing", "no such file or directory")
    ]


def test_claude_code_discovery_beside_a_deep_tree(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-home-u-proj"
    project.mkdir(parents=True)
    session = "0b6a8f3e-2f7d-4a59-9d1e-3f4c5b6a7d8e"
    line = (
        '{"type":"user","uuid":"11111111-1111-4111-8111-111111111111","parentUuid":null,'
        f'"sessionId":"{session}","message":{{"role":"user","content":"hi"}}}}\n'
    )
    (project / f"{session}.jsonl").write_text(line)
    with _deep(project / session / "subagents"):  # a sub-agent folder deeper than the limit
        assert [f.path for f in stores_at(tmp_path / "projects")] == [project]
