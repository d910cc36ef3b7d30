"""signatures package."""
