"""Finding and reading rollout files."""
