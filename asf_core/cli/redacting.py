"""``--redact`` for the commands that take it (``convert``, ``show``): the run's redaction.

A module of its own so that ``asf show`` of an ASF file loads neither the conversion pipeline
nor the detectors unless it redacts.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from asf_core.cli.output import Fail

if TYPE_CHECKING:
    from asf_core.redaction import SessionRedaction

__all__ = ["redaction_for"]


def redaction_for(args: argparse.Namespace) -> SessionRedaction | None:
    """The run's redaction when ``--redact`` is given; a missing detector is a usage error."""
    if not getattr(args, "redact", False):
        return None
    from asf_core.redaction import MissingDetector, Redactor, SessionRedaction

    try:
        return SessionRedaction(Redactor())
    except MissingDetector as exc:
        raise Fail(str(exc)) from None
