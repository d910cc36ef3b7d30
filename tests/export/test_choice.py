"""Which program runs: --program, else the active profile, else the shipped one, else uncompiled (a test per branch)."""

from __future__ import annotations

from pathlib import Path

import dspy
import pytest

from pipeline.errors import ExportError
from pipeline.export import PROGRAM, program_state, save_export
from pipeline.export.choice import SHIPPED_PROGRAM, choose_program, shipped_for
from pipeline.export.profiles import ProfilePaths, activate, add_profile
from pipeline.program.module import ScopedQA
from pipeline.settings import ProgramSettings, Settings, StepChoices
from pipeline.store import Store


def _export(store: Store, question: str, out: Path) -> Path:
    program = ScopedQA(store)
    program.decompose.demos = [dspy.Example(question=question, sub_questions=[question])]
    save_export(
        program,
        out,
        settings=Settings(),
        experiment_config={},
        trainset_hash="sha256:" + "2" * 64,
        scores={},
        run_id="run-" + question[:3],
    )
    return out


@pytest.fixture
def paths(tmp_path: Path) -> ProfilePaths:
    return ProfilePaths(registry=tmp_path / "profiles" / "profiles.json", root=tmp_path / "profiles" / "programs")


def _first_demo(program: ScopedQA) -> str:
    return str(program_state(program)["decompose"]["demos"][0]["question"])


def test_program_dir_wins_over_the_active_profile(demo_store: Store, tmp_path: Path, paths: ProfilePaths) -> None:
    add_profile(paths, "alpha", _export(demo_store, "From the profile?", tmp_path / "a"))
    activate(paths, "alpha")
    given = _export(demo_store, "From the flag?", tmp_path / "b")
    choice = choose_program(demo_store, given, paths)
    assert _first_demo(choice.program) == "From the flag?"
    assert choice.manifest is not None and choice.manifest.run_id == "run-Fro"
    assert choice.profile is None and choice.source == f"export {given}"


def test_the_active_profile_when_no_program_dir(demo_store: Store, tmp_path: Path, paths: ProfilePaths) -> None:
    exported = _export(demo_store, "From the profile?", tmp_path / "a")
    add_profile(paths, "alpha", exported)
    activate(paths, "alpha")
    choice = choose_program(demo_store, None, paths)
    assert _first_demo(choice.program) == "From the profile?"
    assert choice.manifest is not None and choice.profile == "alpha"
    assert choice.source.startswith("profile 'alpha' (") and str(exported.resolve().name) in choice.source


@pytest.mark.parametrize("registered", [False, True], ids=["no-registry", "registered-not-active"])
def test_uncompiled_without_program_or_active_profile(
    demo_store: Store, tmp_path: Path, paths: ProfilePaths, registered: bool
) -> None:
    if registered:
        add_profile(paths, "alpha", _export(demo_store, "Never used?", tmp_path / "a"))
    for profiles in (paths, None):
        choice = choose_program(demo_store, None, profiles, shipped=None)
        assert choice.manifest is None and choice.profile is None and choice.source.startswith("uncompiled")
        assert program_state(choice.program) == program_state(ScopedQA(demo_store))


def test_a_broken_export_is_an_error_not_a_fallback(demo_store: Store, tmp_path: Path, paths: ProfilePaths) -> None:
    broken = _export(demo_store, "Broken?", tmp_path / "a")
    (broken / PROGRAM).write_text("{}")
    with pytest.raises(ExportError):
        choose_program(demo_store, broken, paths)


def test_the_shipped_program_when_no_program_dir_and_no_active_profile(
    demo_store: Store, tmp_path: Path, paths: ProfilePaths
) -> None:
    shipped = _export(demo_store, "Shipped?", tmp_path / "shipped")
    choice = choose_program(demo_store, None, paths, shipped=shipped)
    assert _first_demo(choice.program) == "Shipped?" and choice.manifest is not None
    assert choice.source == "the shipped compiled program (shipped)"
    missing = choose_program(demo_store, None, paths, shipped=tmp_path / "none")
    assert missing.manifest is None and missing.source.startswith("uncompiled")


def test_uncompiled_wins_over_every_export(demo_store: Store, tmp_path: Path, paths: ProfilePaths) -> None:
    add_profile(paths, "alpha", _export(demo_store, "From the profile?", tmp_path / "a"))
    activate(paths, "alpha")
    given = _export(demo_store, "From the flag?", tmp_path / "b")
    choice = choose_program(demo_store, given, paths, shipped=given, uncompiled=True)
    assert choice.manifest is None and choice.source == f"uncompiled (--uncompiled), settings of export {given}"
    assert program_state(choice.program) == program_state(ScopedQA(demo_store))
    nothing = choose_program(demo_store, None, None, shipped=None, uncompiled=True)
    assert nothing.source == "uncompiled (--uncompiled)" and nothing.manifest is None


FLOORS = StepChoices(decompose="parts", score="keep_all", answer="span", abstain="support")


def test_uncompiled_keeps_the_settings_of_the_export_it_replaces(demo_store: Store, tmp_path: Path) -> None:
    program = ScopedQA(demo_store, Settings(program=ProgramSettings(steps=FLOORS)))
    program.answer.demos = [dspy.Example(sections_context=[], answers=[])]
    save_export(program, tmp_path / "s", settings=Settings(), experiment_config={}, trainset_hash="h", scores={})
    choice = choose_program(demo_store, None, None, shipped=tmp_path / "s", uncompiled=True)
    assert choice.program.settings.program.steps == FLOORS and choice.program.answer.demos == []


def test_an_export_runs_with_the_program_settings_it_was_compiled_under(demo_store: Store, tmp_path: Path) -> None:
    program = ScopedQA(demo_store, Settings(program=ProgramSettings(steps=FLOORS, relevance_threshold=6.0)))
    save_export(program, tmp_path / "s", settings=Settings(), experiment_config={}, trainset_hash="h", scores={})
    chosen = choose_program(demo_store, tmp_path / "s", None).program.settings.program
    assert chosen.steps == FLOORS and chosen.relevance_threshold == 6.0


def test_steps_named_in_the_settings_override_the_exports_and_nothing_else_does(
    demo_store: Store, tmp_path: Path
) -> None:
    program = ScopedQA(demo_store, Settings(program=ProgramSettings(steps=FLOORS, relevance_threshold=6.0)))
    program.answer.demos = [dspy.Example(sections_context=[], answers=[])]
    save_export(program, tmp_path / "s", settings=Settings(), experiment_config={}, trainset_hash="h", scores={})
    by_lm = Settings.model_validate({"program": {"steps": {"answer": "lm", "abstain": "lm"}, "keep_top_k": 9}})
    chosen = choose_program(demo_store, tmp_path / "s", None, by_lm).program
    steps = chosen.settings.program.steps
    assert (steps.answer, steps.abstain, steps.decompose) == ("lm", "lm", "lm")  # the settings' steps, whole
    assert chosen.settings.program.relevance_threshold == 6.0 and chosen.settings.program.keep_top_k == 3
    assert len(chosen.answer.demos) == 1  # the compiled state serves the LM's steps
    unnamed = Settings.model_validate({"program": {"keep_top_k": 9}})
    assert choose_program(demo_store, tmp_path / "s", None, unnamed).program.settings.program.steps == FLOORS


@pytest.mark.parametrize(
    ("lm", "ships"),
    [(None, True), ("embedded", True), ("openai/gpt-4o-mini", False), ("http://127.0.0.1:8080/v1", False)],
)
def test_the_shipped_program_is_for_the_embedded_model_it_was_compiled_on(lm: str | None, ships: bool) -> None:
    assert shipped_for(lm) == (SHIPPED_PROGRAM if ships else None)


def test_the_shipped_program_loads_strictly_and_was_compiled_for_the_embedded_model(demo_store: Store) -> None:
    # The export in the repository (made by `make ship`) must load into today's program, with its
    # compiled state and the settings it was measured under.
    choice = choose_program(demo_store, None, None, shipped=SHIPPED_PROGRAM)
    assert choice.manifest is not None and choice.source == "the shipped compiled program (shipped)"
    manifest_steps = choice.manifest.config.program["steps"]
    assert choice.program.settings.program.steps.model_dump() == manifest_steps
