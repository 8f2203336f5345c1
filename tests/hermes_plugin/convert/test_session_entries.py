"""The entries built from a session row and the rows beside it
(``hermes_plugin.convert.session_entries``): the settings checkpoint and its deltas, the
closing entry holding the session row, and the ``session_model_usage`` and
``async_delegations`` rows."""

from __future__ import annotations

from typing import Any

import pytest
from hermes_columns import columns_of
from hermes_memory_store import MemoryStore

from hermes_plugin.convert.lineage import Lineage
from hermes_plugin.convert.session_entries import (
    closing_entry,
    delegation_entry,
    opening_member,
    session_settings,
    settings_delta,
    usage_entry,
)
from hermes_plugin.source.columns import Cell, RawText
from hermes_plugin.source.rowreader import RowReader
from hermes_plugin.source.rows import Session

TS = "2026-01-02T03:04:05Z"


def _session(**cells: Any) -> Session:
    """A ``sessions`` row read as the converter reads it."""
    row = {"id": "s", "source": "cli", "started_at": 1_790_000_000.0, **cells}
    return RowReader("state.db").session(columns_of(row))


def _store(prompts: dict[str, str] | None = None) -> MemoryStore:
    return MemoryStore.from_rows(name="state.db", schema=26, prompts=prompts)


def _closing(session: Session, store: MemoryStore | None = None) -> dict[str, Any]:
    member = closing_entry(store or _store(), session, TS).unknown["hermes"]
    assert isinstance(member, dict)
    return member


def test_a_segments_opening_member_names_its_row_relation_and_parent() -> None:
    """A root names no parent; a sub-agent names its own relation and its parent's row."""
    root = _session(id="root")
    child = _session(id="sub", source="subagent", parent_session_id="root")
    lineage = Lineage.of([root, child])
    assert opening_member(_store(), lineage, root) == {
        "session": "state.db:sessions/root",
        "relation": "root",
    }
    assert opening_member(_store(), lineage, child) == {
        "session": "state.db:sessions/sub",
        "relation": "delegate",
        "parent": "state.db:sessions/root",
    }


def test_settings_hold_what_the_model_calls_ran_with() -> None:
    """Empty model and prompt are no settings; an effort that is no string is none."""
    config = '{"reasoning_config": {"effort": "high", "enabled": true}, "max_iterations": 9}'
    session = _session(model="m-1", system_prompt="Be brief.", model_config=config)
    assert session_settings(_store(), session) == {
        "model": "m-1",
        "instructions": "Be brief.",
        "reasoning": {"effort": "high"},
    }
    blank = _session(model="", system_prompt="", model_config='{"reasoning_config": {"effort": 2}}')
    assert session_settings(_store(), blank) == {}


def test_the_closing_entry_carries_only_columns_the_settings_hold_verbatim() -> None:
    """The inline ``system_prompt`` stays when the settings hold the prompt its hash names,
    and ``model`` when its cell is not the text the settings hold."""
    session = _session(model="m-1", system_prompt="old inline", system_prompt_hash="h1")
    member = _closing(session, _store({"h1": "Be brief."}))
    assert member["session_carried"] == ["model"]
    assert member["session_columns"]["system_prompt"] == "old inline"
    assert "model" not in member["session_columns"]
    same = _closing(_session(model="m-1", system_prompt="Be brief."))
    assert same["session_carried"] == ["model", "system_prompt"]
    bad = _closing(_session(model=RawText(b"m-\xff"), title=None))
    assert "session_carried" not in bad
    assert bad["session_encoded"] == {"model": "text"}
    assert set(bad["session_columns"]) == {"source", "started_at", "model"}  # no id, no NULL


def test_a_settings_delta_holds_what_changed_or_replaces_all() -> None:
    """A delta cannot remove a member: a removal is a ``replace`` with all of them."""
    session = _session()
    before = {"model": "m-1", "instructions": "A", "reasoning": {"effort": "low"}}
    assert settings_delta(before, dict(before), TS, session) is None
    changed = settings_delta(before, {**before, "instructions": "B"}, TS, session)
    assert changed is not None
    assert (bool(changed.replace), changed.model, changed.instructions, changed.reasoning) == (
        False,
        None,
        "B",
        None,
    )
    removed = settings_delta(before, {"model": "m-1", "instructions": "A"}, TS, session)
    assert removed is not None
    assert (bool(removed.replace), removed.model, removed.instructions, removed.reasoning) == (
        True,
        "m-1",
        "A",
        None,
    )
    added = settings_delta({"model": "m-1"}, before, TS, session)
    assert added is not None
    assert (bool(added.replace), added.instructions, added.reasoning) == (
        False,
        "A",
        {"effort": "low"},
    )


_USAGE: dict[str, Cell] = {
    "session_id": "s",
    "model": "m-aux",
    "billing_provider": "openrouter",
    "billing_base_url": "https://openrouter.ai/api/v1",
    "billing_mode": "",
    "task": "compression",
    "input_tokens": 1200,
    "output_tokens": 300,
    "cache_read_tokens": 800,
    "cache_write_tokens": 50,
    "reasoning_tokens": 40,
    "cost_usd": None,
}


def test_an_auxiliary_tasks_usage_row_counts_its_calls() -> None:
    """No response entry holds these calls: ``usage`` counts them; the row is kept whole but
    its session, named by the identity, and its NULL cells."""
    entry = usage_entry(_session(), columns_of(_USAGE), TS)
    assert entry.data == {
        "kind": "model_usage",
        "task": "compression",
        "model": "m-aux",
        "usage": {
            "input_tokens": 1200,
            "output_tokens": 300,
            "total_tokens": 1500,
            "input_tokens_details": {"cached_tokens": 800},
            "output_tokens_details": {"reasoning_tokens": 40},
        },
    }
    member = entry.unknown["hermes"]
    assert member["row"] == (
        "state.db:session_model_usage/s/m-aux/openrouter/https://openrouter.ai/api/v1//compression"
    )
    expected = {k: v for k, v in _USAGE.items() if k != "session_id" and v is not None}
    assert member["columns"] == expected
    assert "encoded" not in member


def test_a_token_cell_that_is_no_integer_counts_no_tokens() -> None:
    """A counter Hermes declares INTEGER NOT NULL but holding text (a foreign writer's) counts
    none; the cell stays in ``columns`` as stored, the row converts."""
    entry = usage_entry(_session(), columns_of({**_USAGE, "input_tokens": "n/a"}), TS)
    usage = entry.data["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (0, 300, 300)
    assert entry.unknown["hermes"]["columns"]["input_tokens"] == "n/a"


@pytest.mark.parametrize(
    "row",
    [{**_USAGE, "task": ""}, {k: v for k, v in _USAGE.items() if k != "task"}],
    ids=["task-empty", "schema-20-no-task-column"],
)
def test_the_main_loops_usage_row_counts_nothing_twice(row: dict[str, Cell]) -> None:
    """``task = ''`` (and every row of a table that has no ``task`` yet) totals calls the
    response entries hold: no ``usage``."""
    entry = usage_entry(_session(), columns_of(row), TS)
    assert entry.data == {"kind": "model_usage", "task": "", "model": "m-aux"}


def test_a_delegation_row_is_kept_whole() -> None:
    """Every non-NULL column, a cell JSON cannot hold encoded."""
    cells: dict[str, Cell] = {
        "delegation_id": "d-1",
        "parent_session_id": "s",
        "state": "completed",
        "result_json": None,
        "task_json": RawText(b"\xff"),
    }
    delegation = RowReader("state.db").delegation(columns_of(cells))
    entry = delegation_entry("state.db", delegation, TS)
    assert entry.data == {"kind": "async_delegation", "state": "completed"}
    member = entry.unknown["hermes"]
    assert member["row"] == "state.db:async_delegations/d-1"
    assert set(member["columns"]) == {"delegation_id", "parent_session_id", "state", "task_json"}
    assert member["encoded"] == {"task_json": "text"}
