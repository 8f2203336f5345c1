"""Builders of the entries a converter makes by the row: an item entry per item, a response
entry per assistant row.

attrs' ``__init__`` of a frozen class is a keyword call that sets each field through
``object.__setattr__``, which looks the name up on the type each time; these builders set
each slot through its own descriptor, positionally (a third less work), the other fields at
their defaults. Each names every field of its class (checked at import) and builds what
``__init__`` builds (tests/asf_core/test_entry_builders.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import fields

from asf_core.model import Entry, Item, JSONObject, Response

__all__ = ["item_entry", "response_entry"]

_Setter = Callable[[Any, Any], None]


def _setters(cls: type[Entry], names: str) -> tuple[_Setter, ...]:
    """The slot setters of the fields ``names`` lists, which must be all of ``cls``'s."""
    listed = names.split()
    if listed != [a.name for a in fields(cls)]:
        raise TypeError(f"the {cls.__name__} builder does not set exactly its fields")
    return tuple(
        vars(next(k for k in cls.__mro__ if name in vars(k)))[name].__set__ for name in listed
    )


_new = object.__new__
_ENVELOPE = "ts id parent parents normalised unknown _line"
(_TS, _ID, _PARENT, _PARENTS, _NORMALISED, _UNKNOWN, _LINE) = _setters(Entry, _ENVELOPE)
(_ITEM, _RESPONSE, _VISIBLE, _SOURCE, _QUEUED_FROM) = _setters(
    Item, f"{_ENVELOPE} item response visible source queued_from"
)[7:]
(
    _RESPONSE_ID,
    _MODEL,
    _STATUS,
    _USAGE,
    _ERROR,
    _INCOMPLETE,
    _REQUEST_HASH,
    _LATENCY_MS,
    _ATTEMPTS,
) = _setters(
    Response,
    f"{_ENVELOPE} response_id model status usage error incomplete request_hash latency_ms attempts",
)[7:]


def _envelope(entry: Entry, ts: str, unknown: JSONObject) -> None:
    """A new entry's envelope: its ``ts`` and ``unknown``, no id or parents yet."""
    _TS(entry, ts)
    _ID(entry, None)
    _PARENT(entry, None)
    _PARENTS(entry, ())
    _NORMALISED(entry, None)
    _UNKNOWN(entry, unknown)
    _LINE(entry, None)


def item_entry(
    ts: str, item: JSONObject, response: str | None, visible: bool | None, unknown: JSONObject
) -> Item:
    """``Item(ts=ts, item=item, response=response, visible=visible, unknown=unknown)``."""
    entry: Item = _new(Item)
    _envelope(entry, ts, unknown)
    _ITEM(entry, item)
    _RESPONSE(entry, response)
    _VISIBLE(entry, visible)
    _SOURCE(entry, None)
    _QUEUED_FROM(entry, None)
    return entry


def response_entry(
    ts: str,
    response_id: str | None,
    model: str | None,
    status: str | None,
    incomplete: JSONObject | None,
    unknown: JSONObject,
) -> Response:
    """``Response(ts=ts, response_id=response_id, model=model, status=status,
    incomplete=incomplete, unknown=unknown)``."""
    entry: Response = _new(Response)
    _envelope(entry, ts, unknown)
    _RESPONSE_ID(entry, response_id)
    _MODEL(entry, model)
    _STATUS(entry, status)
    _USAGE(entry, None)
    _ERROR(entry, None)
    _INCOMPLETE(entry, incomplete)
    _REQUEST_HASH(entry, None)
    _LATENCY_MS(entry, None)
    _ATTEMPTS(entry, None)
    return entry
