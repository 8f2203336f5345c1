"""The Claude Code format plugin: ``~/.claude/projects`` session files to ASF.

Registered under the ``asf.formats`` entry point as ``claude-code`` (see ``pyproject.toml``),
the way any third-party plugin is; ``asf_core`` knows nothing about it.
``docs/formats/claude-code.md`` is the mapping, line by line.
"""

from __future__ import annotations

__all__ = ["FORMAT", "NS", "__version__"]

__version__ = "0.1.0"

#: The format name: the entry point's name, the claims' format, the output directory.
FORMAT = "claude-code"
#: The namespace of everything this plugin adds to ASF: custom entries' ``ns``, the entry and
#: header member holding Claude Code's own data, the prefix of extension item types.
NS = "claude-code"
