"""optimizers package."""
