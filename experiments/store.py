"""Opening a tracking store: a Tracker on a URI and, for the project's own sqlite store, the reference runs
shipped under `<root>/reference/` (experiments.reference) installed into it.

This sits above both experiments.tracking (the MLflow calls) and experiments.reference (which reads and
writes runs through them), so neither of the two imports the other back."""

from __future__ import annotations

from pathlib import Path

from mlflow import MlflowClient

from experiments.reference import install_reference
from experiments.tracking import Tracker, tracking_uri


def open_tracker(root: Path, uri: str | None = None) -> Tracker:
    """A Tracker on `uri` (default: `<root>/mlflow.db`, created on first use, holding the reference runs shipped
    in `<root>/reference/`: experiments.reference); `root` is made for scratch files."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    uri = uri or tracking_uri(root)
    tracker = Tracker(root=root.resolve(), client=MlflowClient(tracking_uri=uri, registry_uri=uri), uri=uri)
    if tracker.local:  # the reference runs shipped under <root>/reference/ join the project's own store
        install_reference(tracker)
    return tracker
