"""``--json`` is for programs: stdout holds one JSON document whatever happens, of the
command's usual shape, and a run stopped by an expected error says why in ``errors`` (and
on stderr, with the same exit code as without ``--json``). Before, ``asf show --json`` and
``asf verify --json`` of a missing path printed nothing on stdout, while ``list`` and
``convert`` printed their document (docs/cli.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fixture_homes import EXAMPLE
from fixture_paths import SHARED

from asf_core.cli.main import ExitCode, main

BASIC = SHARED / "asf" / "vectors" / "testdata" / "sessions" / "basic.jsonl"


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, Any, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, json.loads(captured.out), captured.err


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "empty").mkdir()
    (tmp_path / "not-asf.jsonl").write_text("hello\n")
    shutil.copy(BASIC, tmp_path / "basic.jsonl")
    return {
        "missing": tmp_path / "missing",
        "empty": tmp_path / "empty",
        "not-asf": tmp_path / "not-asf.jsonl",
        "basic": tmp_path / "basic.jsonl",
    }


@pytest.mark.parametrize(
    ("argv", "code", "why"),
    [
        (["verify", "{missing}"], ExitCode.USAGE, "{missing}: no such file or directory"),
        (["verify", "{empty}"], ExitCode.NOTHING, "{empty}: no *.jsonl session files under it"),
        (["show", "{missing}"], ExitCode.USAGE, "{missing}: no such file"),
        (
            ["show", "{not-asf}"],
            ExitCode.USAGE,
            "{not-asf}: not an ASF session file: line 1 is not a session header "
            "(not a JSON object: it begins 'hello')",
        ),
        (["show", "{empty}"], ExitCode.NOTHING, "{empty}: no format plugin recognises it"),
        (["show", "{basic}", "--leaf", "zz"], ExitCode.USAGE, "no entry id starts with 'zz'"),
        (["list", "{basic}", "--since", "soon"], ExitCode.USAGE, None),
        (["convert", "{basic}", "-o", "{basic}"], ExitCode.USAGE, None),
        (["convert", "{empty}", "--prune", "--session", "x"], ExitCode.USAGE, None),
    ],
)
def test_a_failed_command_still_prints_its_json_document(
    argv: list[str],
    code: ExitCode,
    why: str | None,
    places: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    command = argv[0]
    argv = [a.format(**places) for a in argv]
    got, doc, err = _run(capsys, *argv, "--json")
    assert got == code
    line = err.removeprefix("asf: ").removesuffix("\n")
    assert err == f"asf: {line}\n"  # one line, as without --json
    if why is not None:
        assert line == why.format(**places)
    assert doc["errors"] == [line]
    # The usual document's members, every one there, so a program reads it as it reads a
    # success (a successful run of the same command gives the reference).
    ok = {
        "verify": ["verify", places["basic"]],
        "show": ["show", places["basic"]],
        "list": ["list", EXAMPLE],
        "convert": ["convert", EXAMPLE, "-o", places["empty"] / "out"],
    }[command]
    good, reference, _ = _run(capsys, *ok, "--json")
    assert good == ExitCode.OK
    assert list(doc) == list(reference)
    assert reference["errors"] == []
    # The same code and stderr line without --json, and nothing on stdout then.
    assert main(argv) == code
    plain = capsys.readouterr()
    assert (plain.out, plain.err) == ("", err)


def test_verify_json_of_a_failed_path_is_not_ok_and_verifies_nothing(
    places: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc, _ = _run(capsys, "verify", "--json", places["missing"])
    assert code == ExitCode.USAGE
    assert doc == {
        "path": str(places["missing"]),
        "files": 0,
        "ok": False,
        "counts": {},
        "findings": [],
        "errors": [f"{places['missing']}: no such file or directory"],
    }
    # A file that is not ASF is verified: its finding says why, as before; nothing stopped.
    code, doc, err = _run(capsys, "verify", "--json", places["not-asf"])
    assert (code, err, doc["errors"], doc["ok"]) == (ExitCode.USAGE, "", [], False)
    assert [f["code"] for f in doc["findings"]] == ["unreadable"]


def test_a_command_line_that_does_not_parse_prints_usage_not_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["show", "--json", "--leaf"]) == ExitCode.USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "usage: asf show" in captured.err
