"""Optimisation jobs: TOML configs, the job runner and MLflow tracking (the only package importing mlflow).

Import from the submodules (config, runner, runs, tracking, cli): this package imports nothing, so
loading the `scoperag` command's experiment commands does not load MLflow."""
