"""Names and values Hermes Agent writes into ``state.db`` that the reader relies on."""

from __future__ import annotations

__all__ = [
    "CONTENT_PREFIX",
    "DATABASE_NAME",
    "DIR_PROFILES",
    "EPOCH_MAX",
    "EPOCH_MIN",
    "MARKER_BRANCH",
    "MARKER_DELEGATE",
    "MARKER_RESET",
    "RESET_END_REASONS",
    "ROLE_ASSISTANT",
    "ROLE_SESSION_META",
    "ROLE_SYSTEM",
    "ROLE_TOOL",
    "ROLE_USER",
    "SCHEMA_VERSION",
]

ROLE_USER = "user"
ROLE_ASSISTANT = "assistant"
ROLE_TOOL = "tool"
ROLE_SYSTEM = "system"
#: The gateway's first-turn marker: transcript bookkeeping no model reads.
ROLE_SESSION_META = "session_meta"

#: model_config markers that tie a child session to its parent.
MARKER_BRANCH = "_branched_from"
MARKER_DELEGATE = "_delegate_from"
MARKER_RESET = "_reset_from"

#: Marks content Hermes stored as JSON (parts or a dict) rather than text.
CONTENT_PREFIX = "\x00json:"

#: Hermes' database, in a home directory and in each profile's.
DATABASE_NAME = "state.db"
#: The directory of a home's further profiles, each with its own state.db.
DIR_PROFILES = "profiles"

#: The newest schema version this reader was written against (schema 31).
SCHEMA_VERSION = 31

#: End reasons of a parent that a legacy (marker-less) reset child follows.
RESET_END_REASONS = frozenset(
    {"session_reset", "session_switch", "idle", "daily", "suspended", "resume_pending_expired"}
)

#: The window of trusted timestamps (seconds since the epoch), as newer Hermes
#: checks them: outside it lies a damaged or foreign cell.
EPOCH_MIN = 0.0
EPOCH_MAX = 4_200_000_000.0
