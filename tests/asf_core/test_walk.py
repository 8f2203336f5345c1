"""The one folder walk: any depth, no link cycles, a folder that cannot be listed skipped."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from asf_core.export.resolve import session_files
from asf_core.walk import files_under
from claude_code_plugin.source.layout import stores_at


def _deep(root: Path, depth: int) -> Path:
    """A chain of ``depth`` folders (made relative to dodge the path length limit)."""
    here = Path.cwd()
    os.chdir(root)
    try:
        for _ in range(depth):
            Path("d").mkdir()
            os.chdir("d")
        Path("deep.jsonl").write_text("{}\n")
    finally:
        os.chdir(here)
    return root


def test_a_tree_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    depth = sys.getrecursionlimit() + 200
    _deep(tmp_path, depth)
    (tmp_path / "top.jsonl").write_text("{}\n")
    (tmp_path / "loop").symlink_to(tmp_path)  # a link to a folder is not followed
    walk = files_under(tmp_path, lambda name: name.endswith(".jsonl"))
    assert [p.name for p in walk.files] == ["deep.jsonl", "top.jsonl"]
    assert len(walk.files[0].relative_to(tmp_path).parts) == depth + 1
    assert session_files(tmp_path) == list(walk.files)


def test_a_folder_that_cannot_be_listed_is_named_and_skipped(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("{}\n")
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
    (project / session / "subagents").mkdir(parents=True)
    _deep(project / session / "subagents", sys.getrecursionlimit() + 200)  # deep side folders
    found = stores_at(tmp_path / "projects")
    assert [f.path for f in found] == [project]
