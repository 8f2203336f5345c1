"""A Claude Code project of many sessions: ``asf convert`` fresh on one and two cores, re-run
unchanged, re-run after one session grew, beside a floor. Issue 9's figures for Claude Code.

Run: ``.venv/bin/python benchmarks/bench_claude_code_home.py [--sessions 24] [--repeat 3]``.

Each session is a copy of the shared F1 session (1,881 lines, 3.4 MB) with its own ids
(``bench_claude_code.py`` makes them). Every command runs in a fresh process, timed from
outside (wall, and CPU of the process and its workers); medians of ``--repeat`` runs (the
first unchanged run after a fresh one also rewrites ``report.json``, the next ones do not).
The floor reads every line of every file and parses it with ``json.loads``, nothing else.
Peak memory is ``bench_claude_code.py``'s business (one large session).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_claude_code import F1, ROOT, _copy

_FLOOR = """
import json, sys
from pathlib import Path
for path in sorted(Path(sys.argv[1]).glob("*.jsonl")):
    with path.open("rb") as f:
        for raw in f:
            json.loads(raw)
"""


def build(project: Path, sessions: int) -> int:
    """``sessions`` copies of F1, each with its own session id; their total bytes."""
    lines = F1.read_bytes().splitlines()
    project.mkdir(parents=True)
    size = 0
    for n in range(sessions):
        session = str(uuid.uuid5(uuid.UUID(int=2), str(n)))
        data = b"".join(line + b"\n" for line in _copy(lines, n, None, 0, session))
        (project / f"{session}.jsonl").write_bytes(data)
        size += len(data)
    return size


def _appended(project: Path) -> None:
    """A prompt appended to the first session (hanging from its last line)."""
    path = sorted(project.glob("*.jsonl"))[0]
    last = next(
        json.loads(r)["uuid"] for r in reversed(path.read_bytes().splitlines()) if b'"uuid"' in r
    )
    line = {
        "parentUuid": last,
        "isSidechain": False,
        "type": "user",
        "sessionId": path.stem,
        "uuid": str(uuid.uuid4()),
        "timestamp": "2026-12-02T00:00:00.000Z",
        "message": {"role": "user", "content": "one more thing"},
    }
    with path.open("ab") as f:
        f.write(json.dumps(line).encode() + b"\n")


def measure(command: list[str], repeat: int, before: Callable[[], None]) -> dict[str, float]:
    """Median wall and CPU seconds of ``command`` (``before`` runs ahead of each, untimed)."""
    walls, cpus = [], []
    for _ in range(repeat):
        before()
        start = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - wall)
        end = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(end.ru_utime - start.ru_utime + end.ru_stime - start.ru_stime)
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    asf = str(ROOT / ".venv" / "bin" / "asf")
    python = str(ROOT / ".venv" / "bin" / "python")
    subprocess.run(  # compiled once, as an installed package is
        [
            python,
            "-m",
            "compileall",
            "-q",
            str(ROOT / "asf_core"),
            str(ROOT / "claude_code_plugin"),
        ],
        check=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "projects" / "-bench"
        size = build(project, args.sessions)
        out = Path(tmp) / "out"

        def fresh() -> None:
            shutil.rmtree(out, ignore_errors=True)

        def convert(jobs: int) -> list[str]:
            return [asf, "convert", str(project), "-o", str(out), "--quiet", "-j", str(jobs)]

        runs = {
            "floor: json.loads of every line": measure(
                [python, "-c", _FLOOR, str(project)], args.repeat, lambda: None
            ),
            "asf convert -j 1 (fresh)": measure(convert(1), args.repeat, fresh),
            "asf convert -j 2 (fresh)": measure(convert(2), args.repeat, fresh),
            "asf convert -j 2 (unchanged)": measure(convert(2), args.repeat, lambda: None),
            "asf convert -j 2 (1 session appended)": measure(
                convert(2), args.repeat, lambda: _appended(project)
            ),
        }
    floor, one = runs["floor: json.loads of every line"], runs["asf convert -j 1 (fresh)"]
    two = runs["asf convert -j 2 (fresh)"]
    print(
        f"{args.sessions} sessions, {size / 1e6:.0f} MB; {os.cpu_count()} cores; "
        f"load {os.getloadavg()[0]:.1f}"
    )
    print("| run | wall s | CPU s | wall ÷ -j 1 | wall ÷ fresh -j 2 | CPU ÷ floor |")
    print("|---|---|---|---|---|---|")
    for name, r in runs.items():
        print(
            f"| {name} | {r['wall']:.2f} | {r['cpu']:.2f} | "
            f"{r['wall'] / one['wall']:.2f} | {r['wall'] / two['wall']:.3f} | "
            f"{r['cpu'] / floor['cpu']:.1f} |"
        )


if __name__ == "__main__":
    main()
