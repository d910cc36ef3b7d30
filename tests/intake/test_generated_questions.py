"""Intake, planning and retrieval never raise on a name: generated entity names and questions of any
length, in every kind of scope (property tests; `make slow` runs 10,000 generated pairs)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.scope_pairs import generated_pairs, run_pair
from pipeline.intake.planner import plan_in_scope, plan_scope_note
from pipeline.intake.planner_state import MAX_CLARIFYING_CHARS, MAX_GOAL_CHARS
from pipeline.intake.scope import NO_SCOPE, Scope
from pipeline.store import Store, open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder
from pipeline.types import Document, Entity
from pipeline.vocabulary import Vocabulary
from tests.support.paths import DATASETS

LEGAL = st.sampled_from(["", " Inc.", " LLC", " Ltd", " Co., Ltd.", " Corporation", " Limited", " L.L.C.", "'s"])
WORDS = st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "Zs")), min_size=1, max_size=40)
NAMES = st.builds(lambda words, legal: " ".join(words) + legal, st.lists(WORDS, min_size=1, max_size=30), LEGAL)


@dataclass
class Catalog:
    entities: dict[str, Entity]
    documents: dict[str, Document]
    vocabulary: Vocabulary = field(default_factory=Vocabulary)
    entity_kind: str = "company"


@dataclass
class Owners:
    """A store's catalog queries over generated entities, each owning two documents (one shared with the next)."""

    catalog: Catalog

    def entity_document_ids(self, entity_id: str) -> list[str]:
        return [d for d, doc in self.catalog.documents.items() if entity_id in doc.entity_ids]

    def entity_scope(self, entity_id: str) -> list[str]:
        return self.entity_document_ids(entity_id)


def owners(names: list[str]) -> Owners:
    entities = {}
    for i, name in enumerate(names):
        eid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"entity-{i}"))
        entities[eid] = Entity(eid, f"e{i}", name, (name.split()[0],) if name.split() else ())
    ids = list(entities)
    documents = {}
    for i, eid in enumerate(ids):
        for j, owned in enumerate(((eid,), (eid, ids[(i + 1) % len(ids)]))):
            did = str(uuid.uuid5(uuid.NAMESPACE_URL, f"doc-{i}-{j}"))
            documents[did] = Document(did, f"{i}-{j}.txt", f"x/{i}-{j}.txt", "Report", "A report.", "report", 1, owned)
    return Owners(Catalog(entities, documents))


@st.composite
def asked(draw: st.DrawFn) -> tuple[Owners, str, Scope]:
    names = draw(st.lists(NAMES, min_size=1, max_size=6))
    store = owners(names)
    picked = draw(st.lists(st.sampled_from(names), min_size=0, max_size=4))
    template = draw(st.sampled_from(["{}", "What did {} report?", "Compare {}.", "{} vs {}?", "Is {}'s {} due?"]))
    question = template.replace("{}", " and ".join(picked) or "revenue", 1).replace("{}", draw(WORDS))
    question = question + draw(st.text(max_size=50)) if draw(st.booleans()) else question
    kind = draw(st.sampled_from(["no_scope", "property", "chip"]))
    entity = draw(st.sampled_from(list(store.catalog.entities)))
    if kind == "property":
        scope = Scope(kind="property", entity_id=entity)
    elif kind == "chip":
        chosen = draw(st.lists(st.sampled_from(list(store.catalog.documents)), min_size=1, max_size=3, unique=True))
        scope = Scope(kind="chip", document_ids=tuple(chosen), entity_id=entity if draw(st.booleans()) else None)
    else:
        scope = NO_SCOPE
    return store, question, scope


def _check(store: Owners, question: str, scope: Scope) -> None:
    if not question.strip():
        return
    _, plan, scoped = plan_in_scope(question, scope, store, {"report"})
    plan_scope_note(plan, scoped, store)
    assert len(plan.goal) <= MAX_GOAL_CHARS
    assert all(len(q.question) <= MAX_CLARIFYING_CHARS for q in plan.clarifying_questions)
    if scoped.document_ids is not None and scope.kind != "chip":
        assert scoped.allowed is not None and scoped.allowed <= set(store.catalog.documents)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(asked())
def test_intake_and_planning_never_raise_on_generated_names_and_questions(case: tuple[Owners, str, Scope]) -> None:
    _check(*case)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(asked())
def test_intake_and_planning_never_raise_on_generated_names_and_questions_slow(
    case: tuple[Owners, str, Scope],
) -> None:
    _check(*case)


@pytest.fixture(scope="module")
def filings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("filings-generated")
    build_index(DATASETS / "filings", out, HashEmbedder(64))
    return out


@pytest.fixture(scope="module")
def store(filings: Path) -> Store:
    return open_store(filings, HashEmbedder(64))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_generated_pairs_run_through_intake_and_retrieval(store: Store, seed: int) -> None:
    for question, scope in generated_pairs(store, 3, seed):
        run_pair(store, question, scope)


@pytest.mark.slow
def test_ten_thousand_generated_pairs_run_through_intake_and_retrieval(store: Store) -> None:
    failures = []
    for question, scope in generated_pairs(store, 10_000, seed=25):
        try:
            run_pair(store, question, scope)
        except Exception as exc:
            failures.append(f"{scope.kind} {question[:80]!r}: {type(exc).__name__}: {exc}")
    assert failures == []
