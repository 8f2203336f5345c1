"""One picked session converted in memory (``convert -o -``, ``show``): what is said when
the plugin converts nothing for it. The plugin is :class:`plan_toy.WholeToy` turned silent:
for each session it gives only a finding naming it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import plan_toy

from asf_core import hookimpl
from asf_core.formats import ConvertedSession, Finding, NativeSession, Selection
from asf_core.pipeline.single import NOTHING_CONVERTED, SEVERAL, convert_one
from asf_core.plugins import make_plugin_manager


class _Silent(plan_toy.WholeToy):
    @hookimpl
    def convert(
        self, store: plan_toy.PlanStore, sessions: Iterable[NativeSession]
    ) -> Iterator[ConvertedSession | Finding] | None:
        return iter(
            [Finding(kind="warning", message="an empty file", session=s.id) for s in sessions]
        )


def test_a_session_converted_to_nothing_says_why_as_the_plugin_did(tmp_path: Path) -> None:
    pm = make_plugin_manager(plugins=[("ptoy", _Silent())], autoload=False)
    src = tmp_path / "s.ptoy"
    src.write_text("a one\nb two\n")
    single, problems = convert_one(pm, [src], selection=Selection(ids=("b",)))
    assert single is None
    assert [(p.code, p.message) for p in problems] == [
        (NOTHING_CONVERTED, f"{src}: b: an empty file")
    ]


def test_several_sessions_picked_are_listed_five_at_most(tmp_path: Path) -> None:
    pm = make_plugin_manager(plugins=[("ptoy", plan_toy.WholeToy())], autoload=False)
    src = tmp_path / "s.ptoy"
    advice = "pick one with --session ID (asf list shows them)"
    for count, listed in [(5, "a, b, c, d, e"), (6, "a, b, c, d, e, ...")]:
        src.write_text("".join(f"{ident} words\n" for ident in "abcdef"[:count]))
        single, problems = convert_one(pm, [src])
        assert single is None
        assert [(p.code, p.message) for p in problems] == [
            (SEVERAL, f"{count} sessions are selected ({listed}); {advice}")
        ]
