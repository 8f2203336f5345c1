"""``-j N``: how many worker processes a command (``convert``, ``verify``) runs on."""

from __future__ import annotations

import argparse
import os

__all__ = ["add_jobs_option", "default_count", "jobs"]


def default_count() -> int:
    """The cores this process may run on: the default number of workers."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def jobs(text: str) -> int:
    """``-j``'s value: a whole number of workers, at least 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"not a number of workers: {text!r}")
    return n


def add_jobs_option(parser: argparse.ArgumentParser, verb: str) -> None:
    """Add ``-j/--jobs N`` (default: the cores) to a command that ``verb``\\s on workers."""
    count = default_count()
    parser.add_argument(
        "-j",
        "--jobs",
        type=jobs,
        default=count,
        metavar="N",
        help=f"{verb} on N worker processes (default: the number of cores, here {count}; "
        "1: in this process)",
    )
