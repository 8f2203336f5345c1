"""What a plugin hands the host, checked as it arrives, and who is to blame when it is wrong.

Plugin code runs inside :func:`blame`: an exception from it becomes a
:class:`~asf_core.errors.PluginError` naming the plugin and the hook, except a
:class:`~asf_core.formats.StoreError`, which is the plugin saying the input is damaged. What
it yields is checked against the contract (``docs/hooks.md``) where it is pulled
(:func:`checked_items`): the type of each item, a session's findings and counts (the report
holding them is written when the store is done and read back by the next run), and its
entries, at once or as they stream.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

import attrs

from asf_core.errors import PluginError
from asf_core.findings import BOUND
from asf_core.formats import ConvertedSession, Finding, NativeSession, NeedsHost, StoreError

if TYPE_CHECKING:
    from asf_core.model import Entry

__all__ = ["CheckedEntries", "blame", "checked", "checked_items"]

_T = TypeVar("_T")


@contextlib.contextmanager
def blame(plugin: str, hook: str, *, store_errors: bool = True) -> Iterator[None]:
    """Run plugin code, turning its exceptions into a :class:`PluginError` naming it.

    A :class:`StoreError` (the input is damaged: not the plugin's fault) goes up as it is,
    unless ``store_errors`` is false (``discover`` must never raise, whatever the input); so
    does :class:`NeedsHost` (a job asking to be run in the host's process). A ``SystemExit``
    (a plugin or a library it uses calling ``sys.exit()``) is the plugin's failure too: it
    would otherwise end the whole run, other stores unconverted, with an unrelated exit code.
    """
    try:
        yield
    except (PluginError, NeedsHost):
        raise
    except StoreError as exc:
        if store_errors:
            raise
        raise PluginError.from_exception(plugin, hook, exc) from exc
    except (Exception, SystemExit) as exc:
        raise PluginError.from_exception(plugin, hook, exc) from exc


def checked(plugin: str, hook: str, value: object, kind: type[_T]) -> _T:
    """A hook's answer when it is a ``kind``; else the plugin's error."""
    if not isinstance(value, kind):
        raise PluginError(plugin, hook, f"returned {type(value).__name__}, not {kind.__name__}")
    return value


def checked_items(
    plugin: str, hook: str, items: Iterable[_T] | None, kinds: tuple[type, ...]
) -> Iterator[_T]:
    """A generator hook's items (or a unit's job's), each one of ``kinds``, pulled under
    :func:`blame`."""
    if items is None:
        raise PluginError(plugin, hook, "returned None for its own store")
    iterator = iter(items)
    while True:
        with blame(plugin, hook):
            item = next(iterator, _END)
        if item is _END:
            return
        if not isinstance(item, kinds):
            raise PluginError(plugin, hook, f"yielded {type(item).__name__}")
        if isinstance(item, Finding):
            _check_findings(plugin, hook, [item])
        elif isinstance(item, NativeSession | ConvertedSession):
            _check_findings(plugin, hook, item.findings)
            _check_counts(plugin, hook, item.counts)
            if isinstance(item, ConvertedSession):
                item = cast("_T", _with_checked_entries(plugin, hook, item))
        yield cast("_T", item)


def _check_findings(plugin: str, hook: str, findings: object) -> None:
    """A plugin's findings, checked as they arrive: the report holding them is written when
    the store is done, and read back by the next run (a datetime in ``data`` was a traceback
    at the end, after the whole store converted)."""
    if not isinstance(findings, Sequence) or isinstance(findings, str | bytes):
        raise PluginError(plugin, hook, f"gave {type(findings).__name__} as its findings")
    for finding in findings:
        if not isinstance(finding, Finding):
            raise PluginError(plugin, hook, f"gave {type(finding).__name__} as a finding")
        problem = finding.problem()
        if problem is not None:
            raise PluginError(plugin, hook, f"gave a finding whose {problem}")


def _check_counts(plugin: str, hook: str, counts: object) -> None:
    """A session's ``counts``: figures by name, summed into the report (each within 64 bits:
    one of thousands of digits made writing the report fail, after the whole store)."""
    if not isinstance(counts, Mapping) or not all(
        isinstance(name, str) and type(value) is int and -BOUND < value < BOUND
        for name, value in counts.items()
    ):
        raise PluginError(plugin, hook, "gave counts that are not 64-bit whole numbers by name")


def _with_checked_entries(plugin: str, hook: str, session: ConvertedSession) -> ConvertedSession:
    """``session`` with its entries checked: a list or tuple at once, any other iterable (the
    plugin's code, pulled later by the writer, the redactor or ``asf show``) as it is pulled,
    under :func:`blame`."""
    from asf_core.model import Entry  # only once a session is converted

    where = f"{hook.partition(' ')[0]} (session {session.name})"
    entries = session.entries
    if isinstance(entries, (list, tuple)):
        wrong = next((e for e in entries if not isinstance(e, Entry)), _END)
        if wrong is not _END:
            raise PluginError(plugin, where, _not_an_entry(wrong))
        return session
    return attrs.evolve(session, entries=CheckedEntries(plugin, where, entries))


def _not_an_entry(value: object) -> str:
    return f"gave {type(value).__name__} as an entry"


class CheckedEntries:
    """A session's entries, pulled under :func:`blame` on each iteration (the Claude Code
    plugin's can be read again), each an :class:`Entry`: anything else is the plugin's error.

    Entries a plugin gives once (a generator) raise ValueError when read a second time: an
    empty second pass would be taken for a session without entries (a file of its header).
    """

    def __init__(self, plugin: str, hook: str, entries: Iterable[Entry]) -> None:
        self.plugin, self.hook, self.entries = plugin, hook, entries
        self._taken = False

    def __iter__(self) -> Iterator[Entry]:
        if isinstance(self.entries, Iterator):  # iter() of it is itself: one pass only
            if self._taken:
                raise ValueError(
                    f"{self.hook}: its entries were read already, and plugin {self.plugin!r} "
                    "gives them once, as it reads them (list(session.entries) keeps them)"
                )
            self._taken = True
        return self._pulled()

    def _pulled(self) -> Iterator[Entry]:
        from asf_core.model import Entry  # only once a session is converted

        with blame(self.plugin, self.hook):
            for entry in self.entries:
                if not isinstance(entry, Entry):
                    raise PluginError(self.plugin, self.hook, _not_an_entry(entry))
                yield entry


_END: Any = object()
