"""The incremental promise for Claude Code, as a stateful property: whatever Claude Code does to
its project directories and a user does to the output, in any order, a re-run of
``asf convert`` into the same output writes what a fresh conversion of the same files into an
empty directory writes, byte for byte; and a run right after it reads no transcript.

A hypothesis state machine writes project directories as Claude Code does (sessions started,
prompts and answers appended, a line still being written and later finished, sub-agents and
their ``.meta.json``, tool results beside a session, other files in the project), does what
other programs do (a file deleted, its content rewritten with its size and modification time
set back, a file touched), tampers with the output as users do
(:mod:`output_tampering`), and converts into one output directory, on one worker or two;
every conversion is compared with a fresh one. ``ASF_STATE_EXAMPLES`` and
``ASF_STATE_STEPS`` run it longer; ``ASF_STATE_NO_SHRINK=1`` reports a failure as found.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest
from cc_helpers import last_uuid, watch_reads
from cc_synth import Lines
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule
from output_files import output_files, store_report, take_left
from output_tampering import TAMPERING, tamper_with_file, tamper_with_record
from state_machines import run_machine

from asf_core.cli.main import main
from asf_core.layout import FINGERPRINTS_NAME, REPORT_NAME
from asf_core.pipeline.fingerprints import IGNORED

_PICK = st.integers(0, 1 << 16)
_THEN = st.sampled_from(["convert", "", "convert twice"])
_PROJECTS = ("-home-u-one", "-home-u-two", "-srv-three")


class _Reads:
    """How many transcripts the runs read (their first pass), in the host's process."""

    count = 0


def _stores(out: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted(out.glob("claude-code/*")) if p.is_dir()}


def _first(path: Path) -> dict[str, Any]:
    """The first line of a transcript we wrote (its session and agent ids)."""
    try:
        first: dict[str, Any] = json.loads(path.read_bytes().split(b"\n", 1)[0])
    except ValueError:
        return {}
    return first


class StateMachine(RuleBasedStateMachine):
    reads: type[_Reads]

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="asf-cc-state-"))
        self.home = self.root / "home" / ".claude"
        self.projects = self.home / "projects"
        self.projects.mkdir(parents=True)
        self.out = self.root / "out"
        self.made = 0
        #: Every file a fresh conversion wrote in this example: what a stale file may be.
        self.ever: set[str] = set()
        #: The stores whose ``fingerprints.json`` was damaged (their next run warns of it).
        self.damaged: set[str] = set()
        #: The rest of a line Claude Code is writing, by file.
        self.pending: dict[Path, bytes] = {}
        self.old_reports: dict[str, bytes] = {}
        #: The stores the last fresh conversion found.
        self.live: Collection[str] = ()
        self.fresh_runs = 0

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    # -- helpers ----------------------------------------------------------------------------

    def _id(self) -> str:
        self.made += 1
        return f"00000000-0000-4000-8000-{self.made:012d}"

    def _transcripts(self) -> list[Path]:
        return sorted(self.projects.rglob("*.jsonl"))

    def _sessions(self) -> list[Path]:
        return sorted(self.projects.glob("*/*.jsonl"))

    def _pick(self, paths: list[Path], pick: int) -> Path | None:
        return paths[pick % len(paths)] if paths else None

    def _lines(self, path: Path) -> Lines:
        """New lines for ``path``: its session's (a sub-agent's carry its agent id)."""
        first = _first(path)
        more = {"agentId": first["agentId"], "isSidechain": True} if "agentId" in first else {}
        lines = Lines(session=str(first.get("sessionId") or path.stem), **more)
        lines.n = self.made  # times go on from run to run
        return lines

    def _convert(self, out: Path, jobs: int) -> int:
        return main(["convert", str(self.home), "-o", str(out), "--quiet", "-j", str(jobs)])

    def _check(self, code: int, fresh_code: int, fresh: Path) -> None:
        """Every file the fresh conversion wrote is ours, byte for byte, and each store's
        report says the same but for how the run went; any other file is a stale one (a
        session deleted since is not deleted from the output)."""
        assert code == fresh_code
        mine, new = output_files(self.out, reports=False), output_files(fresh, reports=False)
        for name, data in new.items():
            assert mine.get(name) == data, f"{name} differs from a fresh conversion's"
        assert set(mine) - set(new) <= self.ever
        self.ever |= set(new)
        ours, self.live = _stores(self.out), _stores(fresh).keys()
        for name, store in _stores(fresh).items():
            report, fresh_report = store_report(ours.get(name)), store_report(store)
            if name in self.damaged:
                warned = [f for f in report["findings"] if f.get("code") == IGNORED]
                assert len(warned) == 1
                report["findings"].remove(warned[0])
            if report:  # the stale files, each named in its store's report
                mine_here = ours[name].relative_to(self.out).as_posix() + "/"
                stale = {n for n in set(mine) - set(new) if n.startswith(mine_here)}
                assert take_left(report) == {str(self.out / n) for n in stale}, name
            assert report == fresh_report, name
        self.damaged.clear()

    # -- converting -------------------------------------------------------------------------

    @initialize(sessions=st.integers(1, 3))
    def a_home_converted_once(self, sessions: int) -> None:
        for n in range(sessions):
            self.new_session(n, n, then="")
        self.convert(1, again=False)

    def _then(self, then: str) -> None:
        if then:
            self.convert(1, again=then == "convert twice")

    @rule(jobs=st.sampled_from([1, 1, 2]), again=st.booleans())
    def convert(self, jobs: int, again: bool) -> None:
        """Convert into the output and compare with a fresh conversion; ``again``: a second
        run at once reads no transcript and writes nothing."""
        for name, store in _stores(self.out).items() if self.out.exists() else ():
            if (store / REPORT_NAME).is_file():
                self.old_reports[name] = (store / REPORT_NAME).read_bytes()
        code = self._convert(self.out, jobs)
        self.fresh_runs += 1
        fresh = self.root / f"fresh-{self.fresh_runs}"
        fresh_code = self._convert(fresh, 1)
        self._check(code, fresh_code, fresh)
        shutil.rmtree(fresh, ignore_errors=True)  # nothing found: no output at all
        if again and code == 0:
            before = output_files(self.out, reports=False)
            reads = self.reads.count
            assert self._convert(self.out, 1) == 0
            assert self.reads.count == reads
            assert output_files(self.out, reports=False) == before
            for name in self.live:  # a store no longer found keeps its last report
                report = json.loads((self.out / "claude-code" / name / REPORT_NAME).read_text())
                assert report["files_written"] == 0

    # -- what Claude Code does --------------------------------------------------------------

    @rule(project=st.integers(0, 2), turns=st.integers(0, 2), then=_THEN)
    def new_session(self, project: int, turns: int, then: str) -> None:
        """A session started in one of three projects: a prompt, answers, a tool call."""
        lines = Lines(session=self._id())
        lines.n = self.made
        parent = lines.user(None, f"task {self.made}")
        for n in range(turns):
            call = lines.call(parent, f"msg_{self.made}_{n}", f"toolu_{self.made}_{n}")
            parent = lines.result(call, f"toolu_{self.made}_{n}", "done")
        lines.text(parent, f"msg_{self.made}_end", "finished")
        lines.write(self.projects / _PROJECTS[project])
        self._then(then)

    @rule(pick=_PICK, kind=st.sampled_from(["prompt", "answer", "partial", "finish"]), then=_THEN)
    def append(self, pick: int, kind: str, then: str) -> None:
        """A prompt or an answer appended to a transcript; or half a line (Claude Code still
        writing it), or the rest of it."""
        path = self._pick(self._transcripts(), pick)
        if path is None:
            return
        rest = self.pending.pop(path, None)
        if rest is not None:  # a line is being written: nothing else until it is whole
            with path.open("ab") as f:
                f.write(rest)
        elif kind != "finish":
            lines = self._lines(path)
            parent = last_uuid(path)
            if kind == "answer":
                lines.text(parent, f"msg_{self._id()[-6:]}", "more")
            else:
                lines.user(parent, f"prompt {self._id()}")
            data = lines.bytes()
            if kind == "partial":
                data, self.pending[path] = data[: len(data) // 2], data[len(data) // 2 :]
            with path.open("ab") as f:
                f.write(data)
        self._then(then)

    @rule(pick=_PICK, meta=st.sampled_from(["", "Explore", "general-purpose"]), then=_THEN)
    def sub_agent(self, pick: int, meta: str, then: str) -> None:
        """A sub-agent's transcript started beside a session (with its ``.meta.json``); or,
        ``pick`` naming a sub-agent, its ``.meta.json`` written."""
        path = self._pick(self._transcripts(), pick)
        if path is None:
            return
        if "agentId" in _first(path):
            if meta:
                path.with_name(path.stem + ".meta.json").write_text(json.dumps({"agentType": meta}))
            self._then(then)
            return
        agent = f"a{self.made:04d}"
        lines = Lines(session=path.stem, agentId=agent, isSidechain=True)
        lines.n = self.made
        lines.text(lines.user(None, "look around"), f"msg_{self._id()[-6:]}", "looked")
        written = lines.write(path.with_suffix("") / "subagents", f"agent-{agent}")
        if meta:
            written.with_name(written.stem + ".meta.json").write_text(
                json.dumps({"agentType": meta})
            )
        self._then(then)

    @rule(pick=_PICK, beside=st.booleans(), then=_THEN)
    def other_file(self, pick: int, beside: bool, then: str) -> None:
        """A file that is not a transcript: a tool result in a session's directory, or a file
        in the project directory."""
        path = self._pick(self._sessions(), pick)
        if path is None:
            return
        where = path.with_suffix("") / "tool-results" if beside else path.parent
        where.mkdir(parents=True, exist_ok=True)
        (where / f"r{self._id()[-6:]}.txt").write_text("output")
        self._then(then)

    @rule(
        pick=_PICK,
        how=st.sampled_from(["delete", "delete_meta", "rewrite", "touch"]),
        then=_THEN,
    )
    def other_program(self, pick: int, how: str, then: str) -> None:
        """A transcript deleted (or a ``.meta.json``), its content rewritten with its size and
        modification time set back, or its time moved on."""
        path = self._pick(self._transcripts(), pick)
        if path is None:
            return
        st_ = path.stat()
        if how == "delete":
            path.unlink()
            self.pending.pop(path, None)
        elif how == "delete_meta":
            path.with_name(path.stem + ".meta.json").unlink(missing_ok=True)
        elif how == "rewrite":
            data = path.read_bytes()
            at = data.find(b'"text": "')
            if at >= 0:
                at += len(b'"text": "')
                path.write_bytes(data[:at] + data[at : at + 1].swapcase() + data[at + 1 :])
                os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns))
        else:
            later = st_.st_mtime_ns + 1_000_000_000
            os.utime(path, ns=(later, later))
        self._then(then)

    # -- what users do to the output --------------------------------------------------------

    @rule(how=st.sampled_from(TAMPERING), pick=_PICK, then=_THEN)
    def user_tampers(self, how: str, pick: int, then: str) -> None:
        """A user does ``how`` to a session file ``pick`` chooses, or to a store's record."""
        stores = list(_stores(self.out).items()) if self.out.exists() else []
        if not stores:
            return
        name, store = stores[pick % len(stores)]
        files = sorted(store.rglob("*.jsonl"))
        if how.endswith(("_fingerprints", "_report")):
            action, which = how.split("_")
            record = store / (FINGERPRINTS_NAME if which == "fingerprints" else REPORT_NAME)
            if record.exists():
                damaged = tamper_with_record(record, action, self.old_reports.get(name, b""))
                if damaged is True:
                    self.damaged.add(name)
                elif damaged is False:
                    self.damaged.discard(name)
        elif files:
            tamper_with_file(files[pick % len(files)], files[(pick + 1) % len(files)], how)
        self._then(then)


@pytest.mark.slow
def test_an_incremental_run_writes_what_a_fresh_one_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def counted(path: Path) -> None:
        _Reads.count += 1

    watch_reads(monkeypatch, counted)
    monkeypatch.setattr(StateMachine, "reads", _Reads, raising=False)
    run_machine(StateMachine)
