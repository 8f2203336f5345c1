"""Where a path names the account of a home directory: the patterns of ``home_user``.

A home directory's path spells its owner's account name (``/Users/ada``, ``/home/ada``,
``C:\\Users\\Ada Lovelace``), and session files are full of paths: the working directory,
every file a tool read or wrote, Claude Code's project folders named after them. The name is
personal (it is often the person's own); the path around it is not, so only the name is
replaced. The patterns join :mod:`asf_core.redaction.detectors`' table.
"""

from __future__ import annotations

from typing import Final

__all__ = ["GENERIC_ACCOUNTS", "HOME_USER_PATTERNS", "SHARED_FOLDERS"]

#: The folders under a home directory's parent that are no one's: macOS's Shared and Guest,
#: Windows' Public, Default, Default User and All Users.
SHARED_FOLDERS: Final = "Shared|Guest|Public|Default|All Users|Default User"
_NOT_SHARED = rf"(?!(?:{SHARED_FOLDERS})(?![\w.\-]))"
#: A Windows account name's run between spaces and dots (which cannot end it).
_WIN_SEGMENT = r"[^\s\\/:*?\"'<>|,;.()\[\]{}]+"
_WIN_NAME = _WIN_SEGMENT + r"(?:\." + _WIN_SEGMENT + r")*"

#: (kind, pattern) rows, as in the detectors' table (the name is the group ``s``).
HOME_USER_PATTERNS: Final[tuple[tuple[str, str], ...]] = (
    # The account name in a home directory's path: macOS's /Users/<name>, Linux's
    # /home/<name> (also Silverblue's /var/home and WSL's /mnt/c/Users), where a path starts
    # (not a URL's /home/ page, after its host or a word). Each of these patterns opens with
    # a literal and looks behind it once matched: the engine scans for the literal, where a
    # lookbehind first makes it try every place.
    (
        "home_user",
        r"/(?:(?<![\w.\-]/)|(?<=/var/)|(?<=/mnt/[a-z]/))(?:Users|home)/"
        + _NOT_SHARED
        + r"(?P<s>\w(?:[\w.\-]*[\w\-])?)",
    ),
    # Windows' C:\Users\<name>, the backslashes doubled in JSON text too (both or neither);
    # a name may hold spaces when a backslash follows it (C:\Users\Ada Lovelace\Documents).
    (
        "home_user",
        r":(?<=[A-Za-z]:)(?<![A-Za-z]{2}:)\\(?P<w>\\)?Users\\(?(w)\\)"
        + _NOT_SHARED
        + rf"(?P<s>{_WIN_NAME}(?:(?: {_WIN_NAME})+(?=\\))?)",
    ),
    # The same path as Claude Code names a project's folder after it, every character but a
    # letter or digit a dash (-Users-ada-proj, C--Users-ada-proj): the name up to its first
    # dash, the only end that spelling keeps.
    (
        "home_user",
        r"-(?:(?<![\w\-]-)|(?<=\b[A-Za-z]--))(?:Users|home)-"
        + _NOT_SHARED
        + r"(?P<s>[A-Za-z0-9]+)",
    ),
)

#: Accounts many machines have (images, CI runners, services): their names are words of
#: their own, replaced in paths but not wherever else they stand.
GENERIC_ACCOUNTS: Final = frozenset(
    {
        *("user", "users", "admin", "administrator", "root", "guest", "nobody", "default"),
        *("ubuntu", "debian", "fedora", "centos", "alpine", "arch", "ec2-user", "pi"),
        *("runner", "runneradmin", "vscode", "codespace", "codespaces", "node", "docker"),
        *("jenkins", "gitlab-runner", "git", "www-data", "build", "builder", "ci", "app"),
        *("dev", "developer", "test", "tester", "demo", "home", "work", "shared", "public"),
        *("me", "you", "name", "username", "project", "projects", "code", "local", "tmp"),
    }
)
