"""A digest of source files: what a plugin's fingerprints (and the host's records) name as
"the code that wrote this", so records written by other code are never trusted.

Light to import (``hashlib`` and ``pathlib``): a plugin's ``stamp`` hook uses it before
anything else is loaded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

__all__ = ["code_digest"]


def code_digest(root: Path, files: Iterable[Path]) -> str:
    """16 hexadecimal digits over ``files`` (each named relative to ``root``, then its bytes),
    in the order given: any edit, a release or a checkout, gives another digest."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]
