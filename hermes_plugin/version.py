"""This plugin's version as its output sees it: a digest of its code.

Any change to what the plugin writes makes every fingerprint and every store stamp new (an
edited checkout too, not only a release), so records of another version are never trusted.
Light to import: the ``stamp`` hook uses it before anything else is loaded.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from asf_core.code_digest import source_digest

__all__ = ["converter_version"]


@cache
def converter_version() -> str:
    """A digest of the plugin's code (every module of the package)."""
    root = Path(__file__).resolve().parent
    return source_digest(root)
