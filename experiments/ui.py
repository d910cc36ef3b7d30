"""`scoperag ui`: MLflow's UI server on the project's store, and the addresses that open each experiment's runs."""

from __future__ import annotations

import sys

from experiments.tracking import Tracker
from pipeline.errors import TrackingError


def ui_command(uri: str, host: str, port: int) -> list[str]:
    """The command line of MLflow's UI server on the store `uri` (resolve_tracking_uri's); TrackingError
    when `uri` is itself a tracking server, whose own UI is its address."""
    if uri.startswith(("http://", "https://")):
        raise TrackingError(f"{uri} is an MLflow server: open it in a browser (`scoperag ui` serves a store)")
    return [
        sys.executable,
        "-m",
        "mlflow",
        "ui",
        "--backend-store-uri",
        uri,
        "--host",
        host,
        "--port",
        str(port),
        # one worker is plenty for one researcher, and leaves the cores to the jobs
        "--workers",
        "1",
    ]


def runs_links(tracker: Tracker, address: str) -> list[tuple[str, str]]:
    """(experiment name, the address of its runs list) for every experiment holding runs, newest first.

    MLflow 3.17's UI chooses an experiment's view per browser, not per experiment: it opens on the GenAI
    overview unless "Model training" was chosen (its toggle, remembered by the browser) or the address
    says `workflowType=machine_learning`, as these do.
    """
    latest: dict[str, tuple[int, str]] = {}  # experiment name -> (its newest run's start, its id)
    for experiment in tracker.client.search_experiments():
        newest = tracker.client.search_runs(
            [experiment.experiment_id], order_by=["attributes.start_time DESC"], max_results=1
        )
        if newest:
            latest[experiment.name] = (int(newest[0].info.start_time), str(experiment.experiment_id))
    ordered = sorted(latest.items(), key=lambda item: -item[1][0])
    return [(name, f"{address}/#/experiments/{eid}/runs?workflowType=machine_learning") for name, (_, eid) in ordered]


def ui_environment() -> dict[str, str]:
    """Settings the UI server needs on top of the offline ones: no job executor (its background consumers
    serve GenAI scorers this project does not use)."""
    return {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
