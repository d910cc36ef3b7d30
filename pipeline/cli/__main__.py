"""`python -m pipeline.cli`."""

from pipeline.cli.main import run

run()
