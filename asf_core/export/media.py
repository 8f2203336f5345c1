"""Images a transcript may show inline: data URLs it can vouch for, and sidecar blobs.

A rendered page must not fetch anything and must not pass a session's text through as
markup, so an image reaches a page only as a ``data:`` URL of one of the four common image
types whose payload is plain base64 (nothing else can hide in it). A ``sidecar:sha256:<hex>``
reference is read from the session's sidecar directory (named after the session id, beside
the file; an id that is a path names none), its type told from its first bytes, and inlined
the same way. Remote URLs are never loaded: renderers show them as text.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Final

from asf_core.export.items import IMAGE_TYPES
from asf_core.session_file import sidecar_dir_name

__all__ = ["inline_image"]

_DATA: Final = re.compile(
    r"data:(image/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/]*={0,2})", re.ASCII
)
_SIDECAR: Final = re.compile(r"sidecar:sha256:([0-9a-f]{64})", re.ASCII)
_MAGIC: Final = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
#: Sidecar blobs larger than this are not inlined (a transcript is meant to be opened).
_MAX_BLOB: Final = 16 * 1024 * 1024


def _sniff(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _MAGIC if data.startswith(magic)), None)


def inline_image(url: str, session_file: Path | None, session_id: str) -> str | None:
    """A ``data:`` URL safe to put in ``src``, or None when the image cannot be shown inline."""
    match = _DATA.fullmatch(url.strip())
    if match is not None:
        return match[0] if match[1] in IMAGE_TYPES else None
    sidecar = _SIDECAR.fullmatch(url.strip())
    if sidecar is None or session_file is None or sidecar_dir_name(session_id) is None:
        return None
    blob = session_file.parent / session_id / sidecar[1]
    try:
        if not blob.is_file() or blob.stat().st_size > _MAX_BLOB:
            return None
        data = blob.read_bytes()
    except (OSError, ValueError):
        return None
    kind = _sniff(data)
    if kind is None:
        return None
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"
