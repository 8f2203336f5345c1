"""The plugin host: finds format plugins, calls their hooks with types, and picks claims.

Format plugins arrive through the entry point group ``asf.formats`` (Hermes by the same route
as any third party, so this module never names it). Each entry point is loaded on its own: a
plugin that fails to import or whose hook implementations do not match the specs becomes a
"broken" record and a warning on stderr, and every other plugin keeps working.

pluggy hands back untyped results and lets a misspelt keyword pass silently, so every hook is
called through one typed function here (:func:`discover`, :func:`open_store`, :func:`read`,
:func:`convert`) that also turns a plugin's exception into a :class:`PluginError` naming it.
The one exception let through is :class:`~asf_core.formats.StoreError`: the plugin saying the
store is damaged, which is the input's fault, not the plugin's (:func:`store_problem`).
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import pluggy
from attrs import frozen

from asf_core import hookspecs
from asf_core.formats import (
    Claim,
    ConvertedSession,
    Finding,
    NativeSession,
    StoreError,
    StoreHandle,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "AmbiguousFormat",
    "AsfPluginManager",
    "Candidate",
    "Discovery",
    "PluginError",
    "PluginRecord",
    "choose",
    "convert",
    "discover",
    "group_by_path",
    "make_plugin_manager",
    "open_store",
    "read",
    "store_problem",
]

ENTRY_POINT_GROUP = "asf.formats"
#: Skip entry points altogether (any non-empty value); ``ASF_PLUGINS`` still loads its names.
DISABLE_AUTOLOAD_ENV = "ASF_DISABLE_PLUGIN_AUTOLOAD"
#: Comma-separated entry point names: load only these.
ONLY_ENV = "ASF_PLUGINS"
#: Any non-empty value: log every hook call and its result on stderr.
TRACE_ENV = "ASF_TRACE_PLUGINS"

_T = TypeVar("_T")


class PluginError(Exception):
    """A plugin raised or broke the hook contract; names the plugin and the hook."""

    def __init__(self, plugin: str, hook: str, problem: str) -> None:
        super().__init__(f"plugin {plugin!r} failed in {hook}: {problem}")
        self.plugin = plugin
        self.hook = hook
        self.problem = problem

    @classmethod
    def from_exception(cls, plugin: str, hook: str, exc: BaseException) -> PluginError:
        error = cls(plugin, hook, _one_line(exc))
        error.__cause__ = exc
        return error


class AmbiguousFormat(Exception):
    """Several formats claim one path with the same, highest confidence."""

    def __init__(self, path: Path, candidates: Sequence[Candidate]) -> None:
        names = ", ".join(c.describe() for c in candidates)
        super().__init__(
            f"{path}: claimed with equal confidence by {names}; choose one with --format"
        )
        self.path = path
        self.candidates = tuple(candidates)


@frozen(kw_only=True)
class PluginRecord:
    """One row of ``asf plugins``: a registered plugin or one that failed to load."""

    name: str
    distribution: str | None = None
    version: str | None = None
    hooks: tuple[str, ...] = ()
    status: str = "ok"
    #: Why a broken plugin is broken (one line).
    error: str = ""


@frozen(kw_only=True)
class Candidate:
    """A claim together with the plugin that made it (the one that will answer for it)."""

    claim: Claim
    plugin: str

    def describe(self) -> str:
        if self.plugin == self.claim.format:
            return f"{self.claim.format} ({self.claim.confidence:g})"
        return f"{self.claim.format} from plugin {self.plugin} ({self.claim.confidence:g})"


@frozen(kw_only=True)
class Discovery:
    """Every plugin's claims on one path, and the plugins that failed while looking."""

    candidates: tuple[Candidate, ...] = ()
    failures: tuple[PluginError, ...] = ()


class AsfPluginManager(pluggy.PluginManager):
    """pluggy's manager plus what ``asf plugins`` shows: distributions and broken plugins."""

    def __init__(self) -> None:
        super().__init__("asf")
        self._origin: dict[str, tuple[str | None, str | None]] = {}
        self.broken: list[PluginRecord] = []

    def add_plugin(
        self,
        name: str,
        load: Callable[[], object],
        *,
        distribution: str | None = None,
        version: str | None = None,
    ) -> bool:
        """Load and register one plugin; on any failure record it as broken and warn.

        Returns whether the plugin is now registered.
        """
        where = f" (distribution {distribution})" if distribution else ""
        if self.has_plugin(name):
            owner = self._origin.get(name, (None, None))[0] or "another plugin"
            why = f"the name {name!r} is already taken by {owner}"
            return self._break(name, distribution, version, why, where)
        try:
            plugin = load()
            self.register(plugin, name=name)
        except Exception as exc:  # any import or validation failure: isolate this plugin
            if self.has_plugin(name):  # never leave half a plugin registered
                self.unregister(name=name)
            return self._break(name, distribution, version, _one_line(exc), where)
        try:
            self.check_pending()
        except pluggy.PluginValidationError as exc:
            self.unregister(name=name)
            return self._break(name, distribution, version, _one_line(exc), where)
        self._origin[name] = (distribution, version)
        return True

    def _break(
        self, name: str, dist: str | None, version: str | None, why: str, where: str = ""
    ) -> bool:
        self.broken.append(
            PluginRecord(name=name, distribution=dist, version=version, status="broken", error=why)
        )
        sys.stderr.write(f"asf: warning: plugin {name!r}{where} not loaded: {why}\n")
        return False

    def plugin_names(self) -> list[str]:
        """Registered plugins by name, sorted (never rely on pluggy's call order)."""
        return sorted(name for name, _ in self.list_name_plugin() if name is not None)

    def records(self) -> list[PluginRecord]:
        """Every plugin, registered or broken, sorted by name."""
        rows = list(self.broken)
        for name in self.plugin_names():
            plugin = self.get_plugin(name)
            hooks = tuple(sorted(caller.name for caller in self.get_hookcallers(plugin) or ()))
            dist, version = self._origin.get(name, (None, None))
            rows.append(PluginRecord(name=name, distribution=dist, version=version, hooks=hooks))
        return sorted(rows, key=lambda r: (r.name, r.status != "ok"))

    def only(self, hook: str, plugin: str) -> pluggy.HookCaller:
        """A caller of ``hook`` that reaches ``plugin`` alone."""
        others = [p for name, p in self.list_name_plugin() if name != plugin]
        return self.subset_hook_caller(hook, remove_plugins=others)


def _one_line(exc: BaseException) -> str:
    """An exception as one line: its type and its message's lines joined."""
    text = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _given(plugin: object) -> Callable[[], object]:
    return lambda: plugin


def _env_names(value: str | None) -> list[str] | None:
    if value is None or not value.strip():
        return None
    return [name.strip() for name in value.split(",") if name.strip()]


def _entry_points() -> Iterator[tuple[importlib.metadata.EntryPoint, str | None, str | None]]:
    """Entry points of our group, each once, with the distribution that declares it."""
    seen: set[tuple[str, str | None]] = set()
    for dist in importlib.metadata.distributions():
        dist_name: str | None = dist.name
        for ep in dist.entry_points:
            if ep.group != ENTRY_POINT_GROUP or (ep.name, dist_name) in seen:
                continue
            seen.add((ep.name, dist_name))
            yield ep, dist_name, dist.version


def _trace(pm: pluggy.PluginManager) -> None:
    def before(name: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
        who = ", ".join(impl.plugin_name for impl in impls)
        args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        sys.stderr.write(f"asf: trace: {name}({args}) -> [{who}]\n")

    def after(
        outcome: pluggy.Result[Any],
        name: str,
        impls: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, Any],
    ) -> None:
        if outcome.exception is not None:
            sys.stderr.write(f"asf: trace: {name} raised {_one_line(outcome.exception)}\n")
        else:
            sys.stderr.write(f"asf: trace: {name} returned {outcome.get_result()!r:.200}\n")

    pm.add_hookcall_monitoring(before, after)


def make_plugin_manager(
    *, plugins: Iterable[object | tuple[str, object]] = (), autoload: bool = True
) -> AsfPluginManager:
    """Build a fresh plugin manager: the specs, ``plugins`` (tests), then entry points.

    ``plugins`` holds plugin objects or ``(name, plugin)`` pairs. Entry points are loaded
    unless ``autoload`` is false or ``ASF_DISABLE_PLUGIN_AUTOLOAD`` is set; ``ASF_PLUGINS``
    restricts them to the names it lists (and loads those even when autoload is disabled).
    """
    pm = AsfPluginManager()
    pm.add_hookspecs(hookspecs)
    for entry in plugins:
        name, plugin = entry if isinstance(entry, tuple) else (None, entry)
        pm.add_plugin(name or pm.get_canonical_name(plugin), _given(plugin))
    only = _env_names(os.environ.get(ONLY_ENV))
    disabled = bool(os.environ.get(DISABLE_AUTOLOAD_ENV))
    if autoload and (only is not None or not disabled):
        found: set[str] = set()
        for ep, dist, version in sorted(_entry_points(), key=lambda e: (e[0].name, e[1] or "")):
            if only is not None and ep.name not in only:
                continue
            found.add(ep.name)
            pm.add_plugin(ep.name, ep.load, distribution=dist, version=version)
        for name in sorted(set(only or ()) - found):
            sys.stderr.write(f"asf: warning: {ONLY_ENV} names {name!r}, which is not installed\n")
    pm.check_pending()
    if os.environ.get(TRACE_ENV):
        _trace(pm)
    return pm


# --- typed hook calls ------------------------------------------------------------------


def _checked(plugin: str, hook: str, value: object, kind: type[_T]) -> _T:
    if not isinstance(value, kind):
        raise PluginError(plugin, hook, f"returned {type(value).__name__}, not {kind.__name__}")
    return value


def discover(pm: AsfPluginManager, path: Path | None) -> Discovery:
    """Ask every plugin about ``path`` (None: their default locations).

    Each plugin is asked on its own, so one that raises is reported and the others' claims
    still count.
    """
    candidates: list[Candidate] = []
    failures: list[PluginError] = []
    for name in pm.plugin_names():
        caller = pm.only("discover", name)
        if not caller.get_hookimpls():
            continue
        try:
            answers = cast("list[list[Claim] | None]", caller(path=path))
        except Exception as exc:
            failures.append(PluginError.from_exception(name, "discover", exc))
            continue
        try:
            for answer in answers:
                if answer is None:
                    continue
                for claim in _checked(name, "discover", answer, list):
                    _checked(name, "discover", claim, Claim)
                    candidates.append(Candidate(claim=claim, plugin=name))
        except PluginError as error:
            failures.append(error)
    return Discovery(candidates=tuple(candidates), failures=tuple(failures))


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


def open_store(pm: AsfPluginManager, candidate: Candidate) -> StoreHandle:
    """Have the claiming plugin alone open its store; None from it is a :class:`PluginError`.

    A :class:`StoreError` (the store is damaged) goes up as it is.
    """
    name = candidate.plugin
    try:
        handle = cast("StoreHandle | None", pm.only("open_store", name)(claim=candidate.claim))
    except StoreError:
        raise
    except Exception as exc:
        raise PluginError.from_exception(name, "open_store", exc) from exc
    if handle is None:
        raise PluginError(name, "open_store", f"could not open {candidate.claim.path}")
    if not isinstance(handle, StoreHandle):
        raise PluginError(name, "open_store", f"returned {type(handle).__name__}, not a store")
    return handle


def _guarded(plugin: str, hook: str, items: Iterator[_T]) -> Iterator[_T]:
    """Iterate a plugin's generator, naming the plugin if it raises part way."""
    try:
        yield from items
    except (PluginError, StoreError):
        raise
    except Exception as exc:
        raise PluginError.from_exception(plugin, hook, exc) from exc


def _checked_items(
    plugin: str, hook: str, items: Iterable[_T] | None, kinds: tuple[type, ...]
) -> Iterator[_T]:
    """A generator hook's items, each one of ``kinds``; None or anything else is a PluginError."""
    if items is None:
        raise PluginError(plugin, hook, "returned None for its own store")
    for item in _guarded(plugin, hook, iter(items)):
        if not isinstance(item, kinds):
            raise PluginError(plugin, hook, f"yielded {type(item).__name__}")
        yield item


def read(
    pm: AsfPluginManager, plugin: str, store: StoreHandle
) -> Iterator[NativeSession | Finding]:
    """The plugin's native sessions and findings, lazily; anything else is a PluginError
    (a :class:`StoreError` goes up as it is)."""
    try:
        items = cast(
            "Iterator[NativeSession | Finding] | None", pm.only("read", plugin)(store=store)
        )
    except StoreError:
        raise
    except Exception as exc:
        raise PluginError.from_exception(plugin, "read", exc) from exc
    yield from _checked_items(plugin, "read", items, (NativeSession, Finding))


def convert(
    pm: AsfPluginManager, plugin: str, store: StoreHandle, sessions: Iterable[NativeSession]
) -> Iterator[ConvertedSession | Finding]:
    """The plugin's ASF sessions and findings, lazily; anything else is a PluginError
    (a :class:`StoreError` goes up as it is)."""
    try:
        items = cast(
            "Iterator[ConvertedSession | Finding] | None",
            pm.only("convert", plugin)(store=store, sessions=sessions),
        )
    except (PluginError, StoreError):
        raise
    except Exception as exc:
        raise PluginError.from_exception(plugin, "convert", exc) from exc
    yield from _checked_items(plugin, "convert", items, (ConvertedSession, Finding))


def close_store(plugin: str, store: StoreHandle) -> None:
    """Close a store, naming the plugin if its ``close`` raises."""
    try:
        store.close()
    except Exception as exc:
        raise PluginError.from_exception(plugin, "close", exc) from exc


def store_info(plugin: str, store: StoreHandle) -> dict[str, Any]:
    """The store's ``info()`` as a plain dict, naming the plugin if it raises."""
    try:
        return dict(store.info())
    except Exception as exc:
        raise PluginError.from_exception(plugin, "info", exc) from exc


def store_problem(error: StoreError) -> str:
    """What a plugin says is wrong with a damaged store, on one line (the caller names the
    store)."""
    text = "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return text or "cannot be read"
