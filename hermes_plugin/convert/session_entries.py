"""The entries built from a session row and the rows beside it, not from its messages: its
settings (``config``), the ``hermes`` member of a segment's first entry, its closing entry,
and its ``session_model_usage`` and ``async_delegations`` rows. See
``docs/formats/hermes.md`` (sections 2, 4.4 and 6).
"""

from __future__ import annotations

from typing import Any

import attrs

from asf_core.model import Config, Custom
from hermes_plugin.convert.entries import with_columns
from hermes_plugin.convert.lineage import Lineage
from hermes_plugin.source.columns import Columns
from hermes_plugin.source.rows import Delegation, Session, session_unit
from hermes_plugin.source.store import Store, session_prompt

__all__ = [
    "closing_entry",
    "delegation_entry",
    "delegation_unit",
    "opening_member",
    "session_settings",
    "settings_delta",
    "usage_entry",
    "usage_unit",
    "with_settings",
]

JSON = dict[str, Any]


def session_settings(store: Store, session: Session) -> JSON:
    """The settings a session's model calls ran with, as a full checkpoint: ``model`` (the
    row's, which /model updates), ``instructions`` (the resolved system prompt) and
    ``reasoning.effort`` from ``model_config.reasoning_config``."""
    out: JSON = {}
    if session.model:
        out["model"] = session.model
    prompt = session_prompt(store, session)
    if prompt:
        out["instructions"] = prompt
    config = session.model_config or {}
    reasoning = config.get("reasoning_config")
    if isinstance(reasoning, dict) and isinstance(reasoning.get("effort"), str):
        out["reasoning"] = {"effort": reasoning["effort"]}
    return out


def opening_member(store: Store, lineage: Lineage, session: Session) -> JSON:
    """The ``hermes`` member of a segment's first entry: the session row's identity, its
    relation to its parent and the parent's identity. Nothing Hermes updates later is here,
    so the entries of a conversation keep their ids when Hermes appends to it."""
    member: JSON = {"session": session.unit, "relation": str(lineage.relation[session.id])}
    if session.parent_id:
        member["parent"] = session_unit(store.name, session.parent_id)
    return member


def closing_entry(store: Store, session: Session, ts: str) -> Custom:
    """The segment's last entry: the session row as read, every non-null column but ``id``
    and those the opening settings hold verbatim (``model``, ``system_prompt``)."""
    settings = session_settings(store, session)
    values, encoded = session.cols.to_exact_json()
    carried = []
    if "model" in settings and values.get("model") == settings["model"]:
        carried.append("model")
    prompt = values.get("system_prompt")
    if prompt is not None and prompt == settings.get("instructions"):
        carried.append("system_prompt")
    columns = {
        k: v
        for k, v in values.items()
        if session.cols.get(k) is not None and k != "id" and k not in carried
    }
    member: JSON = {"session": session.unit, "session_columns": columns}
    if carried:
        member["session_carried"] = carried
    encoded = {k: how for k, how in encoded.items() if k in columns}
    if encoded:
        member["session_encoded"] = encoded
    return Custom(ts=ts, ns="hermes", data={"kind": "session"}, unknown={"hermes": member})


def settings_delta(before: JSON, after: JSON, ts: str, session: Session) -> Config | None:
    """The config delta from one segment's settings to the next's: the changed members, or
    a ``replace`` with all of them when one must be removed; None when nothing changed."""
    if before == after:
        return None
    member = {"hermes": {"part": "settings", "session": session.unit}}
    if set(before) - set(after):
        return with_settings(Config(ts=ts, replace=True, unknown=member), after)
    changed = {k: v for k, v in after.items() if before.get(k) != v}
    return with_settings(Config(ts=ts, unknown=member), changed)


def with_settings(config: Config, settings: JSON) -> Config:
    """The config entry with the settings' members."""
    return attrs.evolve(
        config,
        model=settings.get("model"),
        instructions=settings.get("instructions"),
        reasoning=settings.get("reasoning"),
    )


def usage_entry(session: Session, cols: Columns, ts: str) -> Custom:
    """A ``session_model_usage`` row: a ``custom`` entry. An auxiliary task's row (title
    generation, compression, vision...) records calls no response entry holds, so its
    ``data.usage`` counts them; the main loop's row (``task = ''``) totals calls the response
    entries already hold and carries no ``usage``, so cost totals do not count them twice."""
    row = cols.to_json_value(frozenset())
    data: JSON = {"kind": "model_usage", "task": row.get("task") or "", "model": row.get("model")}
    if row.get("task"):
        inp, out = cols.int("input_tokens") or 0, cols.int("output_tokens") or 0
        data["usage"] = {
            "input_tokens": inp,
            "output_tokens": out,
            "total_tokens": inp + out,
            "input_tokens_details": {"cached_tokens": cols.int("cache_read_tokens") or 0},
            "output_tokens_details": {"reasoning_tokens": cols.int("reasoning_tokens") or 0},
        }
    values, encoded = cols.to_exact_json()
    columns = {k: v for k, v in values.items() if cols.get(k) is not None and k != "session_id"}
    member = with_columns(
        {"row": usage_unit(session, cols)},
        columns,
        {k: e for k, e in encoded.items() if k in columns},
    )
    return Custom(ts=ts, ns="hermes", data=data, unknown={"hermes": member})


def usage_unit(session: Session, cols: Columns) -> str:
    """How findings name a ``session_model_usage`` row: its session's identity in that table,
    then its primary key."""
    row = cols.to_json_value(frozenset())
    key = "/".join(
        str(row.get(k, ""))
        for k in ("model", "billing_provider", "billing_base_url", "billing_mode", "task")
    )
    return session.unit.replace(":sessions/", ":session_model_usage/", 1) + f"/{key}"


def delegation_unit(database: str, delegation: Delegation) -> str:
    """How findings name an ``async_delegations`` row."""
    return f"{database}:async_delegations/{delegation.id}"


def delegation_entry(database: str, delegation: Delegation, ts: str) -> Custom:
    """An ``async_delegations`` row (a background delegation this session dispatched): a
    ``custom`` entry; its result also arrives as a message row, which is context."""
    values, encoded = delegation.cols.to_exact_json()
    columns = {k: v for k, v in values.items() if delegation.cols.get(k) is not None}
    data: JSON = {"kind": "async_delegation", "state": delegation.state}
    member = with_columns(
        {"row": delegation_unit(database, delegation)},
        columns,
        {k: e for k, e in encoded.items() if k in columns},
    )
    return Custom(ts=ts, ns="hermes", data=data, unknown={"hermes": member})
