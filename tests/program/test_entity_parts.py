"""Questions over several entities of one scope: a comparison of properties named without quotes is answered as a
comparison of companies is (each inside its own documents, compared by code), and a sub-question naming one entity
of a scope of several retrieves and cites only that entity's documents, whoever decomposed the question."""

from __future__ import annotations

from typing import Any

import dspy

from pipeline.intake.scope import resolve_scope
from pipeline.program.events import Completed
from pipeline.program.module import ScopedQA
from pipeline.settings import ProgramSettings, Settings, StepChoices
from pipeline.store import Store
from tests.support.fakes import cooperative, prompt_step, scripted_lm

FLOORS = StepChoices(
    decompose="parts", score="top_k", answer="span", abstain="support", compute="rows", hyde="none", judge="claims"
)
HIGHER = "Which is higher, the monthly rent at Banda Lane or at Banda Road?"


def _documents_of(store: Store, name: str) -> set[str]:
    return set(store.entity_scope(store.resolve_entity(name).entity_id))


def _ask(store: Store, question: str, steps: StepChoices, respond: Any = None) -> Completed:
    program = ScopedQA(store, Settings(program=ProgramSettings(steps=steps)))
    lm = scripted_lm(respond or (lambda prompt: {}))
    with dspy.context(lm=lm):
        *_, done = program.stream(question, resolve_scope(store))
    assert isinstance(done, Completed), done
    return done


def test_properties_named_in_a_comparison_are_compared_as_companies_are(demo_store: Store) -> None:
    # E5: the floors answered the Banda Lane lease's rent alone, as if it answered which is higher
    done = _ask(demo_store, HIGHER, FLOORS)
    lane, road = _documents_of(demo_store, "Banda Lane"), _documents_of(demo_store, "Banda Road")
    *parts, summary = done.sections
    assert len(parts) == 2 and done.trace is not None and done.trace.contract["comparison"] is not None
    for part, documents in zip(parts, (lane, road), strict=True):
        assert part.status == "answered" and part.sources, part
        assert {s.document_id for s in part.sources} <= documents, part.sources
    assert [p.value.value if p.value else None for p in parts] == [285_000, 340_000]
    assert done.value is not None and done.value.kind == "name" and done.value.value == "Banda Road"
    assert summary.answer.startswith("Highest monthly rent: Banda Road")


def test_a_sub_question_naming_one_entity_retrieves_and_cites_only_its_documents(demo_store: Store) -> None:
    # E5: the LM's "What is the monthly rent at Banda Road?" was retrieved over both properties' documents and
    # answered from the Banda Lane lease
    split = ["What is the monthly rent at Banda Lane?", "What is the deposit at Banda Road?"]

    def decomposes(prompt: str) -> Any:
        return {"sub_questions": split} if prompt_step(prompt) == "decompose" else cooperative()(prompt)

    steps = FLOORS.model_copy(update={"decompose": "lm"})
    done = _ask(demo_store, "What is the monthly rent at Banda Lane and the deposit at Banda Road?", steps, decomposes)
    assert [s.sub_question for s in done.sections] == split and done.trace is not None
    lane, road = _documents_of(demo_store, "Banda Lane"), _documents_of(demo_store, "Banda Road")
    for index, documents in ((0, lane), (1, road)):
        retrieved = {c.document_id for c in done.trace.sub_questions[index].chunks}
        assert retrieved and retrieved <= documents, retrieved
        assert {s.document_id for s in done.sections[index].sources} <= documents
    assert done.sections[1].value is not None and done.sections[1].value.value == 1_020_000
