"""A rollout file read in passes: its lines up to where the first reading stopped, and one
line again by its offset, for :mod:`codex_plugin.convert.session`'s passes.

The first reading and the last each feed a digest with every byte they read: the same bytes
up to the same end, or the file was rewritten between them (Codex only appends, which the
last pass never reads), and the session is refused whole rather than written from two
versions of the file."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from asf_core.formats import StoreError
from codex_plugin.convert.session import FirstPass, item_of
from codex_plugin.source.compressed import open_rollout
from codex_plugin.source.lines import Digest, Line, decode_at, lines_of, read_lines

__all__ = ["RolloutFile"]

JSON = dict[str, Any]


class _Counted:
    """A SHA-256 of the bytes fed, and how many there were."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()
        self.size = 0

    def update(self, data: bytes, /) -> None:
        self.hash.update(data)
        self.size += len(data)


class RolloutFile:
    """One rollout being converted: its first pass, and what the later ones read."""

    def __init__(self, path: Path, unit: str) -> None:
        self.path = path
        self.unit = unit
        self.first = FirstPass(self.fetch)
        self._stream: BinaryIO | None = None
        self._read = _Counted()

    def read(self) -> Iterator[Line]:
        """The file's lines, its first reading (``OSError`` if it cannot be opened)."""
        return read_lines(self.path, self._read)

    def _cannot(self, exc: OSError) -> StoreError:
        return StoreError(f"{self.unit}: cannot be read: {exc.strerror or exc}")

    def lines(self, end: int, digest: Digest | None = None) -> Iterator[Line]:
        """The file's lines up to byte ``end``, read again (every byte fed to ``digest``)."""
        try:
            with open_rollout(self.path) as stream:
                yield from lines_of(stream, end, digest=digest)
        except OSError as exc:
            raise self._cannot(exc) from exc

    def last(self) -> Iterator[Line]:
        """The file's lines for the last pass, up to the byte where the first reading
        stopped (past the last line: blank lines after it are read too, so they are not taken
        for a change); ``StoreError`` once they are read when they are not the bytes the
        first reading read."""
        again = hashlib.sha256()
        yield from self.lines(self._read.size, again)
        if again.digest() != self._read.hash.digest():
            raise StoreError(f"{self.unit}: changed while being converted; run again")

    def fetch(self, key: int) -> JSON:
        """The item of the line at offset ``key``, read again."""
        try:
            if self._stream is None:
                self._stream = open_rollout(self.path)
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
