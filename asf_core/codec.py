"""The one cattrs converter between ASF JSON objects and :mod:`asf_core.model` classes.

ASF entries are open data: the converter never fails on a member it does not expect and never
coerces a value into the type the draft gives it (``"3"`` stays a string). A member that is
unknown, or known but holding another JSON type, or an optional member written as ``null``,
goes verbatim into the object's ``unknown`` map and is written back from there. Hence
``unstructure(structure(obj)) == obj`` for every JSON object with a ``type`` and ``ts``, which
is what keeps a re-written entry's hash unchanged.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, TypeVar

import attrs
import cattrs

from asf_core.model import CORE_TYPES, Entry, Extension, Header, JSONObject, ParentRef

__all__ = [
    "ENTRY_ENVELOPE",
    "entry_from_json",
    "entry_to_json",
    "header_from_json",
    "header_to_json",
    "make_converter",
]

T = TypeVar("T")

#: Envelope members handled by the envelope, not by a field of the entry's own.
ENTRY_ENVELOPE = ("type", "id", "parent", "parents", "ts")

_Check = Callable[[Any], tuple[bool, Any]]


def _is_str(v: Any) -> tuple[bool, Any]:
    return isinstance(v, str), v


def _is_bool(v: Any) -> tuple[bool, Any]:
    return isinstance(v, bool), v


def _is_int(v: Any) -> tuple[bool, Any]:
    return isinstance(v, int) and not isinstance(v, bool), v


def _is_number(v: Any) -> tuple[bool, Any]:
    return isinstance(v, int | float) and not isinstance(v, bool), v


def _is_object(v: Any) -> tuple[bool, Any]:
    return isinstance(v, dict), v


def _is_any(v: Any) -> tuple[bool, Any]:
    return v is not None, v


def _tuple_of(check: _Check) -> _Check:
    def run(v: Any) -> tuple[bool, Any]:
        if not isinstance(v, list | tuple):
            return False, v
        out = []
        for x in v:
            ok, y = check(x)
            if not ok:
                return False, v
            out.append(y)
        return True, tuple(out)

    return run


def _parent_ref(v: Any) -> tuple[bool, Any]:
    if not isinstance(v, dict) or not isinstance(v.get("entry"), str):
        return False, v
    session = v.get("session")
    if session is not None and not isinstance(session, str):
        return False, v
    if "session" in v and session is None:
        return False, v
    unknown = {k: x for k, x in v.items() if k not in ("entry", "session")}
    return True, ParentRef(entry=v["entry"], session=session, unknown=unknown)


def _check_for(tp: Any) -> _Check:
    """The check for one field type of the model (a small, closed set of shapes)."""
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        if set(args) == {int, float}:
            return _is_number
        if len(args) == 1:
            return _check_for(args[0])
    if tp is str:
        return _is_str
    if tp is bool:
        return _is_bool
    if tp is int:
        return _is_int
    if tp is Any:
        return _is_any
    if tp is ParentRef:
        return _parent_ref
    if origin is dict or tp is dict:
        return _is_object
    if origin is tuple:
        return _tuple_of(_check_for(typing.get_args(tp)[0]))
    raise TypeError(f"no check for field type {tp!r}")


def _wire(name: str) -> str:
    return name[:-1] if name.endswith("_") else name


def _to_json(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_to_json(x) for x in v]
    if isinstance(v, ParentRef):
        out: JSONObject = {"entry": v.entry}
        if v.session is not None:
            out["session"] = v.session
        out.update(v.unknown)
        return out
    return v


@attrs.frozen
class _Field:
    name: str
    wire: str
    check: _Check
    required: bool


@cache
def _fields_of(cls: type) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls)
    required = set(getattr(cls, "REQUIRED", ()))
    # ``kind`` is the type name of an Extension only; Outcome has a ``kind`` member of its own.
    skip = {"unknown"} | ({"kind"} if cls is Extension else set())
    if issubclass(cls, Entry):
        skip |= {"id", "parent", "parents", "ts"}
    return tuple(
        _Field(f.name, _wire(f.name), _check_for(hints[f.name]), f.name in required)
        for f in attrs.fields(cls)
        if f.name not in skip and f.init
    )


def _structure_fields(cls: type, obj: Mapping[str, Any], handled: frozenset[str]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    by_wire = {f.wire: f for f in _fields_of(cls)}
    unknown: JSONObject = {}
    for key, value in obj.items():
        if key in handled:
            continue
        spec = by_wire.get(key)
        if spec is None:
            unknown[key] = value
            continue
        if value is None and spec.required:
            continue
        ok, typed = spec.check(value)
        if ok:
            kwargs[spec.name] = typed
        else:
            unknown[key] = value
    kwargs["unknown"] = unknown
    return kwargs


def _unstructure_fields(obj: Any, out: JSONObject) -> JSONObject:
    cls: type = type(obj)
    for spec in _fields_of(cls):
        value = getattr(obj, spec.name)
        if value is None and not spec.required:
            continue
        out[spec.wire] = _to_json(value)
    out.update(obj.unknown)
    return out


_ENVELOPE_SET = frozenset(ENTRY_ENVELOPE)


def _structure_entry(obj: Any, _: Any = None) -> Entry:
    if not isinstance(obj, dict):
        raise cattrs.errors.StructureHandlerNotFoundError("an entry must be a JSON object", Entry)
    kind = obj.get("type")
    cls: type[Entry] = CORE_TYPES.get(kind, Extension) if isinstance(kind, str) else Extension
    kwargs = _structure_fields(cls, obj, _ENVELOPE_SET)
    unknown = kwargs["unknown"]
    env_unknown: JSONObject = {}
    ts = obj.get("ts")
    if not isinstance(ts, str):
        if "ts" in obj:
            env_unknown["ts"] = ts
        ts = ""
    ident = obj.get("id")
    if ident is not None and not isinstance(ident, str):
        env_unknown["id"] = ident
        ident = None
    parent = obj.get("parent")
    if parent is not None and not isinstance(parent, str):
        env_unknown["parent"] = parent
        parent = None
    parents: tuple[ParentRef, ...] = ()
    if "parents" in obj:
        ok, typed = _tuple_of(_parent_ref)(obj["parents"])
        if ok and typed:
            parents = typed
        else:
            env_unknown["parents"] = obj["parents"]
    if cls is Extension:
        if isinstance(kind, str):
            kwargs["kind"] = kind
        else:
            env_unknown["type"] = kind
    kwargs["unknown"] = {**env_unknown, **unknown}
    return cls(ts=ts, id=ident, parent=parent, parents=parents, **kwargs)


def _unstructure_entry(entry: Entry) -> JSONObject:
    out: JSONObject = {"type": entry.type}
    if entry.id is not None:
        out["id"] = entry.id
    out["parent"] = entry.parent
    if entry.parents:
        out["parents"] = _to_json(entry.parents)
    out["ts"] = entry.ts
    return _unstructure_fields(entry, out)


#: Header members always present in a well-formed header; "" stands for a missing one.
_HEADER_REQUIRED = ("id", "created_at", "format", "payload", "type")


def _structure_header(obj: Any, _: Any = None) -> Header:
    if not isinstance(obj, dict):
        raise cattrs.errors.StructureHandlerNotFoundError("a header must be a JSON object", Header)
    kwargs = _structure_fields(Header, obj, frozenset())
    for name in _HEADER_REQUIRED:
        kwargs.setdefault(name, "")
    return Header(**kwargs)


def _unstructure_header(header: Header) -> JSONObject:
    out: JSONObject = {}
    for spec in _fields_of(Header):
        value = getattr(header, spec.name)
        if value is None or (value == "" and spec.name in _HEADER_REQUIRED):
            continue
        out[spec.wire] = _to_json(value)
    out.update(header.unknown)
    return out


def make_converter() -> cattrs.Converter:
    """Build the converter with every hook registered: the only place hooks are set."""
    conv = cattrs.Converter()
    conv.register_structure_hook_func(
        lambda t: isinstance(t, type) and issubclass(t, Entry), _structure_entry
    )
    conv.register_unstructure_hook_func(
        lambda t: isinstance(t, type) and issubclass(t, Entry), _unstructure_entry
    )
    conv.register_structure_hook(Header, _structure_header)
    conv.register_unstructure_hook(Header, _unstructure_header)
    conv.register_unstructure_hook(ParentRef, _to_json)
    return conv


_CONVERTER = make_converter()


def entry_from_json(obj: Mapping[str, Any]) -> Entry:
    """Structure one parsed entry line; never fails on content (see the module docstring)."""
    return _CONVERTER.structure(obj, Entry)


def entry_to_json(entry: Entry) -> JSONObject:
    """The JSON object of an entry, exactly as it was read or built."""
    out: JSONObject = _CONVERTER.unstructure(entry, Entry)
    return out


def header_from_json(obj: Mapping[str, Any]) -> Header:
    """Structure a header line, keeping unknown and mistyped members."""
    return _CONVERTER.structure(obj, Header)


def header_to_json(header: Header) -> JSONObject:
    """The JSON object of a header."""
    out: JSONObject = _CONVERTER.unstructure(header, Header)
    return out
