"""The user's home directory, which a process may not have.

A container run under an arbitrary user id, a service or a cron job can start with ``$HOME``
unset and no entry in the password database: ``Path.home()`` then raises. Every default
location under the home (``~/.hermes``, ``~/.claude``) is then nowhere, which plugins say
(``from asf_core.home import home``) rather than fail, and the command says why.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["home"]


def home() -> Path | None:
    """``Path.home()``; None when there is none to be found."""
    try:
        return Path.home()
    except (RuntimeError, KeyError):  # "Could not determine home directory."
        return None
