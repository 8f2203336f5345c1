"""The SQL damage fuzzer: the Hermes fixture databases with hostile values written into them,
converted and listed through ``asf``; whatever the damage, it must cost only itself.

A *case* is one fixture database (a *seed*), copied, in one of two variants (``typed``: its
own schema, so SQLite's column affinities and constraints apply, as for a foreign writer
using Hermes' schema; ``untyped``: every table rebuilt without declared types or constraints,
so any SQLite value fits any column, ids included), with one to three *mutations*:

* ``cell``: a hostile value in one column of one row of ``sessions``, ``messages``,
  ``session_model_usage``, ``async_delegations``, ``system_prompts`` or ``schema_version``:
  NULL, integers (64-bit extremes), floats (infinities, NaN, -0.0), text (empty, control
  characters, bidirectional controls, invalid UTF-8, long), blobs, JSON edge cases (1e400,
  huge integers, nesting past the recursion limit, lone surrogates, duplicate or colliding
  keys, wrong shapes, the ``\\x00json:`` prefix), other rows' ids;
* ``leaf``: one value inside a JSON cell replaced by a hostile JSON value (a wrong shape);
* ``lineage``: parent links made into cycles, self-links, dangling links, a chain of new
  sub-agent or continuation sessions hundreds deep;
* ``delete`` and ``insert``: a row removed, a hostile message row added;

and, in one case of five, hostile *folders* beside the damaged home (a tree 1000 levels deep,
names with control characters or bytes that are not UTF-8, a link loop, a FIFO, directory or
empty file named ``state.db``, a directory that cannot be entered), the folder holding them
converted too: the home must convert exactly as on its own.

Each case runs ``asf convert`` and ``asf list`` (in process; some cases as a subprocess) and
checks: no traceback; exit 0; the store completes; no conversation needed the safety net that
keeps the rows of one that fails (a bug, even though it cost only that conversation); every file
written verifies; every message row of the damaged database is in the output (rows in = rows in
the output + orphans) and the report's accounting says so; ``list``'s strays are ``convert``'s;
and every conversation the damage cannot reach (see :func:`hermes_damage.affected`) is byte-
identical to the undamaged conversion. A case that breaks a rule is described by its seed,
variant and mutations, and with ``ASF_FUZZ_SAVE=DIR`` its damaged database is kept there.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attrs import define, field
from hermes_damage import DATABASES, affected, asf, check_accounting, copy_database, files_of
from hermes_hostile_values import build_folders, remove_tree
from hermes_sql_damage import Case, apply, plan
from hermes_sql_seeds import Seed, prepare, read_seed

from asf_core.verify.session import verify_path

__all__ = ["Fuzzer"]


class Hang(Exception):
    """A case ran past its time bound."""


@contextmanager
def _bounded(seconds: float) -> Iterator[None]:
    def expired(signum: int, frame: Any) -> None:
        raise Hang(f"no answer within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@define
class Fuzzer:
    """Runs cases under ``root``; undamaged conversions are made once per seed and variant."""

    root: Path
    seeds: list[Seed] = field(factory=list)
    baselines: dict[tuple[str, str], dict[str, bytes]] = field(factory=dict)
    bound: float = 60.0
    save: Path | None = None

    @classmethod
    def make(cls, root: Path) -> Fuzzer:
        """A fuzzer over private copies of the fixture databases (SQLite never opens the
        shared ones)."""
        save = os.environ.get("ASF_FUZZ_SAVE")
        fuzzer = cls(root=root, save=Path(save) if save else None)
        for release, rel in DATABASES:
            copy = root / "seeds" / release.name
            copy_database(release, rel, copy)
            fuzzer.seeds.append(read_seed(copy, rel))
        return fuzzer

    def baseline(self, seed: Seed, variant: str) -> dict[str, bytes]:
        key = (seed.name, variant)
        if key not in self.baselines:
            where = (
                self.root / "baseline" / seed.release.name / seed.rel.replace("/", "_") / variant
            )
            db = prepare(seed.release, seed.rel, variant, where / "home")
            run = asf("convert", db, "-o", where / "out")
            assert run.code == 0, run.err
            self.baselines[key] = files_of(run.store)
        return self.baselines[key]

    def run(self, number: int, *, subprocess_run: bool = False) -> list[str]:
        """Run case ``number``; the rules it breaks (empty: none)."""
        case = plan(number, self.seeds)
        baseline = self.baseline(case.seed, case.variant)
        where = self.root / f"case-{number}"
        db = prepare(case.seed.release, case.seed.rel, case.variant, where / "home")
        apply(case, db)
        try:
            with _bounded(self.bound):
                problems = self._check(case, db, where / "out", baseline, subprocess_run)
        except Hang as exc:
            problems = [str(exc)]
        except AssertionError as exc:
            problems = [f"assertion: {exc}"]
        except Exception as exc:  # the checks themselves met something: show it, go on
            problems = [f"while checking: {type(exc).__name__}: {exc}"]
        if problems:
            problems.insert(0, case.describe())
            if self.save is not None:
                self.save.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(db, self.save / f"case-{number}.db")
        remove_tree(where)
        return problems

    def _check(
        self, case: Case, db: Path, out: Path, baseline: dict[str, bytes], as_process: bool
    ) -> list[str]:
        problems: list[str] = []
        if as_process:
            started = time.monotonic()
            done = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import sys; from asf_core.cli.main import main; sys.exit(main())",
                    "convert",
                    str(db),
                    "-o",
                    str(out),
                    "--json",
                ],
                capture_output=True,
                text=True,
                timeout=self.bound,
                env={**os.environ, "ASF_PLUGINS": "hermes"},
                check=False,
            )
            if "Traceback" in done.stderr or done.returncode != 0:
                return [f"subprocess convert: exit {done.returncode}: {done.stderr[-2000:]}"]
            report = json.loads(done.stdout)["stores"][0]
            problems.extend(self._files(case, db, report, baseline))
            if time.monotonic() - started > self.bound:
                problems.append("subprocess convert too slow")
            return problems
        run = asf("convert", db, "-o", out)
        if "Traceback" in run.err or run.code != 0 or not run.doc:
            return [f"convert: exit {run.code}: {run.err[-2000:]}"]
        report = run.store
        if not report["complete"]:
            problems.append(f"convert: store incomplete: {report.get('error')}")
        problems.extend(self._files(case, db, report, baseline))
        if case.folders:
            problems.extend(self._tree(case, db, report))
        listed = asf("list", db)
        if "Traceback" in listed.err or listed.code != 0:
            problems.append(f"list: exit {listed.code}: {listed.err[-2000:]}")
        else:
            strays = listed.store["findings"].get("stray", 0)
            converted = {s["unit"] for s in report["strays"]}
            if len(converted) != len(report["strays"]):
                problems.append("convert: a row is counted as a stray more than once")
            if strays > len(converted):
                problems.append(f"list: {strays} strays, convert: {len(converted)}")
        return problems

    def _tree(self, case: Case, db: Path, report: dict[str, Any]) -> list[str]:
        """Convert the folder holding the home, hostile folders beside it: the home converts
        exactly as on its own; a folder that cannot be searched or a file that is no database
        costs only itself (exit 0, or 2 for a state.db that cannot be read)."""
        tree = db.parent.parent
        build_folders(tree, case.folders)
        run = asf("convert", tree, "-o", tree.parent / "tree-out")
        if "Traceback" in run.err or run.code not in (0, 2):
            return [f"convert of the tree: exit {run.code}: {run.err[-2000:]}"]
        mine = [s for s in run.doc["stores"] if s["path"] == str(db)]
        if len(mine) != 1 or not mine[0]["complete"]:
            return [f"convert of the tree: the home is not converted whole: {run.err[-500:]}"]
        if files_of(mine[0]) != files_of(report):
            return ["convert of the tree: the home's files differ from its own conversion"]
        return []

    def _files(
        self, case: Case, db: Path, report: dict[str, Any], baseline: dict[str, bytes]
    ) -> list[str]:
        problems: list[str] = []
        # The safety net caught an error: the store went on, but it is a bug to fix.
        problems.extend(
            f"{s['unit']}: {s['message']}"
            for s in report["strays"]
            if s["message"].startswith("conversation not converted")
        )
        files = files_of(report)
        try:
            check_accounting(db, report, files)
        except AssertionError as exc:
            problems.append(f"accounting: {exc}")
        reach = set(baseline) if case.everything else affected(baseline, case.units)
        reach.add("_orphans")
        for name, data in baseline.items():
            if name not in reach and files.get(name) != data:
                problems.append(f"untouched conversation {name} changed")
        output = Path(report["output"])
        changed = [n for n in files if baseline.get(n) != files[n]]
        for name in changed:
            path = output / report["files"][name]
            errors = [f for f in verify_path(path) if f.severity == "error"]
            if errors:
                problems.append(f"{name}: verify: {errors[0].code}: {errors[0].message}")
        return problems
