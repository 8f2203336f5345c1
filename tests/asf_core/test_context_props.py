"""Property tests of the context builder over generated linear sessions."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from asf_core.canonical import sha256_of
from asf_core.context import build_context, omit_in_force
from asf_core.instructions import SEPARATOR, text_hash
from asf_core.model import Compaction, Config, Entry, Item, Queued, Run
from asf_core.replay import Replay, replay_step
from asf_core.request import HashCache, request_body, request_hash

TS = "2026-10-01T12:00:00Z"


def _chain(entries: list[Entry]) -> list[Entry]:
    """Give generated entries ids and parent links: e0 <- e1 <- ..."""
    import attrs

    out: list[Entry] = []
    for i, entry in enumerate(entries):
        out.append(attrs.evolve(entry, id=f"e{i}", parent=f"e{i - 1}" if i else None))
    return out


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


texts = st.text(max_size=8)
items = st.builds(lambda t: Item(ts=TS, item=_message(t)), texts)
records = st.one_of(
    st.builds(lambda: Run(ts=TS, run_id="r", phase="start", source="input")),
    st.builds(lambda t: Queued(ts=TS, item=_message(t), mode="steer"), texts),
)
configs = st.builds(lambda m: Config(ts=TS, model=m), st.sampled_from(["a", "b", "c"]))
entries = st.lists(st.one_of(items, records, configs), max_size=25)


def _item_entries(path: list[Entry]) -> list[Item]:
    return [e for e in path if isinstance(e, Item)]


@given(entries)
def test_items_are_the_item_entries_on_the_path(raw: list[Entry]) -> None:
    path = _chain(raw)
    ctx = build_context(path)
    assert ctx.items == [e.item for e in _item_entries(path)]
    assert ctx.item_entries == [e.id for e in _item_entries(path)]
    assert ctx.entries == [e.id for e in path]
    assert ctx.omitted == []
    assert ctx.problems == []


@given(entries, entries, st.data())
def test_compaction_keeps_first_kept_onwards(
    before: list[Entry], after: list[Entry], data: st.DataObject
) -> None:
    summary = _message("summary")
    pinned = data.draw(st.lists(texts.map(_message), max_size=3))
    head = before or [Item(ts=TS, item=_message("only"))]
    kept = data.draw(st.integers(0, len(head) - 1))
    comp = Compaction(
        ts=TS,
        first_kept=f"e{kept}",
        summary=summary,
        pinned=tuple(pinned),
        config={"model": "m", "extra": {"k": 1}},
    )
    path = _chain([*head, comp, *after])
    cut = len(head)
    ctx = build_context(path)
    window = [*path[kept:cut], *path[cut + 1 :]]
    assert ctx.entries == [path[cut].id] + [e.id for e in window]
    assert ctx.items == [summary, *pinned] + [e.item for e in _item_entries(window)]
    assert ctx.item_entries == [path[cut].id] * (1 + len(pinned)) + [
        e.id for e in _item_entries(window)
    ]
    models = [e.model for e in after if isinstance(e, Config)]
    assert ctx.settings.get("model") == (models[-1] if models else "m")
    assert ctx.settings.get("extra") == {"k": 1}
    assert ctx.problems == []


@given(entries, st.data())
def test_items_the_omit_names_leave_the_context_alone(
    raw: list[Entry], data: st.DataObject
) -> None:
    """SPEC 4.3 ``omit.items`` on its own (no reasoning rule): each item entry it names
    contributes nothing but stays on the path, reported as omitted; the rest keep their
    order, and a name of no entry on the path changes nothing."""
    on_path = [f"e{i}" for i, e in enumerate(raw) if isinstance(e, Item)]
    named = data.draw(st.lists(st.sampled_from([*on_path, "elsewhere"]), unique=True))
    path = _chain([*raw, Config(ts=TS, omit={"items": named})])
    ctx = build_context(path)
    kept = [e for e in _item_entries(path) if e.id not in named]
    assert ctx.items == [e.item for e in kept]
    assert ctx.item_entries == [e.id for e in kept]
    assert ctx.omitted == [
        {"entry": e.id, "reason": "items"} for e in _item_entries(path) if e.id in named
    ]
    assert ctx.entries == [e.id for e in path]
    replay = Replay()
    for entry in path:
        replay = replay_step(replay, entry)
    assert omit_in_force(replay) is bool(named)


extra_values = st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=3))
extra_deltas = st.dictionaries(st.sampled_from(["t", "u", "acme:x", "v"]), extra_values)


@given(st.lists(st.tuples(extra_deltas, st.booleans()), max_size=10))
def test_extra_merge_equals_a_dict_model(deltas: list[tuple[dict[str, Any], bool]]) -> None:
    model: dict[str, Any] = {}
    raw: list[Entry] = []
    for delta, replace in deltas:
        raw.append(Config(ts=TS, extra=delta, replace=replace or None))
        if replace:
            model = {}
        for key, value in delta.items():
            if value is None:
                model.pop(key, None)
            else:
                model[key] = value
    assert build_context(_chain(raw)).settings.get("extra", {}) == model


names = st.sampled_from(["grep", "bash", "read", "edit"])
tools = st.builds(
    lambda name, d: {"type": "function", "name": name, "description": d}, names, texts
)


@given(st.lists(st.tuples(st.lists(tools, max_size=3), st.lists(names, max_size=2)), max_size=8))
def test_tools_equal_a_list_model(deltas: list[tuple[list[dict[str, Any]], list[str]]]) -> None:
    model: list[dict[str, Any]] = []
    raw: list[Entry] = []
    for added, removed in deltas:
        raw.append(Config(ts=TS, tools_added=tuple(added), tools_removed=tuple(removed)))
        model = [t for t in model if t["name"] not in removed]
        for tool in added:
            # same name: the old one goes, the new one is appended (reference order)
            model = [t for t in model if t["name"] != tool["name"]]
            model.append(tool)
    assert build_context(_chain(raw)).settings.get("tools", []) == model


# --- instructions parts ------------------------------------------------------------------

part_ids = st.sampled_from([f"p{i}" for i in range(10)])
sources = st.one_of(st.none(), st.sampled_from(["product", "agentsmd"]))


def _mk(ident: str, text: str, source: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": ident, "text": text}
    if source is not None:
        out["source"] = source
    return out


part_lists = st.lists(
    st.tuples(part_ids, texts, sources), unique_by=lambda p: p[0], max_size=8
).map(lambda ps: [_mk(*p) for p in ps])


def _delta(old: list[dict[str, Any]], new: list[dict[str, Any]], spell_source: bool) -> list[Any]:
    """How a writer names ``new`` against ``old``: keep runs, hashes for moved-but-unchanged."""
    index = {p["id"]: i for i, p in enumerate(old)}
    out: list[Any] = []
    cursor = run = 0
    for part in new:
        if cursor < len(old) and old[cursor] == part:
            run, cursor = run + 1, cursor + 1
            continue
        if run:
            out.append({"keep": run})
            run = 0
        at = index.get(part["id"])
        if at is not None and old[at] == part:
            ref: dict[str, Any] = {"id": part["id"], "hash": text_hash(part["text"])}
            if spell_source and "source" in part:
                ref["source"] = part["source"]
            out.append(ref)
        else:
            out.append(part)
        if at is not None:
            cursor = at + 1
    if run:
        out.append({"keep": run})
    return out


@given(part_lists, st.booleans(), st.data())
def test_parts_with_keep_runs_rebuild_the_explicit_list(
    old: list[dict[str, Any]], spell_source: bool, data: st.DataObject
) -> None:
    # The new list: the old parts in order, each kept, edited or dropped, plus new ones.
    new: list[dict[str, Any]] = []
    for part in old:
        action = data.draw(st.sampled_from(["keep", "keep", "edit", "drop"]))
        if action == "keep":
            new.append(part)
        elif action == "edit":
            new.append(_mk(part["id"], part["text"] + "!", data.draw(sources)))
    for n, text in enumerate(data.draw(st.lists(texts, max_size=3))):
        new.insert(data.draw(st.integers(0, len(new))), _mk(f"n{n}", text, None))
    if data.draw(st.booleans()):
        new = data.draw(st.permutations(new))
    root = Config(ts=TS, model="m", replace=True, instructions_parts=tuple(old))
    delta = Config(ts=TS, instructions_parts=tuple(_delta(old, new, spell_source)))
    ctx = build_context(_chain([root, delta]))
    explicit = build_context(_chain([Config(ts=TS, model="m", instructions_parts=tuple(new))]))
    assert ctx.settings == explicit.settings
    assert ctx.settings.get("instructions_parts", []) == new
    assert ctx.settings.get("instructions", "") == SEPARATOR.join(p["text"] for p in new)
    assert ctx.instructions_rebuilt
    assert ctx.problems == []


@given(part_lists.filter(bool), st.lists(texts, min_size=1, max_size=3))
def test_departed_text_is_named_by_hash_later(
    old: list[dict[str, Any]], interim: list[str]
) -> None:
    """Hand-back: parts replaced by another agent's come back by hash alone."""
    root = Config(ts=TS, model="a", replace=True, instructions_parts=tuple(old))
    other = Config(
        ts=TS,
        model="b",
        instructions_parts=tuple(_mk(f"q{i}", t, None) for i, t in enumerate(interim)),
    )
    back = Config(
        ts=TS,
        model="a",
        instructions_parts=tuple({"id": p["id"], "hash": text_hash(p["text"])} for p in old),
    )
    ctx = build_context(_chain([root, other, back]))
    assert ctx.settings.get("instructions_parts") == old
    assert ctx.instructions_rebuilt
    # A replace forgets what departed: the same hand-back no longer resolves.
    wiped = Config(ts=TS, model="b", replace=True, instructions="x")
    ctx = build_context(_chain([root, other, wiped, back]))
    assert not ctx.instructions_rebuilt


omitted_ids = st.sampled_from([f"o{i}" for i in range(12)])
omitted_lists = st.lists(omitted_ids, unique=True, max_size=10).map(
    lambda ids: [{"id": i, "reason": "budget", "size": len(i)} for i in ids]
)


@given(omitted_lists, omitted_lists)
def test_omitted_keep_runs_and_of_rebuild_the_explicit_list(
    old: list[dict[str, Any]], extra: list[dict[str, Any]]
) -> None:
    new = [*old[: len(old) // 2], *[e for e in extra if e not in old], *old[len(old) // 2 :]]
    delta = _delta(old, new, spell_source=False)
    # Omitted elements carry the whole element, never a hash: spell named ones in full.
    delta = [e if "hash" not in e else next(o for o in old if o["id"] == e["id"]) for e in delta]
    root = Config(ts=TS, model="m", instructions_omitted=tuple(old))
    step = Config(ts=TS, instructions_omitted=tuple(delta))
    ctx = build_context(_chain([root, step]))
    assert ctx.settings.get("instructions_omitted", []) == new
    # Another list in between, then the first handed back with one ``of`` keep.
    between = Config(ts=TS, instructions_omitted=({"id": "zz", "reason": "r"},))
    back = Config(ts=TS, instructions_omitted=({"keep": len(new), "of": "e1"},) if new else ())
    ctx = build_context(_chain([root, step, between, back]))
    assert ctx.settings.get("instructions_omitted", []) == new
    assert ctx.problems == []


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)


#: ``extra`` names where the split around ``"input"`` and UTF-16 order are decided: names
#: either side of it, ``input`` itself (the items win over it), names the request sets
#: itself, and names from the top of the BMP and beyond it (code point order differs there).
extra_names = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["input", "inpu", "input1", "inputs", "ins", "j", "store", "model", "tools"]),
    st.sampled_from(["\ue000", "\uffff", "\U0001f600", "z\U00010000", "z\ufb01"]),
)


@given(
    st.lists(st.dictionaries(st.text(max_size=4), json_values, max_size=4), max_size=6),
    st.dictionaries(extra_names, json_values, max_size=5),
)
@example([{}], {"input1": 1, "input": 2, "inputs": 3, "\ue000": 4, "\U0001f600": 5})
def test_cached_hash_equals_plain_hash(
    raw_items: list[dict[str, Any]], extra: dict[str, Any]
) -> None:
    """The streamed hash (settings' bytes around the items, fed one by one) is the hash of
    the canonical request body, whatever ``extra`` names sort where."""
    path = _chain(
        [Config(ts=TS, model="m", instructions="i", extra=extra)]
        + [Item(ts=TS, item=item) for item in raw_items]
    )
    ctx = build_context(path)
    cache: HashCache = {}
    body = request_body(ctx)
    assert body["input"] == raw_items
    assert request_hash(ctx) == sha256_of(body)
    assert request_hash(ctx, cache=cache) == request_hash(ctx)
    assert request_hash(ctx, cache=cache) == request_hash(ctx)  # served from the cache
