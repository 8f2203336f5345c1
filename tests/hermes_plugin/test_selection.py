"""Picking sessions on every fixture home and the example home, as a user does: ``asf list``,
``asf convert`` and ``asf show`` with ``--session``, ``--since``, ``--until``, ``--source``,
``--title``, ``--cwd``, ``--model``, ``--min-rows`` and ``--limit``; and proof that the
messages of unselected sessions are never read."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fixture_homes import HOMES, copy_home, home_ids

from asf_core.cli.main import ExitCode, main
from asf_core.reader import parse_session, read_session
from asf_core.verify.session import verify_path
from hermes_plugin.source import opening


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    into = tmp_path_factory.mktemp("homes")
    return {home: copy_home(home, into) for home in HOMES}


def _run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    got = capsys.readouterr()
    return code, got.out, got.err


def _listed(
    capsys: pytest.CaptureFixture[str], home: Path, *options: object
) -> list[dict[str, Any]]:
    code, out, err = _run(capsys, "list", home, "--json", *options)
    assert code == ExitCode.OK, err
    return [s for store in json.loads(out)["stores"] for s in store["sessions"]]


def _ids(sessions: list[dict[str, Any]]) -> set[str]:
    return {s["id"] for s in sessions}


def _started(session: dict[str, Any]) -> datetime | None:
    return datetime.fromisoformat(session["started"]) if session.get("started") else None


@pytest.mark.parametrize("home", HOMES, ids=home_ids())
def test_every_option_narrows_list_as_documented(
    home: Path, copies: dict[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    copy = copies[home]
    everything = _listed(capsys, copy)
    assert len(everything) > 5
    by_id = {s["id"]: s for s in everything}
    dated = sorted((s for s in everything if _started(s)), key=lambda s: _started(s) or 0)
    middle = _started(dated[len(dated) // 2])
    assert middle is not None
    now = datetime.now(UTC)
    cases: dict[tuple[str, ...], set[str]] = {
        ("--session", "fx-comp"): {i for i in by_id if i.startswith("fx-comp")},
        ("--session", "fx-plain", "--session", "fx-tools"): {"fx-plain", "fx-tools"} & set(by_id),
        ("--source", "telegram"): {i for i, s in by_id.items() if s["source"] == "telegram"},
        ("--source", "cli", "--source", "cron"): {
            i for i, s in by_id.items() if s["source"] in ("cli", "cron")
        },
        ("--title", "PIZZA"): {
            i for i, s in by_id.items() if "pizza" in (s["title"] or "").lower()
        },
        ("--cwd", "/home/user"): {
            i for i, s in by_id.items() if (s["cwd"] or "").startswith("/home/user")
        },
        ("--model", "SONNET"): {
            i for i, s in by_id.items() if "sonnet" in (s["model"] or "").lower()
        },
        ("--min-rows", "5"): {i for i, s in by_id.items() if (s["rows"] or 0) >= 5},
        ("--since", middle.isoformat()): {
            i for i, s in by_id.items() if (t := _started(s)) is not None and t >= middle
        },
        ("--until", middle.isoformat()): {
            i for i, s in by_id.items() if (t := _started(s)) is not None and t < middle
        },
        ("--since", "7d"): {
            i
            for i, s in by_id.items()
            if (t := _started(s)) is not None and t >= now - timedelta(days=7, minutes=1)
        },
        ("--limit", "3"): {s["id"] for s in sorted(dated, key=_started, reverse=True)[:3]},
        ("--source", "cli", "-n", "2"): {
            s["id"] for s in sorted(dated, key=_started, reverse=True) if s["source"] == "cli"
        },
    }
    for options, expected in cases.items():
        got = _ids(_listed(capsys, copy, *options))
        if options[:2] == ("--since", "7d"):  # the clock moved between the two calls
            assert got <= expected, options
            continue
        if options[-2:] == ("-n", "2"):
            newest = sorted((by_id[i] for i in expected), key=_started, reverse=True)[:2]
            expected = {s["id"] for s in newest}
        assert got == expected, options
    assert any(cases[k] for k in cases if k[0] in ("--title", "--cwd", "--source"))


@pytest.mark.parametrize("home", HOMES, ids=home_ids())
def test_list_for_a_terminal(
    home: Path, copies: dict[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = _run(capsys, "list", copies[home])
    assert code == ExitCode.OK
    lines = out.splitlines()
    assert lines[0].split()[0] == "ID"
    assert {"AGE", "ROWS", "RELATION", "TITLE"} <= set(lines[0].split())
    assert [line for line in lines if len(line) > 80] == []
    assert "COUNTS" not in out
    assert "active=" not in out
    assert any('"' in line for line in lines[1:])  # an untitled session shows its first words
    ids = [line.split()[0] for line in lines[1:]]
    listed = {s["id"]: s for s in _listed(capsys, copies[home])}
    starts = [_started(listed[i]) for i in ids]
    known = [s for s in starts if s is not None]
    assert known == sorted(known, reverse=True)  # newest first


@pytest.mark.parametrize("home", HOMES, ids=home_ids())
def test_convert_and_show_a_picked_session(
    home: Path, copies: dict[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    copy = copies[home]
    everything = _listed(capsys, copy)
    for session in everything:
        code, out, err = _run(capsys, "show", copy, "--session", session["id"])
        assert code == ExitCode.OK, (session["id"], err)
        assert out.startswith("session "), session["id"]
    # a continuation segment converts with its whole chain, a sub-agent with its parent
    out = tmp_path / "out"
    code, _, err = _run(capsys, "convert", copy, "--session", "fx-comp-2", "-o", out)
    assert code == ExitCode.OK, err
    (only,) = sorted(out.rglob("*.jsonl"))
    units = only.read_text(encoding="utf-8")
    assert all(f"sessions/fx-comp-{n}" in units for n in (1, 2, 3))
    if "fx-delegate-child" in _ids(everything):
        out2 = tmp_path / "out2"
        code, _, err = _run(capsys, "convert", copy, "--session", "fx-delegate-child", "-o", out2)
        assert code == ExitCode.OK, err
        headers = [read_session(p).header for p in out2.rglob("*.jsonl")]
        assert len(headers) == 2
        assert sum(h.parent_session is not None for h in headers) == 1
    assert verify_path(out) == []
    report = json.loads(next(out.rglob("report.json")).read_text(encoding="utf-8"))
    assert report["sessions_read"] == 1
    assert report["strays"] == []
    # the other options pick for convert as for list
    out3 = tmp_path / "out3"
    code, _, err = _run(capsys, "convert", copy, "--source", "cli", "--limit", "2", "-o", out3)
    assert code == ExitCode.OK, err
    assert 1 <= len(list(out3.rglob("*.jsonl"))) <= 2 + 1  # a sub-agent comes along


@pytest.mark.parametrize("home", HOMES, ids=home_ids())
def test_convert_to_stdout_and_show_from_stdin(
    home: Path,
    copies: dict[Path, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    copy = copies[home]
    code, out, err = _run(capsys, "convert", copy, "--session", "fx-plain", "-o", "-")
    assert code == ExitCode.OK, err
    session = parse_session(out.encode())
    assert session.problems == []
    assert len(session.entries) > 3
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(out.encode())))
    code, shown, err = _run(capsys, "show", "-", "--format", "text")
    assert code == ExitCode.OK, err
    assert "Capitals" in shown or "capital" in shown.lower()
    code, out, err = _run(capsys, "convert", copy, "-o", "-")
    assert (code, out) == (ExitCode.USAGE, "")
    assert "sessions are selected" in err
    assert "--session" in err
    code, out, err = _run(capsys, "convert", copy, "--session", "fx-comp", "-o", "-")
    assert (code, out) == (ExitCode.USAGE, "")
    assert "'fx-comp' names 3 sessions" in err
    code, out, err = _run(capsys, "convert", copy, "--session", "nope", "-o", "-")
    assert (code, out) == (ExitCode.NOTHING, "")
    assert "no session id starts with 'nope'" in err


def test_one_id_in_two_copies_of_a_home_asks_for_the_store_not_more_of_the_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A home and a copy of it (a backup beside it) both hold fx-plain: show and convert
    -o - of the whole id named both sessions and said 'pick one with --session ID', which no
    --session can do; they say the stores, and naming one of them shows its session."""
    example = next(home for home in HOMES if home.name == "hermes-0.19.0")
    for name in ("home", "backup"):
        shutil.copytree(example, tmp_path / name, ignore=shutil.ignore_patterns("*.db-*"))
    stores = f"{tmp_path / 'backup' / 'state.db'}, {tmp_path / 'home' / 'state.db'}"
    for command in (["show"], ["convert", "-o", "-"]):
        code, out, err = _run(capsys, *command, tmp_path, "--session", "fx-plain")
        assert (code, out) == (ExitCode.USAGE, "")
        assert err == (
            f"asf: session fx-plain is in 2 stores ({stores}); name the one to read as PATH\n"
        )
    code, out, _ = _run(capsys, "show", tmp_path / "home", "--session", "fx-plain")
    assert code == ExitCode.OK
    assert "(home fx-plain)" in out.splitlines()[0]


def test_convert_to_stdout_refuses_what_only_a_report_gives(
    copies: dict[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``-o -`` writes no report (docs/cli.md), so ``--report FILE`` with it is refused as
    ``--json`` is, before anything is converted; it was silently ignored (exit 0, no FILE)."""
    copy = next(c for home, c in copies.items() if home.name == "hermes-0.19.0")
    report = tmp_path / "report.json"
    for option in (["--json"], ["--report", str(report)]):
        code, out, err = _run(capsys, "convert", copy, "--session", "fx-plain", "-o", "-", *option)
        assert (code, out) == (ExitCode.USAGE, "")
        assert err == (
            "asf: -o - writes the session itself to stdout: it cannot be combined with "
            f"{option[0]}\n"
        )
    assert not report.exists()


def test_convert_to_stdout_names_the_sub_agents_it_leaves_out(
    copies: dict[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the picked session goes to stdout: its sub-agent sessions are named on stderr
    (``-o DIR`` writes them too), unless ``--quiet``."""
    copy = next(c for home, c in copies.items() if home.name == "hermes-0.19.0")
    code, out, err = _run(capsys, "convert", copy, "--session", "fx-delegate-parent", "-o", "-")
    assert code == ExitCode.OK, err
    written = parse_session(out.encode()).header.id
    assert err.startswith("asf: 1 sub-agent session not written (")
    assert err.rstrip().endswith("): -o DIR writes them too")
    assert written not in err  # it names the sub-agent's session, not the one written
    quiet = _run(capsys, "convert", copy, "--session", "fx-delegate-parent", "-o", "-", "--quiet")
    assert quiet == (ExitCode.OK, out, "")


def test_convert_to_stdout_of_a_sub_agent_names_its_parent_as_no_sub_agent(
    copies: dict[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Picking a sub-agent converts the conversation that started it too: stderr names that
    session as the other session it is, not as a sub-agent of the one written."""
    copy = next(c for home, c in copies.items() if home.name == "hermes-0.19.0")
    code, out, err = _run(capsys, "convert", copy, "--session", "fx-delegate-child", "-o", "-")
    assert code == ExitCode.OK, err
    written = parse_session(out.encode()).header
    assert written.parent_session is not None  # the sub-agent itself went to stdout
    assert err == (
        f"asf: 1 other session converted with it not written ({written.parent_session}): "
        "-o DIR writes them too\n"
    )


def test_a_damaged_record_of_the_last_run_is_a_warning_on_stderr(
    copies: dict[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Everything is converted again (the record cannot be trusted), and the user is told."""
    copy = next(iter(copies.values()))
    out = tmp_path / "out"
    assert _run(capsys, "convert", copy, "-o", out, "--quiet")[0] == ExitCode.OK
    for record in out.rglob("fingerprints.json"):
        record.write_text("{not json")
    code, _, err = _run(capsys, "convert", copy, "-o", out, "--quiet")
    assert code == ExitCode.OK
    assert err.startswith("asf: warning: ")
    assert "fingerprints.json" in err


def test_unselected_sessions_are_never_read(
    copies: dict[Path, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Every statement SQLite runs is logged: with ``--session fx-plain`` no statement reads a
    message row of another session (the one count is restricted to the candidates)."""
    home = next(h for h in HOMES if h.name == "hermes-0.19.0")
    statements: list[str] = []
    opened = opening.ReadOnlyConnection._open

    def traced(self: opening.ReadOnlyConnection, path: Path, options: str) -> sqlite3.Connection:
        conn = opened(self, path, options)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(opening.ReadOnlyConnection, "_open", traced)
    code, _, err = _run(
        capsys, "convert", copies[home], "--session", "fx-plain", "-o", tmp_path / "o"
    )
    assert code == ExitCode.OK, err
    reads = [s for s in statements if "FROM messages" in s or 'FROM "messages"' in s]
    assert reads, "the messages of the selected session were read"
    for sql in reads:
        assert "'fx-plain'" in sql, sql  # every read of messages names the session
        others = [f"'{sid}'" for sid in ("fx-tools", "fx-comp-1", "fx-gateway", "fx-rewind")]
        assert not any(o in sql for o in others), sql
    assert not any("DISTINCT" in s for s in reads)  # no orphan scan over every row
