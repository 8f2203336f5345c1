"""``asf convert`` beside ``hermes sessions export`` and a bare floor, on homes of 5k, 20k and
80k message rows: wall time, CPU time and peak memory of each, and their ratios.

Run: ``.venv/bin/python benchmarks/bench_vs_hermes.py [--rows 5000 20000 80000] [--repeat 3]``.

The homes are written by Hermes itself: a base of real conversations through Hermes 0.19.0's
own ``SessionDB`` (the agent's shape: a long system prompt, user turns, assistant answers with
reasoning, tool calls with their JSON arguments and tool results of a few kilobytes, real
clock times), then grown to size by cloning those rows with SQL (each copy a new session id;
Hermes' triggers index them as its own inserts would). For each home, in one go:

* ``asf convert HOME -o OUT -j 2`` fresh, ``-j 1`` fresh, the same again on the unchanged home
  (``-j 2``), and again after Hermes appended two rows to one session;
* ``hermes sessions export OUT.jsonl``, the real command (hermes-agent 0.19.0 with all its
  dependencies, in ``benchmarks/.venv-hermes``, made here on first use: the project's own venv
  holds hermes-agent without them), run with ``HERMES_HOME`` pointing at the home, offline;
* the floor: ``sqlite3`` reading every row of ``sessions`` and ``messages`` and ``json.dumps``
  of each, written as JSONL.

Each command runs in a fresh process, with its code compiled: ``hermes`` from the bytecode pip
wrote when it installed it, ``asf`` from the bytecode written here first with ``compileall``
for every package the ``asf`` command imports (its own and its plugins'), as a regular install
would (an editable install leaves that to the interpreter, which does not write it when
``PYTHONDONTWRITEBYTECODE`` is set, and then compiles the source on every run). CPU time is
user + system of the process and every process it waited for (``wait4``), so it includes
``asf``'s workers. Peak RSS is each process's own ``VmHWM`` (``/proc/<pid>/status``, polled
every few milliseconds for the whole process tree; ``ru_maxrss`` would count the pages the
benchmark itself held before ``exec``): the table shows the main process and, for ``asf``, its
largest worker. Each figure is the median of
``--repeat`` runs; the load average before each run is printed, since the machine is shared.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERMES_VENV = ROOT / "benchmarks" / ".venv-hermes"
HERMES_VERSION = "0.19.0"
ASF = [sys.executable, "-m", "asf_core.cli.main"]

_WORDS = [
    "the",
    "agent",
    "reads",
    "a",
    "file",
    "and",
    "runs",
    "the",
    "tests",
    "then",
    "fixes",
    "the",
    "parser",
    "before",
    "it",
    "ships",
    "configuration",
    "module",
    "request",
    "response",
    "handler",
    "retry",
    "timeout",
    "context",
    "window",
    "token",
    "schema",
    "migration",
    "database",
    "index",
    "query",
    "cache",
    "invalidation",
    "worker",
    "process",
    "thread",
    "ünïcödé",
    "数据",
    "résumé",
    "✓",
    "error",
    "warning",
    "stack",
    "trace",
    "commit",
    "branch",
    "merge",
    "review",
]

_FLOOR = """
import json, sqlite3, sys
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
conn.row_factory = sqlite3.Row
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for table in ("sessions", "messages"):
        for row in conn.execute(f"SELECT * FROM {table}"):
            out.write(json.dumps(dict(row)) + "\\n")
"""

_APPEND = """
import sys
from pathlib import Path
from hermes_state import SessionDB
db = SessionDB(db_path=Path(sys.argv[1]))
sid = db._conn.execute("SELECT id FROM sessions ORDER BY started_at DESC LIMIT 1").fetchone()[0]
db.append_message(sid, "user", "And one more thing: " + "please check the logs " * 20)
db.append_message(sid, "assistant", "Done: " + "the logs are clean " * 40, finish_reason="stop")
db.close()
"""


# --- homes -------------------------------------------------------------------------------


def _text(rng: random.Random, words: int) -> str:
    lines, line = [], []
    for _ in range(words):
        line.append(rng.choice(_WORDS))
        if len(line) >= 14:
            lines.append(" ".join(line))
            line = []
    lines.append(" ".join(line))
    return "\n".join(lines)


def _tool_output(rng: random.Random) -> str:
    """What a terminal or file tool returns: a listing or a file, 0.5 to 8 KB."""
    lines = []
    for n in range(rng.randint(15, 220)):
        name = f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}_{n}.py"
        lines.append(f"-rw-r--r-- 1 agent agent {rng.randint(100, 99999):6d} {name}")
    return json.dumps({"output": "\n".join(lines), "exit_code": rng.choice([0, 0, 0, 1])})


def write_base(db: Path, sessions: int, seed: int = 11) -> None:
    """Real conversations through Hermes' own SessionDB (hermes-agent in this venv)."""
    from hermes_state import SessionDB

    rng = random.Random(seed)
    sdb = SessionDB(db_path=db)
    prompt = "You are Hermes, an autonomous agent.\n" + _text(rng, 900)
    try:
        for n in range(sessions):
            sid = f"bench-{n:04d}"
            sdb.create_session(
                sid,
                "cli",
                model="anthropic/claude-sonnet-4",
                system_prompt=prompt,
                model_config={"max_iterations": 90, "reasoning_config": {"effort": "medium"}},
            )
            for turn in range(rng.randint(6, 10)):
                sdb.append_message(sid, "user", _text(rng, rng.randint(10, 120)))
                for call in range(rng.randint(0, 3)):
                    call_id = f"call_{n:04d}_{turn:02d}_{call}"
                    arguments = {"command": f"ls -la src/{rng.choice(_WORDS)}", "timeout": 60}
                    sdb.append_message(
                        sid,
                        "assistant",
                        _text(rng, rng.randint(0, 30)),
                        tool_calls=[
                            {
                                "id": call_id,
                                "call_id": call_id,
                                "response_item_id": f"fc_{call_id[5:]}",
                                "type": "function",
                                "function": {
                                    "name": "terminal",
                                    "arguments": json.dumps(arguments),
                                },
                            }
                        ],
                        finish_reason="tool_calls",
                        reasoning=_text(rng, rng.randint(20, 80)) if call == 0 else None,
                    )
                    sdb.append_message(
                        sid, "tool", _tool_output(rng), tool_call_id=call_id, tool_name="terminal"
                    )
                sdb.append_message(
                    sid,
                    "assistant",
                    _text(rng, rng.randint(40, 400)),
                    finish_reason="stop",
                    reasoning=_text(rng, rng.randint(20, 120)) if turn % 2 else None,
                )
            sdb.end_session(sid, "cli_close")
    finally:
        sdb.close()


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def grow(db: Path, rows: int) -> int:
    """Clone the base's sessions (and their rows) with SQL until ``messages`` holds ``rows``."""
    conn = sqlite3.connect(db)
    try:
        base = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        s_cols = [c for c in _columns(conn, "sessions") if c != "id"]
        m_cols = [c for c in _columns(conn, "messages") if c not in ("id", "session_id")]
        ids = [r[0] for r in conn.execute("SELECT id FROM sessions ORDER BY started_at")]
        copy = 0
        total = base
        with conn:
            while total < rows:
                copy += 1
                for sid in ids:
                    if total >= rows:
                        break
                    new = f"{sid}-c{copy:03d}"
                    conn.execute(
                        f"INSERT INTO sessions (id, {', '.join(s_cols)}) "
                        f"SELECT ?, {', '.join(s_cols)} FROM sessions WHERE id = ?",
                        (new, sid),
                    )
                    cur = conn.execute(
                        f"INSERT INTO messages (session_id, {', '.join(m_cols)}) "
                        f"SELECT ?, {', '.join(m_cols)} FROM messages WHERE session_id = ? "
                        "ORDER BY id",
                        (new, sid),
                    )
                    total += cur.rowcount
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    finally:
        conn.close()


def make_home(work: Path, rows: int, base: Path) -> tuple[Path, int]:
    home = work / f"home-{rows}"
    if not (home / "state.db").exists():
        home.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(base, home / "state.db")
        grow(home / "state.db", rows)
    conn = sqlite3.connect(f"file:{home / 'state.db'}?mode=ro", uri=True)
    count = int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    conn.close()
    return home, count


# --- measuring ---------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            text = (task / "children").read_text()
            out.extend(int(c) for c in text.split())
    except OSError:
        pass
    return out


_TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float | None:
    """A process's own CPU seconds so far (user + system), from ``/proc/<pid>/stat``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK


def _hwm(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class Run:
    """One command's wall time, CPU time (with its waited-for children) and peak RSS (kB) of
    its main process and of its largest child."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.argv = argv
        self.env = env
        self.peaks: dict[int, int] = {}
        self.cpus: dict[int, float] = {}

    def _poll(self, pid: int, done: threading.Event) -> None:
        while not done.is_set():
            stack = [pid]
            while stack:
                p = stack.pop()
                hwm = _hwm(p)
                if hwm is not None:
                    self.peaks[p] = max(self.peaks.get(p, 0), hwm)
                cpu = _cpu(p)
                if cpu is not None:
                    self.cpus[p] = max(self.cpus.get(p, 0.0), cpu)
                stack.extend(_children(p))
            time.sleep(0.003)

    def go(self) -> tuple[float, float, int, int, float]:
        started = time.perf_counter()
        proc = subprocess.Popen(
            self.argv, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        done = threading.Event()
        poller = threading.Thread(target=self._poll, args=(proc.pid, done), daemon=True)
        poller.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        done.set()
        poller.join()
        err = proc.stderr.read().decode() if proc.stderr else ""
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(self.argv)} exited {proc.returncode}: {err[-2000:]}")
        main = self.peaks.pop(proc.pid, 0)
        worker = max(self.peaks.values(), default=0)
        cpu = usage.ru_utime + usage.ru_stime
        # The main process's own share (the rest is its workers'), as last sampled.
        own = min(self.cpus.get(proc.pid, cpu), cpu)
        return wall, cpu, main, worker, own


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


# --- the hermes venv ---------------------------------------------------------------------


def hermes_command() -> list[str]:
    """The real ``hermes`` command, in a venv of its own with every dependency."""
    exe = HERMES_VENV / "bin" / "hermes"
    if not exe.exists():
        print(f"installing hermes-agent=={HERMES_VERSION} into {HERMES_VENV} (once)")
        subprocess.run([sys.executable, "-m", "venv", str(HERMES_VENV)], check=True)
        subprocess.run(
            [
                str(HERMES_VENV / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                f"hermes-agent=={HERMES_VERSION}",
            ],
            check=True,
        )
    return [str(exe)]


def compile_asf() -> None:
    """Write the bytecode of every package the ``asf`` command imports, as installing them
    would: the host's and each plugin's, found where this interpreter imports them from."""
    from importlib.metadata import entry_points

    names = {"asf_core", *(ep.module.split(".")[0] for ep in entry_points(group="asf.formats"))}
    for name in sorted(names):
        spec = importlib.util.find_spec(name)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(folder, quiet=1)


# --- the table ---------------------------------------------------------------------------


def measure(argv: list[str], repeat: int, *, env: dict[str, str] | None = None, before=None):  # type: ignore[no-untyped-def]
    walls, cpus, mains, workers, loads, owns = [], [], [], [], [], []
    for _ in range(repeat):
        if before is not None:
            before()
        loads.append(loadavg())
        wall, cpu, main, worker, own = Run(argv, env).go()
        owns.append(own)
        walls.append(wall)
        cpus.append(cpu)
        mains.append(main)
        workers.append(worker)
    return {
        "wall": statistics.median(walls),
        "cpu": statistics.median(cpus),
        "rss": max(mains) / 1024,
        "worker_rss": max(workers) / 1024,
        "load": statistics.median(loads),
        "own": statistics.median(owns),
    }


def bench_home(
    home: Path, rows: int, work: Path, repeat: int
) -> list[tuple[str, dict[str, float]]]:
    work.mkdir(parents=True, exist_ok=True)
    out = work / "out"
    db = home / "state.db"
    hermes_env = {**os.environ, "HERMES_HOME": str(home)}

    def fresh() -> None:
        shutil.rmtree(out, ignore_errors=True)

    convert = [*ASF, "convert", str(home), "-o", str(out), "--quiet"]
    results = [
        ("asf convert -j 2 (fresh)", measure([*convert, "-j", "2"], repeat, before=fresh)),
        ("asf convert -j 1 (fresh)", measure([*convert, "-j", "1"], repeat, before=fresh)),
        ("asf convert -j 2 (unchanged)", measure([*convert, "-j", "2"], repeat)),
    ]
    snapshot = work / "before-append.db"
    shutil.copyfile(db, snapshot)

    def appended() -> None:
        # The same starting point each time: the converted home, then Hermes appends.
        shutil.copyfile(snapshot, db)
        Path(f"{db}-wal").unlink(missing_ok=True)
        Path(f"{db}-shm").unlink(missing_ok=True)
        subprocess.run([*ASF[:1], "-c", _APPEND, str(db)], check=True)

    shutil.copyfile(snapshot, work / "keep.db")
    results.append(
        (
            "asf convert -j 2 (1 session appended)",
            measure([*convert, "-j", "2"], repeat, before=appended),
        )
    )
    shutil.copyfile(work / "keep.db", db)
    export = work / "export.jsonl"
    results.append(
        (
            "hermes sessions export",
            measure([*hermes_command(), "sessions", "export", str(export)], repeat, env=hermes_env),
        )
    )
    floor = [sys.executable, "-c", _FLOOR, str(db), str(work / "floor.jsonl")]
    results.append(("floor: sqlite3 + json.dumps", measure(floor, repeat)))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[5000, 20000, 80000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--base-sessions", type=int, default=60)
    parser.add_argument("--work", type=Path, help="keep (and reuse) the homes here")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-vs-hermes-"))
    work.mkdir(parents=True, exist_ok=True)
    base = work / "base" / "state.db"
    if not base.exists():
        base.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        write_base(base, args.base_sessions)
        print(f"base written by SessionDB in {time.perf_counter() - started:.0f} s")
    hermes_command()
    compile_asf()
    print(f"{os.cpu_count()} cores; Python {sys.version.split()[0]}; work in {work}")
    header = (
        "| rows | command | wall s | CPU s | CPU µs/row | peak RSS MB (main / worker) "
        "| wall ÷ hermes | CPU ÷ floor | load |"
    )
    lines = [header, "|" + "---|" * 9]
    for rows in args.rows:
        home, count = make_home(work, rows, base)
        mb = (home / "state.db").stat().st_size / 1e6
        print(f"home of {count} rows ({mb:.0f} MB)", flush=True)
        results = dict(bench_home(home, count, work / f"run-{rows}", args.repeat))
        hermes = results["hermes sessions export"]
        floor = results["floor: sqlite3 + json.dumps"]
        for name, r in results.items():
            worker = f" / {r['worker_rss']:.0f}" if r["worker_rss"] else ""
            split = f" ({r['own']:.2f} / {r['cpu'] - r['own']:.2f})" if r["worker_rss"] else ""
            line = (
                f"| {count:,} | {name} | {r['wall']:.2f} | {r['cpu']:.2f}{split} "
                f"| {r['cpu'] / count * 1e6:.0f} | {r['rss']:.0f}{worker} "
                f"| {r['wall'] / hermes['wall']:.2f} | {r['cpu'] / floor['cpu']:.2f} "
                f"| {r['load']:.1f} |"
            )
            lines.append(line)
            print(line, flush=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
