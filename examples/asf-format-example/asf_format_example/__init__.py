"""An example asf format plugin: simple JSONL chat logs (``*.chat.jsonl``) to ASF.

Read ``docs/plugins.md`` of the asf project for the walk-through. The format module
(:mod:`asf_format_example.chatlog`) knows the log format and nothing of plugins; the plugin
module (:mod:`asf_format_example.plugin`) holds only the hook implementations.
"""

__version__ = "0.1.0"
