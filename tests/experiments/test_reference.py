"""Reference runs shipped under mlruns/reference/: written from a store by `scoperag reference`, found by a fresh
copy of the repository (no MLflow database yet) as runs it can list, compare and export, with the metrics,
params, artifacts and prompts they were logged with; refused whole when a file was changed."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from experiments.reference import (
    LOCAL_TAGS,
    MAX_SET_BYTES,
    ReferenceRun,
    install_reference,
    load_reference_run,
    reference_dir,
    write_reference,
)
from experiments.runner import RunSummary
from experiments.runs import compare_runs, export_run, exported_way, list_runs
from experiments.store import open_tracker
from experiments.tracking import TAG_CONFIG_NAME, TAG_SELECTED, experiment_id, start_run
from pipeline.errors import TrackingError
from pipeline.export import load_export, program_state
from pipeline.program.module import ScopedQA
from pipeline.store import Store
from tests.support.experiments import fresh_mlruns, run, write_config, write_data
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory, mlflow_template: Path, store: Store) -> tuple[Path, RunSummary]:
    """A store holding one finished job (scripted LM): the runs a reference set is made from."""
    where = tmp_path_factory.mktemp("source")
    mlruns = fresh_mlruns(mlflow_template, where / "mlruns")
    summary = run(write_config(where, write_data(where / "traces")), mlruns, store)
    return mlruns, summary


@pytest.fixture(scope="module")
def shipped(source: tuple[Path, RunSummary], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference set `scoperag reference SHORT_ID --out ...` writes from the source store."""
    from pipeline.cli.main import main

    mlruns, summary = source
    out = tmp_path_factory.mktemp("set") / "reference"
    assert main(["reference", summary.run_id[:8], "--mlruns", str(mlruns), "--out", str(out)]) == 0
    return out


def fresh_copy(reference: Path, where: Path) -> Path:
    """A clone's mlruns/: the shipped set and nothing else (no mlflow.db)."""
    mlruns = where / "mlruns"
    shutil.copytree(reference, reference_dir(mlruns))
    return mlruns


def test_a_fresh_copy_lists_compares_and_exports_the_reference_runs_as_logged(
    source: tuple[Path, RunSummary], shipped: Path, store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.cli.main import main

    original, summary = source
    mlruns = fresh_copy(shipped, tmp_path)
    short = summary.run_id[:8]
    capsys.readouterr()
    assert main(["runs", "--mlruns", str(mlruns)]) == 0
    listed = capsys.readouterr().out
    assert short in listed and "tiny" in listed and "selected" in listed
    assert (mlruns / "mlflow.db").is_file()

    # The run as logged: every metric value, param and tag (but the machine's own), the same runs-table row.
    before = open_tracker(original).client.get_run(summary.run_id)
    after = open_tracker(mlruns).client.get_run(summary.run_id)
    assert after.info.run_id == summary.run_id and after.info.run_name == before.info.run_name
    assert (after.info.status, after.info.start_time, after.info.end_time) == (
        before.info.status,
        before.info.start_time,
        before.info.end_time,
    )
    assert after.data.metrics == before.data.metrics and len(after.data.metrics) > 50
    assert after.data.params == before.data.params
    kept = {k: v for k, v in before.data.tags.items() if not k.startswith(LOCAL_TAGS)}
    assert {k: v for k, v in after.data.tags.items() if k in kept} == kept
    row = {k: v for k, v in list_runs(original).iloc[0].items() if k != "champion"}
    assert {k: v for k, v in list_runs(mlruns).iloc[0].items() if k != "champion"} == row

    # The README's reproduce command, by the short id: the same program as the job exported.
    out = tmp_path / "export"
    assert main(["export", short, "--out", str(out), "--mlruns", str(mlruns)]) == 0
    assert program_state(load_export(out, ScopedQA(store))[0]) == program_state(
        load_export(summary.export_dir, ScopedQA(store))[0]
    )
    assert main(["runs", "--compare", short, short, "--mlruns", str(mlruns)]) == 0
    assert compare_runs(short, short, mlruns).equals(compare_runs(summary.run_id, summary.run_id, original))
    # Its prompt versions came along: the alias can move to them.
    assert main(["champion", short, "--mlruns", str(mlruns)]) == 0
    assert "alias 'champion' now on" in capsys.readouterr().err


def test_a_store_with_runs_of_its_own_gains_the_reference_runs_once(
    source: tuple[Path, RunSummary], shipped: Path, mlflow_template: Path, tmp_path: Path
) -> None:
    _, summary = source
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    tracker = open_tracker(mlruns)
    own = start_run(tracker, experiment_id(tracker, "mine"), "my-run", {})
    shutil.copytree(shipped, reference_dir(mlruns))
    assert install_reference(tracker) == [summary.run_id]
    assert install_reference(tracker) == []  # already held
    reopened = open_tracker(mlruns)
    ids = {
        r.info.run_id
        for r in reopened.client.search_runs([e.experiment_id for e in reopened.client.search_experiments()])
    }
    assert ids == {own, summary.run_id}
    reopened.client.delete_run(summary.run_id)
    assert install_reference(open_tracker(mlruns)) == []  # a run the user deleted stays deleted


def test_a_changed_reference_file_is_refused_and_nothing_of_the_run_is_written(
    shipped: Path, source: tuple[Path, RunSummary], tmp_path: Path, mlflow_template: Path
) -> None:
    _, summary = source
    cases = {
        "artifact": lambda run: (run / "artifacts" / "export" / "program.json").write_text("{}"),
        "extra file": lambda run: (run / "artifacts" / "surprise.txt").write_text("x"),
        "unknown key": lambda run: _edit(run, lambda record: record | {"surprise": 1}),
        "path outside": lambda run: _edit(
            run, lambda record: record | {"artifacts": {**record["artifacts"], "../../escape": "0" * 64}}
        ),
    }
    for name, change in cases.items():
        mlruns = fresh_mlruns(mlflow_template, tmp_path / name.replace(" ", "-"))  # an empty store
        shutil.copytree(shipped, reference_dir(mlruns))
        change(reference_dir(mlruns) / summary.run_id)
        with pytest.raises(TrackingError, match="cannot be installed") as info:
            open_tracker(mlruns)
        assert "git checkout" in str(info.value), name
        with contextlib.closing(sqlite3.connect(mlruns / "mlflow.db")) as db:
            assert db.execute("select count(*) from runs").fetchone() == (0,), name
        assert not (mlruns / "artifacts").exists() or not any((mlruns / "artifacts").rglob("program.json")), name


def _edit(run: Path, change: object) -> None:
    path = run / "run.json"
    path.write_text(json.dumps(change(json.loads(path.read_text()))))  # type: ignore[operator]


def test_writing_a_set_refuses_an_unfinished_or_oversized_one_and_keeps_the_previous(
    source: tuple[Path, RunSummary], shipped: Path, tmp_path: Path
) -> None:
    mlruns, summary = source
    out = tmp_path / "reference"
    shutil.copytree(shipped, out)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    tracker = open_tracker(mlruns)
    with pytest.raises(TrackingError, match="over its") as info:
        write_reference(tracker, [summary.run_id], out, max_bytes=10_000)
    assert "program.json" in str(info.value) or "examples" in str(info.value)  # names the largest files
    running = start_run(tracker, experiment_id(tracker, "tests"), "still-going", {"scoperag.config_hash": "x"})
    with pytest.raises(TrackingError, match="only an ended run"):
        write_reference(tracker, [summary.run_id, running], out)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def test_the_reference_runs_in_the_repository_list_compare_and_export_from_a_fresh_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a clone holds: the tracked files of mlruns/, copied as git would check them out."""
    from pipeline.cli.main import main

    tracked = (
        subprocess.run(["git", "ls-files", "-z", "mlruns"], cwd=ROOT, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    tracked = [name for name in tracked if name]
    assert sum((ROOT / name).stat().st_size for name in tracked) < MAX_SET_BYTES  # the repository stays small
    clone = tmp_path / "clone"
    for name in tracked:
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, clone / name)
    records = [load_reference_run(p.parent) for p in sorted((clone / "mlruns" / "reference").glob("*/run.json"))]
    assert records, "the repository ships reference runs (make reference RUNS=...)"
    mlruns = clone / "mlruns"
    capsys.readouterr()
    assert main(["runs", "--mlruns", str(mlruns)]) == 0
    listed = capsys.readouterr().out
    for record in records:
        short = record.run_id[:8]
        assert short in listed
        rejected = record.tags.get(TAG_SELECTED) == "false"
        out = tmp_path / "exports" / short
        assert (
            main(["export", short, "--out", str(out), "--mlruns", str(mlruns), *(["--baseline"] if rejected else [])])
            == 0
        )
        assert export_run(record.run_id, tmp_path / "again" / short, mlruns, baseline=True).run_id == record.run_id

        def measured(r: ReferenceRun) -> tuple[str | None, str | None]:
            return r.tags.get("scoperag.stage"), r.params.get("data.traces_dir")

        same_stage = [r for r in records if measured(r) == measured(record)]
        assert main(["runs", "--compare", same_stage[0].run_id[:8], short, "--mlruns", str(mlruns)]) == 0
    # The shipped set holds a comparable pair (one stage, one set of examples), and runs of two stages are refused.
    measures = {
        record.run_id: (record.tags.get("scoperag.stage"), record.params.get("data.traces_dir")) for record in records
    }
    pairs = [(a, b) for a in measures for b in measures if a < b and measures[a] == measures[b]]
    assert pairs, "the reference runs hold two runs of one stage on the same examples"
    a, b = pairs[0]
    capsys.readouterr()
    assert main(["runs", "--compare", a[:8], b[:8], "--mlruns", str(mlruns)]) == 0
    said = " ".join(capsys.readouterr().err.split())
    assert f"run {b} (B) - run {a} (A): the {measures[a][0]} stage metric on {measures[a][1]}" in said
    # each side says what its scores are of and what its exported program runs
    for side, run_id in (("A", a), ("B", b)):
        record = next(r for r in records if r.run_id == run_id)
        runs = exported_way(record.tags)
        assert f"{side}: {record.tags[TAG_CONFIG_NAME]}: scored its compiled candidate" in said
        assert f"its exported program runs {runs}" in said
    # as the README writes it: the pair by its configs' names, and a run by its own name
    names = {r.tags[TAG_CONFIG_NAME]: r for r in records}
    assert (
        main(["runs", "--compare", "quick-decompose-sec", "quick-decompose-sec-2demos", "--mlruns", str(mlruns)]) == 0
    )
    said = " ".join(capsys.readouterr().err.split())
    first, second = names["quick-decompose-sec"], names["quick-decompose-sec-2demos"]
    assert f"run {second.run_id} (B) - run {first.run_id} (A)" in said
    assert main(["runs", "--compare", first.run_name, second.run_id[:8], "--mlruns", str(mlruns)]) == 0
    capsys.readouterr()
    other = next(r for r in measures if measures[r][0] != measures[a][0])
    assert main(["runs", "--compare", a[:8], other[:8], "--mlruns", str(mlruns)]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "measured different things" in said and f"the {measures[other][0]} stage metric" in said


def test_runs_that_measured_different_things_are_never_compared() -> None:
    from experiments.runs import Measure, measure_conflicts

    decompose = Measure(
        "decompose", "decompose stage metric", (), "datasets/demo", "datasets/demo-traces", "dev", "", "g1"
    )
    assert measure_conflicts(decompose, decompose) == []
    answer = Measure("answer", "answer stage metric", (), "datasets/demo", "datasets/demo-traces", "dev", "", "g1")
    assert measure_conflicts(decompose, answer) == [
        "run A measured the decompose stage metric and run B the answer stage metric"
    ]
    weighed = Measure("end_to_end", "composite (end to end)", (("fact_recall", "0.1"),), "d", "t", "dev", "", "g")
    other = Measure("end_to_end", "composite (end to end)", (("fact_recall", "0.3"),), "d", "t", "dev", "", "g")
    assert measure_conflicts(weighed, other) == [
        "their composite (end to end) weighs its parts differently (fact_recall)"
    ]
    elsewhere = Measure("decompose", "decompose stage metric", (), "sec", "datasets/sec-10q/traces", "dev", "", "g2")
    reasons = measure_conflicts(decompose, elsewhere)
    assert any("read datasets/demo" in r for r in reasons) and any(
        "scored on datasets/demo-traces" in r for r in reasons
    )
