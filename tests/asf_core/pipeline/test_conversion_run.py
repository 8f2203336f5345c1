"""A conversion run as :func:`asf_core.pipeline.conversion.convert_paths` drives it: what it
refuses before converting, what a selection naming nothing converts, where a warning goes in
the run's report, the workers it leaves behind (none), a store that keeps changing. The
plugins are :mod:`plan_toy`'s."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import plan_toy
import pytest

from asf_core import hookimpl
from asf_core.errors import OutputError
from asf_core.formats import Claim, Finding, Selection
from asf_core.layout import store_dir
from asf_core.pipeline.conversion import convert_paths
from asf_core.pipeline.picking import NO_SESSION
from asf_core.plugins import AsfPluginManager, make_plugin_manager
from asf_core.walk import UNSEARCHABLE


def _pm(plugin: object) -> AsfPluginManager:
    plan_toy.PREPARED.clear()
    plan_toy.OPENED.clear()
    plan_toy.STAMPS = True
    return make_plugin_manager(plugins=[("ptoy", plugin)], autoload=False)


def _store(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.ptoy"
    path.write_text(text)
    return path


def test_an_output_that_is_a_file_is_refused_before_converting(tmp_path: Path) -> None:
    src, out = _store(tmp_path, "a one\n"), tmp_path / "out"
    out.write_text("mine\n")
    with pytest.raises(OutputError) as caught:
        convert_paths(_pm(plan_toy.PlanToy()), [src], out)
    assert str(caught.value) == f"{out}: exists and is not a directory"
    assert plan_toy.OPENED == []
    assert out.read_text() == "mine\n"


def test_a_session_id_naming_nothing_converts_nothing_not_the_others(tmp_path: Path) -> None:
    """``--session a --session nope``: the run is about those sessions, and one of them is not
    there: nothing is converted, the problem is said."""
    src, out = _store(tmp_path, "a one\nb two\n"), tmp_path / "out"
    run, problems = convert_paths(
        _pm(plan_toy.PlanToy()), [src], out, selection=Selection(ids=("a", "nope"))
    )
    assert run.stores == []
    assert [(p.code, p.message) for p in problems] == [
        (NO_SESSION, "no session id starts with 'nope'")
    ]
    assert not out.exists()


class _Skipping(plan_toy.PlanToy):
    """Claims the store and says it could not search a folder beside it."""

    @hookimpl
    def discover(self, path: Path | None) -> list[Claim | Finding] | None:
        if path is None or path.suffix != ".ptoy":
            return None
        closed = path.parent / "closed"
        said = Finding(kind="warning", code=UNSEARCHABLE, message="cannot list", path=str(closed))
        return [Claim(format=plan_toy.FORMAT, path=path, confidence=1.0), said]


def test_a_folder_passed_over_is_a_warning_of_the_run_not_an_error(tmp_path: Path) -> None:
    src, out = _store(tmp_path, "a one\n"), tmp_path / "out"
    run, problems = convert_paths(_pm(_Skipping()), [src], out)
    assert [p.kind for p in problems] == ["warning"]
    assert run.warnings == [f"{tmp_path / 'closed'}: cannot list"]
    assert run.errors == []
    assert [s.complete for s in run.stores] == [True]


def test_the_run_s_workers_are_gone_when_it_returns(tmp_path: Path) -> None:
    src, out = _store(tmp_path, "a one\nb two\nc three\n"), tmp_path / "out"
    assert multiprocessing.active_children() == []
    run, _ = convert_paths(_pm(plan_toy.PlanToy()), [src], out, processes=2)
    assert [s.complete for s in run.stores] == [True]
    assert plan_toy.PREPARED == ["a", "b", "c"]
    assert multiprocessing.active_children() == []


def test_a_store_that_keeps_changing_while_converted_whole_is_tried_three_times(
    tmp_path: Path,
) -> None:
    """As a planned unit does (tests/asf_core/pipeline/test_units.py), ``convert`` finding
    its store changed has the store opened again, and stopped as damaged after the third."""
    src = _store(tmp_path, "a one\nb !changed\nc two\n")
    run, problems = convert_paths(_pm(plan_toy.WholeToy()), [src], tmp_path / "out")
    (report,) = run.stores
    assert [src, src, src] == plan_toy.OPENED
    assert not report.complete
    assert report.error == "line b changed while it was read"
    assert [p.code for p in problems] == ["damaged"]


def test_a_unit_the_output_refuses_stops_the_run_after_its_store_s_report(
    tmp_path: Path,
) -> None:
    """A session file's place taken by a folder: the run stops with the output's error, and
    the store's report, written first, says where it stopped."""
    src, out = _store(tmp_path, "a one\nb two\nc three\n"), tmp_path / "out"
    dest = store_dir(out, plan_toy.FORMAT, src)
    taken = dest / "default" / "2026-01-01T00-00-00.000Z_ptoy-b.jsonl"
    taken.mkdir(parents=True)
    with pytest.raises(OutputError) as caught:
        convert_paths(_pm(plan_toy.PlanToy()), [src], out)
    assert str(caught.value) == f"cannot write {taken}: exists and is not a regular file"
    report = json.loads((dest / "report.json").read_text())
    assert (report["complete"], report["error"]) == (False, str(caught.value))
    assert list(report["files"]) == ["a"]
