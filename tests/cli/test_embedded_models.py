"""`--lm embedded:1.5b` as a user types it: `ask` says first that the program shipped for the 1.5B model answers
and which steps its LM runs, and the weights it loads are the 1.5B model's (the loader is faked: no weights)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.export.routes import write_routed
from pipeline.program.lm import QWEN_CODER_05B, QWEN_CODER_15B, LocalModel, ShippedModel
from pipeline.store import Store
from tests.support.fakes import cooperative_llama

# A program routing a step to the 1.5B (the shipped one routes none: no step beat its floor there).
ROUTE = {"lm_name": "embedded:1.5b", "measured": "a test route"}


class RecordedLoads:
    """Stands in for assembling and loading the embedded weights: records which model each load was for and
    answers every call with the cooperative script."""

    def __init__(self) -> None:
        self.models: list[ShippedModel] = []
        self.server = cooperative_llama(0.0)

    def ensure(self, cache_dir: Path, model: ShippedModel) -> Path:
        self.models.append(model)
        return cache_dir / model.file_name

    def load(self, path: Path, name: str, options: Any) -> LocalModel:
        return LocalModel(self.server, name, options.parallel)


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> RecordedLoads:
    from pipeline.program.lm import factory

    fake = RecordedLoads()
    monkeypatch.setattr(factory, "ensure_model_file", fake.ensure)
    monkeypatch.setattr(factory, "load_local_model", fake.load)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCOPERAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy"))
    monkeypatch.delenv("SCOPERAG_LM", raising=False)
    return fake


def _ask(demo_index_dir: Path, *lm: str) -> list[str]:
    return ["ask", "What is the monthly rent?", "--property", "Banda Lane", "--index", str(demo_index_dir), *lm]


def test_ask_with_the_15b_model_runs_its_shipped_program_and_loads_the_15b_weights(
    loads: RecordedLoads, demo_index_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.cli.main import main

    capsys.readouterr()
    code = main([*_ask(demo_index_dir, "--lm", "embedded:1.5b"), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    first = err.splitlines()[0]
    # no step beat its floor on the 1.5B either: its program runs the floors, and nothing is loaded
    assert first.startswith("program: the compiled program shipped for the embedded 1.5B model; no step by the LM")
    assert json.loads(out)["lm_calls"] == 0 and loads.models == [] and not loads.server.bodies
    # every step by the 1.5B model, uncompiled: its weights are the ones loaded
    code = main([*_ask(demo_index_dir, "--lm", "embedded:1.5b", "--uncompiled"), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "every step by the LM (" in err.splitlines()[0]
    assert json.loads(out)["lm_calls"] > 0 and set(loads.models) == {QWEN_CODER_15B}


def test_ask_with_the_default_embedded_model_runs_the_shipped_program(
    loads: RecordedLoads, demo_index_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.cli.main import main

    capsys.readouterr()
    code = main([*_ask(demo_index_dir, "--lm", "embedded:0.5b"), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err.splitlines()[0].startswith("program: the compiled program shipped for the embedded model")
    # the shipped program runs every step's floor: nothing reaches the model, so nothing is loaded
    assert json.loads(out)["lm_calls"] == 0 and loads.models == []
    # its steps by the LM, uncompiled: the weights loaded are the 0.5B model's
    code = main([*_ask(demo_index_dir, "--lm", "embedded:0.5b", "--uncompiled"), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["lm_calls"] > 0 and loads.models == [QWEN_CODER_05B]


def test_an_embedded_size_not_shipped_is_refused_before_anything_loads(
    loads: RecordedLoads, demo_index_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.cli.main import main

    code = main(_ask(demo_index_dir, "--lm", "embedded:7b"))
    err = capsys.readouterr().err
    assert code == 2
    assert "unknown embedded model 'embedded:7b'" in err and "'embedded:1.5b'" in err
    assert loads.models == []


def test_evaluations_time_a_question_by_the_steps_its_program_runs_by_the_lm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo_store: Store
) -> None:
    """The benchmark's rate is for the 0.5B running every step; a program of floors, or one routing a step to the
    1.5B, is timed by what was measured here for that LM and those steps, else learned from its first examples."""
    import argparse

    from pipeline.cli.evaluate import evaluation_eta
    from pipeline.export.choice import SHIPPED_PROGRAMS, plan_program
    from pipeline.program.lm.timings import EMBEDDED_SECONDS, record_rates
    from pipeline.settings import Settings

    monkeypatch.setenv("SCOPERAG_CACHE_DIR", str(tmp_path))

    def question_rate(lm: str, plan_dir: Path | None) -> float | None:
        args = argparse.Namespace(retrieval_only=False, lm=lm, threads=2, lm_threads=None)
        plan = plan_program(plan_dir, None, Settings(), shipped=None, uncompiled=plan_dir is None)
        (work,) = evaluation_eta(args, ["hybrid"], 10, plan).work
        return work.idle_seconds

    assert question_rate("embedded", None) == EMBEDDED_SECONDS["question"]  # every step by the 0.5B: benchmarked
    assert question_rate("embedded", SHIPPED_PROGRAMS["0.5b"]) is None  # every floor: not an LM's rate
    assert question_rate("embedded:1.5b", None) is None
    routed = write_routed(SHIPPED_PROGRAMS["0.5b"], demo_store, {"choose": "lm"}, tmp_path / "routed", **ROUTE)
    assert routed.config.program["steps"]["choose"] == "lm"
    assert question_rate("embedded:1.5b", tmp_path / "routed") is None
    record_rates(tmp_path / "timings.json", "embedded:1.5b [choose]", 2, {"question": (6.0, 3)})
    assert question_rate("embedded:1.5b", tmp_path / "routed") == 2.0  # measured here for that program
    assert question_rate("embedded:1.5b", SHIPPED_PROGRAMS["1.5b"]) is None  # its floors: another program
    assert question_rate("embedded:1.5b", None) is None
