"""The one cattrs converter: ASF entries and headers, findings, reports and listings as JSON.

:func:`converter` builds it once, on first use (nothing happens at import). Its hooks are
cattrs' own generated functions with overrides: ``from_``/``pass_`` are renamed to their
wire names, optional members left out when absent, required ones always written (``null``
included), an Extension's ``kind`` written as ``type``.

ASF entries are open data: the converter never fails on a member it does not expect and never
coerces a value into the type the draft gives it (``"3"`` stays a string). Before the generated
function runs, :func:`_split` sorts the members: one that is unknown, or known but holding
another JSON type, or an optional member written as ``null``, goes verbatim into the object's
``unknown`` map and is written back from there. Hence ``unstructure(structure(obj)) == obj``
for every JSON object with a ``type`` and ``ts``, which keeps a re-written entry's hash.
Payloads (items, usage, settings) are plain JSON and pass through untouched, never walked.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import attrs
import cattrs
from cattrs.fns import identity
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from asf_core.findings import Finding
from asf_core.model import CORE_TYPES, Entry, Extension, Header, JSONObject, ParentRef

__all__ = [
    "ENTRY_ENVELOPE",
    "converter",
    "entry_from_json",
    "entry_to_json",
    "header_from_json",
    "header_to_json",
    "make_converter",
    "report_converter",
    "typed_members",
]

#: Envelope members handled by the envelope, not by a field of the entry's own.
ENTRY_ENVELOPE = ("type", "id", "parent", "parents", "ts")
_ENVELOPE_SET = frozenset(ENTRY_ENVELOPE)
#: Header members always present in a well-formed header; "" stands for a missing one.
_HEADER_REQUIRED = ("id", "created_at", "format", "payload", "type")

_Check = Callable[[Any], bool]


# --- which values a field takes as typed (anything else is kept in ``unknown``) -----------


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _parent_ref_ok(v: Any) -> bool:
    if not isinstance(v, dict) or not isinstance(v.get("entry"), str):
        return False
    return "session" not in v or isinstance(v["session"], str)


def _tuple_of(check: _Check) -> _Check:
    return lambda v: isinstance(v, list | tuple) and all(check(x) for x in v)


def _check_for(tp: Any) -> _Check:
    """The check for one field type of the model (a small, closed set of shapes)."""
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        if set(args) == {int, float}:
            return _is_number
        if len(args) == 1:
            return _check_for(args[0])
    checks: dict[Any, _Check] = {
        str: lambda v: isinstance(v, str),
        bool: lambda v: isinstance(v, bool),
        int: _is_int,
        Any: lambda v: v is not None,
        ParentRef: _parent_ref_ok,
    }
    if tp in checks:
        return checks[tp]
    if origin is dict or tp is dict:
        return lambda v: isinstance(v, dict)
    if origin is tuple:
        return _tuple_of(_check_for(typing.get_args(tp)[0]))
    raise TypeError(f"no check for field type {tp!r}")


def _wire(name: str) -> str:
    return name[:-1] if name.endswith("_") else name


@attrs.frozen
class _Field:
    name: str
    wire: str
    check: _Check
    required: bool


@cache
def _fields_of(cls: type) -> dict[str, _Field]:
    """The members a class types, by wire name (the envelope and ``unknown`` excluded)."""
    hints = typing.get_type_hints(cls)
    required = set(getattr(cls, "REQUIRED", ()))
    # ``kind`` is the type name of an Extension only; Outcome has a ``kind`` member of its own.
    skip = {"unknown"} | ({"kind"} if cls is Extension else set())
    if issubclass(cls, Entry):
        skip |= {"id", "parent", "parents", "ts"}
    out = [
        _Field(f.name, _wire(f.name), _check_for(hints[f.name]), f.name in required)
        for f in attrs.fields(cls)
        if f.name not in skip and f.init
    ]
    return {f.wire: f for f in out}


def typed_members(cls: type) -> frozenset[str]:
    """The members (wire names) a class types: one of them found in ``unknown`` was
    written with a value of another type (the envelope and ``unknown`` excluded)."""
    return _typed_members(cls)


@cache  # behind a plain function: the cache's typed signature takes a class as unhashable
def _typed_members(cls: type) -> frozenset[str]:
    return frozenset(_fields_of(cls))


def _split(cls: type, obj: Mapping[str, Any], handled: frozenset[str]) -> dict[str, Any]:
    """The members of ``obj`` the class types, by field name, plus ``unknown`` for the rest."""
    clean: dict[str, Any] = {}
    unknown: JSONObject = {}
    fields = _fields_of(cls)
    for key, value in obj.items():
        if key in handled:
            continue
        spec = fields.get(key)
        if spec is None:
            unknown[key] = value
        elif value is None and spec.required:
            continue  # a required member written as null: the field's None writes it back
        elif spec.check(value):
            clean[spec.name] = value
        else:
            unknown[key] = value
    clean["unknown"] = unknown
    return clean


def _envelope(obj: Mapping[str, Any], clean: dict[str, Any], cls: type[Entry]) -> None:
    """Move the envelope members into ``clean``; a mistyped one goes to ``unknown``."""
    odd: JSONObject = {}
    ts = obj.get("ts")
    if isinstance(ts, str):
        clean["ts"] = ts
    else:
        if "ts" in obj:
            odd["ts"] = ts
        clean["ts"] = ""
    for name in ("id", "parent"):
        value = obj.get(name)
        if isinstance(value, str):
            clean[name] = value
        elif value is not None:
            odd[name] = value
    if "parents" in obj:
        parents = obj["parents"]
        if parents and _tuple_of(_parent_ref_ok)(parents):
            clean["parents"] = parents
        else:
            odd["parents"] = parents
    if cls is Extension:
        kind = obj.get("type")
        if isinstance(kind, str):
            clean["kind"] = kind
        else:
            odd["type"] = kind
    if odd:
        clean["unknown"] = {**odd, **clean["unknown"]}


# --- the converter ---------------------------------------------------------------------


def _is_json(tp: Any) -> bool:
    """Payload types: plain JSON, never walked or copied by the converter."""
    return tp is Any or tp is dict or typing.get_origin(tp) in (dict, Mapping)


def _is_passed(tp: Any) -> bool:
    """Field types whose members are written as they are: payload JSON, a scalar, or either
    of them optional (cattrs' own hook for ``X | None`` is ``None`` or the hook of ``X``,
    the identity for these). The generated unstructure functions then read the attribute
    without a call (cattrs inlines :func:`cattrs.fns.identity`)."""
    if _is_json(tp) or tp in _PLAIN:
        return True
    if typing.get_origin(tp) not in (typing.Union, types.UnionType):
        return False
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    return len(args) == 1 and (_is_json(args[0]) or args[0] in _PLAIN)


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _is_plain(tp: Any) -> bool:
    """Scalars and unions of them: taken as they are (:func:`_split` checked their type)."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return all(arg in _PLAIN for arg in typing.get_args(tp))
    return tp in _PLAIN


def _entry_hooks(conv: cattrs.Converter, cls: type[Entry]) -> None:
    # Required members are written even when None (as null); none of them is renamed.
    shared: dict[str, Any] = {name: override(omit_if_default=False) for name in cls.REQUIRED}
    shared |= {
        f.name: override(rename=_wire(f.name))
        for f in attrs.fields(cls)
        if f.name.endswith("_") and f.init
    }
    if cls is Extension:
        shared["kind"] = override(rename="type", omit_if_default=False)
    # _split keys the members by field name: structuring needs no renames. Generated on
    # first use: converting structures no entry (it only unstructures them).
    structure = cache(lambda: make_dict_structure_fn(cls, conv))
    unstructure = make_dict_unstructure_fn(
        cls,
        conv,
        _cattrs_omit_if_default=True,
        unknown=override(omit=True),
        parent=override(omit_if_default=False),
        ts=override(omit_if_default=False),
        **shared,
    )
    type_name = cls.TYPE

    def from_json(obj: Any, _: Any = None) -> Entry:
        if not isinstance(obj, dict):
            raise cattrs.errors.StructureHandlerNotFoundError("an entry is a JSON object", cls)
        clean = _split(cls, obj, _ENVELOPE_SET)
        _envelope(obj, clean, cls)
        entry: Entry = structure()(clean, cls)
        return entry

    def to_json(entry: Entry) -> JSONObject:
        out: JSONObject = unstructure(entry)
        if type_name:
            out["type"] = type_name
        out.update(entry.unknown)
        return out

    conv.register_structure_hook(cls, from_json)
    conv.register_unstructure_hook(cls, to_json)


def _header_hooks(conv: cattrs.Converter) -> None:
    required: dict[str, Any] = {n: override(omit_if_default=False) for n in _HEADER_REQUIRED}
    structure = make_dict_structure_fn(Header, conv)
    unstructure = make_dict_unstructure_fn(
        Header, conv, _cattrs_omit_if_default=True, unknown=override(omit=True), **required
    )

    def from_json(obj: Any, _: Any = None) -> Header:
        if not isinstance(obj, dict):
            raise cattrs.errors.StructureHandlerNotFoundError("a header is a JSON object", Header)
        clean = _split(Header, obj, frozenset())
        for name in _HEADER_REQUIRED:
            clean.setdefault(name, "")
        header: Header = structure(clean, Header)
        return header

    def to_json(header: Header) -> JSONObject:
        out: JSONObject = unstructure(header)
        for name in _HEADER_REQUIRED:
            if out.get(name) == "":
                del out[name]
        out.update(header.unknown)
        return out

    conv.register_structure_hook(Header, from_json)
    conv.register_unstructure_hook(Header, to_json)


def _parent_ref_hooks(conv: cattrs.Converter) -> None:
    structure = make_dict_structure_fn(ParentRef, conv)
    unstructure = make_dict_unstructure_fn(
        ParentRef, conv, _cattrs_omit_if_default=True, unknown=override(omit=True)
    )

    def from_json(obj: Any, _: Any = None) -> ParentRef:
        clean = {k: v for k, v in obj.items() if k in ("entry", "session")}
        clean["unknown"] = {k: v for k, v in obj.items() if k not in ("entry", "session")}
        ref: ParentRef = structure(clean, ParentRef)
        return ref

    def to_json(ref: ParentRef) -> JSONObject:
        out: JSONObject = unstructure(ref)
        out.update(ref.unknown)
        return out

    conv.register_structure_hook(ParentRef, from_json)
    conv.register_unstructure_hook(ParentRef, to_json)


def make_converter() -> cattrs.Converter:
    """Build the converter with every hook registered: the only place hooks are set.

    Simple types first (payload JSON passes through untouched), then the ASF classes, then
    what the command prints: findings leave out empty members.
    """
    conv = cattrs.Converter(unstruct_collection_overrides={tuple: list})
    conv.register_structure_hook_func(_is_json, lambda value, _: value)
    conv.register_structure_hook_func(_is_plain, lambda value, _: value)
    conv.register_unstructure_hook_func(_is_passed, identity)
    _parent_ref_hooks(conv)
    for cls in (*CORE_TYPES.values(), Extension):
        _entry_hooks(conv, cls)
    conv.register_structure_hook(Entry, lambda obj, _: conv.structure(obj, _entry_class(obj)))
    conv.register_unstructure_hook(Entry, lambda entry: conv.unstructure(entry, type(entry)))
    _header_hooks(conv)
    _finding_hook(conv)
    return conv


def _finding_hook(conv: cattrs.Converter) -> None:
    """Findings as the command prints them: empty members left out."""
    conv.register_unstructure_hook(
        Finding,
        make_dict_unstructure_fn(
            Finding, conv, _cattrs_omit_if_default=True, kind=override(omit_if_default=False)
        ),
    )


@cache
def report_converter() -> cattrs.Converter:
    """A converter for what holds findings but no entries (reports, listings): the findings'
    hook alone, so writing a report does not generate every entry class's hooks (which a run
    that converts nothing never needs)."""
    conv = cattrs.Converter(unstruct_collection_overrides={tuple: list})
    _finding_hook(conv)
    return conv


@cache
def converter() -> cattrs.Converter:
    """The converter, built on first use."""
    return make_converter()


def _entry_class(obj: Any) -> type[Entry]:
    """The class an entry object structures into: its core type, else :class:`Extension`."""
    kind = obj.get("type") if isinstance(obj, dict) else None
    return CORE_TYPES.get(kind, Extension) if isinstance(kind, str) else Extension


def entry_from_json(obj: Mapping[str, Any]) -> Entry:
    """Structure one parsed entry line; never fails on content (see the module docstring)."""
    entry: Entry = converter().structure(obj, _entry_class(obj))
    return entry


#: Each entry class's unstructure hook, asked of the converter once: its dispatch, per entry,
#: cost as much as the generated hook itself.
_TO_JSON: dict[type[Entry], Callable[[Entry], JSONObject]] = {}


def entry_to_json(entry: Entry) -> JSONObject:
    """The JSON object of an entry, exactly as it was read or built."""
    hook = _TO_JSON.get(type(entry))
    if hook is None:
        hook = _TO_JSON[type(entry)] = converter().get_unstructure_hook(type(entry))
    return hook(entry)


def header_from_json(obj: Mapping[str, Any]) -> Header:
    """Structure a header line, keeping unknown and mistyped members."""
    header: Header = converter().structure(obj, Header)
    return header


def header_to_json(header: Header) -> JSONObject:
    """The JSON object of a header."""
    out: JSONObject = converter().unstructure(header, Header)
    return out
