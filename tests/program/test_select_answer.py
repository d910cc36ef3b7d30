"""The chosen answer: sentences split from the kept chunks, chosen by id, quoted with their own citation."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from pipeline.guards.citations import citation_label
from pipeline.guards.selection import MAX_SENTENCES, NOTHING_CHOSEN, offered_sentences, render_choice
from pipeline.intake.scope import resolve_scope
from pipeline.program.events import Completed
from pipeline.program.module import ScopedQA
from pipeline.settings import ProgramSettings, Settings
from pipeline.store import Store
from pipeline.text import split_sentences
from pipeline.types import Chunk, ChunkHit
from tests.support.fakes import Responder, cooperative, field, scripted_lm


def test_split_sentences_keeps_abbreviations_and_caps_length() -> None:
    text = "The land is L.R. NO: 1159/215 in Karen. The rent is KSH 285,000.\nTenant: Mr. Otieno!  "
    assert split_sentences(text) == [
        "The land is L.R. NO: 1159/215 in Karen.",
        "The rent is KSH 285,000.",
        "Tenant: Mr. Otieno!",
    ]
    long = " ".join(["word"] * 200)
    pieces = split_sentences(long, max_chars=100)
    assert all(len(p) <= 100 for p in pieces) and " ".join(pieces) == long
    assert split_sentences("   \n ") == []


def test_split_sentences_keeps_a_clause_number_with_its_clause() -> None:
    text = "1. Term and rent 1.1 The term is 3 years. 2. Deposit is due.\n(b) Pay it, cf. clause 4. Paid in 2023."
    assert split_sentences(text) == [
        "1. Term and rent 1.1 The term is 3 years.",
        "2. Deposit is due.",
        "(b) Pay it, cf. clause 4.",
        "Paid in 2023.",
    ]


def _hit(row: int, text: str, page: int = 1) -> ChunkHit:
    return ChunkHit(chunk=Chunk(row, f"doc-{row}", page, 0, text), filename=f"f{row}.pdf", score=1.0)


def test_render_choice_quotes_chosen_sentences_with_their_own_citation() -> None:
    offered = offered_sentences(
        [_hit(1, "Rent is KSH 5. Paid monthly."), _hit(2, "Rent is KSH 5. Tenant: Ann Wairimu.", 3)], 900
    )
    assert [s.sentence_id for s in offered] == [0, 1, 2]  # the repeated sentence is offered once
    rendered = render_choice(0, [2, 0, 2, 7], offered, max_bullets=5)
    bullets = rendered.section.bullets
    assert [b.text for b in bullets] == ["Tenant: Ann Wairimu.", "Rent is KSH 5."]
    assert [(c.filename, c.page) for b in bullets for c in b.citations] == [("f2.pdf", 3), ("f1.pdf", 1)]
    assert rendered.unknown_ids == (7,)
    assert render_choice(0, [0, 1, 2], offered, max_bullets=2).section.bullets[-1].text == "Paid monthly."
    nothing = render_choice(0, [9], offered, max_bullets=5).section.bullets
    assert [(b.text, b.citations) for b in nothing] == [(NOTHING_CHOSEN, [])]


def test_offered_sentences_put_the_best_match_to_the_question_first() -> None:
    chunks = [
        _hit(1, "The term is 3 years. The deposit is two months. Water is paid by the Tenant."),
        _hit(2, "The rent is KSH 285,000 per month. Rent rises by 5% a year.", 2),
    ]
    in_chunk_order = [s.text for s in offered_sentences(chunks, 900)]
    assert in_chunk_order[0] == "The term is 3 years."
    ranked = offered_sentences(chunks, 900, "What is the monthly rent?")
    assert [s.sentence_id for s in ranked] == [0, 1, 2, 3, 4]
    texts = [s.text for s in ranked]
    assert texts[0] == "The rent is KSH 285,000 per month."  # both words of the question
    assert texts.index("Rent rises by 5% a year.") < texts.index("The term is 3 years.")  # one word before none
    assert ranked[0].hit.filename == "f2.pdf"  # each sentence keeps its own chunk
    # no word of the question in any sentence: chunk order
    assert [s.text for s in offered_sentences(chunks, 900, "Who signed?")] == in_chunk_order


def test_a_sentence_cut_by_a_chunk_boundary_is_offered_once_whole() -> None:
    chunks = [
        _hit(1, "1.4 Interest is due. 2. Deposit 2.1 The Tenant pays KSH 570,000."),
        _hit(2, "Deposit 2.1 The Tenant pays KSH 570,000. The rent is KSH 5."),
        _hit(3, "The rent is KSH 5.5 million."),
    ]
    assert [s.text for s in offered_sentences(chunks, 900)] == [
        "1.4 Interest is due.",
        "2. Deposit 2.1 The Tenant pays KSH 570,000.",
        "The rent is KSH 5.",  # not held in "KSH 5.5 million": whole tokens only
        "The rent is KSH 5.5 million.",
    ]


def test_the_ranking_query_leaves_out_the_names_of_the_entity_owning_every_kept_chunk(demo_store: Store) -> None:
    program = ScopedQA(demo_store)
    scope = resolve_scope(demo_store, property_ref="Banda Lane")
    owned = demo_store.entity_document_ids(scope.entity_id or "")[:2]
    hits = [ChunkHit(chunk=Chunk(i, d, 1, 0, "text"), filename="f.pdf", score=1.0) for i, d in enumerate(owned)]
    question = "What is the monthly rent for Banda Lane?"
    assert len(owned) == 2 and "Banda" not in program._ranking_query(question, hits)
    assert "rent" in program._ranking_query(question, hits)
    # a chunk of a document the entity does not own: its name stays (it tells the documents apart)
    other = next(
        d for d in demo_store.catalog.documents if d not in demo_store.entity_document_ids(scope.entity_id or "")
    )
    mixed = [*hits, ChunkHit(chunk=Chunk(9, other, 1, 0, "text"), filename="g.pdf", score=1.0)]
    assert "Banda Lane" in program._ranking_query(question, mixed)


def test_offered_sentences_are_capped_after_ranking() -> None:
    filler = " ".join(f"Clause {i} says nothing." for i in range(MAX_SENTENCES + 5))
    chunks = [_hit(1, filler), _hit(2, "The rent is KSH 9.")]
    assert len(offered_sentences(chunks, 20_000)) == MAX_SENTENCES
    assert all("rent" not in s.text for s in offered_sentences(chunks, 20_000))
    ranked = offered_sentences(chunks, 20_000, "What is the rent?")
    assert len(ranked) == MAX_SENTENCES and ranked[0].text == "The rent is KSH 9."


def test_sentence_order_question_reaches_the_select_prompt(demo_store: Store) -> None:
    shown: dict[str, list[str]] = {}
    for order in ("chunk", "question"):
        settings = Settings(program=ProgramSettings(answer_mode="select", sentence_order=order))  # type: ignore[arg-type]

        def pick(sentences: list[dict[str, Any]], order: str = order) -> list[int]:
            shown[order] = [s["text"] for s in sentences]
            return [0]

        with dspy.context(lm=scripted_lm(_choosing(pick))):
            scope = resolve_scope(demo_store, property_ref="Banda Lane")
            list(ScopedQA(demo_store, settings).stream("What is the monthly rent?", scope))
    assert sorted(shown["chunk"]) == sorted(shown["question"]) and shown["chunk"] != shown["question"]
    assert "rent" in shown["question"][0].lower()


def _choosing(pick: Any) -> Responder:
    """Cooperative, except that the answer chooses sentence ids with `pick(sentences)`."""
    inner = cooperative()

    def respond(prompt: str) -> Any:
        if "[[ ## sections_context ## ]]" in prompt and "sentence_id" in prompt:
            sections = field(prompt, "sections_context")
            return {
                "choices": [
                    {"sub_question_index": s["sub_question_index"], "sentence_ids": pick(s["sentences"])}
                    for s in sections
                ]
            }
        return inner(prompt)

    return respond


def _ask(store: Store, respond: Responder) -> Completed:
    program = ScopedQA(store, Settings(program=ProgramSettings(answer_mode="select")))
    with dspy.context(lm=scripted_lm(respond)):
        events = list(program.stream("What is the monthly rent?", resolve_scope(store, property_ref="Banda Lane")))
    assert isinstance(events[-1], Completed)
    return events[-1]


def test_select_mode_answers_with_the_chosen_sentences_cited_by_code(demo_store: Store) -> None:
    rent = [None]

    def pick(sentences: list[dict[str, Any]]) -> list[int]:
        chosen = [s for s in sentences if "KSH" in s["text"]][:1]
        rent[0] = chosen[0] if chosen else None
        return [s["sentence_id"] for s in chosen] + [999]

    done = _ask(demo_store, _choosing(pick))
    assert rent[0] is not None
    (section,) = done.sections
    assert section.status == "answered" and section.bullets == (f"{rent[0]['text']} {rent[0]['source']}",)
    (source,) = section.sources
    assert citation_label(source.filename, source.page) == rent[0]["source"]
    assert any(i.guard == "select" and "999" in i.reason for i in done.trace.interventions)
    assert done.trace.lm_calls == 3 and "select" in done.trace.timings


def test_select_mode_choosing_nothing_abstains_without_citing(demo_store: Store) -> None:
    done = _ask(demo_store, _choosing(lambda sentences: []))
    (section,) = done.sections
    assert section.bullets == (NOTHING_CHOSEN,) and section.sources == ()


@pytest.mark.parametrize("mode", ["write", "select"])
def test_only_the_predictor_of_the_answer_mode_is_called(demo_store: Store, mode: str) -> None:
    prompts: list[str] = []

    def respond(prompt: str) -> Any:
        prompts.append(prompt)
        return _choosing(lambda s: [0])(prompt)

    program = ScopedQA(demo_store, Settings(program=ProgramSettings(answer_mode=mode)))  # type: ignore[arg-type]
    with dspy.context(lm=scripted_lm(respond)):
        list(program.stream("What is the monthly rent?", resolve_scope(demo_store, property_ref="Banda Lane")))
    answering = [p for p in prompts if "[[ ## sections_context ## ]]" in p]
    assert len(answering) == 1 and ("sentence_id" in answering[0]) == (mode == "select")


def test_a_compiled_demo_of_the_select_predictor_reaches_its_prompt(demo_store: Store) -> None:
    # The select call narrows its signature's output shape per question; the demos compiled into the
    # predictor must still be sent, or an answer-stage job would compile nothing.
    program = ScopedQA(demo_store, Settings(program=ProgramSettings(answer_mode="select")))
    shown = [{"sub_question_index": 0, "sentences": [{"sentence_id": 0, "text": "DEMO-SENTENCE", "source": "[a p.1]"}]}]
    program.select.demos = [
        dspy.Example(sections_context=shown, choices=[{"sub_question_index": 0, "sentence_ids": [0]}])
    ]
    lm = scripted_lm(_choosing(lambda sentences: [0]))
    with dspy.context(lm=lm):
        events = list(program.stream("What is the monthly rent?", resolve_scope(demo_store, property_ref="Banda Lane")))
    assert isinstance(events[-1], Completed)
    sent = [str(call["messages"]) for call in lm.history]
    assert len(sent) == 3
    assert "DEMO-SENTENCE" in sent[-1]  # the select call, the last of the three
    assert not any("DEMO-SENTENCE" in messages for messages in sent[:-1])
