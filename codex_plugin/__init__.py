"""The Codex format plugin: Codex CLI and Codex Desktop rollout files to ASF.

Registered under the ``asf.formats`` entry point as ``codex`` (see ``pyproject.toml``), the
way any third-party plugin is; ``asf_core`` knows nothing about it.
``docs/formats/codex.md`` is the mapping, line kind by line kind.
"""

from __future__ import annotations

__all__ = ["FORMAT", "NS", "__version__"]

__version__ = "0.1.0"

#: The format name: the entry point's name, the claims' format, the output directory.
FORMAT = "codex"
#: The namespace of everything this plugin adds to ASF: custom entries' ``ns``, the entry and
#: header member holding Codex's own data, the prefix of extension item types.
NS = "codex"
