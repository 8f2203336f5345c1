"""The ``asf`` command on Codex rollouts, end to end: the installed entry point, a real
process, the shared home converted and verified, and picking sessions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cx_helpers import CODEX_HOME, SESSIONS, by_tag, need_shared

ASF = [sys.executable, "-m", "asf_core.cli.main"]


def _asf(*argv: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*ASF, *map(str, argv)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr
    return done


def test_codex_is_an_installed_format() -> None:
    from importlib.metadata import entry_points

    assert "codex" in {e.name for e in entry_points(group="asf.formats")}
    done = _asf("plugins", "--json")
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["codex"]["status"] == "ok"


def test_convert_verify_list(tmp_path: Path) -> None:
    need_shared()
    out = tmp_path / "out"
    done = _asf("convert", CODEX_HOME / ".codex", "-o", out)
    assert done.returncode == 0, done.stderr
    assert "6 ASF sessions" in done.stdout
    verified = _asf("verify", out)
    assert verified.returncode == 0
    assert verified.stdout.strip().endswith("ok (6 files)")
    listed = json.loads(_asf("list", CODEX_HOME / ".codex", "--json").stdout)
    (store,) = listed["stores"]
    assert store["format"] == "codex"
    rows = {row["id"]: row for row in store["sessions"]}
    assert len(rows) == 6
    x4 = rows["019c8a59-e9dd-71f0-9ae3-4079fe9726a9"]
    assert x4["counts"] == {"lines": 2722, "turns": 33, "compactions": 1}
    assert x4["model"] == "gpt-5.3-codex"
    assert x4["source"] == "vscode"


def test_default_home_and_one_file(tmp_path: Path) -> None:
    need_shared()
    home = tmp_path / "codex-home"
    shutil.copytree(CODEX_HOME / ".codex", home)
    out = tmp_path / "out"
    done = _asf("convert", "-o", out, "--format", "codex", env={"CODEX_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert len(list(out.rglob("*.jsonl"))) == 6
    single = tmp_path / "single"
    done = _asf("convert", by_tag("X5"), "-o", single)
    assert done.returncode == 0, done.stderr
    (written,) = single.rglob("*_019c8a70-*.jsonl")
    assert json.loads(written.read_text().splitlines()[0])["id"].startswith("019c8a70")


def test_nothing_in_the_default_home_says_where(tmp_path: Path) -> None:
    done = _asf(
        "convert",
        "-o",
        tmp_path / "out",
        env={"CODEX_HOME": str(tmp_path / "none"), "HOME": str(tmp_path)},
    )
    assert done.returncode != 0
    assert f"codex: {tmp_path / 'none' / 'sessions'}" in done.stderr


def test_pick_one_session(tmp_path: Path) -> None:
    need_shared()
    out = tmp_path / "out"
    done = _asf("convert", SESSIONS, "-o", out, "--session", "019c8a4d")
    assert done.returncode == 0, done.stderr
    (written,) = out.rglob("*.jsonl")
    assert "019c8a4d" in written.name


@pytest.mark.parametrize("command", ["show"])
def test_show_a_session(command: str) -> None:
    need_shared()
    done = _asf(command, by_tag("X1"))
    assert done.returncode == 0, done.stderr
    assert "can you analyse the MD files" in done.stdout
