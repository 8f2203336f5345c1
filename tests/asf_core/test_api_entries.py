"""A converted session's entries read twice, from Python (docs/library.md): a plugin may hand
them over as a generator, read once (docs/hooks.md allows it). A second pass used to give
nothing, so ``api.lines`` after counting them wrote a file of its header alone, silently; it
now raises ``ValueError`` saying how to keep them. Entries that can be read again still can."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import attrs
import pytest
from asf_format_example import plugin as chatlog
from fixture_paths import CLAUDE_HOME, ROOT

from asf_core import api, hookimpl
from asf_core.formats import Claim, ConvertedSession, NativeSession
from asf_core.plugins import make_plugin_manager

SAMPLE = ROOT / "examples" / "asf-format-example" / "samples" / "sample.chat.jsonl"


class Streaming:
    """The shipped chatlog plugin, handing each session's entries over as a generator."""

    @hookimpl
    def discover(self, path: Path | None) -> list[Claim] | None:
        return chatlog.discover(path)

    @hookimpl
    def open_store(self, claim: Claim) -> object:
        return chatlog.open_store(claim)

    @hookimpl
    def read(self, store: object) -> Iterator[object] | None:
        return chatlog.read(store)

    @hookimpl
    def convert(self, store: object, sessions: Iterable[NativeSession]) -> Iterator[object]:
        for item in chatlog.convert(store, sessions) or ():
            if isinstance(item, ConvertedSession):
                item = attrs.evolve(item, entries=(e for e in tuple(item.entries)))
            yield item


def _store(plugin: object) -> api.Store:
    pm = make_plugin_manager(plugins=[("chatlog", plugin)], autoload=False)
    (store,), problems = api.find_stores(SAMPLE, plugins=pm)
    assert problems == []
    return store


def test_entries_given_once_say_so_when_read_again() -> None:
    written = {b"".join(api.lines(s)) for s in _store(chatlog).sessions()}
    sessions = list(_store(Streaming()).sessions())
    assert {b"".join(api.lines(s)) for s in sessions} == written  # read once: all there
    for session in _store(Streaming()).sessions():
        assert sum(1 for _ in session.entries) > 0
        with pytest.raises(ValueError, match=r"read already.*gives them once"):
            b"".join(api.lines(session))


def test_entries_that_can_be_read_again_still_can() -> None:
    for session in _store(chatlog).sessions():
        first = list(session.entries)
        assert list(session.entries) == first
        assert len(list(api.lines(session))) == len(first) + 1


@pytest.mark.parametrize(
    "source", [ROOT / "examples" / "hermes-home", CLAUDE_HOME / ".claude"], ids=["hermes", "cc"]
)
def test_redacted_entries_can_be_read_again(source: Path, tmp_path: Path) -> None:
    """``sessions(redact=True)`` redacted the entries in one generator: counted first, a
    session's ``api.lines`` were its header alone. Each pass now redacts them the same way,
    as converting the store alone does (a run over several numbers its placeholders across
    them: an account name met in one store keeps its number in the next)."""
    stores, problems = api.find_stores(source)
    assert problems == []
    for n, store in enumerate(stores):
        api.convert(store.path, tmp_path / str(n), redact=True)
        written = {p.read_bytes() for p in (tmp_path / str(n)).rglob("*.jsonl")}
        for session in store.sessions(redact=True):
            first = list(session.entries)
            assert first
            assert list(session.entries) == first
            assert b"".join(api.lines(session)) in written
