"""A store's output kept no more open than the store: who may read the sessions does not grow
by converting them.

Hermes keeps its home owner-only (``0700``), so its ``state.db`` is private even where the file
itself says ``0644``; the ASF files asf writes are the same conversations, often with secrets in
tool output, and would otherwise get the umask's ``0755`` directories. So a store's output
directory (``<out>/<format>/<label>``, which holds every file of that store) grants its group
and others at most what the store grants them through every directory above it (a store
that is a directory, a Claude Code project, through everything below it too: one private
transcript in an open project keeps the output private):
:func:`reach` reads that from the mode bits, :func:`keep_within` creates the directory so, or
takes away from an existing one what the store does not grant (it never adds). Best effort: a
directory that cannot be made or changed here is left to the writes that follow, which say
why they fail. :func:`file_mode` gives the same rule to the documents ``asf export`` writes,
:func:`make_within` to a directory it makes for them. POSIX only; elsewhere nothing is done.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from asf_core.errors import OutputError

__all__ = ["file_mode", "keep_within", "make_within", "reach"]

#: The bits of a directory that let its group, and others, list and enter it.
_GROUP = stat.S_IRGRP | stat.S_IXGRP
_OTHERS = stat.S_IROTH | stat.S_IXOTH


def reach(source: Path, group_id: int | None = None) -> int:
    """The group and other bits (of ``0o055``) a directory of group ``group_id`` may have to be
    no more open than ``source``: the group's when that is the source's group, the source lets
    it read (a directory also list, and read everything below it: each file readable, each
    folder listed) and every directory above lets it through (as its group, or as others);
    the same for others. Nothing when the source cannot be looked at."""
    try:
        path = source.resolve()
        st = path.stat()
    except (OSError, RuntimeError):  # RuntimeError: a loop of links
        return 0
    mode, gid = st.st_mode, st.st_gid
    listed = stat.S_ISDIR(mode)
    group = group_id in (None, gid) and mode & stat.S_IRGRP
    group = group and (not listed or mode & stat.S_IXGRP)
    others = mode & stat.S_IROTH and (not listed or mode & stat.S_IXOTH)
    if listed and (group or others):  # a directory's files: a private one keeps it private
        group, others = _within(path, gid, bool(group), bool(others))
    for parent in path.parents:
        if not (group or others):
            break
        try:
            above = parent.stat()
        except OSError:
            return 0
        others = others and above.st_mode & stat.S_IXOTH
        as_group = above.st_gid == gid and above.st_mode & stat.S_IXGRP
        group = group and (as_group or above.st_mode & stat.S_IXOTH)
    return (_GROUP if group else 0) | (_OTHERS if others else 0)


def _within(root: Path, gid: int, group: bool, others: bool) -> tuple[bool, bool]:
    """What ``group`` (``gid``) and ``others`` keep of their reach of a directory through
    everything below it: each file (through a link) readable, each folder (not a link, which
    a walk does not follow) listed and entered. A folder that cannot be listed keeps
    nothing: what it holds is not known."""
    stack = [os.fspath(root)]
    while stack and (group or others):
        try:
            with os.scandir(stack.pop()) as listing:
                items = list(listing)
            for item in items:
                folder = item.is_dir(follow_symlinks=False)
                if not folder and not item.is_file():
                    continue  # a device, a socket, a dangling link: no session in it
                st = item.stat(follow_symlinks=not folder)
                if folder:
                    stack.append(item.path)
                read = stat.S_IROTH | (stat.S_IXOTH if folder else 0)
                others = others and st.st_mode & read == read
                own = st.st_gid == gid and st.st_mode & (read << 3) == read << 3
                group = group and (own or st.st_mode & read == read)
        except OSError:
            return False, False
    return group, others


def keep_within(dest: Path, source: Path) -> None:
    """Make ``dest`` (its parents as usual) open to no one ``source`` is closed to, or take
    from the existing ``dest`` the group and other bits ``source`` does not grant (the group's
    unless ``dest`` belongs to the source's group). :class:`OutputError` when ``dest`` is
    another user's directory that stays more open than that: this user may write there only
    through its group or other bits, so the sessions would be open to them and its owner."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        if not _made(dest, source):
            st = dest.lstat()
            mode = stat.S_IMODE(st.st_mode)
            allowed = stat.S_IRWXU | reach(source, st.st_gid)
            if stat.S_ISDIR(st.st_mode) and mode & ~allowed & 0o077:
                dest.chmod(mode & (allowed | ~0o077))
    _refuse_open(dest, source)


def make_within(dest: Path, source: Path) -> None:
    """Make ``dest`` (its parents as usual) when it is not there, open to no one ``source`` is
    closed to; one that is there (a directory the user named) is left as it is."""
    if os.name == "posix":
        with contextlib.suppress(OSError):
            _made(dest, source)


def _made(dest: Path, source: Path) -> bool:
    """Whether ``dest`` was not there and is made now: open to no one until its group is
    known (a descriptor opened on it sooner would list every file written there later), then
    to what ``source`` grants that group and others, as far as the umask lets."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(dest):
        return False
    try:
        dest.mkdir(mode=stat.S_IRWXU)
    except FileExistsError:
        return False
    opened = reach(source, dest.lstat().st_gid) & ~_umask()
    if opened:
        dest.chmod(stat.S_IRWXU | opened)
    return True


def _umask() -> int:
    """The process's umask, read without changing it where Linux says it (``/proc``)."""
    with contextlib.suppress(OSError, ValueError), Path("/proc/self/status").open() as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    old = os.umask(0o077)
    os.umask(old)
    return old


def _refuse_open(dest: Path, source: Path) -> None:
    """:class:`OutputError` when ``dest`` (through a link) is a directory of another user
    more open than ``source``: one that cannot be closed, writable to this user only as one of
    its group or others. Ours, or anything else, is left to the writes that follow."""
    try:
        st = dest.stat()
    except OSError:
        return
    if not stat.S_ISDIR(st.st_mode) or st.st_uid == os.geteuid():
        return
    if stat.S_IMODE(st.st_mode) & 0o077 & ~reach(source, st.st_gid):
        raise OutputError(
            f"{dest}: another user's directory (uid {st.st_uid}), more open than the store "
            f"{source} and not ours to close; nothing written there"
        )


def file_mode(source: Path, directory: Path) -> int:
    """The mode to make a file in ``directory`` with (the umask takes its part away), derived
    from ``source``: read and write for its owner, and for its group and others only what the
    source grants them (:func:`reach`; the file's group is ``directory``'s where that passes
    its group on, set-group-ID, else this process's)."""
    if os.name != "posix":
        return 0o666
    group = os.getegid()
    for place in (directory, *directory.parents):
        try:
            st = place.stat()
        except OSError:
            continue
        if st.st_mode & stat.S_ISGID:
            group = st.st_gid
        break
    bits = reach(source, group)
    return 0o600 | (0o060 if bits & _GROUP else 0) | (0o006 if bits & _OTHERS else 0)
