"""hermes_plugin: reads Hermes Agent's ``state.db`` and converts its sessions to ASF."""
