"""The Python API given a leaf or response its session does not hold (docs/library.md
"Errors"): every function that takes one raises ``api.ContextError`` naming it, never a bare
``KeyError`` of the id, and an empty session raises it too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fixture_paths import VECTORS

from asf_core import api

BASIC = VECTORS / "sessions" / "basic.jsonl"

CALLS: dict[str, Callable[[api.SessionFile, str | None], Any]] = {
    "context": api.context,
    "atif": api.atif,
    "otel": api.otel,
    "transcript": api.transcript,
    "html": lambda s, leaf: api.transcript(s, leaf, to="html"),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_an_unknown_leaf_is_a_context_error(call: Callable[..., Any]) -> None:
    session = api.read(BASIC)
    with pytest.raises(api.ContextError, match="no entry sha256:feed in the session"):
        call(session, "sha256:feed")
    # A format name given where the leaf goes, the easy slip: said as such.
    with pytest.raises(api.ContextError, match="no entry markdown in the session"):
        call(session, "markdown")


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_a_session_of_no_entries_is_a_context_error(call: Callable[..., Any]) -> None:
    header = BASIC.read_bytes().split(b"\n", 1)[0] + b"\n"
    with pytest.raises(api.ContextError, match="no entries"):
        call(api.read(header), None)


def test_a_context_error_is_a_value_error_and_every_leaf_still_works() -> None:
    assert issubclass(api.ContextError, ValueError)
    session = api.read(BASIC)
    for leaf in session.leaves():
        for call in CALLS.values():
            assert call(session, leaf)
    with pytest.raises(api.ContextError, match="not a response"):
        api.request(session, session.leaves()[0])


def test_an_old_files_own_ids_name_its_entries_as_asf_export_takes_them() -> None:
    """A pre-0.5 file is read with new ids; the ids written in it (``asf export --leaf``
    takes them) name the same entries here, for every call that takes a leaf or response."""
    old = api.read(VECTORS / "sessions" / "v0.4" / "basic.jsonl")
    assert old.migrated
    for written, new in old.legacy.items():
        for call in CALLS.values():
            assert call(old, written) == call(old, new)
        if old.by_id[new].type == "response":
            assert api.request(old, written) == api.request(old, new)
