"""Rollouts Codex compressed: read as the plain rollouts they were.

Newer Codex compresses a rollout in place once it has been idle for a week
(``rollout-X.jsonl`` becomes ``rollout-X.jsonl.zst``, one zstd stream, in ``sessions`` and
``archived_sessions`` alike) and reads either form, preferring the plain file where both are
there. A conversion reads a rollout more than once and one line again by its offset
(:mod:`codex_plugin.convert.stream`), which a zstd stream cannot do cheaply; so a compressed
rollout is inflated, streamed, into an anonymous temporary file and read from there: memory
stays flat whatever its size, and every reader sees an ordinary seekable file.

The decoder is Python's own ``compression.zstd`` from 3.14, else its backport (the
``backports.zstd`` package, by that module's author).
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path
from typing import BinaryIO, Final

from asf_core.files import open_regular

__all__ = ["COMPRESSED", "MAX_INFLATED", "open_rollout", "plain_name"]

#: The suffix Codex adds to a rollout it compresses.
COMPRESSED: Final = ".zst"
#: The most a compressed rollout may inflate to (a file that claims more is refused as
#: unreadable): far beyond any real rollout, short of filling a disk with a crafted stream.
MAX_INFLATED: Final = 8 << 30
_CHUNK: Final = 1 << 20


def plain_name(name: str) -> str:
    """A rollout's file name as Codex judges it: without the compressed suffix."""
    return name.removesuffix(COMPRESSED)


def open_rollout(path: Path) -> BinaryIO:
    """A rollout opened to read, seekable, as its plain lines; ``OSError`` when it is no
    regular file or a compressed one that does not inflate (damaged, cut short, too large)."""
    if not path.name.endswith(COMPRESSED):
        return open_regular(path)
    with open_regular(path) as packed:
        return _inflated(packed, path)


def _inflated(packed: BinaryIO, path: Path) -> BinaryIO:
    # Imported here: a run that reads no compressed rollout loads none of them.
    import tempfile

    if sys.version_info >= (3, 14):
        from compression import zstd
    else:
        from backports import zstd

    out = tempfile.TemporaryFile()  # noqa: SIM115 - the caller's to close
    try:
        size = 0
        with zstd.ZstdFile(packed) as stream:
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                if size > MAX_INFLATED:
                    raise OSError(errno.EFBIG, f"inflates past {MAX_INFLATED:,} bytes", str(path))
                out.write(chunk)
        out.seek(0)
    except (zstd.ZstdError, EOFError) as exc:
        out.close()
        raise OSError(errno.EINVAL, f"not a whole zstd stream: {exc}", str(path)) from None
    except BaseException:
        out.close()
        raise
    return out
