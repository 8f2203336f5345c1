"""The ``stamp`` hook: what a whole Claude Code project directory's conversion depends on,
read without reading a transcript.

The conversion reads nothing outside the project directory, and in it what the listing
(:func:`~claude_code_plugin.source.layout.project_layout`) looks at: the directory's entries
(followed through symbolic links), and every file under each session's directory (the one
named by a session file's stem, or by a session id, or holding ``subagents/``; a link to a
folder in its place or below it is not followed, as the listing follows none). The stamp is
this plugin's version and each of those entries' name and status: device, inode, mode, size,
modification and change times (a change time cannot be set back: content rewritten with its
size and modification time kept still shows). A folder that cannot be listed gives no stamp
(the store is converted as usual), and so does a store that is one session file.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from asf_core.walk import file_status, files_under
from claude_code_plugin.source.layout import SUFFIX, is_session_dir
from claude_code_plugin.version import converter_version

__all__ = ["file_status", "store_stamp"]


def store_stamp(path: Path) -> str | None:
    """The stamp of a claimed project directory; None for a session file or a directory
    whose listing is incomplete."""
    try:
        if not path.is_dir():
            return None
        with os.scandir(path) as listing:
            children = sorted(path / entry.name for entry in listing)
    except OSError:
        return None
    names = {child.name for child in children}
    out: list[object] = [converter_version(), str(path), file_status(path)]
    for child in children:
        out.append((child.name, file_status(child)))
        if (
            child.is_dir()
            and not child.is_symlink()
            and (f"{child.name}{SUFFIX}" in names or is_session_dir(child))
        ):
            walk = files_under(child)
            if walk.skipped:
                return None
            out += [(f.relative_to(path).as_posix(), file_status(f)) for f in walk.files]
    return hashlib.sha256(repr(out).encode()).hexdigest()
