"""The plugin manager: finds format plugins and loads them, each on its own.

Format plugins arrive through the entry point group ``asf.formats`` (Hermes by the same route
as any third party, so this module never names it). Each entry point is loaded on its own: a
plugin that fails to import or whose hook implementations do not match the specs becomes a
"broken" record and a warning (on stderr for the command; for the library, in ``warnings``
alone), and every other plugin keeps working.

The hooks are called through :mod:`asf_core.pipeline.host`, never directly: it types them and says
which plugin is to blame when one fails.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pluggy
from attrs import frozen

from asf_core import entry_points, hookspecs
from asf_core.errors import one_line
from asf_core.safe_text import printable

__all__ = [
    "DISABLE_AUTOLOAD_ENV",
    "ENTRY_POINT_GROUP",
    "ONLY_ENV",
    "TRACE_ENV",
    "AsfPluginManager",
    "PluginRecord",
    "make_plugin_manager",
]

ENTRY_POINT_GROUP = "asf.formats"
#: Skip entry points altogether (any non-empty value); ``ASF_PLUGINS`` still loads its names.
DISABLE_AUTOLOAD_ENV = "ASF_DISABLE_PLUGIN_AUTOLOAD"
#: Comma-separated entry point names: load only these.
ONLY_ENV = "ASF_PLUGINS"
#: Any non-empty value: log every hook call and its result on stderr.
TRACE_ENV = "ASF_TRACE_PLUGINS"


@frozen(kw_only=True)
class PluginRecord:
    """One row of ``asf plugins``: a registered plugin or one that failed to load."""

    name: str
    distribution: str | None = None
    version: str | None = None
    hooks: tuple[str, ...] = ()
    status: str = "ok"
    #: Why a broken plugin is broken (one line).
    error: str | None = None


class AsfPluginManager(pluggy.PluginManager):
    """pluggy's manager plus what ``asf plugins`` shows: distributions and broken plugins."""

    def __init__(self, *, quiet: bool = False) -> None:
        super().__init__("asf")
        self._origin: dict[str, tuple[str | None, str | None]] = {}
        self.broken: list[PluginRecord] = []
        #: What went wrong loading plugins, one line each (also said on stderr unless quiet).
        self.warnings: list[str] = []
        self._quiet = quiet

    def warn(self, line: str) -> None:
        """Record a loading problem; a library never writes to its caller's stderr."""
        self.warnings.append(line)
        if not self._quiet:
            _say(f"warning: {line}")

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
        # Any import or validation failure isolates this plugin; so does a module that calls
        # sys.exit() as it loads (SystemExit is no Exception), which would end every command.
        except (Exception, SystemExit) as exc:
            if self.has_plugin(name):  # never leave half a plugin registered
                self.unregister(name=name)
            return self._break(name, distribution, version, one_line(exc), where)
        try:
            self.check_pending()
        except pluggy.PluginValidationError as exc:
            self.unregister(name=name)
            return self._break(name, distribution, version, one_line(exc), where)
        self._origin[name] = (distribution, version)
        return True

    def _break(
        self, name: str, dist: str | None, version: str | None, why: str, where: str = ""
    ) -> bool:
        self.broken.append(
            PluginRecord(name=name, distribution=dist, version=version, status="broken", error=why)
        )
        self.warn(f"plugin {name!r}{where} not loaded: {why}")
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


def _given(plugin: object) -> Callable[[], object]:
    return lambda: plugin


def _env_names(value: str | None) -> list[str] | None:
    if value is None or not value.strip():
        return None
    return [name.strip() for name in value.split(",") if name.strip()]


def _entry_points(pm: AsfPluginManager) -> list[entry_points.Declared]:
    """Entry points of our group, each once per distribution; a distribution whose list
    cannot be read is a warning."""
    found = entry_points.declared(ENTRY_POINT_GROUP)
    for problem in found.problems:
        pm.warn(problem)
    unique: dict[tuple[str, str | None], entry_points.Declared] = {}
    for point in found.points:  # the first of each wins, as importlib lists them
        unique.setdefault((point.name, point.distribution), point)
    return list(unique.values())


def _say(line: str) -> None:
    """One ``asf:`` line on stderr; plugin names and errors come from installed metadata."""
    sys.stderr.write(f"asf: {printable(line)}\n")


def _trace(pm: pluggy.PluginManager) -> None:
    def before(name: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
        who = ", ".join(impl.plugin_name for impl in impls)
        args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        _say(f"trace: {name}({args}) -> [{who}]")

    def after(
        outcome: pluggy.Result[Any],
        name: str,
        impls: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, Any],
    ) -> None:
        if outcome.exception is not None:
            _say(f"trace: {name} raised {one_line(outcome.exception)}")
        else:
            _say(f"trace: {name} returned {outcome.get_result()!r:.200}")

    pm.add_hookcall_monitoring(before, after)


def make_plugin_manager(
    *,
    plugins: Iterable[object | tuple[str, object]] = (),
    autoload: bool = True,
    quiet: bool = False,
) -> AsfPluginManager:
    """Build a fresh plugin manager: the specs, ``plugins`` (tests), then entry points.

    ``plugins`` holds plugin objects or ``(name, plugin)`` pairs. Entry points are loaded
    unless ``autoload`` is false or ``ASF_DISABLE_PLUGIN_AUTOLOAD`` is set; ``ASF_PLUGINS``
    restricts them to the names it lists (and loads those even when autoload is disabled).
    What fails to load is in ``warnings``, and on stderr unless ``quiet`` (the library's).
    """
    pm = AsfPluginManager(quiet=quiet)
    pm.add_hookspecs(hookspecs)
    for entry in plugins:
        name, plugin = entry if isinstance(entry, tuple) else (None, entry)
        pm.add_plugin(name or pm.get_canonical_name(plugin), _given(plugin))
    only = _env_names(os.environ.get(ONLY_ENV))
    disabled = bool(os.environ.get(DISABLE_AUTOLOAD_ENV))
    if autoload and (only is not None or not disabled):
        found: set[str] = set()
        for ep in sorted(_entry_points(pm), key=lambda e: (e.name, e.distribution or "")):
            if only is not None and ep.name not in only:
                continue
            found.add(ep.name)
            pm.add_plugin(ep.name, ep.load, distribution=ep.distribution, version=ep.version)
        for name in sorted(set(only or ()) - found):
            pm.warn(f"{ONLY_ENV} names {name!r}, which is not installed")
    pm.check_pending()
    if os.environ.get(TRACE_ENV):
        _trace(pm)
    return pm
