"""Verifying ASF session files: every rule of draft 0.11 a file can be checked against.

:func:`verify_session` checks a read :class:`~asf_core.reader.SessionFile`;
:func:`verify_path` reads a file or a directory of ``*.jsonl`` files first and never raises.
A finding never stops verification: the verifier reports, it does not repair.

Finding codes (``docs/verify.md`` says the same at more length). Severity is ``error`` unless
marked; ``warning`` = kept as written but worth a look; ``info`` = not a problem.

Reader problems keep the reader's code: ``truncated`` (warning), ``corrupt-line``,
``missing-id``, ``bad-id``, ``duplicate-id``, ``missing-parent``, ``parent-later``, ``bad-ts``,
``not-ijson``, ``reserved-member``, ``bad-parents``, ``base-root``, ``base-prefix``,
``base-parent``, ``bad-header``, ``bad-entry``, ... File level:

* ``unreadable`` -- not an ASF session file at all (empty, garbage, newer format, I/O error).
* ``unsearchable`` (warning) -- a folder under the directory verified that cannot be listed
  (no permission, a name too long): skipped, the others go on.
* ``verify-failed`` -- the verifier itself failed on a file (a bug), or the worker verifying it
  was lost (:mod:`asf_core.verify.spread`); the other files go on.
* ``paths-unchecked`` (warning) -- the file branches so often (thousands of leaves, each
  thousands of entries deep) that the path rules were not walked on every branch: time stays
  linear in the file; the number of branches left is in the message.

Calls (§4.1, §4.7, §4.8):

* ``call-id-empty`` / ``call-id-repeated`` -- a function_call without a call_id, or one
  reusing another's (on any branch).
* ``bad-target`` -- a decision/dispatch target that is no earlier function_call on the path,
  or names a call with another call_id.
* ``dispatch-after-reject`` / ``dispatch-after-answer`` / ``dispatch-after-output``,
  ``decision-after-reject`` / ``decision-after-answer``, ``reject-after-dispatch``,
  ``reject-after-output`` / ``answer-after-output`` -- the order rules.
* ``answer-not-dispatched`` -- with ``dispatch`` in records, an answer to a call that has no
  dispatch anywhere in the session.
* ``output-unbound`` (warning) -- an output with no function_call of its call_id before it;
  ``output-repeated`` (warning) -- a second output for one call.

Records promise (§6): ``records-promise`` -- a promised record is missing where its event
plainly happened: an output without a dispatch (not rejected/answered), or a response outside
any run. Only entries after a fork's base are covered.

Runs (§4.6): ``run-reason`` (written reason other than ``error``/``interrupted`` differs from
the recomputed cascade), ``run-pending``, ``run-source`` (``resume``/``input`` differs from the
segment's shape; an empty ``resume`` segment is accepted), ``run-unclosed`` (a start while a run
is open), ``run-end-unmatched``, ``run-open`` (warning: with ``run`` in records, a run with no
end at a leaf -- cut off unless still running).

References: ``outcome-target`` (not an entry of the file), ``first-kept`` (not on the path
before the compaction), ``queued-from`` (not a queued entry on the path before the item),
``subsession-header`` (a resolvable child's ``parent_session``/``spawned_by`` disagree with
the link); warnings ``label-target``, ``branch-from``, ``link-target``,
``queued-drained-twice``, ``queued-item``, ``queued-source``, ``omitted-of`` (an omitted-list
``keep`` whose ``of`` cannot be resolved: kept as written).

Requests (§7, :mod:`asf_core.verify.requests`, one walk of the tree for all of them):
``request-hash`` -- a recorded ``request_hash`` differs from the recomputed one;
``request-unbuildable`` -- the request cannot be rebuilt (unresolvable instructions) although a
hash was recorded; ``requests-unchecked`` (warning) -- requests whose rebuilding would take more
than linear time (an ``omit`` in force, settings changing at every step of a long path) past a
bound, counted. A response without ``request_hash`` is fine.

Header (:mod:`asf_core.verify.header`; line 1): ``header-id`` (an empty ``id``),
``header-created-at`` (warning: ``created_at`` is no RFC 3339 date-time), ``payload-profile``
(warning: an ``openresponses/`` profile without a ``YYYY-MM-DD`` spec date; another profile is
the reader's ``bad-header`` warning), ``header-member`` (warning: an optional member of the
wrong type or value: ``media``, ``redacted``, ``records``, ``harness``, ``cwd``,
``parent_session``, ``spawned_by``), ``header-spawned-by`` (warning: ``spawned_by`` without
``parent_session``), ``redacted`` (info: the file verifies against itself only, not a claim
about the original; its hashes, recomputed by the redaction, are checked as usual).

Media (:mod:`asf_core.verify.media`, §1): ``media-missing`` / ``media-hash`` -- a
``sidecar:sha256:<hex>`` reference whose blob ``<dir>/<session id>/<hex>`` is absent or holds
other bytes; ``media-mode`` -- a sidecar reference in a file whose ``media`` is not
``sidecar``; ``media-ref`` -- a ``sidecar:`` string that is no well-formed reference;
``media-unchecked`` (info: read without a path; warning: a session id that cannot name a
directory) -- blobs were not checked.

Members: ``bad-member`` -- a required member of a checked record is missing or mistyped (error),
or a value outside the draft's enumerations or any other typed member of the wrong type
(warning). ``env-substitution`` (info) -- an env after a model call changed the workspace
(§4.11).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import attrs

from asf_core import strict_json
from asf_core.reader import FormatError, SessionFile, read_session
from asf_core.verify.calls import (
    CallTracer,
    call_id_findings,
    dispatched_anywhere,
    promise_findings,
)
from asf_core.verify.common import ERROR, INFO, WARNING, Finding, prefix_ids
from asf_core.verify.header import header_findings
from asf_core.verify.media import media_findings
from asf_core.verify.refs import (
    env_findings,
    first_kept_findings,
    link_findings,
    member_findings,
    omitted_of_findings,
    queued_findings,
    target_findings,
)
from asf_core.verify.requests import request_findings
from asf_core.verify.runs import check_runs
from asf_core.walk import files_under, unsearchable

__all__ = [
    "ERROR",
    "INFO",
    "WARNING",
    "Checked",
    "Finding",
    "Resolver",
    "SessionIndex",
    "check_path",
    "session_files",
    "verify_path",
    "verify_session",
]

Resolver = Callable[[str], SessionFile | None]

#: How much of a file's first line is read to learn its session id.
_HEADER_LIMIT = 1 << 20
#: How many entries the path rules may walk in all, before the per-entry allowance: every
#: path of a real file (a few branches) fits; a file branching at every entry (a comb of
#: thousands of leaves, each path thousands deep) would otherwise take quadratic time.
PATH_BUDGET = 1_000_000
PATH_BUDGET_PER_ENTRY = 20


def _reader_findings(session: SessionFile) -> Iterable[Finding]:
    yield from session.problems


def _depths(session: SessionFile) -> dict[str, int]:
    """The length of each entry's :meth:`~SessionFile.path_to`, in one pass over the file."""
    depth: dict[str, int] = {}
    for pos, entry in enumerate(session.entries):
        parent = entry.parent
        up = session.index_of.get(parent) if parent is not None else None
        above = depth.get(parent, 0) if parent is not None and up is not None and up < pos else 0
        depth[entry.id or ""] = above + 1
    return depth


def _path_findings(session: SessionFile) -> Iterable[Finding]:
    """Rules read along each root-to-leaf path: calls, runs, promises, env substitutions.

    The paths walked are bounded in all (:data:`PATH_BUDGET`): leaves past it are left
    unchecked and counted in one ``paths-unchecked`` warning, so time stays linear in the file.
    """
    prefix = prefix_ids(session)
    dispatched = dispatched_anywhere(session)
    records = frozenset(session.header.records or ())
    depth = _depths(session)
    budget = PATH_BUDGET + PATH_BUDGET_PER_ENTRY * len(session.entries)
    leaves = session.leaves()
    unchecked = 0
    for leaf in leaves:
        if depth[leaf] > budget:
            unchecked += 1
            continue
        budget -= depth[leaf]
        path = session.path_to(leaf)
        tracer = CallTracer()
        yield from check_runs(path, tracer, records=records, prefix=prefix)
        trace = tracer.trace()
        yield from trace.findings
        yield from promise_findings(session, trace, prefix=prefix, dispatched=dispatched)
        yield from env_findings(path)
    if unchecked:
        yield Finding(
            code="paths-unchecked",
            message=f"call, run and env rules not checked on {unchecked} of {len(leaves)} "
            "branches: the file branches too often to walk every path in linear time",
            kind=WARNING,
        )


def _finish(session: SessionFile, found: Iterable[Finding]) -> list[Finding]:
    """Give each finding its file and line, drop repeats, sort deterministically."""
    where = str(session.path) if session.path is not None else ""
    seen: set[tuple[str, str, str | None, int]] = set()
    out: list[Finding] = []
    for f in found:
        line = f.line or (session.line_of.get(f.entry, 0) if f.entry else 0)
        key = (f.code, f.message, f.entry, line)
        if key in seen:
            continue
        seen.add(key)
        out.append(attrs.evolve(f, line=line, path=where))
    return sorted(out, key=_order)


def _order(f: Finding) -> tuple[str, int, str, str, str]:
    return (f.path, f.line, f.code, f.entry or "", f.message)


def verify_session(session: SessionFile, *, resolver: Resolver | None = None) -> list[Finding]:
    """Every finding for one read session file, sorted by (file, line, code).

    ``resolver`` finds another session by id (a subsession named by a ``link``); without it
    the subsession header rule is skipped.
    """
    found: list[Finding] = []
    found.extend(_reader_findings(session))
    found.extend(header_findings(session.header, session.problems))
    found.extend(call_id_findings(session))
    found.extend(_path_findings(session))
    found.extend(target_findings(session))
    found.extend(first_kept_findings(session))
    found.extend(queued_findings(session))
    found.extend(link_findings(session, resolver))
    found.extend(omitted_of_findings(session))
    found.extend(member_findings(session))
    found.extend(media_findings(session))
    # A redacted file had every hash recomputed (SPEC §2): it verifies against itself.
    found.extend(request_findings(session))
    return _finish(session, found)


class SessionIndex:
    """Finds session files by header id among some files: the resolver of :func:`verify_path`.

    Only first lines are read to build the index, and only when a session is first asked
    for; sessions read through it are kept in a small cache. Several files may claim one id
    (a copy, or a damaged or hostile file beside the real one): the first of them that reads
    as ASF answers, so a file that cannot be read never stands in for one that can.
    """

    def __init__(self, files: Sequence[Path], *, cache_size: int = 16) -> None:
        self._files = list(files)
        self._ids: dict[str, list[Path]] | None = None
        self._cache: OrderedDict[Path, SessionFile | None] = OrderedDict()
        self._cache_size = cache_size

    def _index(self) -> dict[str, list[Path]]:
        ids: dict[str, list[Path]] = {}
        for path in self._files:
            ident = _header_id(path)
            if ident is not None:
                ids.setdefault(ident, []).append(path)
        return ids

    def __call__(self, session_id: str) -> SessionFile | None:
        if self._ids is None:
            self._ids = self._index()
        for path in self._ids.get(session_id, ()):
            session = self._read(path)
            if session is not None and session.header.id == session_id:
                return session
        return None

    def _read(self, path: Path) -> SessionFile | None:
        if path in self._cache:
            self._cache.move_to_end(path)
            return self._cache[path]
        try:
            session: SessionFile | None = read_session(path)
        except Exception:  # an unreadable child is reported when that file is verified
            session = None
        self._cache[path] = session
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return session


def _header_id(path: Path) -> str | None:
    """The session id in a file's header line, or None if it has none we can read."""
    try:
        with path.open("rb") as stream:
            first = stream.readline(_HEADER_LIMIT)
        obj = strict_json.parse(first)
    except (OSError, ValueError):
        return None
    if isinstance(obj, dict) and obj.get("type") == "session" and isinstance(obj.get("id"), str):
        ident: str = obj["id"]
        return ident
    return None


def _unreadable(path: Path, why: str) -> Finding:
    return Finding(code="unreadable", message=why, path=str(path))


def _jsonl_files(folder: Path) -> Iterable[Path]:
    """The ``*.jsonl`` regular files (or links to one) directly in ``folder``; OSError if it
    cannot be listed."""
    with os.scandir(folder) as listing:
        for item in listing:
            if item.name.endswith(".jsonl") and _is_file(item):
                yield folder / item.name


def _is_file(item: os.DirEntry[str]) -> bool:
    try:
        return item.is_file()
    except OSError:
        return False


def session_files(path: Path) -> tuple[list[Path], list[Finding]]:
    """Every ``*.jsonl`` file under a directory, sorted, and a warning per folder skipped.

    The walk (:func:`asf_core.walk.files_under`) keeps its own stack, does not follow links to
    folders, and skips a folder it cannot list with one ``unsearchable`` warning: the rest of
    the tree is still verified.
    """
    walk = files_under(path, lambda name: name.endswith(".jsonl"))
    return list(walk.files), [unsearchable(folder, why) for folder, why in walk.skipped]


@attrs.frozen
class Checked:
    """What :func:`check_path` did: how many files it verified, and every finding."""

    files: int
    findings: list[Finding]


def check_path(path: Path, *, jobs: int = 1) -> Checked:
    """Verify a session file, or every ``*.jsonl`` file under a directory, counting them.

    See :func:`verify_path`; a directory is walked once, for the count and the check. With
    ``jobs`` above 1, a directory's files are verified by that many worker processes
    (:mod:`asf_core.verify.spread`); the findings are the same.
    """
    if path.is_dir():
        files, out = session_files(path)
        candidates = files
    else:
        files, out = [path], []
        try:
            candidates = sorted(_jsonl_files(path.parent))
        except OSError:  # siblings cannot be listed: subsessions are not looked for
            candidates = []
    return Checked(files=len(files), findings=_verify_files(files, candidates, out, jobs))


def verify_path(path: Path) -> list[Finding]:
    """Verify a session file, or every ``*.jsonl`` file under a directory (recursively).

    A file that cannot be read as ASF gives one ``unreadable`` finding, a folder that cannot
    be searched one ``unsearchable`` warning; nothing raises. Subsessions are looked up by
    header id among the files of the directory (for a single file: its sibling ``*.jsonl``
    files).
    """
    return check_path(path).findings


def _verify_files(
    files: Sequence[Path], candidates: Sequence[Path], out: list[Finding], jobs: int = 1
) -> list[Finding]:
    from asf_core.verify.spread import spread

    for found in spread(files, candidates, jobs):
        out.extend(found)
    return sorted(out, key=_order)


def verify_file(file: Path, index: SessionIndex) -> list[Finding]:
    """The findings of one file, subsessions looked up in ``index``; never raises."""
    try:
        session = read_session(file)
    except FormatError as exc:
        return [_unreadable(file, f"not an ASF session file: {exc}")]
    except OSError as exc:
        return [_unreadable(file, f"cannot read: {exc.strerror or exc}")]
    except Exception as exc:  # a damaged file must not stop the others
        return [_unreadable(file, f"cannot read as ASF: {exc}")]
    try:
        return verify_session(session, resolver=index)
    except Exception as exc:  # a verifier bug must not hide the other files' findings
        return [verify_failed(file, repr(exc))]


def verify_failed(file: Path, why: str) -> Finding:
    """The finding of a file whose verification stopped (a verifier bug, a worker lost)."""
    return Finding(code="verify-failed", message=f"verification stopped: {why}", path=str(file))
