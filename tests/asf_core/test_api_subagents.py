"""``subagents=DIR`` of the API's exports (docs/library.md): sub-agents are looked for there,
and a directory that is not there is an ``OSError``, not an export silently without them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixture_paths import CLAUDE_HOME

from asf_core import api
from asf_core.model import Link

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


def test_a_session_naming_no_other_reads_no_other_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exporting each file of a directory one by one through the API: the directory's headers
    are read for a session with sub-agents, as it looks for them, and for no other."""
    from asf_core.export import resolve

    report = api.convert(CLAUDE_HOME / ".claude", tmp_path / "out")
    headers: list[Path] = []
    real = resolve._header_id

    def counted(path: Path) -> str | None:
        headers.append(path)
        return real(path)

    monkeypatch.setattr(resolve, "_header_id", counted)
    for store in report.stores:
        for name, file in store.files.items():
            path = Path(store.output) / file
            session = api.read(path)
            api.atif(session)
            api.otel(session)
            read, headers[:] = len(headers), []
            names_others = any(isinstance(e, Link) for e in session.entries)
            siblings = len(list(path.parent.glob("*.jsonl")))
            assert read == (2 * siblings if names_others else 0), (name, read)
