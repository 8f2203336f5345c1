"""``asf show --session ID`` without a PATH reads the user's own stores, as ``asf list`` and
``asf convert`` do: what it shows is what naming the store would show."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fixture_homes import EXAMPLE
from fixture_paths import CODEX_HOME

from asf_core.cli.main import ExitCode, main


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory holding a Hermes home (the example) and a Codex home, and no
    variable pointing anywhere else."""
    shutil.copytree(EXAMPLE, tmp_path / ".hermes")
    shutil.copytree(CODEX_HOME / ".codex", tmp_path / ".codex")
    for name in ("HERMES_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def _show(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main(["show", *map(str, argv)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("store", "session"),
    [(".hermes", "fx-comp-2"), (".codex", "019b64e5")],
)
@pytest.mark.parametrize("form", ["text", "tree"])
def test_a_picked_session_of_your_own_stores_is_shown_as_its_store_shows_it(
    home: Path, capsys: pytest.CaptureFixture[str], store: str, session: str, form: str
) -> None:
    named = _show(capsys, home / store, "--session", session, "--format", form)
    assert named[0] == ExitCode.OK, named[2]
    assert named[1].count("\n") > 5
    assert _show(capsys, "--session", session, "--format", form) == named


def test_without_a_path_or_a_pick_it_says_what_to_give(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _show(capsys)
    assert (code, out) == (ExitCode.USAGE, "")
    assert err.startswith("asf: name an ASF FILE, - (stdin) or a store, or pick one session")
    code, out, _ = _show(capsys, "--json")
    assert code == ExitCode.USAGE
    document = json.loads(out)
    assert document["header"] is None
    assert "--session ID" in document["errors"][0]


def test_an_id_your_stores_do_not_hold_is_not_found_there(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _show(capsys, "--session", "no-such-session")
    assert (code, out) == (ExitCode.NOTHING, "")
    assert "no session id starts with 'no-such-session'" in err
    # One id prefix naming sessions of both stores is named as ambiguous, as a PATH would be.
    code, _, err = _show(capsys, "--session", "fx-comp")
    assert code == ExitCode.USAGE
    assert "'fx-comp' names 3 sessions" in err


def test_no_stores_at_all_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("HERMES_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    code, out, err = _show(capsys, "--session", "x")
    assert (code, out) == (ExitCode.NOTHING, "")
    assert "no stores found in the default locations" in err
    assert str(tmp_path / ".hermes") in err
