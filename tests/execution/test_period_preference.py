"""The periods a question names steer retrieval to the documents covering them (settings:
planner.period_preference), on near-identical quarterly reports of one company."""

from __future__ import annotations

import pytest

from pipeline.execution.rounds import QuestionRetrieval
from pipeline.intake.planner import analyse_and_plan
from pipeline.intake.scope import NO_SCOPE, Scope, question_scope, resolve_scope
from pipeline.settings import CoreConfig, PlannerConfig
from pipeline.store import Store
from tests.support.stores import store_of

MANIFEST = """
format = "scoperag-corpus/v1"
name = "quarters"
entity_kind = "company"

[[entities]]
slug = "acme"
name = "Acme Robotics, Inc."
aliases = ["Acme"]
"""
QUARTERS = {"2023 Q1": "March 31, 2023", "2023 Q2": "June 30, 2023", "2023 Q3": "September 30, 2023"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    files = {"corpus.toml": MANIFEST}
    for number, (quarter, ended) in enumerate(QUARTERS.items(), start=1):
        body = "\n\n".join(
            f"Acme Robotics revenue for the quarter was ${number},{i:03d} million; operating income rose."
            for i in range(8)
        )
        files[f"{quarter.replace(' ', '-')}.md"] = (
            f"---\ntitle: Acme quarterly report {quarter}\nentities: [acme]\n"
            f"attributes: {{quarter: '{quarter}'}}\n---\n"
            f"ACME ROBOTICS, INC.\nQuarterly report for the quarterly period ended {ended}.\n\n{body}\n"
        )
    return store_of(tmp_path_factory.mktemp("quarters"), files)


def _quarters(store: Store, question: str, preference: str, scope: Scope = NO_SCOPE) -> set[str]:
    catalog = store.catalog
    config = CoreConfig(chunks_k=10, planner=PlannerConfig(period_preference=preference))  # type: ignore[arg-type]
    _, plan = analyse_and_plan(
        question, scope, catalog.entities, {"document"}, config.planner, vocabulary=catalog.vocabulary
    )
    chunks = QuestionRetrieval(store, question_scope(scope, store), plan, config).retrieve(plan.goal).chunks
    return {dict(catalog.documents[h.chunk.document_id].attributes)["quarter"] for h in chunks}


def test_a_named_quarter_reads_only_its_report(store: Store) -> None:
    question = "What was Acme's revenue in Q2 2023?"
    assert _quarters(store, question, "off") == set(QUARTERS)
    assert _quarters(store, question, "filter") == {"2023 Q2"}
    # Inside a property scope too: the scope's documents of that quarter.
    scope = resolve_scope(store, property_ref="acme")
    assert _quarters(store, question, "filter", scope) == {"2023 Q2"}


def test_the_latest_report_and_a_date_find_their_quarter(store: Store) -> None:
    assert _quarters(store, "What was Acme's revenue in the latest report?", "filter") == {"2023 Q3"}
    assert _quarters(store, "Acme's revenue for the period ended June 30, 2023?", "filter") == {"2023 Q2"}


def test_a_comparison_with_other_periods_is_not_steered(store: Store) -> None:
    question = "How did Acme's revenue in the latest quarter compare to previous quarters?"
    assert _quarters(store, question, "filter") == set(QUARTERS)


def test_boost_ranks_the_quarter_first_and_lets_others_fill(store: Store) -> None:
    catalog = store.catalog
    config = CoreConfig(chunks_k=10, planner=PlannerConfig(period_preference="boost"))
    question = "What was Acme's revenue in Q2 2023?"
    _, plan = analyse_and_plan(
        question, NO_SCOPE, catalog.entities, {"document"}, config.planner, vocabulary=catalog.vocabulary
    )
    chunks = QuestionRetrieval(store, question_scope(NO_SCOPE, store), plan, config).retrieve(plan.goal).chunks
    quarters = [dict(catalog.documents[h.chunk.document_id].attributes)["quarter"] for h in chunks]
    first = quarters.index(next(q for q in quarters if q != "2023 Q2"))
    assert first > 0 and set(quarters[:first]) == {"2023 Q2"} and len(set(quarters)) > 1


def test_a_named_period_no_document_covers_steers_nothing(store: Store) -> None:
    assert _quarters(store, "What was Acme's revenue in Q4 2021?", "filter") == set(QUARTERS)


def test_the_period_end_of_the_first_pages_is_an_attribute(store: Store) -> None:
    ends = {
        dict(d.attributes)["quarter"]: dict(d.attributes).get("period_end") for d in store.catalog.documents.values()
    }
    assert ends == {"2023 Q1": "2023-03-31", "2023 Q2": "2023-06-30", "2023 Q3": "2023-09-30"}
