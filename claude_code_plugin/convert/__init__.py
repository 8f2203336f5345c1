"""Building ASF sessions from Claude Code's lines."""
