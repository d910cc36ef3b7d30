"""What an export's manifest may record about the job that compiled it (`config.experiment`), and its scores.

The record is informational (nothing configures a program from it), but it is loaded from files that travel
between machines, so it is held to a schema like everything else: every key the experiment job writes is
known here, at every depth, every other key is refused, and every number is bounded. The job's own config
(experiments/config.py) writes it; tests/export check that every shipped experiment config's record passes.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from pipeline.types import StrictJson

# A name of a case, a metric, a split or a module: never a URL or markup.
Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")]
Text = Annotated[str, StringConstraints(max_length=2000)]
Short = Annotated[str, StringConstraints(max_length=400)]
Count = Annotated[int, Field(ge=0, le=1_000_000)]
# A score or a per-case total (tokens, LM calls, examples) as the manifest records it.
Score = Annotated[float, Field(ge=-1e12, le=1e12)]
Scores = Annotated[dict[Name, Annotated[dict[Name, Score], Field(max_length=1000)]], Field(max_length=100)]


class DataRecord(StrictJson):
    traces_dir: Short | None = None
    train_split: Name | None = None
    val_split: Name | None = None
    train_size: Count | None = None
    val_size: Count | None = None
    cases: Annotated[list[Name], Field(max_length=20)] | None = None
    corpus_dir: Short | None = None
    corpus_manifest: Short | None = None
    index_dir: Short | None = None
    test_split: Name | None = None
    test_size: Count | None = None
    end_to_end_size: Count | None = None
    min_val_size: Count | None = None


class LMRecord(StrictJson):
    """The LMs named by the job, as text: an export never configures an LM from them."""

    task: Short | None = None
    teacher: Short | None = None
    reflection: Short | None = None
    threads: Annotated[int, Field(ge=1, le=1024)] | None = None
    num_threads: Annotated[int, Field(ge=1, le=1024)] | None = None


class MetricRecord(StrictJson):
    weights: Annotated[dict[Name, Annotated[float, Field(ge=0.0, le=1000.0)]], Field(max_length=100)] | None = None
    bootstrap_threshold: Annotated[float, Field(ge=0.0, le=1.0)] | None = None


class BudgetRecord(StrictJson):
    max_lm_calls: Count | None = None


class TrackingRecord(StrictJson):
    experiment: Short | None = None
    dspy_autolog: bool | None = None


class OptimizerRecord(StrictJson):
    """The optimizer's parameters: the keys of every optimizer scoperag runs (optimizers/params.py)."""

    kind: Name | None = None
    auto: Name | None = None
    max_bootstrapped_demos: Count | None = None
    max_labeled_demos: Count | None = None
    max_rounds: Count | None = None
    max_errors: Count | None = None
    num_candidate_programs: Count | None = None
    stop_at_score: Score | None = None
    num_candidates: Count | None = None
    num_trials: Count | None = None
    minibatch: bool | None = None
    minibatch_size: Count | None = None
    init_temperature: Annotated[float, Field(ge=0.0, le=10.0)] | None = None
    program_aware_proposer: bool | None = None
    data_aware_proposer: bool | None = None
    tip_aware_proposer: bool | None = None
    fewshot_aware_proposer: bool | None = None
    max_metric_calls: Count | None = None
    max_full_evals: Count | None = None
    reflection_minibatch_size: Count | None = None
    candidate_selection_strategy: Name | None = None
    skip_perfect_score: bool | None = None
    use_merge: bool | None = None
    log_dir: Short | None = None
    resume: bool | None = None


class ExperimentRecord(StrictJson):
    """`config.experiment`: the job's config as it ran, and whether its candidate was selected."""

    name: Short | None = None
    description: Text | None = None
    optimizer: Name | None = None
    stage: Name | None = None
    modules: Annotated[list[Name], Field(max_length=20)] | None = None
    seed: Annotated[int, Field(ge=0, le=2**32)] | None = None
    data: DataRecord | None = None
    lm: LMRecord | None = None
    metric: MetricRecord | None = None
    budget: BudgetRecord | None = None
    tracking: TrackingRecord | None = None
    optimizer_params: OptimizerRecord | None = None
    # Which program the export holds ("candidate", or the baseline and why the candidate was rejected).
    program: Short | None = None
    require_improvement: bool | None = None
    config_hash: Short | None = None
    selected: bool | None = None
