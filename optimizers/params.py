"""Each optimizer's parameters as a strict model, and the names of what can be optimised.

Labelled demos are fixed at 0: a labelled trace holds a question, its scope and its gold
documents, none of which is the input/output pair of any one predictor, so DSPy's
`LabeledFewShot` demos would be the raw rows (wrong fields, gold labels leaked into prompts).
Demos come from bootstrapped traces only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, model_validator

from pipeline.types import Strict

OptimizerName = Literal["bootstrap_few_shot", "bootstrap_random_search", "mipro_v2", "gepa"]
ModuleName = Literal["decompose", "score", "answer", "hyde", "compute", "judge"]
MODULES: tuple[ModuleName, ...] = ("decompose", "score", "answer", "hyde", "compute", "judge")
NoLabelledDemos = Annotated[
    int,
    Field(
        ge=0,
        le=0,
        description="must be 0: labelled traces are not per-predictor demos (demos are bootstrapped)",
    ),
]


class BootstrapParams(Strict):
    """dspy.BootstrapFewShot: demos from the teacher's traces that pass the gated metric."""

    kind: Literal["bootstrap_few_shot"] = "bootstrap_few_shot"
    max_bootstrapped_demos: int = Field(default=2, ge=0, le=8)
    max_labeled_demos: NoLabelledDemos = 0
    max_rounds: int = Field(default=1, ge=1, le=4)
    max_errors: int = Field(default=5, ge=1, le=1000)


class RandomSearchParams(Strict):
    """dspy.BootstrapFewShotWithRandomSearch: several bootstrapped demo sets, the best on validation kept."""

    kind: Literal["bootstrap_random_search"] = "bootstrap_random_search"
    max_bootstrapped_demos: int = Field(default=2, ge=1, le=8)
    max_labeled_demos: NoLabelledDemos = 0
    max_rounds: int = Field(default=1, ge=1, le=4)
    num_candidate_programs: int = Field(default=2, ge=1, le=16)
    stop_at_score: float | None = None
    max_errors: int = Field(default=5, ge=1, le=1000)


class MiproParams(Strict):
    """dspy.MIPROv2: proposed instructions x bootstrapped demo sets, searched with optuna (TPE)."""

    kind: Literal["mipro_v2"] = "mipro_v2"
    auto: Literal["light", "medium", "heavy"] | None = None
    num_candidates: int | None = Field(default=None, ge=1, le=32)
    num_trials: int | None = Field(default=None, ge=1, le=200)
    max_bootstrapped_demos: int = Field(default=1, ge=0, le=8)
    max_labeled_demos: NoLabelledDemos = 0
    minibatch: bool = False
    minibatch_size: int = Field(default=4, ge=1, le=100)
    init_temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    # The program-aware proposer reads the program's source and the data-aware one summarises the
    # raw trainset (scopes, gold labels): both cost LM calls a 0.5B model answers poorly.
    program_aware_proposer: bool = False
    data_aware_proposer: bool = False
    tip_aware_proposer: bool = True
    fewshot_aware_proposer: bool = True
    max_errors: int = Field(default=5, ge=1, le=1000)

    @model_validator(mode="after")
    def _one_budget(self) -> MiproParams:
        if self.auto is not None and (self.num_candidates is not None or self.num_trials is not None):
            raise ValueError("set either auto, or num_candidates and num_trials (not both); remove one of them")
        if self.auto is None and (self.num_candidates is None or self.num_trials is None):
            raise ValueError("set auto ('light', 'medium', 'heavy'), or both num_candidates and num_trials")
        return self


class GepaParams(Strict):
    """dspy.GEPA: reflective instruction evolution; guard interventions and failures are its feedback."""

    kind: Literal["gepa"] = "gepa"
    auto: Literal["light", "medium", "heavy"] | None = None
    max_metric_calls: int | None = Field(default=None, ge=1, le=100_000)
    max_full_evals: int | None = Field(default=None, ge=1, le=1000)
    reflection_minibatch_size: int = Field(default=2, ge=1, le=64)
    candidate_selection_strategy: Literal["pareto", "current_best"] = "pareto"
    skip_perfect_score: bool = True
    use_merge: bool = False
    # Where GEPA keeps its state; default: <mlruns>/gepa/<job key>. GEPA saves that state with
    # pickle, so resuming (loading it back) is opt-in: only ever resume a directory this job wrote.
    log_dir: Path | None = None
    resume: bool = False

    @model_validator(mode="after")
    def _one_budget(self) -> GepaParams:
        given = [n for n in ("auto", "max_metric_calls", "max_full_evals") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(
                "set exactly one of auto, max_metric_calls, max_full_evals"
                + (f" (got {', '.join(given)})" if given else "")
            )
        return self


OptimizerParams = Annotated[
    BootstrapParams | RandomSearchParams | MiproParams | GepaParams,
    Field(discriminator="kind"),
]
PARAMS: dict[str, type[Strict]] = {
    "bootstrap_few_shot": BootstrapParams,
    "bootstrap_random_search": RandomSearchParams,
    "mipro_v2": MiproParams,
    "gepa": GepaParams,
}
