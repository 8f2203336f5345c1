"""Converting a large Hermes ``state.db``: throughput and peak memory, beside Hermes' export.

Run: ``.venv/bin/python benchmarks/bench_hermes_convert.py [--sessions 2000] [--messages 50]``.

Generates a database with Hermes' own ``hermes_state.SessionDB`` (0.19.0, in the venv): each
session a user/assistant conversation with a tool call and its result every few turns. Then,
each in a fresh subprocess so peak RSS is its own, it times:

* ``asf convert`` of the database (``asf_core.cli.main.main``, as the command runs: discovery,
  the Hermes plugin, every session file written atomically, one sync, ``report.json``), at
  the full size and at a quarter of it (memory must not grow with the database);
* Hermes' ``export_all`` written as JSONL, the code path behind ``hermes sessions export``;
* Hermes' ``export_session`` per session, written as JSONL (one session in memory at a time).

and prints rows/s, MB/s (of database read) and peak RSS for each.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_WORDS = [
    *("the", "agent", "reads", "a", "file", "and", "runs", "the", "tests"),
    *("then", "fixes", "the", "parser", "before", "it", "ships"),
]

_CONVERT = """
import json, sys, time
from pathlib import Path
from asf_core.cli.main import main
db, out = sys.argv[1], Path(sys.argv[2])
start = time.perf_counter()
code = main(["convert", db, "-o", str(out), "--quiet", "-j", "1"])
took = time.perf_counter() - start
if code != 0:
    raise SystemExit(f"asf convert exited with {code}")
report = json.loads(next(out.rglob("report.json")).read_text())
# VmHWM: this process image's own peak (ru_maxrss would count the parent's pages too).
rss = int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1])
files, entries = report["files_written"], report["entries_written"]
print(f"{took} {rss} {files} {entries} {report['bytes_written']}")
"""

#: Hermes' own exporter, timed the same way whichever call produces the sessions: the
#: prologue opens the database, ``sessions`` is set between, the epilogue writes JSONL.
_EXPORT_OPEN = """
import json, sys, time
from hermes_state import SessionDB
db, out = sys.argv[1], sys.argv[2]
start = time.perf_counter()
sdb = SessionDB(db_path=__import__("pathlib").Path(db))
"""
_EXPORT_WRITE = """
size = 0
with open(out, "w", encoding="utf-8") as f:
    for session in sessions:
        line = json.dumps(session, ensure_ascii=False) + "\\n"
        size += len(line.encode())
        f.write(line)
sdb.close()
took = time.perf_counter() - start
# VmHWM: this process image's own peak (ru_maxrss would count the parent's pages too).
rss = int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1])
print(f"{took} {rss} 1 0 {size}")
"""
_EXPORT_ALL = _EXPORT_OPEN + "sessions = sdb.export_all()\n" + _EXPORT_WRITE
_EXPORT_EACH = (
    _EXPORT_OPEN
    + 'ids = [r[0] for r in sdb._conn.execute("SELECT id FROM sessions ORDER BY started_at")'
    + ".fetchall()]\n"
    + "sessions = (sdb.export_session(sid) for sid in ids)\n"
    + _EXPORT_WRITE
)


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def generate(db: Path, sessions: int, messages: int, seed: int = 7) -> int:
    """Write ``sessions`` conversations of about ``messages`` rows each with real SessionDB;
    return the number of message rows."""
    from hermes_state import SessionDB

    rng = random.Random(seed)
    sdb = SessionDB(db_path=db)
    rows = 0
    clock = 1_790_000_000.0
    try:
        for n in range(sessions):
            sid = f"bench_{n:06d}"
            sdb.create_session(
                sid,
                "cli",
                model="anthropic/claude-sonnet-4",
                system_prompt="You are Hermes. " + _text(rng, 60),
                model_config={"max_iterations": 90},
            )
            count = 0
            turn = 0
            while count < messages:
                clock += 1.5
                sdb.append_message(sid, "user", _text(rng, 20), timestamp=clock)
                count += 1
                if turn % 3 == 2 and count + 3 <= messages:
                    call = f"call_{n:06d}_{turn:04d}"
                    calls = [
                        {
                            "id": call,
                            "call_id": call,
                            "response_item_id": "fc_" + call[5:],
                            "type": "function",
                            "function": {
                                "name": "terminal",
                                "arguments": json.dumps({"command": "ls -la"}),
                            },
                        }
                    ]
                    sdb.append_message(
                        sid,
                        "assistant",
                        "",
                        tool_calls=calls,
                        finish_reason="tool_calls",
                        timestamp=clock + 0.5,
                    )
                    sdb.append_message(
                        sid,
                        "tool",
                        json.dumps({"output": _text(rng, 80), "exit_code": 0}),
                        tool_call_id=call,
                        tool_name="terminal",
                        timestamp=clock + 0.7,
                    )
                    count += 2
                sdb.append_message(
                    sid,
                    "assistant",
                    _text(rng, 60),
                    finish_reason="stop",
                    reasoning=_text(rng, 10) if turn % 2 else None,
                    timestamp=clock + 1.0,
                )
                count += 1
                turn += 1
            rows += count
            sdb.end_session(sid, "cli_close")
    finally:
        sdb.close()
    return rows


def _run(code: str, db: Path, out: Path) -> tuple[float, int, int, int, int]:
    env = dict(os.environ)
    result = subprocess.run(
        [sys.executable, "-c", code, str(db), str(out)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    took, rss, files, entries, size = result.stdout.split()
    return float(took), int(rss), int(files), int(entries), int(size)


def _copy_db(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{src}{suffix}").exists():
            shutil.copyfile(f"{src}{suffix}", f"{dst}{suffix}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--work", type=Path, help="keep the databases and output here")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-hermes-"))
    work.mkdir(parents=True, exist_ok=True)
    small_n = max(1, args.sessions // 4)
    print(f"generating {args.sessions} + {small_n} sessions x ~{args.messages} rows in {work}")
    sizes: dict[str, tuple[Path, int, int, float]] = {}
    for label, n in (("full", args.sessions), ("quarter", small_n)):
        db = work / label / "state.db"
        if not db.exists():
            db.parent.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            rows = generate(db, n, args.messages)
            print(f"  {label}: {rows} rows in {time.perf_counter() - started:.1f} s")
        import sqlite3

        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        count = int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
        conn.close()
        files = [Path(f"{db}{s}") for s in ("", "-wal")]
        size = sum(f.stat().st_size for f in files if f.exists())
        sizes[label] = (db, n, count, size / 1e6)

    table: list[tuple[str, int, int, float, float, float, float]] = []
    for name, code, label in (
        ("asf convert (hermes plugin)", _CONVERT, "full"),
        ("asf convert, 1/4 database", _CONVERT, "quarter"),
        ("hermes export_all -> JSONL", _EXPORT_ALL, "full"),
        ("hermes export_session each -> JSONL", _EXPORT_EACH, "full"),
    ):
        db, n, rows, mb = sizes[label]
        copy = work / f"run-{len(table)}" / "state.db"
        _copy_db(db, copy)
        out = work / f"out-{len(table)}"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        target = out if code is _CONVERT else out / "export.jsonl"
        took, rss, _files, _entries, written = _run(code, copy, target)
        table.append((name, n, rows, mb, took, rss / 1024, written / 1e6))

    print(
        f"{'run':38} {'sessions':>8} {'rows':>8} {'db MB':>7} {'s':>7} {'rows/s':>9} "
        f"{'MB/s':>6} {'peak RSS MB':>11} {'out MB':>7}"
    )
    for name, n, rows, mb, took, rss_mb, out_mb in table:
        print(
            f"{name:38} {n:8d} {rows:8d} {mb:7.1f} {took:7.2f} {rows / took:9.0f} "
            f"{mb / took:6.1f} {rss_mb:11.1f} {out_mb:7.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
