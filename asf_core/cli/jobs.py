"""``-j N``: how many worker processes a command (``convert``, ``verify``) runs on."""

from __future__ import annotations

import argparse
import os

__all__ = ["PER_CORE", "add_jobs_option", "default_count", "jobs"]

#: The most workers ``-j`` starts per core: the work is the processor's, so more only cost
#: memory and start-up (each a fork with a converter), and a mistyped ``-j 100000`` would
#: fork until the kernel killed the run.
PER_CORE = 4


def default_count() -> int:
    """The cores this process may run on: the default number of workers."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def jobs(text: str) -> int:
    """``-j``'s value: a whole number of workers, at least 1, at most :data:`PER_CORE` per
    core (a larger one is reduced to that, so that a command copied from a larger machine
    still runs)."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"not a number of workers: {text!r}")
    return min(n, PER_CORE * default_count())


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
        f"1: in this process; at most {PER_CORE * count})",
    )
