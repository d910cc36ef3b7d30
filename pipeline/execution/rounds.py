"""The plan's retrieval rounds (seed 004) for each sub-question of one question, through ONE step
executor (one tool loop, one entity gate) per question. Retrieval only: no LM is called here.

Per sub-question the rounds run in order. A round's query variants run as queries (the variant
equal to the plan's goal stands for the sub-question; in a gap-filling round it stands for queries
aimed at what is missing); its retrieval modes choose the retrievers, their depth and fusion
weights; its filters give the entity gate its entities and document-type hint; use_hyde gives
dense search the HyDE passage; output.max_docs is how many documents retrieve_docs keeps. The
rankings of every query and round are merged (reciprocal rank fusion, literal terms first) and
capped at the configured chunks k. After each round the acceptance criteria are checked (each
sub-question covers the entities it names, or all when it names none); a gap-filling round runs
only while they are unmet. The stop conditions end the rounds: max_rounds,
max_total_docs and the latency deadline (both for follow-up rounds: every sub-question gets its
first round), and no_new_information_rounds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pipeline.answering.asks import asks_amount
from pipeline.answering.figures import metric_terms
from pipeline.answering.metric_labels import printed_labels
from pipeline.deadline import Deadline, unbounded
from pipeline.entities import find_entity_mentions, without_mentions
from pipeline.execution.acceptance import Acceptance, check_acceptance, merge_chunks
from pipeline.execution.executor import ExecutionResult, StepExecutor
from pipeline.execution.steps import scope_steps
from pipeline.execution.tools import SearchSettings, SearchStore
from pipeline.intake.planner_state import AcceptanceCriteria, PlannerState, RetrievalRound
from pipeline.intake.scope import QuestionScope
from pipeline.settings import CoreConfig
from pipeline.text import bm25_tokens
from pipeline.types import ChunkHit, Entity, SearchMode
from pipeline.vocabulary import Vocabulary

RoundStop = Literal[
    "accepted",
    "rounds_exhausted",
    "max_rounds",
    "max_total_docs",
    "deadline",
    "no_new_information",
    "no_targeted_query",
    "tool_loop_stopped",
]
Clock = Callable[[], float]

_RETRIEVER: dict[str, Literal["bm25", "dense"]] = {"bm25": "bm25", "vector": "dense"}


def round_search(
    round_: RetrievalRound, passage: str | None = None, mode: SearchMode | None = None, figures: bool = True
) -> SearchSettings:
    """How the tools search in `round_`; `mode` overrides the retrievers the round names
    (retrieval-only evaluation compares bm25, dense and hybrid on the same plan); `figures`: the sub-question
    asks a figure, so pages of figures are favoured."""
    modes = {_RETRIEVER[m.type]: m for m in round_.retrieval_modes}
    planned: SearchMode = "hybrid" if len(modes) == 2 else next(iter(modes))
    return SearchSettings(
        mode=mode or planned,
        weights={n: (m.alpha if m.alpha is not None else 1.0) for n, m in modes.items()},
        depths={n: m.k for n, m in modes.items()},
        dense_query=passage if round_.use_hyde else None,
        documents_k=round_.output.max_docs,
        gate_entity_ids=round_.filters.entities,
        together_entity_ids=round_.filters.together,
        doc_type_hint=frozenset(round_.filters.doc_types),
        periods=round_.filters.periods,
        figures=figures,
    )


def gap_queries(sub_question: str, goal: str, gap: Acceptance, names: Mapping[str, str]) -> list[str]:
    """Queries aimed at what acceptance misses: the sub-question with each uncovered entity's
    name, each missing literal term alone, and the whole question when sources are short."""
    out = [f"{sub_question} {names[e]}" for e in gap.uncovered_entities if e in names]
    out.extend(gap.missing_terms)
    if gap.sources_short and goal != sub_question:
        out.append(goal)
    return out


def round_queries(
    round_: RetrievalRound, goal: str, sub_question: str, gap: Acceptance | None, names: Mapping[str, str]
) -> tuple[str, ...]:
    """The queries `round_` runs for `sub_question`, in order, without repeats."""
    out: list[str] = []
    for variant in round_.query_variants:
        if variant != goal:
            out.append(variant)
        elif round_.purpose != "gap_filling":
            out.append(sub_question)
        elif gap is not None:
            out.extend(gap_queries(sub_question, goal, gap, names))
    return tuple(dict.fromkeys(q for q in out if q.strip()))


def entities_to_cover(
    sub_question: str, criteria: AcceptanceCriteria, entities: Mapping[str, Entity], vocabulary: Vocabulary
) -> AcceptanceCriteria:
    """The criteria for one sub-question: of the entities the question must cover, those the
    sub-question names (each sub-question of "compare A and B" covers its own), else all of them."""
    cover = criteria.must_cover_entities
    covered = [entities[e] for e in cover if e in entities]
    named = {m.entity_id for m in find_entity_mentions(sub_question, covered, vocabulary)}
    return criteria.model_copy(update={"must_cover_entities": tuple(e for e in cover if e in named) or cover})


def _only_terms(query: str, terms: Sequence[str]) -> bool:
    """Whether every index term of `query` is one of `terms`' (a query made of those terms alone)."""
    allowed = {token for term in terms for token in bm25_tokens(term)}
    return bool(allowed) and set(bm25_tokens(query)) <= allowed


def _search_key(query: str, search: SearchSettings) -> tuple[object, ...]:
    """Two searches with equal keys return the same results (the store is deterministic)."""
    return (
        query,
        search.mode,
        tuple(sorted((search.weights or {}).items())),
        tuple(sorted((search.depths or {}).items())),
        search.dense_query,
        search.documents_k,
        search.gate_key,
        search.periods,
        search.figures,
    )


@dataclass(frozen=True)
class RoundRun:
    """One round that ran for a sub-question: what it searched, what it found, the verdict after it."""

    round_id: int
    purpose: str
    search: SearchSettings
    executions: tuple[tuple[str, ExecutionResult], ...]
    new_chunks: int
    acceptance: Acceptance

    @property
    def queries(self) -> tuple[str, ...]:
        return tuple(q for q, _ in self.executions)

    @property
    def documents(self) -> tuple[str, ...]:
        """Distinct documents retrieve_docs kept in this round."""
        return tuple(dict.fromkeys(h.document.document_id for _, r in self.executions for h in r.documents))

    @property
    def chunks(self) -> int:
        """Chunks this round's searches returned (before merging)."""
        return sum(len(r.chunks) for _, r in self.executions)


@dataclass(frozen=True)
class SubQuestionRetrieval:
    """A sub-question's merged chunks (what may be shown and cited), its rounds, and why they stopped."""

    sub_question: str
    chunks: tuple[ChunkHit, ...]
    rounds: tuple[RoundRun, ...]
    stop_reason: RoundStop


class QuestionRetrieval:
    """Runs the plan's rounds for each sub-question of one question through one StepExecutor."""

    def __init__(
        self,
        store: SearchStore,
        scope: QuestionScope,
        plan: PlannerState,
        config: CoreConfig | None = None,
        *,
        passage: str | None = None,
        mode: SearchMode | None = None,
        clock: Clock = time.monotonic,
        started: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        self.store, self.scope, self.plan = store, scope, plan
        # The question's hard time bound (every search checks it); `plan`'s latency deadline above only stops
        # follow-up rounds.
        self.bound = deadline or unbounded()
        self.config = config or CoreConfig()
        self.passage, self.mode, self.clock = passage, mode, clock
        self.executor = StepExecutor(store, scope, self.config)
        latency = plan.budget.max_latency_ms
        self.deadline = None if latency is None else (clock() if started is None else started) + latency / 1000
        self._names = {e.entity_id: e.name for e in store.catalog.entities.values()}

    @property
    def user_message(self) -> str | None:
        return self.executor.user_message

    def _stop_before(self, index: int, round_: RetrievalRound, gap: Acceptance | None) -> RoundStop | None:
        stop = self.plan.stop_conditions
        if index >= stop.max_rounds:
            return "max_rounds"
        if self.executor.stop_reason is not None:
            return "tool_loop_stopped"
        if index == 0:
            return None
        if round_.purpose == "gap_filling" and gap is not None and gap.met:
            return "accepted"
        if len(self.executor.sent_documents) >= stop.max_total_docs:
            return "max_total_docs"
        if self.deadline is not None and self.clock() >= self.deadline:
            return "deadline"
        return None

    def retrieve(self, sub_question: str) -> SubQuestionRetrieval:
        """Run the rounds for `sub_question` until a stop condition; its merged, capped chunks."""
        plan = self.plan
        # A literal term in every document names the documents' kind (a form name), not a passage:
        # it neither orders chunks nor makes a search of its own.
        generic = tuple(t for t in plan.literal_constraints.must_preserve_terms if self.store.in_every_document(t))
        terms = tuple(t for t in plan.literal_constraints.must_preserve_terms if t not in generic)
        catalog = self.store.catalog
        criteria = entities_to_cover(sub_question, plan.acceptance_criteria, catalog.entities, catalog.vocabulary)
        figures = asks_amount(sub_question)
        rankings: list[Sequence[ChunkHit]] = []
        seen: set[int] = set()
        done: set[tuple[object, ...]] = set()
        rounds: list[RoundRun] = []
        merged: tuple[ChunkHit, ...] = ()
        gap: Acceptance | None = None
        quiet = 0
        stop: RoundStop | None = None
        for index, round_ in enumerate(plan.retrieval_rounds):
            stop = self._stop_before(index, round_, gap)
            if stop is not None:
                break
            search = round_search(round_, self.passage, self.mode, figures)
            asked = list(round_queries(round_, plan.goal, sub_question, gap, self._names))
            if index == 0 and self.config.planner.metric_queries:
                entities = list(catalog.entities.values())
                asked += metric_queries(without_mentions(sub_question, entities, catalog.vocabulary))
            queries = [
                q
                for q in dict.fromkeys(asked)
                if _search_key(q, search) not in done and (q == sub_question or not _only_terms(q, generic))
            ]
            if not queries:
                stop = "no_targeted_query"
                break
            executions = []
            for query in queries:
                self.bound.check("retrieving")
                done.add(_search_key(query, search))
                result = self.executor.run(scope_steps(self.scope, query), search)
                executions.append((query, result))
                rankings.extend(result.chunk_lists)
            found = {h.chunk.row for _, r in executions for h in r.chunks}
            new = found - seen
            seen |= found
            merged = merge_chunks(rankings, terms, self.config.chunks_k)
            documents = self.store.catalog.documents
            gap = check_acceptance(merged, criteria, plan.literal_constraints, documents)
            rounds.append(RoundRun(round_.round_id, round_.purpose, search, tuple(executions), len(new), gap))
            quiet = 0 if new else quiet + 1
            if quiet >= plan.stop_conditions.no_new_information_rounds:
                stop = "no_new_information"
                break
        if stop is None:
            stop = "accepted" if gap is not None and gap.met else "rounds_exhausted"
        return SubQuestionRetrieval(sub_question, merged, tuple(rounds), stop)


def metric_queries(sub_question: str) -> list[str]:
    """For a sub-question asking for a figure, the words statements print for its metric (pipeline.answering.
    metric_labels), each a query of its own: "cash flow from operations" is also searched as "Net cash provided
    by operating activities"."""
    if not asks_amount(sub_question):
        return []
    return list(printed_labels(metric_terms(sub_question)))
