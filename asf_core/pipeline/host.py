"""The host's side of the hook contract: typed calls to the plugins, and who is to blame.

pluggy hands back untyped results and lets a misspelt keyword pass silently, so every hook is
called through one typed function here (:func:`discover`, :func:`open_store`, :func:`read`,
:func:`convert`), which also checks what the plugin returned against the contract
(``docs/hooks.md``, with :mod:`asf_core.pipeline.answers`). Plugin code runs inside
:func:`blame`: an exception from it becomes a :class:`~asf_core.errors.PluginError` naming the
plugin and the hook, except a :class:`~asf_core.formats.StoreError`, which is the plugin saying
the input is damaged.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from attrs import frozen

from asf_core.errors import AmbiguousFormat, PluginError, one_line
from asf_core.findings import WARNING
from asf_core.formats import (
    Claim,
    ConvertedSession,
    Finding,
    NativeSession,
    Selection,
    StoreError,
    StoreHandle,
    Unit,
)
from asf_core.layout import session_file_name
from asf_core.pipeline.answers import CheckedEntries, blame, checked, checked_items
from asf_core.plugins import AsfPluginManager
from asf_core.walk import UNSEARCHABLE

if TYPE_CHECKING:
    from asf_core.model import Entry, Header

__all__ = [
    "Candidate",
    "CheckedEntries",
    "Discovery",
    "blame",
    "checked_items",
    "choose",
    "close_store",
    "convert",
    "default_locations",
    "discover",
    "finish",
    "group_by_path",
    "open_store",
    "opened",
    "personal",
    "plan",
    "read",
    "stamp",
    "store_info",
    "store_problem",
]


@frozen(kw_only=True)
class Candidate:
    """A claim together with the plugin that made it (the one that will answer for it)."""

    claim: Claim
    plugin: str

    def label(self) -> str:
        """What to call the store: the plugin's label, else its file or directory name."""
        return self.claim.label or self.claim.path.name or str(self.claim.path)

    def describe(self) -> str:
        if self.plugin == self.claim.format:
            return f"{self.claim.format} ({self.claim.confidence:g})"
        return f"{self.claim.format} from plugin {self.plugin} ({self.claim.confidence:g})"


@frozen(kw_only=True)
class Discovery:
    """Every plugin's claims on one path, the folders they could not search (warnings, each
    once however many plugins met it), and the plugins that failed while looking."""

    candidates: tuple[Candidate, ...] = ()
    failures: tuple[PluginError, ...] = ()
    skipped: tuple[Finding, ...] = ()


def discover(pm: AsfPluginManager, path: Path | None) -> Discovery:
    """Ask every plugin about ``path`` (None: their default locations).

    Each plugin is asked on its own, so one that raises is reported and the others' claims
    still count.
    """
    candidates: list[Candidate] = []
    failures: list[PluginError] = []
    skipped: dict[tuple[str | None, str], Finding] = {}
    for name in pm.plugin_names():
        caller = pm.only("discover", name)
        if not caller.get_hookimpls():
            continue
        try:
            with blame(name, "discover", store_errors=False):
                answers = cast("list[list[Claim | Finding] | None]", caller(path=path))
            for answer in answers:
                if answer is None:
                    continue
                for item in checked(name, "discover", answer, list):
                    if isinstance(item, Finding):
                        if (item.kind, item.code) != (WARNING, UNSEARCHABLE) or not item.path:
                            what = f"a {item.kind} finding {item.code or item.message!r}"
                            raise PluginError(
                                name, "discover", f"yielded {what}, not an unsearchable folder"
                            )
                        skipped.setdefault((item.path, item.message), item)
                    else:
                        checked(name, "discover", item, Claim)
                        candidates.append(Candidate(claim=item, plugin=name))
        except PluginError as error:
            failures.append(error)
    return Discovery(
        candidates=tuple(candidates), failures=tuple(failures), skipped=tuple(skipped.values())
    )


def group_by_path(candidates: Iterable[Candidate]) -> dict[Path, list[Candidate]]:
    """Claims grouped by the store they name (resolved path), in sorted path order."""
    groups: dict[Path, list[Candidate]] = {}
    for candidate in candidates:
        groups.setdefault(candidate.claim.path.resolve(), []).append(candidate)
    return dict(sorted(groups.items()))


def choose(candidates: Sequence[Candidate], *, format: str | None = None) -> Candidate | None:
    """Pick the claim that wins one path: the highest confidence, ties between formats refused.

    ``format`` (the ``--format`` option) keeps only claims of that format (or from the plugin
    of that name). Returns None when no claim is left; raises :class:`AmbiguousFormat` when
    different formats share the highest confidence.
    """
    pool = [c for c in candidates if format is None or format in (c.claim.format, c.plugin)]
    if not pool:
        return None
    best = max(c.claim.confidence for c in pool)
    top: dict[tuple[str, str], Candidate] = {}
    for c in pool:
        if c.claim.confidence == best:
            top.setdefault((c.claim.format, c.plugin), c)
    if len(top) > 1:
        path = pool[0].claim.path
        raise AmbiguousFormat(path, [top[key] for key in sorted(top)])
    return next(iter(top.values()))


def stamp(pm: AsfPluginManager, candidate: Candidate) -> str | None:
    """The claiming plugin's stamp of its whole store (None when it gives none)."""
    name = candidate.plugin
    caller = pm.only("stamp", name)
    if not caller.get_hookimpls():
        return None
    with blame(name, "stamp"):
        value = cast("str | None", caller(claim=candidate.claim))
    if value is not None and not isinstance(value, str):
        raise PluginError(name, "stamp", f"returned {type(value).__name__}, not a string")
    return value


def open_store(pm: AsfPluginManager, candidate: Candidate) -> StoreHandle:
    """Have the claiming plugin alone open its store; None from it is a :class:`PluginError`.

    A :class:`StoreError` (the store is damaged) goes up as it is.
    """
    name = candidate.plugin
    with blame(name, "open_store"):
        handle = cast("StoreHandle | None", pm.only("open_store", name)(claim=candidate.claim))
    if handle is None:
        raise PluginError(name, "open_store", f"could not open {candidate.claim.path}")
    if not isinstance(handle, StoreHandle):
        raise PluginError(name, "open_store", f"returned {type(handle).__name__}, not a store")
    return handle


@contextlib.contextmanager
def opened(pm: AsfPluginManager, candidate: Candidate) -> Iterator[StoreHandle]:
    """The candidate's store, open for the ``with`` block and closed after it."""
    store = open_store(pm, candidate)
    try:
        yield store
    finally:
        close_store(candidate.plugin, store)


def default_locations(pm: AsfPluginManager) -> dict[str, list[Path]]:
    """Where each plugin's ``discover(None)`` looks, by plugin (those that say)."""
    out: dict[str, list[Path]] = {}
    for name in pm.plugin_names():
        caller = pm.only("default_locations", name)
        if not caller.get_hookimpls():
            continue
        try:
            with blame(name, "default_locations", store_errors=False):
                answers = cast("list[list[Path] | None]", caller())
            for answer in answers:
                if answer is not None:
                    out.setdefault(name, []).extend(
                        checked(name, "default_locations", p, Path)
                        for p in checked(name, "default_locations", answer, list)
                    )
        except PluginError:  # where it looked is a courtesy; its failure is not the news
            continue
    return out


def personal(
    pm: AsfPluginManager, header: Header, entries: Sequence[Entry]
) -> dict[str, list[str]]:
    """What every plugin says names people in an ASF session (``personal``), by kind. A
    plugin that fails or answers otherwise is a :class:`PluginError`: redacting without its
    values could let them through."""
    found: dict[str, list[str]] = {}
    for name in pm.plugin_names():
        caller = pm.only("personal", name)
        if not caller.get_hookimpls():
            continue
        with blame(name, "personal", store_errors=False):
            answers = cast(
                "list[Mapping[str, Sequence[str]] | None]", caller(header=header, entries=entries)
            )
        for answer in answers:
            if answer is None:
                continue
            if not isinstance(answer, Mapping) or not all(
                isinstance(kind, str)
                and isinstance(values, Sequence)
                and not isinstance(values, str)
                and all(isinstance(v, str) for v in values)
                for kind, values in answer.items()
            ):
                raise PluginError(name, "personal", "returned what is not text values by kind")
            for kind, values in answer.items():
                found.setdefault(kind, []).extend(values)
    return found


def read(
    pm: AsfPluginManager,
    plugin: str,
    store: StoreHandle,
    selection: Selection | None = None,
    *,
    previews: bool = True,
    counting: bool = False,
) -> Iterator[NativeSession | Finding]:
    """The plugin's native sessions and findings, lazily (the plugin may take ``selection``
    to skip what it leaves out, the caller filters again; ``previews``, False when no preview
    is shown; and ``counting``, True when only the sessions' number is used)."""
    with blame(plugin, "read"):
        items = cast(
            "Iterator[NativeSession | Finding] | None",
            pm.only("read", plugin)(
                store=store,
                selection=selection or Selection(),
                previews=previews,
                counting=counting,
            ),
        )
    yield from checked_items(plugin, "read", items, (NativeSession, Finding))


def convert(
    pm: AsfPluginManager,
    plugin: str,
    store: StoreHandle,
    sessions: Iterable[NativeSession],
    selection: Selection | None = None,
) -> Iterator[ConvertedSession | Finding]:
    """The plugin's ASF sessions and findings, lazily, each session checked against the
    contract: a name that is a safe file name, unique in the store, and a unique header id."""
    with blame(plugin, "convert"):
        items = cast(
            "Iterator[ConvertedSession | Finding] | None",
            pm.only("convert", plugin)(
                store=store, sessions=sessions, selection=selection or Selection()
            ),
        )
    names: set[str] = set()
    ids: set[str] = set()
    for item in checked_items(plugin, "convert", items, (ConvertedSession, Finding)):
        if isinstance(item, ConvertedSession):
            _check_session(plugin, item, names, ids)
        yield item


def plan(
    pm: AsfPluginManager, plugin: str, store: StoreHandle, sessions: Iterable[NativeSession]
) -> Iterator[Unit | Finding] | None:
    """The plugin's units and findings, lazily; None when it does not plan (it is then
    converted through :func:`convert`)."""
    caller = pm.only("plan", plugin)
    if not caller.get_hookimpls():
        return None
    with blame(plugin, "plan"):
        items = cast("Iterator[Unit | Finding] | None", caller(store=store, sessions=sessions))
    if items is None:
        return None
    return checked_items(plugin, "plan", items, (Unit, Finding))


def finish(
    pm: AsfPluginManager, plugin: str, store: StoreHandle, counts: Mapping[str, int]
) -> Iterator[ConvertedSession | Finding]:
    """What the plugin yields after its units (nothing when it has no ``finish``)."""
    caller = pm.only("finish", plugin)
    if not caller.get_hookimpls():
        return
    with blame(plugin, "finish"):
        items = cast(
            "Iterator[ConvertedSession | Finding] | None", caller(store=store, counts=counts)
        )
    if items is not None:
        yield from checked_items(plugin, "finish", items, (ConvertedSession, Finding))


def _check_session(plugin: str, session: ConvertedSession, names: set[str], ids: set[str]) -> None:
    name = session_file_name(session.name)
    if name is None:
        raise PluginError(plugin, "convert", f"session name {session.name!r} is not a file name")
    if name in names:
        raise PluginError(plugin, "convert", f"two sessions are named {name!r}")
    if session.header.id in ids:
        raise PluginError(plugin, "convert", f"two sessions have the id {session.header.id!r}")
    names.add(name)
    ids.add(session.header.id)


def close_store(plugin: str, store: StoreHandle) -> None:
    """Close a store, naming the plugin if its ``close`` raises."""
    with blame(plugin, "close", store_errors=False):
        store.close()


def store_info(plugin: str, store: StoreHandle) -> dict[str, Any]:
    """The store's ``info()`` as a plain dict, naming the plugin if it raises or gives what
    the report (JSON) cannot hold."""
    import json

    with blame(plugin, "info", store_errors=False):
        info = dict(store.info())
    try:  # checked here: the report is written when the store is done, long after
        json.dumps(info, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise PluginError(plugin, "info", f"returned what JSON cannot hold: {exc}") from None
    return info


def store_problem(error: StoreError) -> str:
    """What a plugin says is wrong with a damaged store, on one line (the caller names the
    store)."""
    return one_line(error, with_type=False) or "cannot be read"
