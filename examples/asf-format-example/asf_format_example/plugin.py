"""The hook implementations of the ``chatlog`` format (hooks only; the format is in chatlog).

Each hook returns None for input that is not ours, so it can sit beside any other plugin.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from asf_core import hookimpl
from asf_core.formats import Claim, ConvertedSession, Finding, NativeSession
from asf_core.home import home
from asf_format_example import __version__, chatlog

FORMAT = "chatlog"
#: Where ``asf convert`` with no path looks: $CHATLOG_DIR, else ~/.local/share/chatlogs.
DEFAULT_DIR_ENV = "CHATLOG_DIR"


class ChatlogStore:
    """An open chat log file (the ``StoreHandle`` of this format)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stream: BinaryIO = path.open("rb")

    def info(self) -> dict[str, Any]:
        return {"file": self.path.name, "bytes": os.fstat(self.stream.fileno()).st_size}

    def close(self) -> None:
        self.stream.close()


def _claims(path: Path) -> list[Claim]:
    files = sorted(path.glob(f"*{chatlog.SUFFIX}")) if path.is_dir() else [path]
    claims = []
    for file in files:
        sure = chatlog.confidence(file) if file.is_file() else None
        if sure is not None:
            claims.append(Claim(format=FORMAT, path=file, confidence=sure, detail="chat log"))
    return claims


def _default_dir() -> Path | None:
    """$CHATLOG_DIR, else ~/.local/share/chatlogs (None: no home directory to hold it)."""
    user = home()
    default = os.environ.get(DEFAULT_DIR_ENV) or (user and user / ".local/share/chatlogs")
    return Path(default) if default else None


@hookimpl
def discover(path: Path | None) -> list[Claim] | None:
    if path is None:
        path = _default_dir()
        if path is None or not path.is_dir():
            return None
    return _claims(path) or None


@hookimpl
def open_store(claim: Claim) -> ChatlogStore | None:
    if claim.format != FORMAT:
        return None
    return ChatlogStore(claim.path)


def _native(run: list[chatlog.Line], store: ChatlogStore, seen: dict[str, int]) -> NativeSession:
    name = run[0].session
    seen[name] = seen.get(name, 0) + 1
    again = seen[name] > 1
    roles = {role: sum(1 for line in run if line.role == role) for role in sorted(chatlog.ROLES)}
    first_user = next((line.content for line in run if line.role == "user"), None)
    return NativeSession(
        id=f"{name}~{seen[name]}" if again else name,
        title=first_user[:80] if first_user else None,
        source=store.path.name,
        started=run[0].ts,
        ended=run[-1].ts,
        relation="continuation" if again else None,
        parent=(name if seen[name] == 2 else f"{name}~{seen[name] - 1}") if again else None,
        counts={"lines": len(run), **{k: v for k, v in roles.items() if v}},
        native=tuple(run),
    )


def _read(store: ChatlogStore) -> Iterator[NativeSession | Finding]:
    store.stream.seek(0)
    run: list[chatlog.Line] = []
    seen: dict[str, int] = {}
    for number, raw in chatlog.lines(store.stream):
        try:
            line = chatlog.parse_line(number, raw)
        except chatlog.BadLine as exc:
            unit = f"{store.path.name}:{number}"
            yield Finding(kind="stray", message=str(exc), unit=unit)
            continue
        if run and line.session != run[0].session:
            yield _native(run, store, seen)
            run = []
        run.append(line)
    if run:
        yield _native(run, store, seen)


@hookimpl
def read(store: object) -> Iterator[NativeSession | Finding] | None:
    return _read(store) if isinstance(store, ChatlogStore) else None


def _session_id(store: ChatlogStore, native_id: str) -> str:
    """A stable header id: the same log and session always give the same id (and bytes)."""
    import uuid  # here: only a conversion names sessions, not every run that loads the plugin

    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{store.path.resolve().as_uri()}#{native_id}"))


def _file_name(native_id: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]+", "_", native_id)
    if safe != native_id:  # keep two ids that clean up alike apart
        safe += "-" + hashlib.sha256(native_id.encode()).hexdigest()[:8]
    return f"{safe}.jsonl"


def _message(line: chatlog.Line) -> dict[str, Any]:
    if line.role == "assistant":
        part = {"type": "output_text", "text": line.content, "annotations": []}
        return {"type": "message", "role": "assistant", "status": "completed", "content": [part]}
    return {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": line.content}],
    }


def _convert_one(store: ChatlogStore, native: NativeSession) -> ConvertedSession:
    # Imported here, not at the top: every ``asf`` command loads every plugin, and most
    # (a listing, a run with nothing to convert) never build a session.
    from asf_core.model import Config, Header, Item, Response
    from asf_core.writer import SessionBuilder

    run: tuple[chatlog.Line, ...] = native.native
    header = Header(
        id=_session_id(store, native.id),
        created_at=run[0].ts,
        harness={"name": "asf-format-example", "version": __version__},
        parent_session=_session_id(store, native.parent) if native.parent else None,
    )
    builder = SessionBuilder(header)
    findings = []
    for line in run:
        if line.role == "system":  # the system prompt is a setting, not a message
            builder.append(Config(ts=line.ts, instructions=line.content))
        else:
            builder.append(Item(ts=line.ts, item=_message(line)))
        if line.role == "assistant" and line.model:  # a model call ends with its response
            builder.append(Response(ts=line.ts, model=line.model, status="completed"))
        if line.extra:
            findings.append(
                Finding(
                    kind="dropped",
                    message=f"members not in the chat log format: {', '.join(line.extra)}",
                    unit=f"{store.path.name}:{line.number}",
                    session=native.id,
                )
            )
    return ConvertedSession(
        header=header,
        entries=tuple(builder.entries),
        name=_file_name(native.id),
        sources=tuple(f"{store.path.name}:{line.number}" for line in run),
        counts={"lines": len(run), "entries": len(builder)},
        findings=tuple(findings),
    )


@hookimpl
def convert(
    store: object, sessions: Iterable[NativeSession]
) -> Iterator[ConvertedSession | Finding] | None:
    if not isinstance(store, ChatlogStore):
        return None
    return (_convert_one(store, native) for native in sessions)
