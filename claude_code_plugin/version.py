"""This plugin's version as its output sees it: a digest of its code, so a fingerprint
recorded by other code (a release, an edited checkout) is never trusted."""

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
