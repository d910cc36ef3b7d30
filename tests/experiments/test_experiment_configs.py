"""Experiment configs: the shipped and quick ones are valid, and a bad file or field is named."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from experiments.config import ExperimentConfig, load_config, parse_config
from pipeline.errors import ExperimentConfigError
from pipeline.evaluation.examples import CASES
from pipeline.store import Store
from tests.support.paths import ROOT


def test_a_quick_config_per_stage_plans_a_few_minutes_on_the_embedded_model(store: Store) -> None:
    """experiments/quick_<stage>.toml: the loop end to end in about 5 minutes on an idle machine (the time measured
    on 2 cores is in experiments/README.md); planned at the benchmark rate, without a test split."""
    from experiments.data import prepare_job

    for stage in ("decompose", "score", "answer"):
        path = ROOT / "experiments" / f"quick_{stage}.toml"
        config = load_config(path)
        assert config.stage == stage and config.lm.task == "embedded" and config.data.test_split is None
        plan = prepare_job(config, path, store, contention=1.0).plan
        assert plan.seconds is not None and plan.seconds <= 5 * 60, (stage, plan.describe())
        assert set(plan.examples["val"]) == set(CASES) and all(plan.examples["val"].values())


def test_shipped_configs_are_valid_and_run_on_the_embedded_lm() -> None:
    configs = {path.name: load_config(path) for path in sorted((ROOT / "experiments").glob("*.toml"))}
    embedded = [c for c in configs.values() if c.lm.task == "embedded"]
    assert len(embedded) >= 3
    assert {"bootstrap_few_shot", "bootstrap_random_search", "mipro_v2"} <= {c.optimizer for c in embedded}
    for config in (c for c in configs.values() if c.stage == "end_to_end"):
        assert set(config.data.cases) == set(CASES)
        assert config.data.train_size <= 12 and config.data.val_size <= 8  # an hour on 2 cores
        assert config.budget.max_lm_calls <= 200
    full = [c for c in configs.values() if c.stage != "end_to_end" and not c.name.startswith("quick-")]
    stages = {(c.stage, str(c.data.traces_dir)): c for c in full}
    for stage in ("decompose", "score", "answer"):
        for traces in ("datasets/demo-traces", "datasets/sec-10q/traces"):
            config = stages.get((stage, traces))
            assert config is not None, f"no {stage} stage config on {traces}"
            # sized to show a difference: 40 train and 40 validation examples, never the test split
            assert config.data.train_size >= 40 and config.data.val_size >= 40 and config.data.test_split == "test"
            assert "test" not in (config.data.train_split, config.data.val_split)
            assert config.modules == (config.stage_module,) and config.lm.task == "embedded"
            assert set(config.data.cases) >= {"no_scope", "chip", "property"}


BASE = """
name = "bad"
optimizer = "bootstrap_few_shot"
modules = ["answer"]
[data]
train_size = 4
val_size = 4
[budget]
max_lm_calls = 10
"""


@pytest.mark.parametrize(
    ("edit", "field", "message"),
    [
        (lambda t: t.replace('name = "bad"', 'name = "bad"\nbogus = 1'), "bogus", "unknown key"),
        (lambda t: t.replace('"bootstrap_few_shot"', '"adam"'), "optimizer", "bootstrap_few_shot"),
        (lambda t: t.replace('["answer"]', '["planner"]'), "modules.0", "decompose"),
        (lambda t: t.replace("train_size = 4", "train_size = 2"), "data", "every case must be represented"),
        (lambda t: t + "[metric.weights]\nspeed = 1.0\n", "metric.weights", "unknown metric(s) speed"),
        (lambda t: t + "[lm]\ntask = 'not a model'\n", "lm.task", "unknown LM"),
        (lambda t: t + "[optimizer_params]\nmax_labeled_demos = 2\n", "optimizer_params.max_labeled_demos", "0"),
        (
            lambda t: (
                t.replace('"bootstrap_few_shot"', '"mipro_v2"') + "[optimizer_params]\nauto = 'light'\nnum_trials = 3\n"
            ),
            "optimizer_params",
            "either auto",
        ),
        (lambda t: t.replace('"bootstrap_few_shot"', '"gepa"'), "optimizer_params", "exactly one of auto"),
        (
            lambda t: (
                t.replace('"bootstrap_few_shot"', '"gepa"')
                + "[lm]\nteacher = 'embedded'\n[optimizer_params]\nmax_metric_calls = 4\n"
            ),
            "(top level)",
            "GEPA takes no teacher",
        ),
        (lambda t: t.replace("[budget]\nmax_lm_calls = 10\n", ""), "budget", "Field required"),
    ],
)
def test_config_errors_name_the_file_and_the_field(
    tmp_path: Path, edit: Callable[[str], str], field: str, message: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(edit(BASE))
    with pytest.raises(ExperimentConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value) and message in str(info.value)
    assert info.value.field == field


def test_config_file_problems_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ExperimentConfigError, match="no such file"):
        load_config(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("name = \n")
    with pytest.raises(ExperimentConfigError, match="not valid TOML"):
        load_config(broken)
    config = parse_config(
        {
            "name": "ok",
            "optimizer": "gepa",
            "modules": ["answer"],
            "data": {"train_size": 4, "val_size": 4},
            "budget": {"max_lm_calls": 5},
            "optimizer_params": {"max_metric_calls": 3},
        }
    )
    assert isinstance(config, ExperimentConfig) and config.optimizer_params.kind == "gepa"


def test_a_stage_job_compiles_only_its_own_module(tmp_path: Path) -> None:
    path = tmp_path / "stage.toml"
    path.write_text(BASE.replace('modules = ["answer"]', 'stage = "decompose"\nmodules = ["answer"]'))
    with pytest.raises(ExperimentConfigError, match=r"set modules = \['decompose'\]"):
        load_config(path)
    path.write_text(BASE.replace('modules = ["answer"]', 'stage = "plan"\nmodules = ["answer"]'))
    with pytest.raises(ExperimentConfigError) as caught:
        load_config(path)
    assert caught.value.field == "stage"
    path.write_text(BASE.replace("val_size = 4", 'val_size = 4\ntest_split = "dev"'))
    with pytest.raises(ExperimentConfigError, match="name a third split"):
        load_config(path)
