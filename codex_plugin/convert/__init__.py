"""Mapping rollout lines to ASF entries."""
