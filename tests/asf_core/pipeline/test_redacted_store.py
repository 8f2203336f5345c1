"""A redacted conversion's report counts what was replaced by where it was found: in a
session, under its name; in a finding the plugin gave outside any session, under ``(store)``
(docs/cli.md, ``--redact``). The plugin is :class:`plan_toy.WholeToy`, which gives a finding
naming each line's first word, then that line's session."""

from __future__ import annotations

import json
import os
from pathlib import Path

import plan_toy

from asf_core.pipeline.conversion import convert_paths
from asf_core.plugins import make_plugin_manager
from asf_core.redaction import Redactor, SessionRedaction


def test_a_finding_before_a_session_is_counted_for_the_store_not_the_session(
    tmp_path: Path,
) -> None:
    pm = make_plugin_manager(plugins=[("ptoy", plan_toy.WholeToy())], autoload=False)
    src = tmp_path / "s.ptoy"
    src.write_text("me@example.com hello\n")
    redaction = SessionRedaction(Redactor(phones=False))
    run, problems = convert_paths(pm, [src], tmp_path / "out", redaction=redaction)
    assert problems == []
    (store,) = run.stores
    assert [f.message for f in store.findings] == [
        "converted [REDACTED:email:1]",  # the store's finding: its message and its unit
        "[REDACTED:email:1] has 5 characters",  # the session's own
    ]
    expected = {"(store)": {"email": 2}, "me@example.com": {"email": 1}}
    assert store.redactions == expected
    written = json.loads((Path(store.output) / "report.json").read_text())
    assert written["redactions"] == expected


def test_the_report_beside_the_files_names_no_account_and_counts_what_it_replaced(
    tmp_path: Path,
) -> None:
    """A store and an output folder named as Claude Code names a project after
    ``/home/ada/...``: the written report's path and output lose the name, the output still
    ends with the folder written (whose label spells the account ``USER`` already: redacted
    again, the report named a folder that is not there), and the store's redactions count
    each replacement the report holds (they counted that ``USER`` too)."""
    pm = make_plugin_manager(plugins=[("ptoy", plan_toy.WholeToy())], autoload=False)
    src = tmp_path / "-home-ada-src" / "s.ptoy"
    src.parent.mkdir()
    src.write_text("hello there\n")
    redaction = SessionRedaction(Redactor(phones=False))
    run, problems = convert_paths(pm, [src], tmp_path / "-home-ada-out", redaction=redaction)
    assert problems == []
    (store,) = run.stores
    assert "-home-ada-" in store.path  # the caller's report keeps them
    assert "-home-ada-" in store.output
    report = (Path(store.output) / "report.json").read_text()
    assert "ada" not in report
    written = json.loads(report)
    assert "-home-[REDACTED:home_user:1]-out" in written["output"]
    assert written["output"].endswith(f"{os.sep}{Path(store.output).name}")  # -home-USER-src-
    assert "-home-[REDACTED:home_user:1]-src" in written["path"]
    replaced = report.count("[REDACTED:home_user:1]")
    assert written["redactions"]["(store)"] == {"home_user": replaced}
