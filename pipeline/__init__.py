"""scoperag runtime: everything that runs at question time."""
