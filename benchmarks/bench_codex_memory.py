"""Converting one large Codex rollout: file size, wall and CPU time, peak RSS.

Run: ``.venv/bin/python benchmarks/bench_codex_memory.py [--mb 20 100] [--work DIR]``.

Makes one rollout per size by repeating the real turns of the shared X4 rollout (1 MB: 33
turns, 365 tool calls, a compaction) after its ``session_meta`` line until the file reaches
the size: one thread, its call ids repeated (the converter renames them), a compaction in
every copy. Then it runs ``asf convert HOME -o OUT -j 1`` on each in a fresh process under
``/usr/bin/time -f`` (wall, user + system CPU, peak RSS of the process: ``-j 1`` converts in
the main process). Memory should follow the number of lines a little and never the bytes
held by the file: the rollout is streamed, twice.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from fixture_paths import CODEX_HOME  # noqa: E402

X4 = "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"


def make_rollout(home: Path, megabytes: float) -> Path:
    """A rollout of about ``megabytes`` MB in a Codex home at ``home``: X4's header, then its
    other lines over and over."""
    source = next((CODEX_HOME / ".codex" / "sessions").rglob(X4))
    head, *rest = source.read_bytes().splitlines(keepends=True)
    body = b"".join(rest)
    target = home / ".codex" / "sessions" / "2026" / "02" / "23" / X4
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as out:
        out.write(head)
        size = len(head)
        while size < megabytes * 1e6:
            out.write(body)
            size += len(body)
    return target


def measure(home: Path, out: Path) -> dict[str, float]:
    """``asf convert`` of ``home`` in a fresh process: wall s, CPU s, peak RSS MB."""
    asf = Path(sys.executable).with_name("asf")
    cmd = ["/usr/bin/time", "-f", "%e %U %S %M", str(asf), "convert", str(home)]
    cmd += ["-o", str(out), "-j", "1", "--quiet"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall, user, system, rss = done.stderr.strip().splitlines()[-1].split()
    return {"wall": float(wall), "cpu": float(user) + float(system), "rss": int(rss) / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[20, 100])
    parser.add_argument("--work", type=Path, help="keep the rollouts and output here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        print("| MB | lines | wall s | CPU s | peak RSS MB |")
        print("|---|---|---|---|---|")
        for mb in args.mb:
            home = work / f"home-{mb:g}"
            if not home.exists():
                make_rollout(home, mb)
            rollout = next(home.rglob("rollout-*.jsonl"))
            out = work / f"out-{mb:g}"
            subprocess.run(["rm", "-rf", str(out)], check=True)
            got = measure(home, out)
            with rollout.open("rb") as stream:
                lines = sum(1 for _ in stream)
            size = rollout.stat().st_size / 1e6
            print(
                f"| {size:.1f} | {lines:,} | {got['wall']:.2f} | {got['cpu']:.2f} "
                f"| {got['rss']:.0f} |"
            )


if __name__ == "__main__":
    main()
