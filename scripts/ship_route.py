"""Write the program shipped for the embedded 1.5B model (pipeline/export/shipped-1.5b/): the 0.5B's shipped
program (its compiled state and settings), with the steps that model's measurements route to the LM.

    python scripts/ship_route.py [--index .scoperag/index] [--out pipeline/export/shipped-1.5b]

The route is chosen by measurement (docs/results.md, "Choose step"): on the 1.5B the choose step beat the span
floor on the contract traces (answer-line correctness +0.185 [+0.037, +0.333], n = 27) and tied it on the demo
test split (+0.000, n = 47); every other step keeps its floor (no LM step beat its floor on this model either).
The 0.5B did not beat the floor with the same step (contracts -0.037 [-0.222, +0.148], demo -0.426), so its
shipped program keeps the floor.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse

from pipeline.export.choice import SHIPPED_PROGRAM
from pipeline.export.saving import export_program_settings, load_export_with_settings, read_export, save_export
from pipeline.settings import Settings
from pipeline.store import open_store

ROOT = Path(__file__).resolve().parents[1]
# The steps the 1.5B runs by the LM; the rest run the floors the 0.5B's shipped program records.
ROUTE = {"choose": "lm"}
MEASURED = (
    "choose by the LM: contracts dev answer-line correctness +0.185 [+0.037, +0.333] (n = 27), "
    "demo test +0.000 [+0.000, +0.000] (n = 47) against the span floor; every other step on its floor"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=ROOT / ".scoperag" / "index")
    parser.add_argument("--out", type=Path, default=ROOT / "pipeline" / "export" / "shipped-1.5b")
    args = parser.parse_args()

    shipped = read_export(SHIPPED_PROGRAM)
    store = open_store(args.index)
    compiled = export_program_settings(shipped.manifest)
    program_settings = compiled.model_copy(update={"steps": compiled.steps.model_copy(update=ROUTE)})
    settings = Settings.model_validate(shipped.manifest.config.settings)
    routed, _ = load_export_with_settings(
        SHIPPED_PROGRAM, store, settings.model_copy(update={"program": program_settings})
    )
    # the record says what this program is: the 0.5B's job, routed for the 1.5B by the measurement above
    experiment = {
        **shipped.manifest.config.experiment,
        "description": f"Routed for the embedded 1.5B model: {MEASURED}",
    }
    manifest = save_export(
        routed,
        args.out,
        settings=settings,
        experiment_config=experiment,
        trainset_hash=shipped.manifest.trainset_hash,
        scores={},
        run_id=shipped.manifest.run_id,
        lm_name="embedded:1.5b",
        overwrite=True,
    )
    print(f"wrote {args.out}: steps {manifest.config.program['steps']}")


if __name__ == "__main__":
    main()
