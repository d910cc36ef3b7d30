"""Optimisation jobs: TOML configs, the job runner and MLflow tracking (the only package importing mlflow)."""

from experiments.config import ExperimentConfig, config_hash, load_config, parse_config
from experiments.runner import ProgressEvent, RunSummary, run_experiment
from experiments.runs import champion, export_run, list_runs
from experiments.tracking import tracking_uri

__all__ = [
    "ExperimentConfig",
    "ProgressEvent",
    "RunSummary",
    "champion",
    "config_hash",
    "export_run",
    "list_runs",
    "load_config",
    "parse_config",
    "run_experiment",
    "tracking_uri",
]
