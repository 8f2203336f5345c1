"""The context algorithm against the conformance vectors: expected contexts and request hashes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from fixture_paths import SHARED

from asf_core.canonical import JsonError
from asf_core.context import ContextError, build_context, context_at
from asf_core.model import Compaction, Config, Custom, Entry, Item, Response
from asf_core.reader import FormatError, SessionFile, parse_session, read_session
from asf_core.request import (
    output_entries,
    request_body,
    request_context,
    request_hash,
    request_hashes,
)

VECTORS = SHARED / "asf" / "vectors" / "testdata"
CONTEXTS = sorted((VECTORS / "context").glob("*.json"))
SESSIONS = sorted((VECTORS / "sessions").glob("*.jsonl"))


def load(name: str) -> SessionFile:
    return read_session(VECTORS / "sessions" / f"{name}.jsonl")


def _leaf_cases() -> list[Any]:
    cases = []
    for path in CONTEXTS:
        for leaf in json.loads(path.read_text(encoding="utf-8")):
            cases.append(pytest.param(path.stem, leaf, id=f"{path.stem}-{leaf[7:19]}"))
    return cases


def _omitted_in_force(session: SessionFile, leaf: str) -> list[dict[str, Any]]:
    """The instructions_omitted list the last config on the path carries (written in full)."""
    lists = [
        e.instructions_omitted
        for e in session.path_to(leaf)
        if isinstance(e, Config) and e.instructions_omitted is not None
    ]
    return [dict(x) for x in lists[-1]]


@pytest.mark.parametrize(("name", "leaf"), _leaf_cases())
def test_context_vectors(name: str, leaf: str) -> None:
    want = json.loads((VECTORS / "context" / f"{name}.json").read_text(encoding="utf-8"))[leaf]
    session = load(name)
    ctx = context_at(session, leaf)
    settings = dict(ctx.settings)
    if name == "instructions":
        # This vector predates 0.8, where instructions_omitted became a setting in force
        # (see vectors/README: a newer version of the file exists upstream, not copied). The
        # list in force is the one the delta wrote in full; the rest must match exactly.
        assert settings.pop("instructions_omitted") == _omitted_in_force(session, leaf)
    assert settings == want["settings"]
    assert ctx.items == want["items"]
    assert ctx.entries == want["entries"]
    assert ctx.item_entries == want["item_entries"]
    assert ctx.omitted == want.get("omitted", [])
    assert len(ctx.items) == len(ctx.item_entries)


def _responses(session: SessionFile) -> list[Response]:
    return [e for e in session.entries if isinstance(e, Response) and e.request_hash]


def _walkable(session: SessionFile, entry: Entry) -> bool:
    """Whether the entry's path reaches a root (a missing parent cuts it short)."""
    return session.path_to(str(entry.id))[0].parent is None


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_request_hashes_recompute(path: Path) -> None:
    try:
        session = load(path.stem)
    except FormatError:
        assert path.stem == "unsupported-format"
        return
    for response in _responses(session):
        if not _walkable(session, response):
            assert session.problems  # only a damaged file may cut a path short
            continue
        got = request_hash(request_context(session, str(response.id)))
        if path.stem == "bad-omit" and got != response.request_hash:
            _assert_hash_counts_an_omitted_item(session, response)
            continue
        assert got == response.request_hash, response.response_id


def _assert_hash_counts_an_omitted_item(session: SessionFile, response: Response) -> None:
    """The divergence bad-omit carries: the recorded hash is the request with omit ignored."""
    ctx = request_context(session, str(response.id))
    assert ctx.omitted, "only a response whose context omits items may diverge"
    path = session.path_to(str(response.id))[:-1]
    out = set(output_entries(path, response))
    blind = [
        attrs.evolve(e, omit=None) if isinstance(e, Config) else e
        for i, e in enumerate(path)
        if i not in out
    ]
    assert request_hash(build_context(blind)) == response.request_hash


def test_bad_omit_has_exactly_one_divergent_hash() -> None:
    session = load("bad-omit")
    bad = [
        r
        for r in _responses(session)
        if request_hash(request_context(session, str(r.id))) != r.request_hash
    ]
    assert len(bad) == 1
    _assert_hash_counts_an_omitted_item(session, bad[0])
    # The same conversation written correctly (omit.jsonl) verifies everywhere.
    good = load("omit")
    assert all(
        request_hash(request_context(good, str(r.id))) == r.request_hash for r in _responses(good)
    )


def test_request_context_removes_only_the_responses_output() -> None:
    session = load("interleaved")
    for response in _responses(session):
        path = session.path_to(str(response.id))[:-1]
        ctx = request_context(session, str(response.id))
        output = {e.id for e in path if isinstance(e, Item) and e.response == response.response_id}
        assert output
        assert not output.intersection(ctx.entries)
        # Everything else on the path, custom records between output items included, stays.
        assert [e.id for e in path if e.id not in output] == ctx.entries
    customs = [e for e in session.entries if isinstance(e, Custom)]
    assert customs
    last = _responses(session)[-1]
    assert {str(c.id) for c in customs} <= set(request_context(session, str(last.id)).entries)


@pytest.mark.parametrize("name", ["basic", "interleaved"])
def test_output_entries_are_the_responses_items_in_path_order(name: str) -> None:
    session = load(name)
    several = 0
    for response in _responses(session):
        path = session.path_to(str(response.id))[:-1]
        found = output_entries(path, response)
        want = [
            i
            for i, e in enumerate(path)
            if isinstance(e, Item) and e.response == response.response_id
        ]
        assert found == want
        several += len(found) > 1
    assert several


def test_request_context_rejects_non_responses() -> None:
    session = load("basic")
    item = next(e for e in session.entries if isinstance(e, Item))
    with pytest.raises(ContextError, match="not a response"):
        request_context(session, str(item.id))
    with pytest.raises(ContextError, match="no entry"):
        request_context(session, "sha256:" + "0" * 64)
    with pytest.raises(ContextError, match="no entry"):
        context_at(session, "nope")


def test_request_body_shape() -> None:
    session = load("basic")
    first = _responses(session)[0]
    ctx = request_context(session, str(first.id))
    body = request_body(ctx)
    root = session.entries[0]
    assert isinstance(root, Config)
    assert root.extra is not None
    assert root.tools_added is not None
    assert body["store"] is False
    assert "previous_response_id" not in body
    assert "extra" not in body
    assert body["temperature"] == root.extra["temperature"]  # extra flattened
    assert body["reasoning"] == root.reasoning  # as stored, summary null included
    assert body["tools"] == list(root.tools_added)
    assert body["instructions"] == root.instructions
    assert body["input"] == ctx.items
    # After a bare replace, nothing but the model: instructions and tools are left out.
    compaction = load("compaction")
    leaf = compaction.entries[-1]
    body = request_body(context_at(compaction, str(leaf.id)))
    assert set(body) == {"model", "input", "store"}


def test_request_body_carries_the_reasoning_and_text_settings() -> None:
    """``reasoning`` and ``text`` (the output format) are request members as set."""
    reasoning = {"effort": "high", "summary": "auto"}
    text = {"format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}}}
    path = [
        Config(id="c", ts="2026-01-01T00:00:00Z", model="m", reasoning=reasoning, text=text),
        Item(id="i", parent="c", ts="2026-01-01T00:00:01Z", item={"type": "message"}),
    ]
    body = request_body(build_context(path))
    assert body == {
        "model": "m",
        "reasoning": reasoning,
        "text": text,
        "input": [{"type": "message"}],
        "store": False,
    }


def test_a_response_without_a_response_id_has_its_request_all_the_same() -> None:
    """A response that names no provider response owns no output items: its request is the
    whole path before it, and hashing it (alone or in a batch) raises nothing."""
    session = load("basic")
    first = _responses(session)[0]
    path = session.path_to(str(first.id))
    anonymous = attrs.evolve(first, response_id=None)
    assert output_entries(path[:-1], anonymous) == []
    ctx = build_context(path[:-1])
    assert request_context(session, str(first.id)).items != ctx.items  # with an id: fewer
    lines = (VECTORS / "sessions" / "basic.jsonl").read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b'"response_id":"resp_1"' in line)
    lines[at] = lines[at].replace(b'"response_id":"resp_1",', b"")
    damaged = parse_session(b"".join(lines))
    (response,) = [r for r in damaged.responses() if r.response_id is None]
    assert request_context(damaged, str(response.id)).items == ctx.items
    assert str(response.id) in request_hashes(damaged)


def test_bad_first_kept_is_reported() -> None:
    session = load("bad-first-kept")
    leaf = session.entries[-1]
    ctx = context_at(session, str(leaf.id))
    assert any(p.startswith("bad-first-kept:") for p in ctx.problems)
    good = load("compaction")
    assert context_at(good, str(good.entries[-1].id)).problems == []


def test_extension_and_record_entries_contribute_nothing() -> None:
    for name in ("extensions", "converge", "queued", "runs", "judged"):
        session = load(name)
        for leaf in json.loads((VECTORS / "context" / f"{name}.json").read_text("utf-8")):
            ctx = context_at(session, leaf)
            kinds = {session.by_id[i].type for i in ctx.item_entries}
            assert kinds <= {"item", "branch_summary", "compaction"}


def test_unresolvable_part_fails_the_hash_unless_the_string_is_there() -> None:
    session = load("instructions")
    path = session.path_to(str(session.entries[-1].id))
    delta = next(e for e in path if isinstance(e, Config) and not e.replace)
    assert delta.instructions_parts is not None
    broken_parts = tuple(
        {**p, "hash": "sha256:" + "0" * 64} if "hash" in p else p for p in delta.instructions_parts
    )
    broken = [attrs.evolve(e, instructions_parts=broken_parts) if e is delta else e for e in path]
    ctx = build_context(broken)
    assert not ctx.instructions_rebuilt
    assert request_hash(ctx) is None
    assert any(p.startswith("unresolved-part:") for p in ctx.problems)
    with pytest.raises(ContextError):
        request_body(ctx)
    # With the string beside the parts, the string wins and the request rebuilds.
    good = build_context(path)
    text = good.settings["instructions"]
    rescued = [
        attrs.evolve(e, instructions_parts=broken_parts, instructions=text) if e is delta else e
        for e in path
    ]
    ctx = build_context(rescued)
    assert ctx.instructions_rebuilt
    assert request_hash(ctx) == request_hash(good)


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
def test_batch_hashes_equal_one_by_one(path: Path) -> None:
    try:
        session = load(path.stem)
    except FormatError:
        return
    batch = request_hashes(session)
    walkable = [r for r in session.responses() if _walkable(session, r)]
    assert list(batch) == [r.id for r in walkable]
    for response in walkable:
        assert batch[str(response.id)] == request_hash(request_context(session, str(response.id)))


def test_mistyped_instructions_make_the_request_unbuildable() -> None:
    session = load("basic")
    path = session.path_to(str(session.entries[-1].id))
    root = path[0]
    assert isinstance(root, Config)
    # A damaged file: instructions written as a number. The codec parks it in ``unknown``.
    damaged = attrs.evolve(root, instructions=None, unknown={**root.unknown, "instructions": 7})
    ctx = build_context([damaged, *path[1:]])
    assert any(p.startswith("mistyped-member:") for p in ctx.problems)
    assert request_hash(ctx) is None


def test_omitted_items_are_the_union_of_the_deltas_since_the_last_replace() -> None:
    """SPEC 4.3 ``omit.items``: a union, so an id named by two deltas is in force once (the
    checkpoint a compaction carries lists it once)."""
    from asf_core.replay import Replay, replay_step

    a, b = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    state = Replay()
    for items in ([a], [a, b], [b]):
        state = replay_step(state, Config(ts="2026-01-01T00:00:00Z", omit={"items": items}))
    assert state.settings()["omit"] == {"items": [a, b]}
    state = replay_step(state, Config(ts="2026-01-01T00:00:01Z", omit={"items": [b]}, replace=True))
    assert state.settings()["omit"] == {"items": [b]}


def test_a_first_kept_naming_nothing_keeps_nothing_from_before_the_fold() -> None:
    """SPEC 4.4: entries before ``first_kept`` drop out of context. One that names no entry on
    the path (``bad-first-kept``) keeps none of them, rather than all: the context restarts
    from the compaction alone, as the streaming verifier's rebuild does."""
    session = load("bad-first-kept")
    comp = session.entries[-1]
    assert isinstance(comp, Compaction)
    assert comp.first_kept not in session.by_id
    ctx = context_at(session, str(comp.id))
    assert ctx.entries == [comp.id]
    assert ctx.items == [comp.summary]
    assert ctx.item_entries == [comp.id]
    assert [p.split(":")[0] for p in ctx.problems] == ["bad-first-kept"]


def test_a_compaction_without_a_summary_is_reported_and_contributes_its_pins() -> None:
    """A damaged fold (no summary item) is a problem, never a ``None`` item in the request;
    its pins and the kept window still make the context."""
    session = load("pinned")
    leaf = str(session.entries[-1].id)
    path = session.path_to(leaf)
    comp = next(e for e in path if isinstance(e, Compaction))
    assert comp.pinned
    good = build_context(path)
    damaged = [attrs.evolve(e, summary=None) if e is comp else e for e in path]
    ctx = build_context(damaged)
    assert ctx.items == good.items[1:]
    assert ctx.item_entries == good.item_entries[1:]
    assert ctx.entries == good.entries
    assert [p.split(":")[0] for p in ctx.problems] == ["bad-compaction"]
    assert str(comp.id) in ctx.problems[0]


def test_an_item_entry_without_its_item_is_reported_and_left_out() -> None:
    """An ``item`` entry whose item object is missing (a damaged line) stays on the path but
    contributes no item: the request holds only item objects."""
    session = load("basic")
    leaf = str(session.entries[-1].id)
    path = session.path_to(leaf)
    good = build_context(path)
    hollow = next(e for e in path if isinstance(e, Item) and e.response is None)
    damaged = [attrs.evolve(e, item=None) if e is hollow else e for e in path]
    ctx = build_context(damaged)
    assert None not in ctx.items
    assert ctx.items == [
        i for i, e in zip(good.items, good.item_entries, strict=True) if e != hollow.id
    ]
    assert hollow.id not in ctx.item_entries
    assert ctx.entries == good.entries
    assert [p.split(":")[0] for p in ctx.problems] == ["bad-item"]
    assert str(hollow.id) in ctx.problems[0]


@pytest.mark.parametrize("spelled", [b'"\\ud800x":1', b'"k":"\\udfff"'])
def test_a_setting_that_is_not_ijson_leaves_each_request_unbuilt(spelled: bytes) -> None:
    """A damaged file whose settings hold a lone surrogate (a member name or a value) has no
    canonical request: every response is listed with ``None``, one hash at a time or in a
    batch, and nothing raises past the documented ``JsonError``."""
    raw = (VECTORS / "sessions" / "basic.jsonl").read_bytes()
    assert raw.count(b'"extra":{"temperature"') == 1
    session = parse_session(raw.replace(b'"extra":{', b'"extra":{' + spelled + b",", 1))
    responses = _responses(session)
    assert responses
    assert request_hashes(session) == {r.id: None for r in responses}
    for response in responses:
        ctx = request_context(session, str(response.id))
        for cache in (None, {}):
            with pytest.raises(JsonError):
                request_hash(ctx, cache=cache)
