"""The Python API's types catch misuse (docs/library.md: it is typed): each line of a user's
program marked ``# misuse`` is an error under ``mypy --strict``, and nothing else is."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PROGRAM = """\
from pathlib import Path

from asf_core import api

session = api.read(Path("s.jsonl"))
api.transcript(session, to="text")
chosen: api.TranscriptFormat = "html"
api.transcript(session, to=chosen)
api.transcript(session, to="pdf")  # misuse
api.transcript(session, to="md")  # misuse
api.read(3)  # misuse
api.context(session, 3)  # misuse
api.convert("home", selection="fx-plain")  # misuse
api.Selection(ids="fx-plain")  # misuse
api.Selection(since="7d")  # misuse
api.otel(session, content="yes")  # misuse
for store in api.find_stores("home")[0]:
    for converted in store.sessions():
        converted.entries[0]  # misuse
"""


def test_misuse_is_a_type_error(tmp_path: Path) -> None:
    (tmp_path / "program.py").write_text(PROGRAM, encoding="utf-8")
    mypy = [sys.executable, "-m", "mypy", "--strict", "--config-file", ""]
    done = subprocess.run(
        [*mypy, "--cache-dir", str(tmp_path / "cache"), "program.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    flagged = {int(n) for n in re.findall(r"^program\.py:(\d+): error", done.stdout, re.M)}
    marked = {n for n, line in enumerate(PROGRAM.splitlines(), 1) if line.endswith("# misuse")}
    assert flagged == marked, done.stdout
