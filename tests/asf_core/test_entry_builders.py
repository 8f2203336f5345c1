"""The builders of :mod:`asf_core.entry_builders` build what the classes' ``__init__`` builds."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from asf_core import entry_builders
from asf_core.entry_builders import item_entry, response_entry
from asf_core.model import Entry, Item, Response

_TEXT = st.none() | st.text(max_size=5)
_OBJECT = st.dictionaries(st.text(max_size=3), st.integers() | st.text(max_size=3), max_size=3)


def _same(built: Entry, made: Entry) -> None:
    """Every field of both, ``_line`` too (which ``==`` does not compare), and the class."""
    assert type(built) is type(made)
    for a in attrs.fields(type(made)):
        assert getattr(built, a.name) == getattr(made, a.name), a.name
    assert built == made


@given(st.text(max_size=5), _OBJECT, _TEXT, st.none() | st.booleans(), _OBJECT)
def test_item_entry_is_the_item_init_makes(
    ts: str, item: dict[str, Any], response: str | None, visible: bool | None, unknown: Any
) -> None:
    made = Item(ts=ts, item=item, response=response, visible=visible, unknown=unknown)
    _same(item_entry(ts, item, response, visible, unknown), made)


@given(st.text(max_size=5), _TEXT, _TEXT, _TEXT, st.none() | _OBJECT, _OBJECT)
def test_response_entry_is_the_response_init_makes(
    ts: str,
    response_id: str | None,
    model_name: str | None,
    status: str | None,
    incomplete: dict[str, Any] | None,
    unknown: dict[str, Any],
) -> None:
    made = Response(
        ts=ts,
        response_id=response_id,
        model=model_name,
        status=status,
        incomplete=incomplete,
        unknown=unknown,
    )
    _same(response_entry(ts, response_id, model_name, status, incomplete, unknown), made)


def test_a_built_entry_stays_frozen() -> None:
    entry = item_entry("t", {}, None, None, {})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        entry.ts = "u"  # type: ignore[misc]


def test_a_builder_must_name_every_field_of_its_class() -> None:
    with pytest.raises(TypeError, match="Item"):
        entry_builders._setters(Item, "ts id parent parents normalised unknown _line item")
