"""The `scoperag` command, one module per command group."""
