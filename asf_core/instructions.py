"""Resolve ``instructions_parts`` and ``instructions_omitted`` deltas against the path.

A config entry lists the complete ordered list in force after it, but may name an unchanged
part by the hash of its text, or a run of unchanged elements by ``{"keep": n}`` (optionally
``"of"`` another config's list), so that a one-line change to a 100-part prompt costs one part.
Resolving those references needs what the path held before the entry: the list in force, the
texts that left force under each id (0.11 hand-back by hash) and the lists earlier config
entries put in force (``of``). These functions are pure; :mod:`asf_core.context` owns that state.

An element that cannot be resolved is kept verbatim and reported: for parts the instructions
string then cannot be rebuilt (unless the entry also carries it), for omitted lists the element
simply stays as written. So a list in force may hold anything a file wrote (a number, an array):
every function here takes such elements as they come.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from hashlib import sha256
from typing import Any

from attrs import frozen

__all__ = [
    "SEPARATOR",
    "History",
    "Resolved",
    "depart",
    "join_parts",
    "part_resolved",
    "resolve_omitted",
    "resolve_parts",
    "text_hash",
]

#: Joins part texts into the instructions string the request carries.
SEPARATOR = "\n\n"

Part = dict[str, Any]
#: Per part id, the (text, source) pairs that left force under that id, oldest first.
History = dict[str, list[tuple[str, str | None]]]


@frozen(kw_only=True)
class Resolved:
    """A resolved list, with one line per element that had to be kept verbatim."""

    elements: tuple[dict[str, Any], ...]
    problems: tuple[str, ...] = ()


def text_hash(text: str) -> str:
    """The hash a part is named by: ``sha256:`` + hex SHA-256 of its UTF-8 text (not JCS)."""
    return "sha256:" + sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def part_resolved(part: Any) -> bool:
    """Whether a part in force has its text (an unresolved one is kept as written)."""
    return isinstance(part, Mapping) and isinstance(part.get("text"), str)


def _id_of(element: Any) -> str | None:
    """An element's ``id`` when it is an object with a string one."""
    ident = element.get("id") if isinstance(element, Mapping) else None
    return ident if isinstance(ident, str) else None


def join_parts(parts: Sequence[Any]) -> str | None:
    """The instructions string of resolved parts; ``None`` if any part lacks its text."""
    if not all(part_resolved(p) for p in parts):
        return None
    return SEPARATOR.join(str(p["text"]) for p in parts)


def _part(ident: str, text: str, source: Any) -> Part:
    out: Part = {"id": ident, "text": text}
    if isinstance(source, str):
        out["source"] = source
    return out


def _keep_count(element: Mapping[str, Any]) -> int | None:
    keep = element.get("keep")
    if isinstance(keep, int) and not isinstance(keep, bool) and keep > 0:
        return keep
    return None


class _Cursor:
    """The keep cursor over one list: naming an element of the list moves it past that element;
    ``keep n`` takes the next n. Taking an element twice (or past the end) fails."""

    def __init__(self, elements: Sequence[Any]) -> None:
        self.elements = elements
        self.pos = 0
        self.taken: set[int] = set()
        self.index = {ident: i for i, e in enumerate(elements) if (ident := _id_of(e)) is not None}

    def name(self, ident: str) -> None:
        i = self.index.get(ident)
        if i is not None:
            self.pos = i + 1
            self.taken.add(i)

    def keep(self, n: int) -> list[Any] | None:
        span = range(self.pos, self.pos + n)
        if span.stop > len(self.elements) or self.taken.intersection(span):
            return None
        self.taken.update(span)
        self.pos = span.stop
        return [self.elements[i] for i in span]


def resolve_parts(delta: Sequence[Any], in_force: Sequence[Any], history: History) -> Resolved:
    """The parts in force after a delta's ``instructions_parts``.

    ``in_force`` is the list before the entry (empty after a ``replace``); ``history`` holds
    the texts that left force since the last replace or checkpoint. A hash resolves against
    the in-force part of that id first, then the most recent departed text with that hash.
    """
    cursor = _Cursor(in_force)
    by_id = {ident: p for p in in_force if (ident := _id_of(p)) is not None}
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    for n, element in enumerate(delta):
        if not isinstance(element, dict):
            out.append(element)
            problems.append(f"instructions_parts[{n}] is not an object")
            continue
        ident = element.get("id")
        if isinstance(ident, str):
            cursor.name(ident)
            resolved = _resolve_named_part(element, ident, by_id, history)
            if resolved is None:
                out.append(dict(element))
                problems.append(f"instructions_parts[{n}] ({ident}): text not on the path")
            else:
                out.append(resolved)
            continue
        count = _keep_count(element)
        kept = cursor.keep(count) if count is not None else None
        if kept is None:
            out.append(dict(element))
            problems.append(f"instructions_parts[{n}]: no id and no keep that fits the list")
        else:
            out.extend(_copy(p) for p in kept)
    return Resolved(elements=tuple(out), problems=tuple(problems))


def _copy(element: Any) -> Any:
    return dict(element) if isinstance(element, Mapping) else element


def _resolve_named_part(
    element: Mapping[str, Any], ident: str, by_id: Mapping[str, Mapping[str, Any]], history: History
) -> Part | None:
    source = element.get("source")
    if "text" in element:
        text = element["text"]
        return _part(ident, text, source) if isinstance(text, str) else None
    want = element.get("hash")
    if want is None:
        return _part(ident, "", source)  # {"id"} alone: the part is empty
    if not isinstance(want, str):
        return None
    current = by_id.get(ident)
    if current is not None and part_resolved(current) and text_hash(current["text"]) == want:
        return _part(
            ident, current["text"], source if "source" in element else current.get("source")
        )
    for text, old_source in reversed(history.get(ident, [])):
        if text_hash(text) == want:
            return _part(ident, text, source if "source" in element else old_source)
    return None


def depart(before: Sequence[Any], after: Sequence[Any], history: History) -> None:
    """Record in ``history`` every resolved part of ``before`` that ``after`` removed or changed."""
    now = {ident: p.get("text") for p in after if (ident := _id_of(p)) is not None}
    for part in before:
        ident = _id_of(part)
        if ident is None or not part_resolved(part):
            continue
        if ident not in now or now[ident] != part["text"]:
            source = part.get("source")
            history.setdefault(ident, []).append(
                (part["text"], source if isinstance(source, str) else None)
            )


def resolve_omitted(
    delta: Sequence[Any], in_force: Sequence[Any], lists: Mapping[str, Sequence[Any]]
) -> Resolved:
    """The ``instructions_omitted`` list after a delta.

    ``{"keep": n}`` counts over ``in_force`` (the list before the entry); with ``"of"`` it
    counts over ``lists[of]``, the list that earlier config entry put in force, each list with
    its own cursor. Unresolvable elements stay as written.
    """
    cursors: dict[str | None, _Cursor] = {None: _Cursor(in_force)}
    for element in delta:
        if isinstance(element, dict) and isinstance(element.get("of"), str):
            of = element["of"]
            if of in lists and of not in cursors:
                cursors[of] = _Cursor(lists[of])
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    for n, element in enumerate(delta):
        if not isinstance(element, dict):
            out.append(element)
            problems.append(f"instructions_omitted[{n}] is not an object")
            continue
        ident = element.get("id")
        if isinstance(ident, str):
            for each in cursors.values():
                each.name(ident)
            out.append(dict(element))
            continue
        count = _keep_count(element)
        of = element.get("of")
        cursor: _Cursor | None = None
        if isinstance(of, str):
            cursor = cursors.get(of)
        elif "of" not in element:
            cursor = cursors[None]
        kept = cursor.keep(count) if cursor is not None and count is not None else None
        if kept is None:
            out.append(dict(element))
            where = f" of {of}" if isinstance(of, str) else ""
            problems.append(f"instructions_omitted[{n}]: keep{where} cannot be resolved")
        else:
            out.extend(_copy(e) for e in kept)
    return Resolved(elements=tuple(out), problems=tuple(problems))
