"""Each learned step against its floors: the same step done by plain code (ProgramSettings.steps), measured on
the same examples as the LM, and the step handed to the LM only where the LM beats the best floor.

The rule is the one compiling uses (pipeline.evaluation.compare.select_candidate): paired over the validation
examples, the lower end of the 95% interval of the LM's gain over the best floor above zero, and no safety
count above zero. Otherwise the step runs its floor and makes no LM call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from pipeline.evaluation.compare import Difference, compare_paired, select_candidate
from pipeline.evaluation.stage_metrics import Stage
from pipeline.program.module import ScopedQA
from pipeline.settings import StepChoices

# The floors of each stage: their names and the steps they set (the LM's own steps are "lm"). On a tie the
# first listed wins: "parts" is the question itself when it asks one thing, and one section per part otherwise.
STAGE_FLOORS: Mapping[Stage, Mapping[str, Mapping[str, str]]] = {
    "decompose": {"parts": {"decompose": "parts"}, "question": {"decompose": "question"}},
    "score": {"keep_all": {"score": "keep_all"}, "top_k": {"score": "top_k"}},
    "answer": {
        "span": {"answer": "span", "abstain": "support", "compute": "rows", "judge": "claims"},
        "sentence": {"answer": "sentence", "abstain": "support", "compute": "rows", "judge": "claims"},
    },
}
LM = "lm"


def with_steps(program: ScopedQA, steps: Mapping[str, str]) -> ScopedQA:
    """A copy of `program` (its predictors' state, the same store) running `steps` (ProgramSettings.steps
    fields) as given; the steps are validated (abstaining by the LM needs the LM's answer)."""
    settings = program.settings
    choices = StepChoices.model_validate({**settings.program.steps.model_dump(), **steps})
    copy: ScopedQA = program.deepcopy()
    copy.settings = settings.model_copy(update={"program": settings.program.model_copy(update={"steps": choices})})
    return copy


def lm_steps(stage: Stage, configured: Mapping[str, str]) -> dict[str, str]:
    """The steps a stage's LM runs with: the stage's own step by the LM; for the answer stage, abstaining by the LM
    too unless the config hands it to the support floor."""
    steps: dict[str, str] = {stage: LM}
    if stage == "answer":
        steps["abstain"] = configured.get("abstain", LM)
    return steps


@dataclass(frozen=True)
class StepVerdict:
    """Which way a step runs: the best floor on validation, the LM's paired gain over it, and the choice."""

    stage: Stage
    best_floor: str
    floor_values: Mapping[str, float]
    differences: Sequence[Difference]
    chosen: str
    reason: str

    @property
    def steps(self) -> dict[str, str]:
        """The steps the chosen way sets (ProgramSettings.steps fields)."""
        return dict(STAGE_FLOORS[self.stage][self.chosen]) if self.chosen != LM else {}


def best_floor(values: Mapping[str, Sequence[float]]) -> str:
    """The floor with the highest mean value (the first listed on a tie)."""
    return max(values, key=lambda name: (fmean(values[name]) if values[name] else 0.0, -list(values).index(name)))


def choose_step(
    stage: Stage,
    cases: Sequence[str],
    floors: Mapping[str, Sequence[float]],
    lm: Sequence[float],
    floor_safety: Callable[[str], Mapping[str, int]],
    lm_safety: Mapping[str, int],
    seed: int,
) -> StepVerdict:
    """The LM when it beats the best floor on these paired examples (the selection rule), else that floor."""
    best = best_floor(floors)
    differences = compare_paired(cases, list(floors[best]), list(lm), seed=seed)
    selection = select_candidate(differences, floor_safety(best), lm_safety)
    means = {name: round(fmean(values), 4) if values else 0.0 for name, values in floors.items()}
    if selection.selected:
        return StepVerdict(stage, best, means, differences, LM, "the LM beats the best floor")
    return StepVerdict(
        stage, best, means, differences, best, f"the LM does not beat the {best} floor: {selection.reason}"
    )


def floor_table(rows: Mapping[str, Mapping[str, Any]]) -> Any:
    """A DataFrame of the mean stage value per way (floors, uncompiled, compiled) and split."""
    import pandas as pd

    return pd.DataFrame.from_dict(rows, orient="index")
