"""Converting one large Claude Code session: wall and CPU time, peak memory, lines/s.

Run: ``.venv/bin/python benchmarks/bench_claude_code.py [--copies 3 10 30] [--pad 0]``.

Synthesises session files by repeating the real lines of the shared F1 session (3.4 MB,
1,881 lines: progress hooks, split responses, parallel tool calls, a compaction, sub-agent
progress) N times, each copy with fresh uuids, message ids and tool use ids, chained so the
whole file is one conversation (each copy's first line hangs from the previous copy's last).
Then, each in a fresh subprocess that reports its own peak RSS (``VmHWM``, Linux), it times
``asf convert`` of the file as the command runs it (discovery, the plugin's index pass, the
streamed second pass, every entry sealed and written, ``report.json``), beside the floor
(``json.loads`` of every line, nothing else), and prints wall and CPU seconds, peak RSS,
lines/s and MB/s. Memory should not follow the file's bytes: the file is streamed twice and
only a small record per line is kept. ``--pad`` makes every tool result longer (same lines,
more bytes).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from fixture_paths import CLAUDE_HOME  # noqa: E402

F1 = (
    CLAUDE_HOME
    / ".claude/projects/-home-USER-projects-spotter-worktrees-spotter-a0y"
    / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
)
SESSION = "bbbbbbbb-0000-4000-8000-000000000000"
_IDS = re.compile(
    rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|toolu_[A-Za-z0-9]+|msg_[A-Za-z0-9]+"
)
_NS = uuid.UUID(int=1)

_CONVERT = """
import json, sys, time
from pathlib import Path
from asf_core.cli.main import main
src, out = sys.argv[1], Path(sys.argv[2])
wall = time.perf_counter()
cpu = time.process_time()
code = main(["convert", src, "-o", str(out), "--quiet"])
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
if code != 0:
    raise SystemExit(f"asf convert exited with {code}")
report = json.loads(next(out.rglob("report.json")).read_text())
# VmHWM: this process image's own peak (ru_maxrss would count the parent's pages too).
status = open("/proc/self/status").read()
rss = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
print(json.dumps({"wall": wall, "cpu": cpu, "rss_kb": rss, "entries": report["entries_written"],
                  "lines": report["counts"]["lines"], "out": report["bytes_written"]}))
"""


def _padded(line: bytes, pad: int) -> bytes:
    """A tool result line with ``pad`` more bytes of output (its line count unchanged)."""
    if not pad or b'"tool_result"' not in line:
        return line
    obj = json.loads(line)
    content = obj.get("message", {}).get("content") if obj.get("type") == "user" else None
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "tool_result" and isinstance(block.get("content"), str):
            block["content"] += "x" * pad
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


_PARSE = """
import json, sys, time
wall = time.perf_counter()
cpu = time.process_time()
lines = 0
with open(sys.argv[1], "rb") as f:
    for raw in f:
        json.loads(raw)
        lines += 1
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
# VmHWM: this process image's own peak (ru_maxrss would count the parent's pages too).
status = open("/proc/self/status").read()
rss = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
print(json.dumps({"wall": wall, "cpu": cpu, "rss_kb": rss, "entries": 0, "lines": lines, "out": 0}))
"""


def _copy(
    lines: list[bytes], n: int, previous_last: bytes | None, pad: int, session: str = SESSION
) -> Iterator[bytes]:
    """Copy ``n`` of the lines: every id renamed for this copy (the session's: ``session``),
    the first root re-hung."""
    renamed: dict[bytes, bytes] = {}

    def rename(match: re.Match[bytes]) -> bytes:
        old = match.group(0)
        if old == b"fa812bfe-b295-4cca-9c2f-fdf01028cb46":
            return session.encode()
        if old not in renamed:
            if old.startswith((b"toolu_", b"msg_")):
                renamed[old] = old + f"c{n}".encode()
            else:
                renamed[old] = str(uuid.uuid5(_NS, f"{n}:{old.decode()}")).encode()
        return renamed[old]

    hung = previous_last is None
    for raw in lines:
        line = _padded(_IDS.sub(rename, raw), pad)
        if not hung and b'"parentUuid":null' in line:
            obj = json.loads(line)
            obj["parentUuid"] = previous_last.decode() if previous_last else None
            line = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
            hung = True
        yield line


def synthesise(path: Path, copies: int, pad: int = 0) -> tuple[int, int]:
    """Write ``copies`` chained copies of F1 to ``path`` (each tool result ``pad`` bytes
    longer); return (lines, bytes)."""
    lines = F1.read_bytes().splitlines()
    last_uuid = next(
        json.loads(raw)["uuid"] for raw in reversed(lines) if b'"uuid"' in raw
    ).encode()
    count = size = 0
    previous: bytes | None = None
    with path.open("wb") as out:
        for n in range(copies):
            for line in _copy(lines, n, previous, pad):
                out.write(line + b"\n")
                count += 1
                size += len(line) + 1
            previous = str(uuid.uuid5(_NS, f"{n}:{last_uuid.decode()}")).encode()
    return count, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, nargs="+", default=[3, 10, 30])
    parser.add_argument(
        "--pad",
        type=int,
        nargs="+",
        default=[0],
        metavar="BYTES",
        help="also run with every tool result this much longer (same lines, more bytes)",
    )
    args = parser.parse_args()
    python = str(ROOT / ".venv" / "bin" / "python")
    print(
        "| run | copies | pad | lines | MB | wall s | CPU s | peak RSS MB | lines/s | MB/s "
        "| entries | out MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for pad, copies in ((p, c) for p in args.pad for c in args.copies):
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp) / "projects" / "-bench"
            project.mkdir(parents=True)
            source = project / f"{SESSION}.jsonl"
            lines, size = synthesise(source, copies, pad)
            for label, script in (("asf convert", _CONVERT), ("json.loads only", _PARSE)):
                done = subprocess.run(
                    [python, "-c", script, str(source), str(Path(tmp) / "out")],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                got = json.loads(done.stdout)
                assert got["lines"] == lines, (got["lines"], lines)
                mb = size / 1e6
                print(
                    f"| {label} | {copies} | {pad:,} | {lines:,} | {mb:.1f} | {got['wall']:.2f} | "
                    f"{got['cpu']:.2f} | {got['rss_kb'] / 1024:.1f} | "
                    f"{lines / got['wall']:,.0f} | {mb / got['wall']:.1f} | "
                    f"{got['entries']:,} | {got['out'] / 1e6:.1f} |"
                )


if __name__ == "__main__":
    main()
