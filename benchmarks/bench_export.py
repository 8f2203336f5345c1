"""Exporting a large conversion: time and peak memory of ``asf export`` for every target.

Run: ``.venv/bin/python benchmarks/bench_export.py [--sessions 400] [--messages 50]``.

Builds a Hermes ``state.db`` with Hermes' own ``SessionDB`` (the generator of
``bench_hermes_convert.py``: about ``messages`` rows a session, user turns, answers with
reasoning, tool calls and results) at the full size and at a quarter of it, converts each
with ``asf convert``, then times ``asf export DIR --to T -o OUT`` for every target, each run
in a fresh subprocess that reports its own peak RSS (``VmHWM``, Linux). Memory must not grow
with the number of sessions: the export reads, builds and writes one session at a time.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_TARGETS = ("atif", "otel", "markdown", "html", "text")

_EXPORT = """
import sys, time
from pathlib import Path
from asf_core.cli.main import main
src, target, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
start = time.perf_counter()
code = main(["export", src, "--to", target, "-o", str(out)] + sys.argv[4:])
took = time.perf_counter() - start
if code != 0:
    raise SystemExit(f"asf export exited with {code}")
size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
files = sum(1 for p in out.rglob("*") if p.is_file())
# VmHWM is this process image's own peak; ru_maxrss would also count the parent's pages
# the child held between fork and exec.
status = Path("/proc/self/status").read_text()
rss = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
print(f"{took} {rss} {files} {size}")
"""


def _generator() -> object:
    spec = importlib.util.spec_from_file_location(
        "bench_hermes_convert", _HERE / "bench_hermes_convert.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _convert(db: Path, out: Path) -> None:
    from asf_core.cli.main import main

    if not out.exists() and main(["convert", str(db), "-o", str(out), "--quiet"]) != 0:
        raise SystemExit(f"asf convert {db} failed")


def _export(src: Path, target: str, out: Path, *extra: str) -> tuple[float, int, int, int]:
    done = subprocess.run(
        [sys.executable, "-c", _EXPORT, str(src), target, str(out), *extra],
        check=True,
        capture_output=True,
        text=True,
    )
    took, rss, files, size = done.stdout.split()
    return float(took), int(rss), int(files), int(size)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--work", type=Path, help="keep (and reuse) the databases and output here")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-export-"))
    work.mkdir(parents=True, exist_ok=True)
    gen = _generator()
    sizes = {"full": args.sessions, "quarter": max(1, args.sessions // 4)}
    converted: dict[str, tuple[Path, int, int]] = {}
    for label, n in sizes.items():
        db = work / label / "state.db"
        if not db.exists():
            db.parent.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            rows = gen.generate(db, n, args.messages)  # type: ignore[attr-defined]
            took = time.perf_counter() - started
            print(f"generated {label}: {n} sessions, {rows} rows in {took:.1f} s")
        asf = work / label / "asf"
        _convert(db, asf)
        files = sorted(asf.rglob("*.jsonl"))
        entries = sum(sum(1 for _ in f.open("rb")) - 1 for f in files)
        converted[label] = (asf, len(files), entries)
    print()
    print("| target | sessions | entries | s | sessions/s | entries/s | out MB | peak RSS |")
    print("|---|---|---|---|---|---|---|---|")
    runs = [(t, ()) for t in _TARGETS] + [("otel", ("--content",))]
    for target, extra in runs:
        for label in ("full", "quarter"):
            src, sessions, entries = converted[label]
            out = work / label / f"out-{target}{'-content' if extra else ''}"
            if out.exists():
                for p in sorted(out.rglob("*"), reverse=True):
                    p.unlink() if p.is_file() else p.rmdir()
            took, rss, _, size = _export(src, target, out, *extra)
            name = f"`{target}`" + (" `--content`" if extra else "")
            print(
                f"| {name} | {sessions} | {entries} | {took:.2f} | {sessions / took:,.0f} | "
                f"{entries / took:,.0f} | {size / 1e6:.1f} | {rss / 1024:.1f} MB |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
