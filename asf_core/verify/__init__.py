"""The verifier: every rule of draft 0.11 a session file can be checked against.

:mod:`asf_core.verify.session` reads files and runs the rule modules (``header``, ``calls``,
``runs``, ``refs``, ``media``), which share :mod:`asf_core.verify.common`.
"""
