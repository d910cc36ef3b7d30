"""Which program runs: --uncompiled, else --program, else the program for a typed --lm, else the active profile,
else the shipped one, else uncompiled (a test per branch), and the first line that says so."""

from __future__ import annotations

import json
from pathlib import Path

import dspy
import pytest

from pipeline.errors import ExportError, ScopeRagError
from pipeline.export import PROGRAM, program_state, save_export
from pipeline.export.choice import (
    SHIPPED_PROGRAM,
    SHIPPED_PROGRAMS,
    UNCOMPILED,
    choose_program,
    every_step_by_the_lm,
    plan_program,
    program_line,
    shipped_for,
    steps_words,
)
from pipeline.export.profiles import ProfilePaths, activate, add_profile
from pipeline.export.routes import write_routed
from pipeline.export.saving import predictor_states
from pipeline.program.module import ScopedQA
from pipeline.settings import STEP_NAMES, ProgramSettings, Settings, StepChoices
from pipeline.store import Store

FLOORS = StepChoices(
    decompose="parts",
    score="keep_all",
    answer="span",
    abstain="support",
    compute="rows",
    hyde="none",
    judge="claims",
    choose="span",
)
MIXED = StepChoices(
    decompose="parts",
    score="top_k",
    answer="lm",
    abstain="lm",
    compute="rows",
    hyde="none",
    judge="claims",
    choose="span",
)
EVERY_STEP_BY_THE_LM = StepChoices()


def _export(store: Store, question: str, out: Path, steps: StepChoices = EVERY_STEP_BY_THE_LM) -> Path:
    program = ScopedQA(store, Settings(program=ProgramSettings(steps=steps)))
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


def _first_demo(program: ScopedQA) -> str | None:
    demos = program_state(program)["decompose"]["demos"]
    return str(demos[0]["question"]) if demos else None


# -- the rule, branch by branch ------------------------------------------------------------------------------

LM_URL = "http://127.0.0.1:9/v1"  # an LM nothing is compiled for
LARGER = "embedded:1.5b"  # an embedded model with its own shipped program (tests pass one shipped program)


def _expected(uncompiled: bool, program: bool, lm: str | None, profile: bool) -> tuple[str, str | None]:
    """(which program answers, why an active profile was set aside): the README's rule, first match wins."""
    if uncompiled:
        return "uncompiled", "--uncompiled was given" if profile else None
    if program:
        return "program", "--program was given" if profile else None
    if lm is not None:
        return ("uncompiled" if lm == LM_URL else "shipped"), "--lm was given" if profile else None
    return ("profile" if profile else "shipped"), None


@pytest.mark.parametrize("profile", [False, True], ids=["no-profile", "profile-active"])
@pytest.mark.parametrize(
    "lm", [None, "embedded", LARGER, LM_URL], ids=["no-lm", "lm-embedded", "lm-embedded-1.5b", "lm-url"]
)
@pytest.mark.parametrize("program", [False, True], ids=["", "program"])
@pytest.mark.parametrize("uncompiled", [False, True], ids=["", "uncompiled"])
def test_the_choice_rule_per_branch(
    demo_store: Store,
    tmp_path: Path,
    paths: ProfilePaths,
    profile: bool,
    lm: str | None,
    program: bool,
    uncompiled: bool,
) -> None:
    shipped = _export(demo_store, "Shipped?", tmp_path / "shipped", FLOORS)
    profile_dir = _export(demo_store, "From the profile?", tmp_path / "p")
    add_profile(paths, "alpha", profile_dir)
    if profile:
        activate(paths, "alpha")
    given = _export(demo_store, "From the flag?", tmp_path / "given", MIXED) if program else None
    ships = shipped if shipped_for(lm) is not None else None  # the shipped program is the embedded model's
    if uncompiled and program:
        with pytest.raises(ScopeRagError, match="name two programs"):
            plan_program(given, paths, shipped=ships, uncompiled=uncompiled, lm=lm)
        return
    choice = choose_program(demo_store, given, paths, shipped=ships, uncompiled=uncompiled, lm=lm)
    which, why = _expected(uncompiled, program, lm, profile)
    demo, steps, manifest = {
        "uncompiled": (None, EVERY_STEP_BY_THE_LM, False),
        "program": ("From the flag?", MIXED, True),
        "shipped": ("Shipped?", FLOORS, True),
        "profile": ("From the profile?", EVERY_STEP_BY_THE_LM, True),
    }[which]
    assert _first_demo(choice.program) == demo
    assert choice.steps == steps and (choice.manifest is not None) == manifest
    assert choice.profile == ("alpha" if which == "profile" else None)
    line = choice.line()
    assert line.startswith("program: ") and steps_words(steps) in line
    if why is None:
        assert choice.set_aside is None and "not used" not in line
    else:
        assert choice.set_aside is not None and line.endswith(choice.set_aside)
        assert choice.set_aside.startswith(f"profile 'alpha' is active but not used: {why}")
    if which == "uncompiled" and lm == LM_URL and not uncompiled:
        assert f"nothing is compiled for {LM_URL}" in line
    if which == "shipped" and lm == LARGER:
        assert line.startswith("program: the compiled program shipped for the embedded 1.5B model;")
    if which == "shipped" and lm == "embedded":
        assert line.startswith("program: the compiled program shipped for the embedded model; no step by the LM")


def test_a_profile_set_aside_by_lm_says_how_to_run_it_with_that_lm(
    demo_store: Store, tmp_path: Path, paths: ProfilePaths
) -> None:
    add_profile(paths, "alpha", _export(demo_store, "From the profile?", tmp_path / "p"))
    activate(paths, "alpha")
    plan = plan_program(None, paths, shipped=None, lm=LM_URL)
    assert plan.set_aside is not None and "--lm was given" in plan.set_aside
    # the way out names the profile's own export directory, which --program takes
    registered = plan.set_aside.split("--program ")[1].split(" runs it")[0]
    choice = choose_program(demo_store, Path(registered), paths, shipped=None, lm=LM_URL)
    assert _first_demo(choice.program) == "From the profile?"


def test_the_environments_lm_leaves_the_active_profile_answering(
    demo_store: Store, tmp_path: Path, paths: ProfilePaths
) -> None:
    # $SCOPERAG_LM reaches the choice as the LM that runs (shipped_for), not as a typed --lm (lm=None)
    add_profile(paths, "alpha", _export(demo_store, "From the profile?", tmp_path / "p"))
    activate(paths, "alpha")
    choice = choose_program(demo_store, None, paths, shipped=shipped_for(LM_URL))
    assert choice.profile == "alpha" and choice.set_aside is None
    assert choice.line().startswith(f"program: profile 'alpha' ({tmp_path / 'p'})")
    assert "; `scoperag profile deactivate` turns it off; every step by the LM" in choice.line()


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
    with pytest.raises(ExportError):  # read when the choice is made, before any index is opened
        plan_program(broken, paths)


def test_the_shipped_program_when_nothing_else_is_named(demo_store: Store, tmp_path: Path, paths: ProfilePaths) -> None:
    shipped = _export(demo_store, "Shipped?", tmp_path / "shipped")
    choice = choose_program(demo_store, None, paths, shipped=shipped)
    assert _first_demo(choice.program) == "Shipped?" and choice.manifest is not None
    assert choice.source == "the shipped compiled program (shipped)"
    missing = choose_program(demo_store, None, paths, shipped=tmp_path / "none")
    assert missing.manifest is None and missing.source.startswith("uncompiled")


# -- --uncompiled: the LM's own prompts, not the floors of an export ------------------------------------------


def test_uncompiled_runs_every_step_by_the_lm_not_the_shipped_floors(demo_store: Store, tmp_path: Path) -> None:
    program = ScopedQA(demo_store, Settings(program=ProgramSettings(steps=FLOORS)))
    program.answer.demos = [dspy.Example(sections_context=[], answers=[])]
    save_export(program, tmp_path / "s", settings=Settings(), experiment_config={}, trainset_hash="h", scores={})
    choice = choose_program(demo_store, None, None, shipped=tmp_path / "s", uncompiled=True)
    assert choice.steps == EVERY_STEP_BY_THE_LM and choice.program.answer.demos == []
    assert choice.manifest is None and choice.source.startswith("uncompiled (--uncompiled)")
    assert choice.line().startswith("program: uncompiled (--uncompiled): the signatures' own prompts")


def test_uncompiled_keeps_the_steps_a_settings_file_names(demo_store: Store) -> None:
    named = Settings.model_validate({"program": {"steps": {"answer": "span", "abstain": "support"}}})
    choice = choose_program(demo_store, None, None, named, shipped=None, uncompiled=True)
    assert (choice.steps.answer, choice.steps.abstain, choice.steps.decompose) == ("span", "support", "lm")


def test_the_pages_uncompiled_program_runs_every_step_by_the_lm_with_the_rest_of_its_settings() -> None:
    served = Settings(program=ProgramSettings(steps=FLOORS, relevance_threshold=6.0))
    uncompiled = every_step_by_the_lm(served)
    assert uncompiled.program.steps == EVERY_STEP_BY_THE_LM and uncompiled.program.relevance_threshold == 6.0
    assert served.program.steps == FLOORS  # the program serving now is unchanged


# -- the first line ------------------------------------------------------------------------------------------


def test_the_first_line_says_which_steps_run_by_the_lm_and_which_by_their_floors() -> None:
    assert (
        steps_words(EVERY_STEP_BY_THE_LM)
        == "every step by the LM (decompose, score, answer, abstain, compute, hyde, judge, choose)"
    )
    assert steps_words(FLOORS) == (
        "no step by the LM, each runs its floor "
        "(decompose parts, score keep_all, answer span, abstain support, compute rows, hyde none, judge claims, "
        "choose span)"
    )
    assert steps_words(MIXED) == (
        "by the LM: answer, abstain; floors: decompose parts, score top_k, compute rows, hyde none, judge claims, "
        "choose span"
    )
    # a program that calls no LM says how to run the LM's steps
    assert program_line("x", FLOORS).endswith("; --uncompiled runs every step by the LM")
    # given --uncompiled, floors can only come from the settings' own step choices: no hint to give it again
    assert program_line(UNCOMPILED, FLOORS).endswith("; the settings' [program.steps] name every floor")
    assert "--uncompiled" not in program_line("x", MIXED)
    assert program_line("x", MIXED, "profile 'a' is active but not used: --lm was given").endswith("--lm was given")


@pytest.mark.parametrize(
    ("recorded", "said"),
    [
        ("embedded", ", compiled for the embedded model"),
        ("embedded:0.5b", ", compiled for the embedded model"),
        ("embedded:1.5b", ", compiled for the embedded 1.5B model"),
        ("openai/gpt-4o-mini", ", compiled for openai/gpt-4o-mini"),
        (None, ""),
    ],
)
def test_an_export_named_says_the_lm_it_was_compiled_for(
    demo_store: Store, tmp_path: Path, recorded: str | None, said: str
) -> None:
    out = tmp_path / "given"
    save_export(
        ScopedQA(demo_store),
        out,
        settings=Settings(),
        experiment_config={},
        trainset_hash="h",
        scores={},
        lm_name=recorded,
    )
    assert plan_program(out, None, lm=LM_URL).source == f"export {out}{said}"


# -- the settings an export runs with ------------------------------------------------------------------------


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
    # a knob the export overrides is named on the first line, never dropped unsaid
    said = choose_program(demo_store, tmp_path / "s", None, by_lm).line()
    assert "the settings' [program] keep_top_k = 9 set aside: the export runs its own (--uncompiled runs yours)" in said
    same = Settings.model_validate({"program": {"keep_top_k": 3}})
    assert "set aside" not in choose_program(demo_store, tmp_path / "s", None, same).line()


def test_the_readmes_lm_steps_file_runs_every_step_of_the_shipped_program_by_the_lm(demo_store: Store) -> None:
    from pipeline.settings import load_settings
    from tests.support.paths import ROOT

    settings = load_settings(ROOT / "experiments" / "settings" / "lm-steps.toml")
    choice = choose_program(demo_store, None, None, settings, shipped=SHIPPED_PROGRAM)
    assert choice.manifest is not None and choice.steps == EVERY_STEP_BY_THE_LM
    assert choice.line().split("; ")[1] == steps_words(EVERY_STEP_BY_THE_LM)


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
    # a step the export records no choice for (the judge came later) runs its default, the floor
    defaults = {"judge": "claims", "choose": "span"}
    assert choice.program.settings.program.steps.model_dump() == {**defaults, **manifest_steps}


def _steps_records(value: object) -> list[object]:
    """Every "steps" object anywhere in a manifest."""
    if isinstance(value, dict):
        found = [value["steps"]] if "steps" in value else []
        return found + [r for v in value.values() for r in _steps_records(v)]
    if isinstance(value, list):
        return [r for v in value for r in _steps_records(v)]
    return []


@pytest.mark.parametrize("shipped", [SHIPPED_PROGRAM, SHIPPED_PROGRAMS["1.5b"]], ids=["0.5b", "1.5b"])
def test_a_shipped_manifest_records_its_steps_once_the_way_the_program_runs_them(
    demo_store: Store, shipped: Path
) -> None:
    # It also held the job's settings, whose steps (answer, abstain, compute by the LM) the program never ran.
    manifest = json.loads((shipped / "manifest.json").read_text(encoding="utf-8"))
    assert _steps_records(manifest) == [manifest["config"]["program"]["steps"]]
    choice = choose_program(demo_store, None, None, shipped=shipped)
    runs = choice.program.settings.program.steps.model_dump()
    assert {step: runs[step] for step in manifest["config"]["program"]["steps"]} == manifest["config"]["program"][
        "steps"
    ]


def test_a_routed_export_records_its_steps_once(demo_store: Store, tmp_path: Path) -> None:
    write_routed(SHIPPED_PROGRAM, demo_store, {"choose": "lm"}, tmp_path / "r", lm_name="embedded:1.5b", measured="x")
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text(encoding="utf-8"))
    assert _steps_records(manifest) == [manifest["config"]["program"]["steps"]]
    assert manifest["config"]["program"]["steps"]["choose"] == "lm"


@pytest.mark.parametrize(
    ("lm", "shipped"),
    [
        (None, SHIPPED_PROGRAM),
        ("embedded", SHIPPED_PROGRAM),
        ("embedded:0.5b", SHIPPED_PROGRAM),
        ("embedded:1.5b", SHIPPED_PROGRAMS["1.5b"]),
        ("openai/gpt-4o-mini", None),
        (LM_URL, None),
    ],
)
def test_each_embedded_model_has_its_shipped_program_and_no_other_lm_has_one(
    lm: str | None, shipped: Path | None
) -> None:
    assert shipped_for(lm) == shipped


def test_the_15b_program_runs_every_step_on_its_floor_with_the_05b_programs_compiled_state(demo_store: Store) -> None:
    """Measured: no step beat its floor on the 1.5B either (docs/results.md, "Choose step")."""
    choice = choose_program(demo_store, None, None, shipped=SHIPPED_PROGRAMS["1.5b"], lm="embedded:1.5b")
    assert not [name for name in STEP_NAMES if choice.program.settings.program.steps.uses_lm(name)]
    assert choice.manifest is not None and choice.manifest.versions.lm == "embedded:1.5b"
    assert choice.line().startswith("program: the compiled program shipped for the embedded 1.5B model; no step by")
    base = choose_program(demo_store, None, None, shipped=SHIPPED_PROGRAM)
    assert predictor_states(choice.program)["answer"] == predictor_states(base.program)["answer"]


def test_a_routed_program_runs_its_routes_steps_by_the_lm_and_the_rest_as_its_source(
    demo_store: Store, tmp_path: Path
) -> None:
    routed = tmp_path / "routed"
    manifest = write_routed(
        SHIPPED_PROGRAM, demo_store, {"choose": "lm"}, routed, lm_name="embedded:1.5b", measured="a test route"
    )
    assert manifest.config.experiment["description"] == "Routed for embedded:1.5b: a test route"
    choice = choose_program(demo_store, None, None, shipped=routed, lm="embedded:1.5b")
    steps = choice.program.settings.program.steps
    assert [name for name in STEP_NAMES if steps.uses_lm(name)] == ["choose"]
    assert choice.line().startswith(
        "program: the compiled program shipped for the embedded 1.5B model; by the LM: choose; floors:"
    )
    base = choose_program(demo_store, None, None, shipped=SHIPPED_PROGRAM)
    assert predictor_states(choice.program)["answer"] == predictor_states(base.program)["answer"]
