"""What a plugin yields from its generator hooks is checked as it comes: anything but a
session or a finding stops its store as the plugin's failure, naming what it yielded. The
plugin is :class:`plan_toy.WholeToy` (converted through ``convert``) with one odd item."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import plan_toy
import pytest

from asf_core import hookimpl
from asf_core.formats import Claim, ConvertedSession, Finding, NativeSession, Unit
from asf_core.pipeline.conversion import convert_paths
from asf_core.plugins import make_plugin_manager


class _OddToy(plan_toy.WholeToy):
    """Yields ``ODD`` after the first line's session (from ``read`` or from ``convert``)."""

    def __init__(self, hook: str, odd: object) -> None:
        self.hook, self.odd = hook, odd

    @hookimpl
    def read(self, store: plan_toy.PlanStore) -> Iterator[NativeSession | Finding] | None:
        items = list(super().read(store) or [])
        odd = [self.odd] if self.hook == "read" else []
        return iter([*items[:1], *odd, *items[1:]])  # type: ignore[list-item]

    @hookimpl
    def convert(
        self, store: plan_toy.PlanStore, sessions: Iterable[NativeSession]
    ) -> Iterator[ConvertedSession | Finding] | None:
        items = list(super().convert(store, sessions) or [])
        odd = [self.odd] if self.hook == "convert" else []
        return iter([*items[:2], *odd, *items[2:]])  # type: ignore[list-item]


@pytest.mark.parametrize("hook", ["read", "convert"])
@pytest.mark.parametrize(("odd", "said"), [("a line", "str"), (None, "NoneType")])
def test_an_item_that_is_no_session_nor_finding_stops_the_store(
    tmp_path: Path, hook: str, odd: object, said: str
) -> None:
    pm = make_plugin_manager(plugins=[("ptoy", _OddToy(hook, odd))], autoload=False)
    src = tmp_path / "s.ptoy"
    src.write_text("a one two\nb three\n")
    run, problems = convert_paths(pm, [src], tmp_path / "out")
    (report,) = run.stores
    assert not report.complete
    assert report.error == f"plugin 'ptoy' failed in {hook}: yielded {said}"
    assert [p.code for p in problems] == ["plugin"]
    assert "b" not in report.files


class _NoPlan(plan_toy.PlanToy):
    @hookimpl
    def plan(
        self, store: plan_toy.PlanStore, sessions: Iterable[NativeSession]
    ) -> Iterator[Unit | Finding] | None:
        raise RuntimeError("no plan today")


def test_a_plan_hook_that_raises_stops_the_store_naming_plan(tmp_path: Path) -> None:
    pm = make_plugin_manager(plugins=[("ptoy", _NoPlan())], autoload=False)
    src = tmp_path / "s.ptoy"
    src.write_text("a one two\n")
    run, problems = convert_paths(pm, [src], tmp_path / "out")
    (report,) = run.stores
    assert not report.complete
    assert report.error == "plugin 'ptoy' failed in plan: RuntimeError: no plan today"
    assert [p.code for p in problems] == ["plugin"]


class _FailingClose(plan_toy.PlanToy):
    @hookimpl
    def open_store(self, claim: Claim) -> plan_toy.PlanStore | None:
        store = super().open_store(claim)
        if store is not None:
            store.close = _raise  # type: ignore[method-assign]
        return store


def _raise() -> None:
    raise RuntimeError("the store would not close")


def test_a_store_whose_close_raises_is_converted_and_reported_as_the_plugin_s_failure(
    tmp_path: Path,
) -> None:
    """Every session is written, then closing the store fails: the store's report names the
    plugin's failure, and so do the run's problems."""
    pm = make_plugin_manager(plugins=[("ptoy", _FailingClose())], autoload=False)
    src = tmp_path / "s.ptoy"
    src.write_text("a one two\nb three\n")
    run, problems = convert_paths(pm, [src], tmp_path / "out")
    (report,) = run.stores
    assert list(report.files) == ["a", "b"]
    assert report.error == "plugin 'ptoy' failed in close: RuntimeError: the store would not close"
    assert [p.code for p in problems] == ["plugin"]
