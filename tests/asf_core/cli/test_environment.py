"""``asf`` in the environments people run it in, each as a separate process: a locale whose
encoding cannot spell the data, closed or full standard streams, a deleted current directory.
Whatever the environment, a run ends with its documented exit code and never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fixture_paths import ROOT

from asf_core.cli.exit_codes import ExitCode

ASF = [sys.executable, "-m", "asf_core.cli.main"]


def _asf(
    *argv: str | Path, env: dict[str, str] | None = None, **how: Any
) -> subprocess.CompletedProcess[bytes]:
    """One run of the command as its own process, stdout and stderr captured as bytes."""
    how.setdefault("stdout", subprocess.PIPE)
    how.setdefault("stderr", subprocess.PIPE)
    environ = {**os.environ, "ASF_PLUGINS": "hermes", **(env or {})}
    done = subprocess.run([*ASF, *map(str, argv)], env=environ, check=False, timeout=120, **how)
    assert b"Traceback" not in (done.stderr or b""), done.stderr.decode(errors="replace")
    return done


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example Hermes home."""
    target = tmp_path_factory.mktemp("env") / "hermes-home"
    shutil.copytree(ROOT / "examples" / "hermes-home", target)
    return target


@pytest.fixture(scope="module")
def session(home: Path) -> Path:
    """The example session whose reply holds an em dash (U+2014), converted."""
    out = home.parent / "out"
    assert _asf("convert", home, "-o", out, "--quiet", "-j", "1").returncode == ExitCode.OK
    (found,) = [p for p in out.rglob("*.jsonl") if "\u2014" in p.read_text(encoding="utf-8")][:1]
    return found


def _documents(data: bytes, encoding: str) -> list[Any]:
    """The JSON documents of an output, one or one per line."""
    text = data.decode(encoding)
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-16"])
def test_an_encoding_that_cannot_spell_the_data_escapes_it(
    encoding: str, home: Path, session: Path
) -> None:
    """``PYTHONIOENCODING`` (or a Latin-1 locale) narrower than the data: people's text gets
    backslash escapes, JSON its ``\\u`` escapes (the same documents as in UTF-8), HTML
    character references; stderr the same as stdout."""
    env = {"PYTHONIOENCODING": encoding}
    for argv in (
        ["show", session, "--json"],
        ["verify", session.parent, "--json"],
        ["export", session, "--to", "atif"],
        ["export", session, "--to", "otel"],
        ["list", home, "--json"],
        ["show", home, "--session", "fx-unicode-long", "--json"],
    ):
        narrow, utf8 = _asf(*argv, env=env), _asf(*argv, env={"PYTHONIOENCODING": "utf-8"})
        assert narrow.returncode == utf8.returncode == ExitCode.OK, (argv, narrow.stderr)
        assert _documents(narrow.stdout, encoding) == _documents(utf8.stdout, "utf-8"), argv
    for argv, raw, escaped in (
        (["show", session], "Sure \u2014 10.", "Sure \\u2014 10."),
        (["show", session, "--format", "markdown"], "Sure \u2014 10.", "Sure \\u2014 10."),
        (["export", session, "--to", "text"], "Sure \u2014 10.", "Sure \\u2014 10."),
        (["export", session, "--to", "html"], "Sure \u2014 10.", "Sure &#8212; 10."),
        (["list", home], "\U0001f680", "\\U0001f680"),
        (["show", home / "caf\u00e9\u2014.jsonl"], "caf\u00e9\u2014", "caf\\xe9\\u2014"),
    ):
        done = _asf(*argv, env=env)
        said = (done.stdout or done.stderr).decode(encoding)
        if encoding == "latin-1":
            escaped = escaped.replace("\\xe9", "\u00e9")
        assert (raw if encoding == "utf-16" else escaped) in said, (argv, said[-300:])
        assert done.returncode == (ExitCode.USAGE if "caf" in raw else ExitCode.OK), argv
