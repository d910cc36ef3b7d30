"""Compile strategies over ScopedQA: case-stratified, seeded, gated by the safety metrics, budgeted."""

from optimizers.compile import CompileSpec, compile_program
from optimizers.feedback import feedback_text
from optimizers.objective import (
    bootstrap_accept,
    gate_penalty,
    gated_metric,
    gepa_metric,
    metric_value,
    score_example,
    to_training_examples,
)
from optimizers.params import (
    MODULES,
    PARAMS,
    BootstrapParams,
    GepaParams,
    MiproParams,
    ModuleName,
    OptimizerName,
    OptimizerParams,
    RandomSearchParams,
)
from optimizers.trainable import TrainableView

__all__ = [
    "MODULES",
    "PARAMS",
    "BootstrapParams",
    "CompileSpec",
    "GepaParams",
    "MiproParams",
    "ModuleName",
    "OptimizerName",
    "OptimizerParams",
    "RandomSearchParams",
    "TrainableView",
    "bootstrap_accept",
    "compile_program",
    "feedback_text",
    "gate_penalty",
    "gated_metric",
    "gepa_metric",
    "metric_value",
    "score_example",
    "to_training_examples",
]
