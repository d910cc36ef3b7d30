"""`scoperag ui` as the README writes it: the MLflow UI on the project's store, started without the offline
environment variables the Makefile sets, answers a page over a real socket."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import httpx

from experiments.tracking import experiment_id, open_tracker
from tests.experiments.test_experiments import fresh_mlruns
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
    experiment_id(open_tracker(mlruns), "scoperag-ui-check")
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
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)
        log.close()
    shutil.rmtree(mlruns, ignore_errors=True)
