"""Converting long Hermes lineages: time must grow linearly with their length.

Run: ``.venv/bin/python benchmarks/bench_hermes_lineage.py [--segments 1500 3000 6000 12000]``.

Writes, with Hermes' own ``hermes_state.SessionDB`` (0.19.0, in the venv), one database per
size holding a compression-continuation chain of N segments (each session ended
``compression``, its child continuing it; each segment one user and one assistant message):
one conversation, one ASF file of N segments. Then times ``asf convert`` of each database
(``asf_core.cli.main.main`` in a fresh subprocess, as the command runs) and prints seconds,
seconds per 1,000 segments and the ratio to the previous size (2.0 for linear growth when the
sizes double; the chain once took time quadratic in its length: 30 s for 6,000 segments).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CONVERT = """
import sys, time
from asf_core.cli.main import main
started = time.perf_counter()
code = main(["convert", sys.argv[1], "-o", sys.argv[2], "--quiet"])
print(time.perf_counter() - started)
sys.exit(code)
"""


def generate(db: Path, segments: int) -> None:
    """A continuation chain of ``segments`` sessions, written by Hermes' SessionDB."""
    import hermes_state

    store = hermes_state.SessionDB(db)
    parent = None
    for i in range(segments):
        sid = f"seg-{i:06}"
        store.create_session(
            sid, "cli", model="m", system_prompt="prompt", parent_session_id=parent
        )
        store.append_message(sid, "user", f"turn {i}")
        store.append_message(sid, "assistant", f"answer {i}")
        store.end_session(sid, "compression")
        parent = sid
    store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, nargs="+", default=[1500, 3000, 6000, 12000])
    args = parser.parse_args(argv)
    previous: float | None = None
    with tempfile.TemporaryDirectory(prefix="bench-lineage-") as work:
        for n in args.segments:
            db = Path(work) / f"chain-{n}" / "state.db"
            db.parent.mkdir()
            generate(db, n)
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", _CONVERT, str(db), str(Path(work) / f"out-{n}")],
                capture_output=True,
                text=True,
                check=True,
                env={"ASF_PLUGINS": "hermes", "PATH": "/usr/bin:/bin"},
            )
            seconds = float(done.stdout.strip() or time.perf_counter() - started)
            ratio = f"{seconds / previous:.2f}" if previous else "-"
            print(
                f"{n:>6} segments: {seconds:6.2f} s  "
                f"({seconds / n * 1000:.2f} s per 1,000)  x{ratio}"
            )
            previous = seconds
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
