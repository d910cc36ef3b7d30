"""`scoperag ui` as the README writes it: the MLflow UI on the project's store, started without the offline
environment variables the Makefile sets, answers a page over a real socket, and the address it prints for an
experiment opens on its runs list (MLflow 3.17 opens a GenAI overview otherwise), checked in headless Chromium
when it is installed."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import httpx

from experiments.store import open_tracker
from experiments.tracking import experiment_id, finish_run, start_run
from tests.support.browser import chromium, skip_reason
from tests.support.experiments import fresh_mlruns
from tests.support.paths import ROOT
from tests.support.serve_process import free_port, scoperag_command

# MLflow's server takes ~15 s to start on 2 idle cores; far more under load.
STARTUP_SECONDS = 240.0


def readme_ui_command() -> list[str]:
    """The README's `scoperag ui` line, as words after the `scoperag` executable."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^\.venv/bin/scoperag (ui\b[^#\n]*)", readme, flags=re.MULTILINE)
    assert found is not None, "the README names `scoperag ui`"
    return found.group(1).split()


def test_scoperag_ui_serves_the_project_store_offline(tmp_path: Path, mlflow_template: Path) -> None:
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    tracker = open_tracker(mlruns)
    experiment = experiment_id(tracker, "scoperag-ui-check")
    finish_run(tracker, start_run(tracker, experiment, "quick-score-0a1b2c3d-20261125-120000", {}))
    # a "Model training" experiment to MLflow's UI, whichever version reads the tag
    assert tracker.client.get_experiment(experiment).tags["mlflow.experimentKind"] == "custom_model_development"
    port = free_port()
    # What a new user's shell has: none of the Makefile's offline settings.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"LITELLM_LOCAL_MODEL_COST_MAP", "MLFLOW_DISABLE_TELEMETRY", "HF_HUB_OFFLINE"}
    }
    log = (tmp_path / "ui.log").open("wb")
    process = subprocess.Popen(
        [*scoperag_command(), *readme_ui_command(), "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=log,
        stderr=log,
        start_new_session=True,  # the UI runs worker processes: stop them all with the group
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        page = None
        while page is None:
            assert process.poll() is None, (tmp_path / "ui.log").read_text(errors="replace")[-2000:]
            if f"MLflow UI on {url}" in (tmp_path / "ui.log").read_text(errors="replace"):
                # an address is printed only once the server answers
                assert httpx.get(f"{url}/health", timeout=5).status_code == 200
            try:
                response = httpx.get(f"{url}/", timeout=2)
                if response.status_code == 200:
                    page = response.text
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "ui.log").read_text(errors="replace")[-2000:]
            time.sleep(0.5)
        assert "<!doctype html>" in page.lower() and "static-files" in page
        found = httpx.post(f"{url}/ajax-api/2.0/mlflow/experiments/search", json={"max_results": 50}, timeout=10)
        assert found.status_code == 200
        assert "scoperag-ui-check" in {e["name"] for e in found.json()["experiments"]}  # the project's store
        said = (tmp_path / "ui.log").read_text(errors="replace")
        assert f"MLflow UI on http://127.0.0.1:{port}" in said and "mlruns/mlflow.db" in " ".join(said.split())
        link = f"{url}/#/experiments/{experiment}/runs?workflowType=machine_learning"
        assert f"runs of scoperag-ui-check: {link}" in said
        if skip_reason() is None:  # the page the link opens lists the run
            with chromium() as browser:
                page = browser.new_page()
                page.goto(link)
                page.wait_for_selector("text=quick-score-0a1b2c3d-20261125-120000", timeout=120_000)
                assert "matching run" in page.inner_text("body")
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)
        log.close()
    shutil.rmtree(mlruns, ignore_errors=True)


def test_the_servers_environment_is_the_one_mlflow_gives_its_workers() -> None:
    """`scoperag ui` starts MLflow's app as `mlflow server` starts its workers: the variable names are MLflow's."""
    import mlflow.environment_variables as variables
    import mlflow.server.constants as constants

    from experiments.ui import SERVER_ENVIRONMENT, server_environment

    assert {
        "backend": constants.BACKEND_STORE_URI_ENV_VAR,
        "registry": constants.REGISTRY_STORE_URI_ENV_VAR,
        "artifact_root": constants.ARTIFACT_ROOT_ENV_VAR,
        "serve_artifacts": constants.SERVE_ARTIFACTS_ENV_VAR,
        "artifacts_destination": constants.ARTIFACTS_DESTINATION_ENV_VAR,
        "boot_id": variables._MLFLOW_SERVER_BOOT_ID.name,
        "in_job_executor": variables._MLFLOW_IN_JOB_EXECUTOR.name,
        "server_kind": variables._MLFLOW_SGI_NAME.name,
    } == SERVER_ENVIRONMENT
    environment = server_environment("sqlite:////x/mlflow.db", Path("/x/artifacts"))
    assert environment[constants.BACKEND_STORE_URI_ENV_VAR] == "sqlite:////x/mlflow.db"
