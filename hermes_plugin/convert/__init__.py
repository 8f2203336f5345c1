"""Hermes rows to ASF: conversations (lineage), their entry trees (segments), rows as entries,
messages as Open Responses items, tool calls and their results.

:mod:`hermes_plugin.convert.database` is the entry point: every session of one database.
"""
