"""``api.Selection`` refuses, when it is made, what it cannot select by (docs/library.md): a
naive time was compared deep in the plugin and reported as the plugin's failure; a negative
``limit``, which ``--limit`` refuses, silently dropped sessions instead of failing."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fixture_paths import ROOT

from asf_core import api

HOME = ROOT / "examples" / "hermes-home"


@pytest.mark.parametrize("member", ["since", "until"])
def test_a_naive_time_is_refused_when_the_selection_is_made(member: str) -> None:
    with pytest.raises(ValueError, match=f"{member} .* no timezone"):
        api.Selection(**{member: datetime(2026, 1, 1)})


@pytest.mark.parametrize("cwd", ["home/user/project", "~/project", "./project", ""])
def test_a_cwd_that_is_not_absolute_is_refused(cwd: str) -> None:
    """``--cwd`` makes its directory absolute; a relative one here matched nothing, silently."""
    with pytest.raises(ValueError, match=r"cwd .* is not an absolute path"):
        api.Selection(cwd=cwd)


@pytest.mark.parametrize("member", ["limit", "min_rows"])
def test_a_negative_count_is_refused(member: str) -> None:
    with pytest.raises(ValueError, match=f"{member} -1 is negative"):
        api.Selection(**{member: -1})


def test_what_the_options_allow_still_selects(tmp_path: Path) -> None:
    home = tmp_path / "hermes-home"
    shutil.copytree(HOME, home)
    aware = datetime(2026, 1, 1, tzinfo=UTC)
    picked = api.Selection(since=aware, until=api.parse_time("2099-01-01"), limit=0, min_rows=0)
    assert picked.since == aware
    stores, problems = api.find_stores(home)
    assert problems == []
    counts = [len(list(s.native_sessions(api.Selection(since=aware, limit=2)))) for s in stores]
    assert counts == [1, 2]  # the work profile holds one session
    assert all(list(s.native_sessions(picked)) == [] for s in stores)
    for cwd in ("/home/user/project", "/home/user/", "C:\\Users"):
        api.Selection(cwd=cwd)  # absolute, as the sessions record it (Windows' too)
    (plain,) = stores[1].native_sessions(api.Selection(cwd="/home/user/"))
    assert plain.id == "fx-plain"
