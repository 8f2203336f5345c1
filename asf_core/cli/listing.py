"""``asf list``: the native sessions of stores as their plugins read them, unconverted.

One line per session, newest first: id, start (local time) and age, rows, relation to its
parent, the store (when several are listed), and the title or, without one, the start of the
first user message in quotes. Lines fit the terminal; a pipe gets them whole.
"""

from __future__ import annotations

import argparse
from typing import Any

from asf_core.cli.humane import age, clip, columns, counted, flat, local, terminal_width
from asf_core.cli.output import ExitCode, Troubles, err, out, out_json
from asf_core.cli.path_args import a_path
from asf_core.cli.picking import add_selection_options, selection_from
from asf_core.errors import PluginError
from asf_core.formats import NativeSession, Selection, StoreError, newest_first
from asf_core.pipeline import host
from asf_core.pipeline.listing import StoreListing, list_store
from asf_core.pipeline.stores import find_stores
from asf_core.plugins import AsfPluginManager
from asf_core.selecting import describe

__all__ = ["add_parser", "run_list"]

#: The least room a title (or a store label) keeps on a narrow terminal.
_MIN_TITLE = 12
_MIN_STORE = 8
#: Room a title should have before the start date is left out for it.
_ROOMY = 30
#: Relations that say nothing beyond "a session of its own".
_PLAIN = frozenset({"", "root"})


def _store_json(listing: StoreListing, sessions: list[NativeSession]) -> dict[str, Any]:
    """A listing as ``asf list --json`` prints it: each session names its format."""
    from asf_core.codec import converter  # with the model: only --json needs them

    obj: dict[str, Any] = converter().unstructure(listing)
    obj["sessions"] = [{"format": listing.format, **converter().unstructure(s)} for s in sessions]
    for s in obj["sessions"]:
        s.pop("native", None)
    return obj


def _limited(listings: list[StoreListing], limit: int | None) -> list[list[NativeSession]]:
    """Each store's sessions newest first, only the ``limit`` newest of all stores kept."""
    ranked = sorted(
        ((newest_first(s), n, s) for n, listing in enumerate(listings) for s in listing.sessions),
        key=lambda t: (t[0], t[1]),
    )
    kept = ranked if limit is None else ranked[:limit]
    per: list[list[NativeSession]] = [[] for _ in listings]
    for _, n, session in kept:
        per[n].append(session)
    return per


def _rows(session: NativeSession) -> str:
    """The session's size as ``--min-rows`` reads it; "-" when the plugin could not tell
    (its ``counts`` are of different kinds: their sum is no size)."""
    return "-" if session.rows is None else str(session.rows)


def _what(session: NativeSession) -> str:
    if session.title and session.title.strip():
        return flat(session.title)
    if session.preview and session.preview.strip():
        return f'"{flat(session.preview)}"'
    return ""


def _without(cells: tuple[str, ...], index: int) -> tuple[str, ...]:
    return cells[:index] + cells[index + 1 :]


def _table(chosen: list[tuple[StoreListing, NativeSession]], several: bool) -> None:
    width = terminal_width()
    rows: list[tuple[str, ...]] = []
    for listing, s in chosen:
        started = s.started_at()
        relation = "" if (s.relation or "") in _PLAIN else flat(s.relation or "")
        row = (flat(s.id), local(started), age(started), _rows(s), relation)
        rows.append((*row, flat(listing.label)) if several else row)
    head: tuple[str, ...] = ("ID", "STARTED", "AGE", "ROWS", "RELATION")
    head += ("STORE",) if several else ()

    def widths_of(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[int]:
        return [max(columns(r[i]) for r in [head, *rows]) for i in range(len(head))]

    widths = widths_of(head, rows)
    if width is not None and sum(widths) + 2 * len(widths) + _ROOMY > width:
        # a narrow terminal: the age says when, the date gives way to the title
        head, rows = _without(head, 1), [_without(r, 1) for r in rows]
        widths = widths_of(head, rows)
    right = {head.index("ROWS")}
    if width is not None and several:  # a long store label gives way to the title too
        over = sum(widths) + 2 * len(widths) + _MIN_TITLE - width
        if over > 0:
            widths[-1] = max(widths[-1] - over, _MIN_STORE)
            rows = [(*r[:-1], clip(r[-1], widths[-1])) for r in rows]

    def line(cells: tuple[str, ...], title: str) -> str:
        # padded to the columns each cell takes, a wide character two of them
        text = "  ".join(
            " " * (w - columns(c)) + c if i in right else c + " " * (w - columns(c))
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )
        room = None if width is None else width - columns(text) - 2
        shown = title if room is None else clip(title, room)
        full = (text + "  " + shown).rstrip() if shown else text.rstrip()
        return full if width is None else clip(full, width)

    out(line(head, "TITLE"))
    for (_, s), cells in zip(chosen, rows, strict=True):
        out(line(cells, _what(s)))


def run_list(args: argparse.Namespace, pm: AsfPluginManager) -> ExitCode:
    """The ``asf list`` command: native sessions as the read hook gives them, unconverted."""
    troubles = Troubles()
    selection = selection_from(args)
    found = find_stores(pm, args.paths, args.format)
    troubles.note(found.problems)
    listings: list[StoreListing] = []
    each = Selection() if selection.everything() else selection
    for candidate in found.stores:
        try:
            listings.append(list_store(pm, candidate, each))
        except StoreError as exc:  # the store is damaged: the input's fault, not the plugin's
            troubles.add(f"{candidate.claim.path}: {host.store_problem(exc)}", ExitCode.USAGE)
        except PluginError as exc:
            troubles.add(f"{candidate.claim.path}: {exc}", ExitCode.PLUGIN)
    per_store = _limited(listings, selection.limit)
    if args.json:
        stores = [_store_json(lst, ss) for lst, ss in zip(listings, per_store, strict=True)]
        out_json({"stores": stores, "errors": troubles.lines})
        return troubles.code
    chosen = sorted(
        ((lst, s) for lst, ss in zip(listings, per_store, strict=True) for s in ss),
        key=lambda pair: newest_first(pair[1]),
    )
    if chosen:
        _table(chosen, several=len({id(lst) for lst, _ in chosen}) > 1)
    elif listings and not selection.everything():
        err(f"no session matches {describe(selection)}")
    for listing in listings:
        if listing.findings:
            kinds = ", ".join(counted(n, k) for k, n in sorted(listing.findings.items()))
            err(f"{listing.label}: {kinds} (details: asf convert, report.json)")
    return troubles.code


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    lst = sub.add_parser(
        "list",
        help="list the sessions of stores without converting them",
        description="List the sessions of each store under PATH (none given: your own, in "
        "each format's default place, e.g. ~/.hermes), newest first, one line each: id, "
        "start, age, rows, relation to its parent, store, and title (or the first message, "
        "quoted). Nothing is converted or written.",
    )
    lst.add_argument(
        "paths", nargs="*", type=a_path, metavar="PATH", help="a store, or a directory holding some"
    )
    lst.add_argument("--format", metavar="NAME", help="use this format plugin; resolves ties")
    lst.add_argument(
        "--json",
        action="store_true",
        help="machine-readable output: every store and its sessions with all their facts",
    )
    add_selection_options(lst)
    lst.set_defaults(run=run_list, failed=lambda _, message: {"stores": [], "errors": [message]})
