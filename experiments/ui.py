"""`scoperag ui`: MLflow's UI server on the project's store, and the addresses that open each experiment's runs."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.errors import TrackingError

if TYPE_CHECKING:
    from experiments.tracking import Tracker


# The environment `mlflow server` gives its uvicorn workers (mlflow.server.constants and mlflow.server._run_server
# in MLflow 3.17): the UI is started as those workers directly, one process instead of the CLI and then its worker
# (a third of the start-up; tests/experiments/test_ui.py checks these names against MLflow's own).
SERVER_ENVIRONMENT = {
    "backend": "_MLFLOW_SERVER_FILE_STORE",
    "registry": "_MLFLOW_SERVER_REGISTRY_STORE",
    "artifact_root": "_MLFLOW_SERVER_ARTIFACT_ROOT",
    "serve_artifacts": "_MLFLOW_SERVER_SERVE_ARTIFACTS",
    "artifacts_destination": "_MLFLOW_SERVER_ARTIFACT_DESTINATION",
    "boot_id": "_MLFLOW_SERVER_BOOT_ID",
    "in_job_executor": "_MLFLOW_IN_JOB_EXECUTOR",
    "server_kind": "_MLFLOW_SGI_NAME",
}
# Where the server proxies artifacts of experiments created in the UI (`mlflow server`'s default).
DEFAULT_ARTIFACTS_URI = "mlflow-artifacts:/"
APP = "mlflow.server.fastapi_app:app"


def ui_command(uri: str, host: str, port: int) -> list[str]:
    """The command line of MLflow's UI server on the store `uri` (resolve_tracking_uri's): uvicorn serving MLflow's
    app, one worker (plenty for one researcher, and it leaves the cores to the jobs); TrackingError when `uri` is
    itself a tracking server, whose own UI is its address."""
    if uri.startswith(("http://", "https://")):
        raise TrackingError(f"{uri} is an MLflow server: open it in a browser (`scoperag ui` serves a store)")
    return [
        sys.executable,
        "-m",
        "uvicorn",
        *("--host", host, "--port", str(port), "--workers", "1", "--log-level", "warning"),
        APP,
    ]


def server_environment(uri: str, artifacts: Path) -> dict[str, str]:
    """What MLflow's server reads from its environment: the store, artifacts served from `artifacts`, and no job
    executor (its background consumers serve GenAI scorers this project does not use)."""
    keys = SERVER_ENVIRONMENT
    return {
        keys["backend"]: uri,
        keys["registry"]: uri,
        keys["artifact_root"]: DEFAULT_ARTIFACTS_URI,
        keys["serve_artifacts"]: "true",
        keys["artifacts_destination"]: str(artifacts),
        keys["boot_id"]: uuid.uuid4().hex,
        keys["in_job_executor"]: "false",
        keys["server_kind"]: "uvicorn",
        "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
    }


def wait_until_listening(
    address: str, process: subprocess.Popen[bytes], timeout: float, clock: Callable[[], float] = time.monotonic
) -> bool:
    """Whether the server at `address` answers its health check before `process` exits or `timeout` passes."""
    deadline = clock() + timeout
    while clock() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"{address}/health", timeout=1) as response:
                if response.status == 200:
                    return True
        except OSError:  # not listening yet (URLError is an OSError)
            pass
        time.sleep(0.1)
    return False


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
