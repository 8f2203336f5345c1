"""Reading Hermes' ``state.db``: finding databases, opening them read-only, rows and cells.

Nothing here knows ASF: this package says what a database holds, the way Hermes reads it.
"""
