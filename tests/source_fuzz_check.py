"""Mutation fuzzing of Claude Code transcripts and Codex rollouts, the check: what a user runs
on a hostile home, and the promises each run must keep.

:func:`check` writes a case (:mod:`source_fuzz`) as a home and runs, in this process with
stdout and stderr as strict UTF-8 (:func:`asf_fuzz_check.run_cli`): ``asf convert HOME -o OUT
--json -j 1``, again with ``-j 2`` (some cases as a subprocess under a memory limit, the
command as a user starts it), ``asf verify OUT``, ``asf list HOME --json``, and ``asf show``
and ``asf export --to atif|otel|markdown|html`` of one output file. It returns what went wrong
(empty when nothing did): an exception or a traceback; an exit code that is not 0 (4 for a
home with nothing to convert, 2 for a file the case made unreadable); a stderr line that is
not one ``asf:`` line; a store that did not complete; an output that ``asf verify`` finds
errors in; a source line (not blank) in no entry's ``line`` and no stray or dropped finding;
``-j 1`` and ``-j 2`` output that differ; a temporary file left; a source file changed; a case
slower than its bound.
"""

from __future__ import annotations

import json
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from asf_fuzz_check import RAW_CONTROL, Hang, run_cli, time_bound
from source_fuzz import Case, lines_of

__all__ = ["check"]

#: The member an output entry names its source line in, by format.
_MEMBER = {"claude-code": "claude-code", "codex": "codex"}
#: Memory a subprocess conversion may take (a crafted file must not blow it up).
_MEMORY = 2 << 30
_MAIN = "import sys; from asf_core.cli.main import main; sys.exit(main())"


def _run(problems: list[str], argv: list[str], codes: set[int]) -> tuple[int, str]:
    code, out, err = run_cli(*argv)
    shown = " ".join(a for a in argv[:2] if not a.startswith("/"))
    if code not in codes:
        problems.append(f"asf {shown}: exit {code}: {err.strip()[-600:]}")
    if "Traceback" in err:
        problems.append(f"asf {shown}: traceback: {err[-1500:]}")
    for line in err.splitlines():
        if line and not line.startswith("asf: "):
            problems.append(f"asf {shown}: stderr line not an 'asf:' line: {line[:200]!r}")
            break
    bad = RAW_CONTROL.search(err)
    if bad:
        problems.append(f"asf {shown}: raw {bad.group()!r} on stderr")
    return code, out


def _tree(root: Path) -> dict[str, bytes]:
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _accounting(store: dict[str, Any], case: Case) -> list[str]:
    """Every non-blank line of every regular source file of the store is in an entry's
    ``line`` or named by a stray or dropped finding."""
    fmt = store["format"]
    base = Path(store["path"])
    if base.is_file():
        base = base.parent
    member = _MEMBER.get(fmt)
    if member is None:
        return [f"store claimed by {fmt}"]
    seen: set[tuple[str, int]] = set()
    whole: set[str] = set()
    for rel in store["files"].values():
        path = Path(store["output"]) / rel
        text = path.read_bytes().split(b"\n")
        header = json.loads(text[0])
        name = header.get(member, {}).get("file")
        for line in text[1:]:
            if line:
                entry = json.loads(line)
                number = entry.get(member, {}).get("line")
                if isinstance(number, int):
                    seen.add((name, number))
    for finding in store["strays"] + store["dropped"]:
        unit = finding.get("unit") or ""
        head, _, tail = unit.rpartition(":")
        if head and tail.isdigit():
            seen.add((head, int(tail)))
        else:
            whole.add(unit)
    missing = []
    special = case.special[0] if case.special else None
    for rel, data in case.files.items():
        if rel == special or not rel.endswith(".jsonl"):
            continue  # a .meta.json is no transcript: its header's, or a dropped finding
        path = Path(case.home) / rel
        try:
            name = str(path.relative_to(base))
        except ValueError:
            continue  # another store's file
        if name in whole:
            continue
        for n, line in enumerate(lines_of(data), 1):
            if line.strip() and (name, n) not in seen:
                missing.append(f"{name}:{n}")
    return [f"lines neither in the output nor in the report: {missing[:5]}"] if missing else []


def _subprocess_convert(home: Path, out: Path, seconds: float) -> tuple[list[str], str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (_MEMORY, _MEMORY))

    try:
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                _MAIN,
                "convert",
                str(home),
                "-o",
                str(out),
                "--json",
                "-j",
                "2",
            ],
            capture_output=True,
            text=True,
            timeout=seconds,
            preexec_fn=limit,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return [f"subprocess convert: no result in {seconds:g} s"], ""
    problems = []
    if "Traceback" in done.stderr or "MemoryError" in done.stderr:
        problems.append(f"subprocess convert: {done.stderr[-1500:]}")
    return problems, done.stdout


def _convert_twice(case: Case, root: Path, *, as_process: bool, seconds: float) -> list[str]:
    problems: list[str] = []
    home, one, two = Path(case.home), root / "out1", root / "out2"
    codes = {0, 2, 4} if case.special else {0, 4}
    _, out = _run(problems, ["convert", str(home), "-o", str(one), "--json", "-j", "1"], codes)
    doc = json.loads(out) if out.strip() else {"stores": []}
    for store in doc["stores"]:
        if not store["complete"]:
            problems.append(f"store {store['format']} incomplete: {store['error']}")
            continue
        for finding in store["strays"]:
            if "not converted" in finding["message"] or "failed" in finding["message"]:
                problems.append(f"safety net: {finding['message'][:300]}")
        problems.extend(_accounting(store, case))
    if as_process:
        more, _ = _subprocess_convert(home, two, seconds)
        problems.extend(more)
    else:
        _run(problems, ["convert", str(home), "-o", str(two), "--json", "-j", "2"], codes)
    first, second = _tree(one), _tree(two)
    for name in sorted(set(first) | set(second)):
        if name.endswith("fingerprints.json"):
            continue  # the stamps of the files written: another inode and time each run
        a = first.get(name, b"").replace(str(one).encode(), b"OUT")
        b = second.get(name, b"").replace(str(two).encode(), b"OUT")
        if a != b:
            problems.append(f"-j 1 and -j 2 differ: {name}")
            break
    left = [n for n in [*first, *second] if ".asf-tmp-" in n]
    if left:
        problems.append(f"temporary files left: {left[:3]}")
    return problems


def _readers(case: Case, root: Path) -> list[str]:
    """verify, list, show and export, on the output of the first conversion."""
    problems: list[str] = []
    one = root / "out1"
    files = sorted(p for p in one.rglob("*.jsonl") if p.is_file()) if one.exists() else []
    if files:
        code, out = _run(problems, ["verify", str(one)], {0, 1})
        if code == 1:
            errors = [line for line in out.splitlines() if ": error:" in line]
            problems.append(f"asf verify: {errors[:3]}")
    listed = {0, 4} | ({2} if case.special else set())
    _, out = _run(problems, ["list", str(case.home), "--json"], listed)
    rng = random.Random(case.number)
    ids = [
        s["id"] for store in json.loads(out or "{}").get("stores", []) for s in store["sessions"]
    ]
    if ids:  # a session of the home shown as a transcript, converted in memory
        picked_id = rng.choice(ids)
        argv = ["show", str(case.home), "--session", picked_id, "--format", "text"]
        _run(problems, argv, {0, 2, 4})
    if not files:
        return problems
    picked = str(rng.choice(files))
    _run(problems, ["show", picked], {0})
    # 4: a file of a header alone (an empty transcript) has no conversation to show
    _run(problems, ["show", "--format", "markdown", picked], {0, 4})
    for kind in ("atif", "otel", "markdown", "html"):
        out = str(root / f"export.{kind}")
        _run(problems, ["export", "--to", kind, picked, "-o", out], {0, 4})
    return problems


def check(case: Case, root: Path, *, as_process: bool = False, seconds: float = 30.0) -> list[str]:
    """Everything wrong with how asf treats the home of ``case`` (written under ``root``)."""
    case.home = str(root / "home")
    case.write(Path(case.home))
    before = _tree(Path(case.home))
    started = time.monotonic()
    try:
        with time_bound(seconds):
            problems = _convert_twice(case, root, as_process=as_process, seconds=seconds)
            problems += _readers(case, root)
    except Hang as exc:
        problems = [f"hang: {exc}"]
    except Exception as exc:
        problems = [f"raised {type(exc).__name__}: {str(exc)[:300]}"]
    took = time.monotonic() - started
    if took > seconds / 2:
        problems.append(f"slow: {took:.1f} s")
    if _tree(Path(case.home)) != before:
        problems.append("a source file changed")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    return problems
