"""Which program answers, and the line that says so (README "Which program answers").

First match wins:

1. `--uncompiled`: the program as written, no demos or instructions from any export, each step run as the
   settings say (by default every step by the LM). Naming an export too is an error: two programs.
2. `--program DIR`: that export, run by whichever LM is named (`--program` names the program, `--lm` the LM that
   runs it; both flags are honoured and neither overrides the other).
3. An LM named with `--lm`: the program compiled for that LM (`shipped_for`), else the uncompiled program with
   every step by it. An active profile is set aside: a profile never overrides a flag the user typed.
4. The active profile's export ($SCOPERAG_LM is a standing default, as the profile is: the profile answers,
   run by that LM).
5. The program shipped for the LM (the embedded model's), else the uncompiled program.

The choice is made before anything is loaded (`plan_program`, which reads the export's manifest but no index),
so a command can say first what will answer: the program, which steps run by the LM and which by their floors,
and any active profile it set aside with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import ScopeRagError
from pipeline.export.profiles import ProfileInfo, ProfilePaths, active_profile
from pipeline.export.saving import apply_state, read_export, settings_of_export
from pipeline.export.schema import PROGRAM, ExportManifest
from pipeline.export.validate import ExportContents
from pipeline.program.lm.factory import DEFAULT_EMBEDDED, parse_lm_spec
from pipeline.program.module import ScopedQA
from pipeline.settings import STEP_NAMES, Settings, StepChoices
from pipeline.store import Store

# The compiled program `ask`, `serve` and `make demo` use by default on the embedded model (made by
# `make ship`, README.md "Results"); absent, or with another LM, the default is the uncompiled program.
SHIPPED_PROGRAM = Path(__file__).parent / "shipped"
# The embedded model the shipped program was compiled and measured on (`--lm embedded`, `--lm embedded:0.5b`).
SHIPPED_SIZE = DEFAULT_EMBEDDED
# The program shipped for each embedded model: the 0.5B's compiled one, and for the 1.5B the same program with
# the steps its measurements route to the LM (scripts/ship_route.py; docs/results.md "Choose step").
SHIPPED_PROGRAMS = {SHIPPED_SIZE: SHIPPED_PROGRAM, "1.5b": Path(__file__).parent / "shipped-1.5b"}


def shipped_for(lm_spec: str | None) -> Path | None:
    """The program shipped for the LM `lm_spec` names (None: the embedded model): each embedded model's own
    (SHIPPED_PROGRAMS); None for any other LM, which runs uncompiled until compiled for it."""
    spec = parse_lm_spec(lm_spec)
    return SHIPPED_PROGRAMS.get(spec.size) if spec.kind == "embedded" else None


# What the first line calls the program --uncompiled runs.
UNCOMPILED = "uncompiled (--uncompiled): the signatures' own prompts, no demos or instructions"


@dataclass(frozen=True)
class ProgramPlan:
    """What will answer, decided before anything is loaded: the export's validated contents and directory (None:
    the program as written), the settings it runs with, its profile, where it came from, and the active profile
    it set aside with the reason (None: none was)."""

    contents: ExportContents | None
    export: Path | None
    settings: Settings
    profile: str | None
    source: str
    set_aside: str | None = None

    @property
    def steps(self) -> StepChoices:
        return self.settings.program.steps

    def line(self) -> str:
        """The first line of a command that answers: the program, its steps by the LM, a profile set aside."""
        return program_line(self.source, self.steps, self.set_aside)


@dataclass(frozen=True)
class ProgramChoice:
    """The program to run, the export it was loaded from (None: uncompiled), its profile, where it came from and
    the active profile set aside (with why)."""

    program: ScopedQA
    manifest: ExportManifest | None
    profile: str | None
    source: str
    set_aside: str | None = None

    @property
    def steps(self) -> StepChoices:
        return self.program.settings.program.steps

    def line(self) -> str:
        """As ProgramPlan.line."""
        return program_line(self.source, self.steps, self.set_aside)


def plan_program(
    program_dir: Path | None,
    profiles: ProfilePaths | None,
    settings: Settings | None = None,
    *,
    shipped: Path | None = SHIPPED_PROGRAM,
    uncompiled: bool = False,
    lm: str | None = None,
) -> ProgramPlan:
    """The program the module docstring's rule picks: `lm` is the LM named on the command line (None: none was
    typed), `shipped` the program shipped for the LM that will run (`shipped_for`; used when that directory
    exists), `profiles` the registry whose active profile may answer. Each export is read strictly: a broken one
    is an error, never a silent fallback."""
    settings = settings or Settings()
    active = active_profile(profiles) if profiles is not None else None
    if uncompiled:
        if program_dir is not None:
            raise ScopeRagError(
                f"--program {program_dir} and --uncompiled name two programs: drop --uncompiled to run the export, "
                "or --program to run the uncompiled one"
            )
        return ProgramPlan(None, None, settings, None, UNCOMPILED, _not_used(active, "--uncompiled was given"))
    if program_dir is not None:
        set_aside = _not_used(active, "--program was given")
        return _export_plan(program_dir, settings, None, f"export {program_dir}", set_aside, says_lm=True)
    if lm is not None:
        set_aside = None
        if active is not None:
            set_aside = _not_used(active, f"--lm was given (--program {active.program} runs it with this LM)")
        if shipped is not None and shipped.is_dir():
            source = f"the compiled program shipped for {lm_words(lm)}"
            return _export_plan(shipped, settings, None, source, set_aside)
        source = f"uncompiled: nothing is compiled for {lm_words(lm)}, its steps use the signatures' own prompts"
        return ProgramPlan(None, None, settings, None, source, set_aside)
    if active is not None:
        source = f"profile '{active.name}' ({active.program})"
        hint = "`scoperag profile deactivate` turns it off"
        return _export_plan(active.program, settings, active.name, source, None, says_lm=True, hint=hint)
    if shipped is not None and shipped.is_dir():
        return _export_plan(shipped, settings, None, f"the shipped compiled program ({shipped.name})", None)
    source = "uncompiled (no exported program given and no active profile)"
    return ProgramPlan(None, None, settings, None, source, None)


def build_program(plan: ProgramPlan, store: Store) -> ProgramChoice:
    """The planned program over `store`: the export's state loaded into a fresh ScopedQA run with the plan's
    settings, or the program as written."""
    program = ScopedQA(store, plan.settings)
    if plan.contents is None:
        return ProgramChoice(program, None, None, plan.source, plan.set_aside)
    loaded = apply_state(program, plan.contents.program_state, f"{plan.export}/{PROGRAM}")
    return ProgramChoice(loaded, plan.contents.manifest, plan.profile, plan.source, plan.set_aside)


def choose_program(
    store: Store,
    program_dir: Path | None,
    profiles: ProfilePaths | None,
    settings: Settings | None = None,
    *,
    shipped: Path | None = SHIPPED_PROGRAM,
    uncompiled: bool = False,
    lm: str | None = None,
) -> ProgramChoice:
    """`plan_program` then `build_program`: the program over `store` that the rule picks."""
    plan = plan_program(program_dir, profiles, settings, shipped=shipped, uncompiled=uncompiled, lm=lm)
    return build_program(plan, store)


def every_step_by_the_lm(settings: Settings) -> Settings:
    """`settings` with every step run by the LM (the web page's "Uncompiled program": the LM's own prompts on
    every step, whichever floors the program serving now runs)."""
    program = settings.program.model_copy(update={"steps": StepChoices()})
    return settings.model_copy(update={"program": program})


def program_line(source: str, steps: StepChoices, set_aside: str | None = None) -> str:
    """ "program: SOURCE; STEPS[; PROFILE SET ASIDE]", what a command that answers says first."""
    parts = [f"program: {source}", steps_words(steps)]
    if not any(steps.uses_lm(name) for name in STEP_NAMES):
        # --uncompiled given and still no step by the LM: the settings' own step choices kept the floors
        parts.append(
            "the settings' [program.steps] name every floor"
            if source == UNCOMPILED
            else "--uncompiled runs every step by the LM"
        )
    return "; ".join([*parts, *([set_aside] if set_aside else [])])


def steps_words(steps: StepChoices) -> str:
    """Which steps run by the LM and which by their floors (each floor named), in the program's order."""
    by_lm = [name for name in STEP_NAMES if steps.uses_lm(name)]
    floors = [f"{name} {getattr(steps, name)}" for name in STEP_NAMES if not steps.uses_lm(name)]
    if not floors:
        return f"every step by the LM ({', '.join(by_lm)})"
    if not by_lm:
        return f"no step by the LM, each runs its floor ({', '.join(floors)})"
    return f"by the LM: {', '.join(by_lm)}; floors: {', '.join(floors)}"


def lm_words(lm: str) -> str:
    """An LM as the first line names it: "the embedded model" (the default, 0.5B), "the embedded 1.5B model", or
    the model string or base URL as given."""
    spec = parse_lm_spec(lm)
    if spec.kind != "embedded":
        return spec.value
    return "the embedded model" if spec.size == DEFAULT_EMBEDDED else f"the embedded {spec.size.upper()} model"


def _export_plan(
    directory: Path,
    settings: Settings,
    profile: str | None,
    source: str,
    set_aside: str | None,
    *,
    says_lm: bool = False,
    hint: str | None = None,
) -> ProgramPlan:
    """The plan that runs the export in `directory` with `settings` (its program section the export's own);
    `says_lm` adds the LM the export was compiled for, when its manifest records one (an export the user chose
    may have been compiled for another LM than the one that runs it), then `hint`."""
    contents = read_export(directory)
    compiled_for = contents.manifest.versions.lm
    if says_lm and compiled_for:
        source += f", compiled for {lm_words(compiled_for) if _known(compiled_for) else compiled_for}"
    if hint:
        source += f"; {hint}"
    planned = settings_of_export(contents.manifest, settings)
    # the export's program section runs, steps apart: a knob the settings set is said to be set aside, not dropped
    differ = sorted(
        name
        for name in settings.program.model_fields_set - {"steps"}
        if getattr(settings.program, name) != getattr(planned.program, name)
    )
    if differ:
        shown = ", ".join(f"{name} = {getattr(settings.program, name)!r}" for name in differ)
        source += f"; the settings' [program] {shown} set aside: the export runs its own (--uncompiled runs yours)"
    return ProgramPlan(contents, directory, planned, profile, source, set_aside)


def _known(lm: str) -> bool:
    """Whether `lm` is an LM spec this version reads (an export's record may name one it does not)."""
    try:
        parse_lm_spec(lm)
    except ScopeRagError:
        return False
    return True


def _not_used(active: ProfileInfo | None, because: str) -> str | None:
    """What the line says of an active profile a flag set aside (None when no profile is active)."""
    if active is None:
        return None
    return f"profile '{active.name}' is active but not used: {because}"
