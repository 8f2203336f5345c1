"""The ``asf`` command: one module per subcommand, :mod:`asf_core.cli.main` parses and dispatches.

The command is a thin shell over the library: everything it does can be done from Python
through :mod:`asf_core.api`.
"""
