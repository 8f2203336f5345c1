"""Picking sessions across stores (:func:`asf_core.pipeline.picking.pick`) and listing one
(:func:`asf_core.pipeline.listing.list_store`), on :class:`plan_toy.WholeToy` stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import plan_toy

from asf_core import hookimpl
from asf_core.formats import Finding, NativeSession, Selection
from asf_core.pipeline.listing import list_store
from asf_core.pipeline.picking import NO_SESSION, pick
from asf_core.pipeline.stores import find_stores
from asf_core.plugins import make_plugin_manager


def _stores(tmp_path: Path, *texts: str) -> list[Path]:
    paths = []
    for n, text in enumerate(texts):
        path = tmp_path / f"s{n}.ptoy"
        path.write_text(text)
        paths.append(path)
    return paths


def test_a_selection_no_session_matches_says_so_of_the_stores_read(tmp_path: Path) -> None:
    pm = make_plugin_manager(plugins=[("ptoy", plan_toy.WholeToy())], autoload=False)
    found = find_stores(pm, _stores(tmp_path, "a one\nb two\n", "c three\n"))
    for stores, where in [(found.stores, "the 2 stores"), (found.stores[:1], "the store")]:
        picked, problems = pick(pm, stores, Selection(title="zzz"), unique=True)
        assert picked == []
        assert [(p.code, p.message) for p in problems] == [
            (NO_SESSION, f"no session of {where} matches --title zzz")
        ]


class _Findings(plan_toy.WholeToy):
    """Each session with a stray and a dropped finding, and one warning of the store's."""

    @hookimpl
    def read(self, store: plan_toy.PlanStore) -> Iterator[NativeSession | Finding] | None:
        sessions = [
            NativeSession(
                id=s.id,
                findings=[Finding(kind="stray", message="s"), Finding(kind="dropped", message="d")],
            )
            for s in super().read(store) or []
            if isinstance(s, NativeSession)
        ]
        return iter([Finding(kind="warning", message="w"), *sessions])


def test_a_listing_counts_the_findings_of_its_sessions_and_of_the_store(tmp_path: Path) -> None:
    pm = make_plugin_manager(plugins=[("ptoy", _Findings())], autoload=False)
    (store,) = find_stores(pm, _stores(tmp_path, "a one\nb two\n")).stores
    listing = list_store(pm, store)
    assert [s.id for s in listing.sessions] == ["a", "b"]
    assert listing.findings == {"warning": 1, "stray": 2, "dropped": 2}
