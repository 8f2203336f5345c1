"""A rollout file read in passes: its lines up to where the first reading stopped, and one
line again by its offset, for :mod:`codex_plugin.convert.session`'s passes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from asf_core.files import open_regular
from asf_core.formats import StoreError
from codex_plugin.convert.session import FirstPass, item_of
from codex_plugin.source.lines import Line, decode_at, lines_of

__all__ = ["RolloutFile"]

JSON = dict[str, Any]


class RolloutFile:
    """One rollout being converted: its first pass, and what the later ones read."""

    def __init__(self, path: Path, unit: str) -> None:
        self.path = path
        self.unit = unit
        self.first = FirstPass(self.fetch)
        self._stream: BinaryIO | None = None

    def _cannot(self, exc: OSError) -> StoreError:
        return StoreError(f"{self.unit}: cannot be read: {exc.strerror or exc}")

    def lines(self, end: int) -> Iterator[Line]:
        """The file's lines up to byte ``end``, read again."""
        try:
            with open_regular(self.path) as stream:
                yield from lines_of(stream, end)
        except OSError as exc:
            raise self._cannot(exc) from exc

    def fetch(self, key: int) -> JSON:
        """The item of the line at offset ``key``, read again."""
        try:
            if self._stream is None:
                self._stream = open_regular(self.path)
            item = item_of(decode_at(self._stream, key))
        except OSError as exc:
            raise self._cannot(exc) from exc
        if item is None:
            raise StoreError(f"{self.unit}: changed while being converted; run again")
        return item

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
