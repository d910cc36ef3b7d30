"""`python -m pipeline.cli`."""

import sys

from pipeline.cli.main import main

sys.exit(main())
