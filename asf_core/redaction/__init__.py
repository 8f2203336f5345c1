"""Redaction: secrets and personal data replaced by stable placeholders before writing.

:class:`Redactor` finds and replaces (:mod:`asf_core.redaction.detectors` says what it
finds), :class:`SessionRedaction` applies it to converted sessions so that their ids stay
valid. docs/cli.md (``--redact``) lists the kinds.
"""

from asf_core.redaction.redactor import MissingDetector, Redactor, placeholder_pattern
from asf_core.redaction.sessions import SessionRedaction

__all__ = ["MissingDetector", "Redactor", "SessionRedaction", "placeholder_pattern"]
