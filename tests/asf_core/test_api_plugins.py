"""The Python API never writes to its caller's stderr (a library prints nothing on the user's
behalf): a plugin that cannot be loaded is a warning in ``find_stores``' problems and in the
report's ``warnings``, where the command says it on stderr as before."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fixture_paths import ROOT
from plugin_stubs import FakeDist, installed_only

from asf_core import api, plugins
from asf_core.cli.main import main

HOME = ROOT / "examples" / "hermes-home"
NOT_LOADED = "plugin 'broken' (distribution asf-broken) not loaded: ImportError: needs libfoo"


@pytest.fixture
def broken(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The real Hermes plugin installed beside one whose module cannot be imported."""
    (tmp_path / "asf_api_broken.py").write_text("raise ImportError('needs libfoo')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "asf_api_broken", raising=False)
    installed_only(
        monkeypatch,
        [
            FakeDist("asf-broken", {"broken": "asf_api_broken"}),
            FakeDist("asf-sessions", {"hermes": "hermes_plugin.plugin"}),
        ],
    )


@pytest.mark.usefixtures("broken")
def test_a_plugin_that_cannot_load_is_a_warning_not_a_line_on_stderr(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    stores, problems = api.find_stores(HOME)
    assert len(stores) == 2
    assert [(p.kind, p.code, p.message) for p in problems] == [
        ("warning", "plugin-not-loaded", NOT_LOADED)
    ]
    report = api.convert(HOME, tmp_path / "out")
    assert report.warnings == [NOT_LOADED]
    assert report.totals()["sessions_written"] == 23
    assert capfd.readouterr() == ("", "")
    # The command still says it, once, where people read it.
    assert main(["convert", str(HOME), "-o", str(tmp_path / "cli"), "--quiet"]) == 0
    assert capfd.readouterr().err == f"asf: warning: {NOT_LOADED}\n"


def test_asf_plugins_naming_nothing_installed_is_a_warning_too(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(plugins.ONLY_ENV, "hermes,nosuch")
    stores, problems = api.find_stores(HOME)
    assert len(stores) == 2
    assert [p.message for p in problems] == ["ASF_PLUGINS names 'nosuch', which is not installed"]
    assert capfd.readouterr() == ("", "")
