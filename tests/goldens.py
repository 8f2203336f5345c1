"""Golden files, shared by the format plugins' golden tests: a folder per case holding the
``.jsonl`` files a conversion writes; ``pytest --update-goldens`` rewrites them."""

from __future__ import annotations

from pathlib import Path

import pytest
from output_files import written_sessions


def session_files(out: Path) -> dict[str, bytes]:
    """The session files a conversion into ``out`` wrote, by the name its report gives each
    (``<name>.jsonl``): what a case's folder holds."""
    return {f"{name}.jsonl": path.read_bytes() for name, path in written_sessions(out).items()}


def check(folder: Path, produced: dict[str, bytes], request: pytest.FixtureRequest) -> None:
    """Compare ``produced`` (file name -> bytes) with the folder's files, byte for byte; with
    ``--update-goldens``, first make the folder hold exactly ``produced``."""
    assert produced, "the case converts to nothing"
    if request.config.getoption("--update-goldens"):
        for old in folder.glob("*.jsonl"):
            old.unlink()
        for name, data in produced.items():
            (folder / name).write_bytes(data)
    expected = {p.name: p.read_bytes() for p in folder.glob("*.jsonl")}
    assert sorted(produced) == sorted(expected)
    for name, data in produced.items():
        assert data == expected[name], f"{folder.name}/{name} differs (--update-goldens?)"
