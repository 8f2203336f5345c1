"""Reading Claude Code's files: where they are, their lines, their uuid tree."""
