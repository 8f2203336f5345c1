"""``subagents=DIR`` of the API's exports (docs/library.md): sub-agents are looked for there,
and a directory that is not there is an ``OSError``, not an export silently without them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixture_paths import CLAUDE_HOME

from asf_core import api

PARENT = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"  # the Claude Code session with sub-agents


def _embedded(doc: dict[str, object]) -> int:
    return json.dumps(doc).count('"schema_version": "ATIF-v1.8"') - 1


def test_subagents_are_found_where_named_and_a_missing_directory_is_an_error(
    tmp_path: Path,
) -> None:
    report = api.convert(CLAUDE_HOME / ".claude", tmp_path / "out")
    (store,) = (s for s in report.stores if PARENT in s.files)
    path = Path(store.output) / store.files[PARENT]
    beside = api.read(path)
    assert _embedded(api.atif(beside)) >= 1
    in_memory = api.read(path.read_bytes())  # no file, so nowhere to look unless told
    assert _embedded(api.atif(in_memory)) == 0
    assert api.atif(in_memory, subagents=path.parent) == api.atif(beside)
    for call in (api.atif, api.otel):
        with pytest.raises(FileNotFoundError, match="nowhere"):
            call(beside, subagents=tmp_path / "nowhere")
        with pytest.raises(NotADirectoryError):
            call(beside, subagents=path)
