"""After converting: time and peak memory of ``asf export`` (every target) and ``asf verify``
over a converted directory, on one worker and on two.

Run: ``.venv/bin/python benchmarks/bench_export.py [--sessions 400] [--messages 50]``.

Builds a Hermes ``state.db`` with Hermes' own ``SessionDB`` (the generator of
``bench_hermes_convert.py``: about ``messages`` rows a session, user turns, answers with
reasoning, tool calls and results) at the full size and at a quarter of it, converts each
with ``asf convert``, then runs ``asf export DIR --to T -o OUT -j N`` for every target and
``asf verify DIR -j N``, each in a fresh process measured as ``bench_vs_hermes.py`` measures
(wall time; CPU of the process and its workers; peak RSS of the main process and of its
largest worker). Memory must not grow with the number of sessions: each process reads, builds
and writes one session at a time.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
_TARGETS = ("atif", "otel", "markdown", "html", "text")


def _sibling(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, _HERE / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _convert(db: Path, out: Path) -> None:
    from asf_core.cli.main import main

    if not out.exists() and main(["convert", str(db), "-o", str(out), "--quiet"]) != 0:
        raise SystemExit(f"asf convert {db} failed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--work", type=Path, help="keep (and reuse) the databases and output here")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, the median shown")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-export-"))
    work.mkdir(parents=True, exist_ok=True)
    gen = _sibling("bench_hermes_convert")
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
    vs = _sibling("bench_vs_hermes")
    vs.compile_asf()
    print()
    print(
        "| command | -j | sessions | entries | wall s | CPU s | entries/s (wall) | out MB "
        "| peak RSS MB (main / worker) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    runs = [(t, ("--to", t)) for t in _TARGETS] + [
        ("otel --content", ("--to", "otel", "--content"))
    ]
    runs.append(("verify", ()))
    for name, extra in runs:
        for label in ("full", "quarter"):
            src, sessions, entries = converted[label]
            for jobs in args.jobs:
                out = work / label / f"out-{name.replace(' ', '')}"
                shutil.rmtree(out, ignore_errors=True)
                command = (
                    ["verify", str(src)]
                    if name == "verify"
                    else ["export", str(src), *extra, "-o", str(out)]
                )
                got = vs.measure([*vs.ASF, *command, "-j", str(jobs)], args.repeat)
                size = (
                    sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
                    if out.exists()
                    else 0
                )
                worker = f"{got['worker_rss']:.0f}" if got["worker_rss"] else "-"
                cells = [f"`{name}`", jobs, sessions, entries, f"{got['wall']:.2f}"]
                cells += [f"{got['cpu']:.2f}", f"{entries / got['wall']:,.0f}", f"{size / 1e6:.1f}"]
                cells.append(f"{got['rss']:.0f} / {worker}")
                print("| " + " | ".join(map(str, cells)) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
