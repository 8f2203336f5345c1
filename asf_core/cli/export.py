"""``asf export``: ASF session files to ATIF, OpenTelemetry, Markdown, HTML or plain text.

One document per exported path: by default the resume leaf of each file, ``--leaf`` another
entry, ``--all-leaves`` every leaf. A DIR is exported file by file (one session in memory at
a time), and the sub-agent sessions a file links to are looked up among the files beside it
(under DIR, or in FILE's directory).

Documents go to stdout (JSON targets one compact document per line) or, with ``-o``, to a
file (one document) or a directory mirroring the input's layout. Files are written
atomically. Expected errors are one stderr line and an exit code (docs/cli.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from attrs import frozen

from asf_core import json_chunks
from asf_core.cli.exit_codes import overall
from asf_core.cli.export_target import check_output, load_file
from asf_core.cli.jobs import add_jobs_option
from asf_core.cli.output import ExitCode, Fail, err, out, worst
from asf_core.cli.path_args import STDIN, path_text
from asf_core.cli.redacting import JoinedSessions, redacted_file, redaction_for
from asf_core.cli.show import resolve_leaf
from asf_core.cli.streams import JSON_ESCAPE, encodable
from asf_core.errors import cannot_write
from asf_core.export import SessionTree, atif_document, otel_request
from asf_core.export.otel_wire import SendError, send
from asf_core.export.paths import PathView
from asf_core.export.resolve import DirectoryIndex, session_files
from asf_core.export.transcript import Href, transcript
from asf_core.export.transcript_html import render_html
from asf_core.export.transcript_text import render_markdown, render_text
from asf_core.files import write_atomic
from asf_core.layout import redacted_folder
from asf_core.pipeline.access import file_mode, make_within
from asf_core.safe_text import json_safe, printable
from asf_core.session_file import SessionFile

if TYPE_CHECKING:
    from asf_core.plugins import AsfPluginManager
    from asf_core.redaction import SessionRedaction

__all__ = ["add_parser", "run_export"]

#: File name endings of each target's documents.
_EXTENSIONS: Final = {
    "atif": ".atif.json",
    "otel": ".otlp.json",
    "markdown": ".md",
    "html": ".html",
    "text": ".txt",
}
_JSON_TARGETS: Final = ("atif", "otel")
#: How a document on stdout spells what stdout's encoding cannot (a Latin-1 locale): as the
#: document itself would (markdown and text: the stream's backslash escapes).
_STDOUT_ESCAPES: Final = {"atif": JSON_ESCAPE, "otel": JSON_ESCAPE, "html": "xmlcharrefreplace"}


@frozen(kw_only=True)
class _Job:
    """One path to export and where its document goes (relative to the output root)."""

    source: Path
    leaf: str
    name: str


def _leaf_tag(tree: SessionTree, leaf: str) -> str:
    """A leaf as it appears in a file name: 12 hex digits of its id (or its legacy id)."""
    named = tree.name(leaf)
    tag = named.removeprefix("sha256:")[:12]
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in tag)


class Exporter:
    """One ``asf export`` run: the files it exports, where their documents go, what it says
    (:mod:`asf_core.cli.export_workers` runs one in each worker process)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.target: str = args.to
        self.source: Path = args.path
        self.output: str | None = args.output
        self.code = ExitCode.OK
        self.is_dir = self.source.is_dir()
        root = self.source if self.is_dir else self.source.parent
        self.index = DirectoryIndex(root, recursive=self.is_dir)
        if self.is_dir:  # its files' workers inherit the index, read once
            self.index.made()
        #: Documents go to a directory (``-o DIR``), not to one file or stdout.
        self.to_dir = self.output not in (None, "-") and (
            self.is_dir
            or args.all_leaves
            or Path(str(self.output)).is_dir()
            or str(self.output).endswith("/")
        )
        #: The mode documents are made with: no more open than what they are exported from.
        self.mode = 0o666
        if self.output not in (None, "-"):
            where = Path(str(self.output))
            self.mode = file_mode(self.source, where if self.to_dir else where.parent)
        self.written = 0
        #: The leaf each file's main document shows (named after the file alone).
        self.resume_of: dict[Path, str] = {}
        #: The session being exported.
        self.tree: SessionTree | None = None
        self.sent = 0
        self.spans = 0
        #: Where a file's problems are said (stderr; a worker keeps them for the host).
        self.say: Callable[[str], None] = err
        #: The redaction of the file being exported (``--redact``: each file's own, so its
        #: documents are the same on one process or several).
        self.redaction: SessionRedaction | None = None
        #: With ``--redact``, the other sessions the file names, redacted with it.
        self.joined: JoinedSessions | None = None
        self._plugins: AsfPluginManager | None = None

    # -- what to export ---------------------------------------------------------------

    def files(self) -> list[Path]:
        if not self.source.exists():
            raise Fail(f"{self.source}: no such file or directory")
        if not self.is_dir:
            return [self.source]
        found = session_files(self.source)
        if not found:
            raise Fail(f"{self.source}: no *.jsonl session files under it", ExitCode.NOTHING)
        return found

    def jobs(self, path: Path, session: SessionFile) -> list[_Job]:
        tree = SessionTree(session)
        stem = path.name.removesuffix(".jsonl")
        folder = self.folder_of(path)
        ext = _EXTENSIONS[self.target]
        resume = resolve_leaf(session, self.args.leaf)
        if resume is None:
            return []
        self.resume_of[path] = resume
        jobs = [_Job(source=path, leaf=resume, name=str(folder / f"{stem}{ext}"))]
        if self.args.all_leaves:
            jobs += [
                _Job(
                    source=path,
                    leaf=leaf,
                    name=str(folder / f"{stem}.{_leaf_tag(tree, leaf)}{ext}"),
                )
                for leaf in session.leaves()
                if leaf != resume
            ]
        return jobs

    def folder_of(self, path: Path) -> Path:
        """A file's folder below the output (``--redact``: home accounts spelled ``USER``)."""
        folder = path.parent.relative_to(self.source) if self.is_dir else Path()
        return redacted_folder(folder) if getattr(self.args, "redact", False) else folder

    # -- the run ----------------------------------------------------------------------

    def run(self) -> ExitCode:
        redaction_for(self.args)  # a missing detector stops the run before any file
        files = self.files()
        to_stdout = self.output in (None, "-")
        single = not self.is_dir and not self.args.all_leaves
        to_dir = self.to_dir
        if self.target == "html" and to_stdout and not single:
            raise Fail("several HTML pages cannot share stdout: give -o DIR")
        if not to_stdout:
            check_output(Path(str(self.output)), self.source, to_dir=to_dir)
        if to_dir:  # a directory made here is no more open than what is exported
            make_within(Path(str(self.output)), self.source)
        if self.is_dir and to_dir and not self.args.endpoint and self.args.jobs > 1:
            codes = self.spread(files)
        else:
            codes = [self.export_one(path, to_dir) for path in files]
        self.code = overall(codes)
        if self.args.endpoint and self.output is None:
            out(f"sent {self.sent} trace(s), {self.spans} span(s), to {self.args.endpoint}")
        return self.code

    def export_file(self, path: Path, to_dir: bool) -> None:
        """Export one file's documents; what is wrong with it is said (``self.say``), or
        raised as :class:`Fail` when the export cannot go on."""
        try:
            session = self._read(path)
        except Fail as exc:
            if not self.is_dir:
                raise
            self.say(str(exc))
            self.code = worst(self.code, exc.code)
            return
        jobs = self.jobs(path, session)
        if not jobs:
            if not self.is_dir:
                raise Fail(f"{path}: no entries, nothing to export", ExitCode.NOTHING)
            self.say(f"{path}: no entries, nothing to export")
            self.code = worst(self.code, ExitCode.NOTHING)
            return
        self.tree = SessionTree(session)
        for job in jobs:
            self.export(self.tree.view(job.leaf), job, to_dir)

    def _read(self, path: Path) -> SessionFile:
        """A file's session, redacted with ``--redact`` (its own placeholders: see
        :attr:`redaction`; the ids redacting changed in ``renamed``)."""
        session = load_file(path, self.say)
        self.redaction = redaction_for(self.args)
        self.joined = None
        if self.redaction is None:
            return session
        find = self.index.resolver(path)
        self.joined = JoinedSessions(self.redaction, find, self.plugins, self._left_out)
        self.joined.before(session, path)
        return redacted_file(session, self.redaction, path, self.plugins())

    def _left_out(self, failure: Fail, near: Path) -> None:
        self.say(f"{failure}; left out of the documents of {near}")

    def export_one(self, path: Path, to_dir: bool) -> ExitCode:
        """One file exported in this process; its own exit code."""
        self.code = ExitCode.OK
        self.export_file(path, to_dir)
        return self.code

    def spread(self, files: list[Path]) -> list[ExitCode]:
        """A directory's files exported on worker processes; what each says is said in the
        files' order, and the first :class:`Fail` stops the run, as one process would; each
        file's exit code."""
        from asf_core.cli.export_workers import export_files

        codes = []
        for said, code, failed in export_files(self, files):
            for line in said:
                self.say(line)
            codes.append(code)
            if failed is not None:
                raise Fail(failed, code)
        return codes

    def export(self, view: PathView, job: _Job, to_dir: bool) -> None:
        chunks = self.document(view, job, to_dir)
        if self.output is None and self.args.endpoint:
            return  # sent while built; nothing to print
        if self.output in (None, "-"):
            if self.written and self.target not in _JSON_TARGETS:
                sys.stdout.write("\n")
            # What reaches stdout may reach a terminal: no control character from the data
            # goes out raw (JSON gets \u escapes, the same value; text keeps its layout).
            # What stdout's encoding cannot spell is escaped as the document spells it.
            json_target = self.target in _JSON_TARGETS
            errors = _STDOUT_ESCAPES.get(self.target)
            for chunk in chunks:
                text = (
                    json_safe(chunk, terminal=True)
                    if json_target
                    else printable(chunk, layout=True)
                )
                sys.stdout.write(text if errors is None else encodable(text, errors))
        else:
            target = Path(str(self.output)) / job.name if to_dir else Path(str(self.output))
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(target, _encoded(chunks), durable=False, mode=self.mode)
            except OSError as exc:
                raise Fail(cannot_write(target, exc)) from exc
        self.written += 1

    def document(self, view: PathView, job: _Job, to_dir: bool) -> Iterator[str]:
        pretty = self.output not in (None, "-")
        children = self._children(job.source)
        if self.target == "atif":
            return _json(atif_document(view, children), pretty=pretty)
        if self.target == "otel":
            request = otel_request(view, content=self.args.content, subsessions=children)
            if self.args.endpoint:
                try:
                    send(self.args.endpoint, request)
                except SendError as exc:
                    raise Fail(str(exc)) from exc
                self.sent += 1
                self.spans += len(request["resourceSpans"][0]["scopeSpans"][0]["spans"])
            return _json(request, pretty=pretty)
        href = self.href_for(job) if to_dir else None
        t = transcript(view, href=href)
        render = {"markdown": render_markdown, "html": render_html, "text": render_text}
        return render[self.target](t)

    def plugins(self) -> AsfPluginManager:
        """The format plugins, loaded once when a file is redacted (``personal``)."""
        if self._plugins is None:
            from asf_core.plugins import make_plugin_manager

            self._plugins = make_plugin_manager()
        return self._plugins

    def _children(self, near: Path) -> Callable[[str], SessionFile | None]:
        """The sessions a document embeds or links to, from the files beside ``near``; with
        ``--redact``, redacted as the file itself (one numbering of placeholders), and one
        that cannot be redacted left out and said."""
        joined = self.joined
        if joined is None:
            return self.index.resolver(near)
        return lambda session_id: joined.get(session_id, near)

    def href_for(self, job: _Job) -> Href:
        """Links from this document to the other documents of the export."""
        here = Path(job.name).parent
        ext = _EXTENSIONS[self.target]

        def href(session_id: str, leaf: str | None) -> str | None:
            path = self.index.path_of(session_id, job.source)
            if path is None or (not self.is_dir and path != self.source):
                return None
            stem = path.name.removesuffix(".jsonl")
            folder = self.folder_of(path)
            name = f"{stem}{ext}"
            if leaf is not None and path == job.source and leaf != self.resume_of.get(path):
                if not self.args.all_leaves or self.tree is None:
                    return None  # the other branches of this session are not exported
                name = f"{stem}.{_leaf_tag(self.tree, leaf)}{ext}"
            return Path(os.path.relpath(folder / name, here)).as_posix()

        return _cached(href)


def _cached(fn: Callable[[str, str | None], str | None]) -> Href:
    memo: dict[tuple[str, str | None], str | None] = {}

    def run(session_id: str, leaf: str | None) -> str | None:
        key = (session_id, leaf)
        if key not in memo:
            memo[key] = fn(session_id, leaf)
        return memo[key]

    return run


def _json(doc: Any, *, pretty: bool) -> Iterator[str]:
    yield from json_chunks.chunks(doc, indent=2 if pretty else None)
    yield "\n"


def _encoded(chunks: Iterable[str]) -> Iterator[bytes]:
    # A lone surrogate (a damaged file) comes out as its JSON escape, \udXXX.
    for chunk in chunks:
        yield chunk.encode("utf-8", "backslashreplace")


def _url(text: str) -> str:
    """An ``--endpoint``; an empty one (``"$UNSET"``) is refused, never read as none."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty URL")
    return text


def run_export(args: argparse.Namespace) -> ExitCode:
    """The ``asf export`` command."""
    if args.path == STDIN:  # documents are named after FILE; its sub-agents lie beside it
        raise Fail(
            "export reads a FILE or DIR, not stdin ('-'): write the session to a file first "
            "(asf convert ... -o DIR), or name a file called '-' as ./-"
        )
    args.path = Path(args.path)
    if args.to != "otel" and (args.content or args.endpoint):
        raise Fail("--content and --endpoint apply to --to otel only")
    if args.leaf is not None and args.path.is_dir():
        raise Fail("--leaf names an entry of one file; give a FILE, not a directory")
    if args.leaf is not None and args.all_leaves:
        raise Fail("--leaf and --all-leaves exclude each other")
    return Exporter(args).run()


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser(
        "export",
        help="export sessions as ATIF, OpenTelemetry traces, Markdown, HTML or plain text",
        description="Export the path to a session's resume leaf (or --leaf, or every leaf) of "
        "one ASF file, or of every *.jsonl file under a directory: an ATIF-v1.8 trajectory, "
        "an OpenTelemetry trace (OTLP/JSON), or a Markdown, HTML or plain-text transcript. "
        "Sub-agent sessions are looked for among the files beside each one.",
    )
    export.add_argument("path", type=path_text, metavar="FILE|DIR")
    export.add_argument(
        "--to", required=True, choices=sorted(_EXTENSIONS), help="what to export to"
    )
    export.add_argument("--leaf", metavar="ID", help="entry id or unique prefix (FILE only)")
    export.add_argument("--all-leaves", action="store_true", help="one document per leaf")
    export.add_argument(
        "-o",
        "--output",
        type=path_text,
        metavar="PATH",
        help="a file (one document) or a directory; '-' or none: stdout",
    )
    export.add_argument(
        "--content", action="store_true", help="otel: include prompts, outputs and tool I/O"
    )
    export.add_argument(
        "--endpoint",
        type=_url,
        metavar="URL",
        help="otel: also POST each trace to this OTLP/HTTP (JSON) URL, e.g. "
        "http://localhost:4318/v1/traces",
    )
    export.add_argument(
        "--redact",
        action="store_true",
        help="replace secrets and personal values as asf show --redact does: each file "
        "redacted as convert --redact would write it (placeholders numbered per file)",
    )
    add_jobs_option(export, "export a directory's files")
    export.set_defaults(run=run_export, plugins=False)
