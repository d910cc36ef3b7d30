"""The settings every run depends on, frozen; environment variables are read only at entry points."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from pipeline.errors import SettingsError
from pipeline.files import read_toml_model
from pipeline.types import Strict


class ToolLoopLimits(Strict):
    """When the tool loop gives up on a tool or stops altogether; one loop serves a whole question."""

    # Consecutive failed calls of one tool before it is given up for the question.
    max_consecutive_failures: int = Field(default=2, ge=1, le=20)
    # Iterations (one tool call each) with a successful call, over every sub-question and round of
    # the question: 5 sub-questions with a precision and a gap-filling round stay well below.
    max_iterations: int = Field(default=100, ge=1, le=1000)
    # Iterations in which every call failed, counted apart from max_iterations.
    max_failed_iterations: int = Field(default=10, ge=1, le=1000)
    # Extra attempts of one call after a retryable error (rate_limited).
    max_retries: int = Field(default=1, ge=0, le=10)


class EntityGateConfig(Strict):
    """How strict the summary-based entity gate is (seed 002); what counts as an address comes from
    the corpus's vocabulary (`pipeline.vocabulary`), stored with its index."""

    # Drop (softly) a document whose summary does not name the asked entity and that the
    # catalog ties to another entity (seed 002, addition 1). A summary naming no address
    # and no owner (a generic annex) is kept either way; one naming another address is
    # dropped either way.
    require_entity_in_summary: bool = True
    # Drop a document whose summary names the asked entity but another address more prominently.
    prominence_check: bool = True
    # When every document would be dropped, bring back the soft exclusions, best first.
    relax_when_all_excluded: bool = True
    # Whether relaxation may bring back prominence exclusions (they name another property first).
    relax_prominence_exclusions: bool = False


# A word the planner looks up (an acronym, a question word): the key of one of its tables, never a URL or markup.
Word = Annotated[str, StringConstraints(pattern=r"^[\w&.' -]{1,64}$")]
Phrases = Annotated[tuple[Annotated[str, StringConstraints(max_length=200)], ...], Field(max_length=20)]


class PlannerConfig(Strict):
    """Defaults the planner rules fill in (seed 004)."""

    planner_version: str = "scoperag-planner/2"
    # How deep each retriever looks before fusion (the store's own default is 40 for k <= 10).
    bm25_k: int = Field(default=40, ge=1, le=200)
    vector_k: int = Field(default=40, ge=1, le=200)
    # Fusion weight of the favoured retriever; the other gets 1 - this.
    favoured_weight: float = Field(default=0.7, ge=0.5, le=1.0)
    # Fusion weight of dense search for a question that favours neither retriever (BM25 gets 1 - this).
    # Chosen on the EDGAR traces (train+dev, retrieval only, benchmarks/edgar_retrieval.py): 0.5 lost to
    # BM25 alone (gold-page recall@10 -0.052 [-0.070, -0.034], no-scope document recall -0.066); 0.15 is
    # the one weight at least as good in every case (+0.005 [+0.001, +0.011]), and on test equal to it. On
    # the quarterly filings' and demo dev splits 0.15 against 0.5: within noise (document recall -0.007
    # [-0.016, 0], gold-page recall +0.013 [-0.061, +0.083]; demo unchanged at @10, page @5 0.969 -> 0.990).
    dense_weight: float = Field(default=0.15, ge=0.0, le=1.0)
    # A sub-question asking for a figure is also searched in the words statements print for its metric (the
    # filings' XBRL concept labels: "cash flow from operations" as "Net cash provided by operating activities"),
    # in its first round (benchmarks/metric_queries.py measured it).
    metric_queries: bool = True
    # Documents retrieve_docs keeps after the entity gate.
    max_docs: int = Field(default=8, ge=1, le=100)
    # Rounds per sub-question, gap-filling rounds included.
    max_rounds: int = Field(default=3, ge=1, le=3)
    # Distinct documents sent to the store over a question before follow-up rounds stop.
    max_total_docs: int = Field(default=24, ge=1, le=500)
    # LM output tokens over a question: the per-call budgets (ProgramSettings.max_tokens) sum to 1660.
    max_tokens: int = Field(default=4000, ge=100, le=100_000)
    # No follow-up round starts past this much time since the question arrived (None: no deadline).
    max_latency_ms: int | None = Field(default=120_000, ge=100, le=3_600_000)
    pii_allowed: bool = False
    # Acronym -> its known expansions; more than one makes an unexplained acronym ambiguous.
    acronym_glossary: dict[Word, Phrases] = Field(default_factory=dict, max_length=1000)
    # Question word -> the catalog document types it points at ("bill" -> invoice).
    doc_type_synonyms: dict[Word, Phrases] = Field(default_factory=dict, max_length=1000)
    # How the periods a question names steer retrieval: "filter" reads only the documents of those
    # periods when any is found, "boost" ranks their chunks first (others fill the rest), "off"
    # ignores them. A question that compares with other periods is never steered. Chosen by
    # measurement on the quarterly filings' traces, hybrid: no-scope document recall@10 0.981 -> 0.991 and
    # gold-page recall@10 0.140 -> 0.237 ("boost" 0.184); property 0.140 -> 0.254 ("boost" 0.202).
    period_preference: Literal["off", "boost", "filter"] = "filter"


class CoreConfig(Strict):
    """Everything the deterministic core reads; to be wired into Settings as one field."""

    # Chunks shown per sub-question, after every round's results are merged.
    chunks_k: int = Field(default=6, ge=1, le=100)
    # Weight of the page index's ranking fused into chunk search (0: chunks alone; see
    # pipeline.store.pages). Chosen on the quarterly filings' traces, hybrid gold-page recall@10: chip 0.254
    # -> 0.325 (1) -> 0.342 (3) -> 0.351 (10); no-scope 0.237 -> 0.307 -> 0.325 -> 0.333, its
    # document recall@10 0.991 -> 0.995 -> 0.994 -> 0.991; on the demo traces 3 keeps every
    # case's document recall and raises gold-page recall@5 0.888 -> 0.939.
    # Raised to 20 with figure_weight 10 on the gold-page recall@10 of the quarterly and annual filings' dev splits
    # (hybrid, retrieval only; benchmarks/README.md, "Page weights"): 0.545 -> 0.750 and 0.558 -> 0.638 (3/4 ->
    # 20/10), document recall unchanged there, demo and contracts gold-page recall held at 1.0.
    page_weight: float = Field(default=20.0, ge=0.0, le=100.0)
    # How much the page ranking favours pages of figures (statements, schedules): a page's score
    # times 1 + figure_weight x its share of figures. Chosen on the quarterly filings' traces (chip,
    # hybrid; train+dev, then test): gold-page recall@10 0 -> 0.512 / 0.471, 2 -> 0.583 / 0.456,
    # 4 -> 0.622 / 0.544. Their gold pages are the pages stating an answer's figure, which favours
    # such pages; the demo traces' gold-page recall@5 rose too (0.962 -> 0.967).
    # Raised to 10 with page_weight 20 (above): at page_weight 20, 4 gave 0.659 on the quarterly filings' dev
    # split, 10 gave 0.750.
    # Applied only where the sub-question asks a figure (SearchSettings.figures): a name or a clause is on prose.
    figure_weight: float = Field(default=10.0, ge=0.0, le=100.0)
    tool_loop: ToolLoopLimits = ToolLoopLimits()
    entity_gate: EntityGateConfig = EntityGateConfig()
    planner: PlannerConfig = PlannerConfig()


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask), at least 1: the default for LM threads."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # platforms without affinity masks
        return max(1, os.cpu_count() or 1)


# Sequences the embedded model decodes together (llama.cpp slots); evaluations run this many
# examples at once. Two beat one on 2 cores (benchmarks/lm_throughput.py).
DEFAULT_PARALLEL = 2

DEFAULT_INDEX_DIR = Path(".scoperag/index")
DEFAULT_HISTORY = Path(".scoperag/history.sqlite")
DEFAULT_PROFILES = Path(".scoperag/profiles")


DecomposeStep = Literal["lm", "question", "parts"]
ScoreStep = Literal["lm", "keep_all", "top_k"]
AnswerStep = Literal["lm", "sentence", "span"]
AbstainStep = Literal["lm", "support"]
ComputeStep = Literal["lm", "rows"]
HydeStep = Literal["lm", "none"]
JudgeStep = Literal["lm", "claims"]
ChooseStep = Literal["lm", "span"]
STEP_NAMES = ("decompose", "score", "answer", "abstain", "compute", "hyde", "judge", "choose")
# The program's LM steps, each with its own output budget (ProgramSettings.max_tokens).
LM_STEPS = ("decompose", "score", "answer", "hyde", "compute", "judge", "choose")
# Each LM step's output budget unless the settings give one (a judge's verdict is one to three words; an export
# written before the judge existed gives none for it).
DEFAULT_MAX_TOKENS = {
    "decompose": 160,
    "score": 400,
    "answer": 300,
    "hyde": 200,
    "compute": 300,
    "judge": 24,
    "choose": 16,
}
# No one call asks for more output than this (the question's budget, PlannerConfig.max_tokens, caps it further).
MAX_CALL_TOKENS = 8192


class StepChoices(Strict):
    """Which way each learned step runs: "lm" (the LM call), or its floor, the same step done by plain code
    with no LM call (pipeline.intake.parts, pipeline.guards.relevance, pipeline.answering).

    decompose: "question" (the question as its one sub-question), "parts" (its own questions, split on "?"
    and on "and" before a question word); score: "keep_all" (every retrieved chunk), "top_k" (the first
    `keep_top_k` by retrieval); answer: "sentence" (the best-ranked sentence), "span" (the span of the
    kind asked for: an amount, a date, a name ...); abstain: "support" (not found when the best sentences
    hold less than `support_threshold` of the key terms), "lm" (when the LM finds no answer; needs
    answer = "lm"); compute: "rows" (operands read as table rows), "lm" (the LM names the operands); hyde:
    "lm" (a hypothetical passage the LM writes is what dense search looks for, in the rounds the plan marks),
    "none" (dense search looks for the sub-question itself); judge (a yes/no question): "claims" (a table row or a
    sentence stating the event, pipeline.answering.claims), "lm" (the LM judges the row and a few sentences,
    pipeline.answering.judge); choose (the answer line when answer = "span"): "span" (the span floor's first
    candidate), "lm" (the LM picks one of its few best candidates, pipeline.answering.choose). An export written
    before the judge or choose step existed records no choice for it and runs it on its floor
    (pipeline.export.saving.export_program_settings).
    """

    decompose: DecomposeStep = "lm"
    score: ScoreStep = "lm"
    answer: AnswerStep = "lm"
    abstain: AbstainStep = "lm"
    compute: ComputeStep = "lm"
    hyde: HydeStep = "lm"
    judge: JudgeStep = "lm"
    choose: ChooseStep = "lm"

    @model_validator(mode="after")
    def _abstain_needs_lm_answer(self) -> StepChoices:
        if self.abstain == "lm" and self.answer != "lm":
            raise ValueError(
                f'abstain = "lm" needs answer = "lm" (the LM finds no answer); with answer = "{self.answer}" '
                'set abstain = "support"'
            )
        return self

    def uses_lm(self, step: str) -> bool:
        """Whether `step` makes an LM call."""
        return bool(getattr(self, step) == "lm")


class ProgramSettings(Strict):
    """Knobs of the program that are not the LM's: which steps call it, threshold, sizes, output budgets."""

    steps: StepChoices = StepChoices()
    relevance_threshold: float = Field(default=5.0, ge=0.0, le=10.0)
    max_chunk_chars: int = Field(default=900, ge=50, le=20_000)
    # The scorer judges relevance from a chunk's opening; the answer reads the whole shown text.
    # Shorter scoring prompts are most of what a question's prompt tokens cost.
    score_chunk_chars: int = Field(default=360, ge=50, le=20_000)
    # Chunks kept by the score floor "top_k".
    keep_top_k: int = Field(default=3, ge=1, le=100)
    # Sentences of the kept chunks, best match first, offered to the answer step per sub-question.
    line_sentences: int = Field(default=6, ge=1, le=48)
    # Share of a sub-question's key terms the best sentences must hold for the abstain floor to answer.
    support_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    # Evidence sentences quoted under an answer line.
    max_evidence: int = Field(default=3, ge=1, le=5)
    # Output budgets per call: a small model that starts repeating itself stops here.
    max_tokens: dict[str, Annotated[int, Field(ge=1, le=MAX_CALL_TOKENS)]] = Field(
        default_factory=lambda: dict(DEFAULT_MAX_TOKENS)
    )

    @field_validator("max_tokens")
    @classmethod
    def _known_steps(cls, budgets: dict[str, int]) -> dict[str, int]:
        unknown = sorted(set(budgets) - set(LM_STEPS))
        if unknown:
            shown = ", ".join(repr(step[:40]) for step in unknown[:5]) + (
                f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            )
            raise ValueError(f"no LM step is called {shown}; output budgets are set for {', '.join(LM_STEPS)}")
        return budgets

    def call_tokens(self, step: str) -> int:
        """The output budget of one call of `step`: the settings' own, else the step's default."""
        return self.max_tokens.get(step, DEFAULT_MAX_TOKENS.get(step, 1024))


class LMRequestSettings(Strict):
    """How a program step's LM call is made: each attempt is one LM call, counted against the question."""

    # Further attempts of one step's call after a transient failure (a dropped connection, a timeout,
    # HTTP 429 or 5xx); the LM client itself never retries.
    retries: int = Field(default=2, ge=0, le=10)
    # Seconds before the first retry, doubled before each further one (a server's Retry-After, up to 30 s, wins).
    backoff_seconds: float = Field(default=1.0, ge=0.0, le=60.0)
    # Seconds one request to a remote LM may take before it fails (the question's bound may cut it shorter).
    timeout_seconds: float = Field(default=120.0, gt=0.0, le=3600.0)


class QuestionLimits(Strict):
    """Bounds of one question as a whole (pipeline.deadline)."""

    # Seconds one question may take: the planner's rounds, retrieval, the floors and every LM call together.
    # Past it the question ends with what it has, each unanswered section an error naming the stage. The
    # shipped program answers in well under a second; an uncompiled program on the embedded model takes
    # 15-110 s per question on 2 cores (README "Results"), hence 120 s.
    seconds: float = Field(default=120.0, gt=0.0, le=3600.0)


class BuildSettings(Strict):
    """Chunking and index choices of an index build, recorded in the index manifest."""

    chunk_words: int = Field(default=120, ge=10, le=5000)
    chunk_overlap: int = Field(default=30, ge=0, le=4999)
    embed_batch: int = Field(default=64, ge=1, le=4096)
    # Processes that read files in parallel (0: one per core).
    read_workers: int = Field(default=0, ge=0, le=256)
    dense_kind: Literal["flat", "hnsw"] | None = None


class Settings(Strict):
    """Everything a run depends on; recorded beside every export and MLflow run, readable from TOML."""

    index_dir: Path = DEFAULT_INDEX_DIR
    history: Path = DEFAULT_HISTORY
    lm_threads: int = Field(default_factory=available_cores, ge=1, le=64)
    core: CoreConfig = CoreConfig()
    program: ProgramSettings = ProgramSettings()
    lm_requests: LMRequestSettings = LMRequestSettings()
    question: QuestionLimits = QuestionLimits()
    build: BuildSettings = BuildSettings()


def load_settings(path: Path) -> Settings:
    """The settings in a TOML file (any section may be left out); SettingsError names the file and field."""
    return read_toml_model(path, Settings, "settings", SettingsError)
