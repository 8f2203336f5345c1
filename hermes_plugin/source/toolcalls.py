"""An assistant row's ``tool_calls`` and how Hermes pairs a tool row with a call.

Calls are kept as written (``raw``): providers put extra members in them
(``extra_content``, ``response_item_id``), and a converter writes them back
unchanged. The typed fields are read leniently: a member of an unexpected
JSON type reads as empty and stays in ``raw``.
"""

from __future__ import annotations

from attrs import frozen

from hermes_plugin.source.columns import Cell, json_cell_text
from hermes_plugin.source.jsontext import JsonValue, compact, parse, why_not

__all__ = ["NO_CALLS", "Function", "ToolCall", "ToolCalls", "decode_tool_calls", "result_aliases"]


def _member_text(obj: dict[str, JsonValue], name: str) -> str:
    value = obj.get(name)
    return value if isinstance(value, str) else ""


def _variants(value: str) -> list[str]:
    """A stripped id and each non-empty part of a ``a|b`` bridge id."""
    value = value.strip()
    if not value:
        return []
    out = [value]
    if "|" in value:
        out.extend(part.strip() for part in value.split("|") if part.strip())
    return out


def _unique(values: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


def result_aliases(tool_call_id: str) -> tuple[str, ...]:
    """The spellings a tool row's ``tool_call_id`` names a call by: it and its ``|`` parts."""
    return _unique(_variants(tool_call_id))


@frozen
class Function:
    """A call's function: its name and its arguments as written.

    ``arguments`` is normally a JSON string (OpenAI); some providers write an
    object. ``has_arguments`` says the member is present.
    """

    name: str
    arguments: JsonValue
    has_arguments: bool
    raw: dict[str, JsonValue]

    @classmethod
    def from_json(cls, obj: dict[str, JsonValue]) -> Function:
        return cls(
            name=_member_text(obj, "name"),
            arguments=obj.get("arguments"),
            has_arguments="arguments" in obj,
            raw=obj,
        )


@frozen
class ToolCall:
    """One entry of ``tool_calls``: ``{id, call_id?, response_item_id?, type, function}``."""

    id: str
    call_id: str
    response_item_id: str
    type: str
    function: Function | None
    raw: dict[str, JsonValue]

    @classmethod
    def from_json(cls, obj: dict[str, JsonValue]) -> ToolCall:
        function = obj.get("function")
        return cls(
            id=_member_text(obj, "id"),
            call_id=_member_text(obj, "call_id"),
            response_item_id=_member_text(obj, "response_item_id"),
            type=_member_text(obj, "type"),
            function=Function.from_json(function) if isinstance(function, dict) else None,
            raw=obj,
        )

    @property
    def name(self) -> str:
        """The function's name; empty when the call has none."""
        return self.function.name if self.function else ""

    def aliases(self) -> tuple[str, ...]:
        """Every spelling that names the call, as newer Hermes pairs a result with it.

        Its ``call_id``, ``id`` and ``response_item_id``, stripped, and each
        part of one of the form ``a|b``.
        """
        values: list[str] = []
        for value in (self.call_id, self.id, self.response_item_id):
            values.extend(_variants(value))
        return _unique(values)

    def pairing_id(self) -> str:
        """The id Hermes pairs the call's result by.

        ``call_id`` before ``id`` (the first non-empty, stripped) and, of a
        bridge id ``<call_id>|<item id>``, the part before the bar.
        """
        for value in (self.call_id, self.id):
            value = value.strip()
            if value:
                return value.split("|", 1)[0].strip()
        return ""

    def arguments_text(self) -> str:
        """The arguments as a function call carries them: a JSON string's text,
        any other JSON value compacted, ``{}`` for none."""
        if self.function is None or self.function.arguments is None:
            return "{}"
        arguments = self.function.arguments
        if isinstance(arguments, str):
            return arguments
        return compact(arguments)


@frozen
class ToolCalls:
    """A decoded ``tool_calls`` column.

    ``value`` is the column's JSON value as Hermes' reader returns it (None when the column
    is NULL, empty or holds no JSON); ``calls`` its entries that are objects and ``bad`` the
    entries that are not; ``error`` says why the column is not a JSON array (Hermes then reads
    no calls); ``single`` that it held one object, read as a list of one.
    """

    calls: tuple[ToolCall, ...] = ()
    bad: tuple[JsonValue, ...] = ()
    error: str | None = None
    single: bool = False
    value: JsonValue = None

    @classmethod
    def of(cls, value: JsonValue) -> ToolCalls:
        """The calls a JSON value holds: an array's objects, or a single object as a list of
        one, as Hermes' ``_as_list`` reads it."""
        if isinstance(value, dict):
            return cls(calls=(ToolCall.from_json(value),), single=True, value=value)
        if not isinstance(value, list):
            return cls(error="not a JSON array", value=value)
        calls = tuple(ToolCall.from_json(entry) for entry in value if isinstance(entry, dict))
        bad = tuple(entry for entry in value if not isinstance(entry, dict))
        return cls(calls=calls, bad=bad, value=value)


#: The column of most rows: no calls (shared; a ToolCalls is immutable).
NO_CALLS = ToolCalls()


def decode_tool_calls(value: Cell) -> ToolCalls:
    """Read a ``tool_calls`` cell: a JSON array of calls.

    NULL and ``''`` (and an empty BLOB) hold no calls. A single object is read as a list of
    one, as Hermes' ``_as_list`` does. A BLOB (Hermes never writes one) holds the JSON text
    its bytes spell, as ``json.loads`` reads bytes in Hermes' reader.
    """
    if value is None or value == "" or value == b"":
        return NO_CALLS
    text = json_cell_text(value)
    if text is None:
        return ToolCalls(error="a BLOB that spells no text" if type(value) is bytes else "not text")
    decoded, ok = parse(text)
    if not ok:
        return ToolCalls(error=why_not(text))
    return ToolCalls.of(decoded)
