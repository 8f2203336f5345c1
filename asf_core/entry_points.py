"""The entry points of one group, read from the installed distributions' metadata files.

Why not :mod:`importlib.metadata`: importing it (``email``, ``csv``, ``zipfile``, ...) and
building a distribution object for everything installed costs about 25 ms, a fifth of an
``asf convert`` that finds every store unchanged, while what the host needs is a directory
listing per ``sys.path`` entry and the ``entry_points.txt`` of each distribution. This module
finds what :func:`importlib.metadata.distributions` finds (``*.dist-info`` and ``*.egg-info``
in every ``sys.path`` directory, ``EGG-INFO`` inside an ``.egg`` directory, in the same order)
and leaves the rest to it: when ``sys.path`` holds a zip archive, or an import finder lists
distributions of its own, the whole scan is :mod:`importlib.metadata`'s.

The name and version of a distribution are read only for the few that declare the group.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from typing import NamedTuple

__all__ = ["Declared", "Found", "declared", "installed_version"]

#: The one finder whose distributions this module lists itself.
_PATH_FINDER = "_frozen_importlib_external.PathFinder"
#: An entry point's value: ``module``, ``module:attr.attr``, optional ``[extras]``.
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")
#: Names of distributions that ``importlib.metadata`` takes for one (its grouping key).
_SEPARATORS = re.compile(r"[-_.]+")
#: A header line's name, as ``email`` takes it.
_HEADER = re.compile(r"([\x21-\x39\x3b-\x7e]*):")
#: The ends of lines for ``email`` (``str.splitlines`` ends them at form feeds, U+2028, ...).
_LINE_END = re.compile(r"\r\n|\r|\n")
#: What ``importlib.metadata`` takes for a missing metadata file.
_ABSENT = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)
#: What a metadata file that is there but cannot be read raises (a symlink loop, an I/O
#: error, bytes that are not UTF-8): that distribution's problem, not the run's.
_UNREADABLE = (OSError, UnicodeDecodeError)


class Declared(NamedTuple):
    """One entry point of the group, with the distribution that declares it."""

    name: str
    value: str
    distribution: str | None
    version: str | None

    def load(self) -> object:
        """Import the module the value names and return it, or the attribute it names."""
        match = _VALUE.match(self.value)
        if match is None:
            raise ValueError(f"entry point value {self.value!r} is not 'module:attribute'")
        found: object = import_module(match["module"])
        for attr in filter(None, (match["attr"] or "").split(".")):
            found = getattr(found, attr)
        return found


class Found(NamedTuple):
    """What :func:`declared` found: the entry points, and one line per distribution whose
    ``entry_points.txt`` could not be read (the others are found all the same)."""

    points: list[Declared]
    problems: list[str]


def declared(group: str) -> Found:
    """Every entry point of ``group`` in every installed distribution, in discovery order
    (a distribution found twice on ``sys.path`` is listed twice, as ``importlib`` does)."""
    found = Found([], [])
    try:
        _scan(group, found)
    except _NotPlain:
        found = Found([], [])
        _from_importlib(group, found)
    return found


def installed_version(distribution: str) -> str | None:
    """The version of the first distribution of that name on ``sys.path``, as
    :func:`importlib.metadata.version` finds it; None when none is installed (or it names
    no version, or its metadata cannot be read)."""
    try:
        return _first_version(distribution)
    except _NotPlain:
        import importlib.metadata

        try:
            return importlib.metadata.version(distribution)
        except (importlib.metadata.PackageNotFoundError, *_UNREADABLE):
            return None


def _first_version(distribution: str) -> str | None:
    wanted = _SEPARATORS.sub("-", distribution).lower()
    egg = distribution.lower().replace("-", "_")
    for info in _all_infos():
        low = info.name.lower()
        # An .egg's EGG-INFO is named by the .egg, as importlib matches it.
        if (_egg_key(info) == egg) if low == "egg-info" else (_key(low) == wanted):
            return _name_and_version(info)[1]
    return None


class _NotPlain(Exception):
    """``sys.path`` or ``sys.meta_path`` holds what only ``importlib.metadata`` reads."""


def _plain_finders() -> None:
    """Raise :class:`_NotPlain` when an import finder other than Python's own lists
    distributions."""
    for finder in sys.meta_path:
        kind = finder if isinstance(finder, type) else type(finder)
        if f"{kind.__module__}.{kind.__qualname__}" == _PATH_FINDER:
            continue
        if getattr(finder, "find_distributions", None) is not None:
            raise _NotPlain


def _scan(group: str, found: Found) -> None:
    for info in _all_infos():
        try:
            text = _read(info, "entry_points.txt")
            points = list(_section(text, group)) if text is not None else []
        except (*_UNREADABLE, ValueError) as exc:
            found.problems.append(f"cannot read the entry points in {info}: {exc}")
            continue
        if points:  # most distributions have none: their metadata is not read
            name, version = _name_and_version(info)
            found.points.extend(Declared(n, value, name, version) for n, value in points)


def _all_infos() -> Iterator[Path]:
    """Every metadata directory on ``sys.path``, in importlib's order; :class:`_NotPlain`
    when importlib must be asked instead."""
    _plain_finders()
    for entry in list(sys.path):
        yield from _infos(entry)


def _infos(entry: str) -> list[Path]:
    """The metadata directories of one ``sys.path`` entry, grouped by name as importlib does."""
    root = Path(entry)  # "" is the working directory, as for imports
    try:
        children = list(root.iterdir())
    except NotADirectoryError:
        raise _NotPlain from None  # a zip archive
    except OSError:
        return []
    infos: dict[str, list[Path]] = {}
    eggs: list[Path] = []
    base_is_egg = root.name.lower().endswith(".egg")
    for child in children:
        low = child.name.lower()
        if low.endswith((".dist-info", ".egg-info")):
            infos.setdefault(_key(low), []).append(child)
        elif base_is_egg and low == "egg-info":
            eggs.append(child)
    return [path for paths in infos.values() for path in paths] + eggs


def _key(low: str) -> str:
    """The name a metadata directory's (lower-cased) name gives, normalized."""
    return _SEPARATORS.sub("-", low.rpartition(".")[0].partition("-")[0])


def _egg_key(info: Path) -> str:
    """The name an ``.egg`` directory gives its ``EGG-INFO`` (importlib's legacy matching)."""
    return info.parent.name.lower().rpartition(".")[0].partition("-")[0]


def _read(info: Path, name: str) -> str | None:
    try:
        return (info / name).read_text(encoding="utf-8")
    except _ABSENT:
        return None


def _section(text: str, group: str) -> Iterator[tuple[str, str]]:
    """The ``name = value`` lines of the ``[group]`` section; blank and ``#`` lines skipped."""
    section: str | None = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
        elif section == group:
            name, equals, value = line.partition("=")
            if not equals:
                raise ValueError(f"entry point line {line!r} in [{group}] has no '='")
            yield name.strip(), value.strip()


def _name_and_version(info: Path) -> tuple[str | None, str | None]:
    """``Name`` and ``Version`` from the headers of ``METADATA`` (or an egg's ``PKG-INFO``;
    None for a file that cannot be read), read as ``email`` reads them: the first of each
    counts, a folded line goes on the one before, an mbox ``From`` line is skipped, and the
    headers end at the first line that is none."""
    # An old egg-info (distutils) is a file, PKG-INFO itself.
    try:
        text = _read(info, "METADATA") or _read(info, "PKG-INFO") or _read(info, "") or ""
    except _UNREADABLE:  # none is read: it names nothing
        return None, None
    headers: dict[str, str] = {}
    key: str | None = None
    for line in _LINE_END.split(text):
        if line[:1] in (" ", "\t"):
            if key is not None:
                headers[key] += " " + line.strip()
            continue
        if line.startswith("From "):  # email: the envelope, or a misplaced one it ignores
            key = None
            continue
        header = _HEADER.match(line)
        if header is None:
            break
        key = header[1].lower()
        if key in headers:
            key = None
        else:
            headers[key] = line[header.end() :].strip()
    return headers.get("name"), headers.get("version")


def _from_importlib(group: str, found: Found) -> None:
    import importlib.metadata

    for dist in importlib.metadata.distributions():
        try:
            ours = [ep for ep in dist.entry_points if ep.group == group]
        except (*_UNREADABLE, TypeError, ValueError) as exc:  # no '=': a TypeError there
            where = getattr(dist, "_path", "a distribution")
            found.problems.append(f"cannot read the entry points in {where}: {exc}")
            continue
        if not ours:
            continue
        name: str | None
        version: str | None
        try:
            name, version = dist.name, dist.version
        except _UNREADABLE:  # as the scan takes it: a METADATA that names nothing
            name = version = None
        found.points.extend(Declared(ep.name, ep.value, name, version) for ep in ours)
