"""The request behind a response: its context, its canonical body and its hash (7.1, 7.2).

A response's request is the context at the response with the response's own output items
taken out. Its canonical Open Responses body hashes to the ``request_hash`` a writer records,
which is how a verifier proves a file rebuilds what the model received.
"""

from __future__ import annotations

from collections.abc import Sequence
from hashlib import sha256
from typing import TYPE_CHECKING, Any

from asf_core import canonical
from asf_core.context import Context, ContextError, build_context
from asf_core.model import Entry, Item, Response

if TYPE_CHECKING:
    from asf_core.session_file import SessionFile

__all__ = [
    "HashCache",
    "body_parts",
    "output_entries",
    "request_body",
    "request_context",
    "request_hash",
    "request_hashes",
]

JSON = dict[str, Any]


def output_entries(path: Sequence[Entry], response: Response) -> list[int]:
    """Indices in ``path`` of ``response``'s own output items, in path order (section 7.1).

    Walking back from the end: non-item entries are skipped, an item carrying the response's
    ``response_id`` is output, and the first item carrying another (or no) id stops the walk.
    """
    if not response.response_id:
        return []
    found: list[int] = []
    for i in range(len(path) - 1, -1, -1):
        entry = path[i]
        if entry is response or not isinstance(entry, Item):
            continue
        if entry.response != response.response_id:
            break
        found.append(i)
    return found[::-1]


def request_context(session: SessionFile, response_id: str) -> Context:
    """The context of the request that produced the response entry ``response_id``.

    That is the path up to the response with the response's own output items removed (and
    the response entry itself); every other entry stays, so records written between output
    items change nothing.
    """
    entry = session.by_id.get(response_id)
    if entry is None:
        raise ContextError(f"no entry {response_id} in the session")
    if not isinstance(entry, Response):
        raise ContextError(f"entry {response_id} is a {entry.type}, not a response")
    path = session.path_to(response_id)[:-1]
    output = set(output_entries(path, entry))
    return build_context([e for i, e in enumerate(path) if i not in output])


def request_body(ctx: Context) -> dict[str, Any]:
    """The canonical Open Responses request of a context (section 7.2).

    ``extra`` members are flattened to the top level; ``store`` is false and there is no
    ``previous_response_id``. Raises :class:`ContextError` when the instructions cannot be
    rebuilt, since a request without them would be a different request.
    """
    if not ctx.instructions_rebuilt:
        raise ContextError("the instructions cannot be rebuilt: " + "; ".join(ctx.problems))
    return {**_settings_members(ctx.settings), "input": list(ctx.items)}


def _settings_members(s: dict[str, Any]) -> dict[str, Any]:
    """The members of a request body that come from its settings (``input`` set after)."""
    body: JSON = dict(s.get("extra", {}))
    if "model" in s:
        body["model"] = s["model"]
    if s.get("instructions"):
        body["instructions"] = s["instructions"]
    if s.get("tools"):
        body["tools"] = s["tools"]
    for name in ("reasoning", "text"):
        if name in s:
            body[name] = s[name]
    body["store"] = False
    return body


def _utf16(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def body_parts(settings: dict[str, Any]) -> tuple[bytes, bytes]:
    """The canonical bytes of a request body around its items: ``{...,"input":[`` and
    ``],...}``, so that a hash can be fed the items in between one by one.

    Raises :class:`~asf_core.canonical.JsonError` for a setting that is not I-JSON.
    """
    members = _settings_members(settings)
    members.pop("input", None)
    keys = sorted(members, key=_utf16)
    split = sum(1 for k in keys if _utf16(k) < _utf16("input"))

    def join(names: list[str]) -> bytes:
        return b",".join(canonical.dumps(k) + b":" + canonical.dumps(members[k]) for k in names)

    before, after = keys[:split], keys[split:]
    head = b"{" + join(before) + (b"," if before else b"") + b'"input":['
    return head, b"]" + (b"," + join(after) if after else b"") + b"}"


#: Canonical bytes of items already hashed, keyed by ``id(item)``; the item itself is held so
#: its id cannot be reused while the entry lives in the cache.
HashCache = dict[int, tuple[Any, bytes]]


def request_hash(ctx: Context, *, cache: HashCache | None = None) -> str | None:
    """``sha256:`` of the JCS form of :func:`request_body`; ``None`` when it cannot be built.

    Requests along one path share ever longer item prefixes, so hashing every response of a
    session canonicalises the same items over and over; pass one ``cache`` dict for a run of
    calls over the same session to canonicalise each item once. The digest is identical.
    Raises :class:`~asf_core.canonical.JsonError` when a value in the request is not I-JSON.
    """
    if not ctx.instructions_rebuilt:
        return None
    if cache is None:
        return canonical.sha256_of(request_body(ctx))
    head, tail = body_parts(ctx.settings)
    digest = sha256(head)
    for i, item in enumerate(ctx.items):
        if i:
            digest.update(b",")
        digest.update(_item_bytes(item, cache))
    digest.update(tail)
    return "sha256:" + digest.hexdigest()


def _item_bytes(item: Any, cache: HashCache) -> bytes:
    hit = cache.get(id(item))
    if hit is not None and hit[0] is item:
        return hit[1]
    data = canonical.dumps(item)
    cache[id(item)] = (item, data)
    return data


def request_hashes(session: SessionFile) -> dict[str, str | None]:
    """The rebuilt request hash of every response entry whose path reaches a root.

    ``None`` marks a response whose request cannot be rebuilt (unresolvable instructions,
    or a value that is not I-JSON). Responses on a path cut short by a missing parent are
    left out: there is no request to rebuild.
    """
    cache: HashCache = {}
    out: dict[str, str | None] = {}
    for entry in session.entries:
        if not isinstance(entry, Response) or entry.id is None:
            continue
        if session.path_to(entry.id)[0].parent is not None:
            continue
        try:
            out[entry.id] = request_hash(request_context(session, entry.id), cache=cache)
        except canonical.JsonError:
            out[entry.id] = None
    return out
