"""Write the program shipped for the embedded 1.5B model (pipeline/export/shipped-1.5b/): the 0.5B's shipped
program (its compiled state and settings), with the steps that model's measurements route to the LM.

    python scripts/ship_route.py [--index .scoperag/index] [--out pipeline/export/shipped-1.5b]

The route is chosen by measurement (docs/results.md, "Choose step"): on the 1.5B the choose step beat the span
floor of its day on the contract traces (+0.185 [+0.037, +0.333], n = 27), but not the span floor that reads
headings and defined terms (contracts dev -0.037 [-0.111, +0.000], n = 27; held-out test +0.000, n = 25), and no
other step beat its floor on this model: every step keeps its floor, so the 1.5B's program makes no LM call, as
the 0.5B's does not. A step goes into ROUTE when a measurement puts its gain's CI above zero.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse

from pipeline.export.choice import SHIPPED_PROGRAM
from pipeline.export.routes import write_routed
from pipeline.store import open_store

ROOT = Path(__file__).resolve().parents[1]
# The steps the 1.5B runs by the LM; the rest run the floors the 0.5B's shipped program records.
ROUTE: dict[str, str] = {}
MEASURED = (
    "every step on its floor: choose by the LM against the span floor, contracts dev answer-line correctness "
    "-0.037 [-0.111, +0.000] (n = 27), held-out test +0.000 [+0.000, +0.000] (n = 25); no other step beat its floor"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=ROOT / ".scoperag" / "index")
    parser.add_argument("--out", type=Path, default=ROOT / "pipeline" / "export" / "shipped-1.5b")
    args = parser.parse_args()

    manifest = write_routed(
        SHIPPED_PROGRAM, open_store(args.index), ROUTE, args.out, lm_name="embedded:1.5b", measured=MEASURED
    )
    print(f"wrote {args.out}: steps {manifest.config.program['steps']}")


if __name__ == "__main__":
    main()
