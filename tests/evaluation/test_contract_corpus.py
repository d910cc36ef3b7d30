"""The contract development corpus (datasets/contracts, traces in datasets/contracts-traces): two-party
agreements, blank forms no party owns, near-identical templates. Reproduces the findings on real
contracts with 0 wrong-entity chunks: ordinary words naming no party (2), blank forms served for
every party (7), and another pair's agreement or a party's own agreement dropped (8); and a scope of
another party's documents answered with a typed note (program, CLI, server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import pytest

from pipeline.errors import SkippedDocumentError
from pipeline.evaluation.examples import load_examples, make_example
from pipeline.evaluation.labels import resolve_example
from pipeline.evaluation.ownership import ownership_gaps
from pipeline.evaluation.scoring import evaluate, score_retrieval
from pipeline.execution.tools import RetrievalTools, SearchSettings
from pipeline.intake import planner as planner_module
from pipeline.intake import scope as scope_module
from pipeline.intake.analysis import analyse_question
from pipeline.intake.scope import NO_SCOPE, Scope, question_scope, resolve_scope
from pipeline.program.events import Completed
from pipeline.program.module import ScopedQA
from pipeline.settings import CoreConfig, PlannerConfig
from pipeline.store import Store, open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder
from tests.support.fakes import cooperative, scripted_lm
from tests.support.paths import DATASETS
from tests.support.scripts import load_script

CONTRACTS = DATASETS / "contracts"
TRACES = DATASETS / "contracts-traces" / "dev.jsonl"
EXAMPLES = load_examples(TRACES)
FORMS = ("forms/mutual-nda-form.txt", "forms/mutual-nda-form-v2.txt", "forms/nda-template-blank.txt")


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("contracts-index")
    build_index(CONTRACTS, out, HashEmbedder(64))
    return out


@pytest.fixture
def store(index_dir: Path) -> Store:
    return open_store(index_dir, HashEmbedder(64))


def _ids(store: Store, *paths: str) -> set[str]:
    return set(store.document_ids_for(list(paths)))


def test_the_committed_corpus_and_traces_are_what_the_script_writes(tmp_path: Path) -> None:
    generator = load_script("make_contract_corpus")
    written = generator.write(tmp_path / "contracts", tmp_path / "traces")
    committed = {p: CONTRACTS / p.relative_to(tmp_path / "contracts") for p in written if "contracts" in p.parts}
    committed[tmp_path / "traces" / "dev.jsonl"] = TRACES
    committed[tmp_path / "traces" / "test.jsonl"] = TRACES.with_name("test.jsonl")
    stale = [str(p) for p, c in committed.items() if p.read_bytes() != c.read_bytes()]
    assert stale == [], "datasets/contracts is stale: run scripts/make_contract_corpus.py"
    assert {e.case for e in EXAMPLES} == {"no_scope", "chip", "property", "wrong_property"}


def test_forms_are_owned_by_no_party_and_agreements_by_both(store: Store) -> None:
    documents = {d.relpath: d for d in store.catalog.documents.values()}
    assert all(documents[f].entity_ids == () and documents[f].outside for f in FORMS)
    agreements = [d for d in documents.values() if d.relpath.startswith("agreements/")]
    assert len(agreements) == 9 and all(len(d.entity_ids) == 2 and not d.outside for d in agreements)


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_every_example_reads_no_other_partys_document_and_finds_its_own(store: Store, mode: str) -> None:
    for example in EXAMPLES:
        result = score_retrieval(store, resolve_example(example, store), mode=mode)  # type: ignore[arg-type]
        assert result.scores.wrong_property_citations == 0, example.question
        assert result.scores.invalid_ids == 0, example.question
        if example.gold_documents:
            assert result.scores.recall_at_10 == 1.0, example.question


def test_finding_2_ordinary_words_of_party_names_name_no_party(store: Store) -> None:
    catalog = store.catalog
    assert {"analytics", "systems"} <= set(catalog.vocabulary.ordinary_words)
    question = "Under the Helix Robotics NDA, are data analytics and health and safety records confidential?"
    intake = analyse_question(question, list(catalog.entities.values()), ["nda"], PlannerConfig(), catalog.vocabulary)
    assert [catalog.entities[e].slug for e in intake.entity_ids] == ["helix"]
    lower = "are data analytics and information systems confidential to the best of its abilities?"
    intake = analyse_question(lower, list(catalog.entities.values()), ["nda"], PlannerConfig(), catalog.vocabulary)
    assert intake.entity_ids == ()


def _ask(store: Store, question: str, scope: Scope) -> Completed:
    with dspy.context(lm=scripted_lm(cooperative())):
        events = list(ScopedQA(store).stream(question, scope))
    done = events[-1]
    assert isinstance(done, Completed) and done.trace is not None
    return done


def _cited(done: Completed) -> set[str]:
    return {s.document_id for section in done.sections for s in section.sources}


def test_finding_7_blank_forms_are_outside_every_partys_scope(store: Store) -> None:
    forms = _ids(store, *FORMS)
    done = _ask(store, "How many days does Quarry Analytics have to return materials?", NO_SCOPE)
    assert done.trace is not None
    shown = {c.document_id for sq in done.trace.sub_questions for c in sq.chunks}
    assert shown and not shown & forms
    assert shown == _ids(store, "agreements/northwind-quarry-nda.txt")
    # the question names Quarry: only Quarry's documents are searched, so no form ever reaches the store
    assert done.implicit_scope == ("Quarry Analytics LLC",) and not set(done.trace.store_document_ids) & forms
    # a question naming no party reads them
    open_question = _ask(store, "What is the confidentiality period in the blank form?", NO_SCOPE)
    assert open_question.trace is not None
    assert {c.document_id for sq in open_question.trace.sub_questions for c in sq.chunks} & forms


def test_finding_7_a_chip_on_a_blank_form_about_a_party_says_it_is_not_that_partys(store: Store) -> None:
    form = sorted(_ids(store, "forms/mutual-nda-form.txt"))
    done = _ask(store, "What is the term of the Quarry Analytics agreement?", resolve_scope(store, form))
    assert done.scope_note is not None and done.scope_note.kind == "no_entity"
    assert done.scope_note.document_ids == tuple(form)
    assert done.answer.startswith(
        "The selected document mutual-nda-form.txt belongs to no company: it is not Quarry Analytics LLC's"
    )
    assert _cited(done) <= set(form)


def test_finding_8_a_named_pair_never_reads_another_pairs_agreement(store: Store) -> None:
    question = "What does the NDA between Northwind Systems and Helix Robotics say about returning materials?"
    done = _ask(store, question, NO_SCOPE)
    assert done.trace is not None
    shown = {c.document_id for sq in done.trace.sub_questions for c in sq.chunks}
    assert shown == _ids(store, "agreements/northwind-helix-nda.txt")
    assert _cited(done) <= shown
    # the pair owns one agreement together: only it is searched, no other pair's agreement reaches the store
    assert set(done.trace.store_document_ids) == shown
    # inside Northwind's property scope the pair rule excludes the other pairs' agreements
    inside = _ask(store, question, resolve_scope(store, property_ref="northwind"))
    assert inside.trace is not None
    pair = [d for d in inside.trace.gate_decisions if d.reasons == ["another_pair"]]
    assert {d.filename for d in pair} >= {"northwind-quarry-nda.txt", "northwind-aster-nda.txt"}


def test_finding_8_a_partys_own_agreement_stays_in_its_scope_when_the_summary_names_the_other(
    store: Store,
) -> None:
    nq = _ids(store, "agreements/northwind-quarry-nda.txt")
    assert "Quarry" not in store.catalog.documents[next(iter(nq))].summary
    done = _ask(store, "How long does the agreement remain in force?", resolve_scope(store, property_ref="quarry"))
    assert done.trace is not None
    assert {c.document_id for sq in done.trace.sub_questions for c in sq.chunks} == nq
    kept = [d for d in done.trace.gate_decisions if d.document_id in nq and d.kept]
    assert kept and kept[0].evidence == ["owners: 2 in the catalog, 1 asked; the catalog decides"]


def test_item_5_a_chip_on_another_partys_agreement_gets_a_typed_answer_without_citation(store: Store) -> None:
    chosen = sorted(_ids(store, "agreements/northwind-quarry-nda.txt"))
    done = _ask(store, "Which law governs the Helix Robotics agreement?", resolve_scope(store, chosen))
    assert done.scope_note is not None and done.scope_note.kind == "other_entity"
    assert done.answer.startswith(
        "The selected documents are about Northwind Systems Inc. and Quarry Analytics LLC, not Helix Robotics Ltd."
    )
    assert done.sections == () and _cited(done) == set()
    assert json.loads(done.model_dump_json())["scope_note"]["about"] == [
        "Northwind Systems Inc.",
        "Quarry Analytics LLC",
    ]
    # the same through a property scope
    by_property = _ask(
        store, "What is the purpose of the Quarry Analytics agreement?", resolve_scope(store, None, "aster")
    )
    assert by_property.scope_note is not None and by_property.scope_note.kind == "other_entity"
    assert by_property.answer.startswith("The selected documents are about ")
    assert "not Quarry Analytics LLC." in by_property.answer and by_property.sections == ()


def test_item_5_the_cli_prints_and_serialises_the_typed_answer(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.cli.main import main
    from pipeline.program import lm

    monkeypatch.chdir(tmp_path)  # no active profile
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy"))
    scripted = scripted_lm(cooperative())
    scripted.adapter = dspy.JSONAdapter()
    monkeypatch.setattr(lm, "make_lm", lambda *args, **kwargs: scripted)
    common = ["--index", str(index_dir), "--history", str(tmp_path / "h.sqlite")]
    question = "Which law governs the Helix Robotics agreement?"
    capsys.readouterr()
    assert main(["ask", question, "--doc-id", "agreements/northwind-quarry-nda.txt", *common]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "The selected documents are about Northwind Systems Inc. and Quarry Analytics LLC, not Helix" in out
    assert "sources:" not in out
    assert main(["ask", question, "--doc-id", "agreements/northwind-quarry-nda.txt", "--json", *common]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["scope_note"]["kind"] == "other_entity" and printed["sections"] == []


# -- whose a document is: what the catalog says ------------------------------------------------------


def _shown(done: Completed) -> set[tuple[str, int]]:
    assert done.trace is not None
    return {(c.document_id, c.page) for sq in done.trace.sub_questions for c in sq.chunks}


def test_a_partys_undertaking_naming_only_the_other_party_is_read_whole_in_its_scope(store: Store) -> None:
    (undertaking,) = _ids(store, "agreements/orbis-stremwood-undertaking.txt")
    assert "Stremwood" not in store.catalog.documents[undertaking].summary
    done = _ask(store, "Within how many days must materials be returned?", resolve_scope(store, None, "stremwood"))
    assert done.trace is not None
    # page 2 names only Orbis Apparel: the chunk backstop leaves the chunks of the party's own document
    assert (undertaking, 2) in _shown(done)
    assert not [i for i in done.trace.interventions if i.guard == "chunk_backstop"]
    # `search` in the same scope reads the same documents (one rule)
    assert undertaking in set(store.entity_scope(store.resolve_entity("stremwood").entity_id))


def test_a_chip_on_a_partys_contract_that_spells_its_name_otherwise_is_read(store: Store) -> None:
    (contract,) = _ids(store, "agreements/stremwood-northwind-nda.txt")
    assert "Stremwoods Dairy Farms, LLC" in store.catalog.documents[contract].summary
    done = _ask(store, "Which law governs Stremwood's Dairy Farms' agreement?", resolve_scope(store, [contract]))
    assert {d for d, _ in _shown(done)} == {contract} and done.scope_note is None


def test_every_owned_document_is_read_in_its_owners_scope(store: Store) -> None:
    assert ownership_gaps(store) == []


# -- parties read from the parties clause ------------------------------------------------------------


def test_the_parties_are_read_from_the_parties_clause_not_from_clauses_set_side_by_side(store: Store) -> None:
    (services,) = _ids(store, "agreements/veltra-solenne-services.txt")
    document = store.catalog.documents[services]
    assert (
        document.title
        == "CLINICAL SERVICES AGREEMENT, between Veltra Research Ltd. and Solenne Biotech, Inc., as of 8 August 2021"
    )
    assert document.summary.startswith(document.title)


# -- amendments -------------------------------------------------------------------------------------


def test_an_amendment_has_its_agreements_owners_and_is_read_with_it(store: Store) -> None:
    (agreement,) = _ids(store, "agreements/northwind-blue-harbor-nda.txt")
    (amendment,) = _ids(store, "agreements/northwind-blue-harbor-nda-amendment-1.txt")
    documents = store.catalog.documents
    assert documents[amendment].amends == agreement
    assert documents[amendment].entity_ids == documents[agreement].entity_ids
    # a search that finds one document of the agreement reads the other with it
    tools = RetrievalTools(store, question_scope(NO_SCOPE, store), CoreConfig(), SearchSettings())
    found = tools.retrieve_docs({"query": "shared cold-chain shipping route purpose", "k": 1})
    assert found.value is not None and sorted(h.document.document_id for h in found.value) == sorted(
        (agreement, amendment)
    )
    # a question naming the pair reads both; a chip on the amendment reads it alone
    both = _ask(
        store, "How long does the NDA between Northwind Systems and Blue Harbor Logistics remain in force?", NO_SCOPE
    )
    assert {d for d, _ in _shown(both)} == {agreement, amendment}
    alone = _ask(store, "How long does the agreement remain in force?", resolve_scope(store, [amendment]))
    assert {d for d, _ in _shown(alone)} == {amendment}


# -- a note on every empty scope --------------------------------------------------------------------


def test_a_scope_emptied_by_the_pair_rule_says_whose_documents_they_are(store: Store) -> None:
    question = "Within how many days must Northwind Systems return Quarry Analytics materials?"
    done = _ask(store, question, resolve_scope(store, None, "helix"))
    assert done.scope_note is not None and done.scope_note.kind == "other_entity"
    assert done.answer.startswith("The selected documents are about ")
    assert "not Northwind Systems Inc. and Quarry Analytics LLC." in done.answer and done.sections == ()


def test_evaluate_counts_the_scope_note_an_example_expects(store: Store) -> None:
    noted = [e for e in EXAMPLES if e.expect_scope_note]
    assert {e.expect_scope_note for e in noted} == {"other_entity", "no_entity"}
    for example in noted:
        assert score_retrieval(store, resolve_example(example, store)).scores.scope_note == 1.0, example.question
        wrong = "no_entity" if example.expect_scope_note == "other_entity" else "other_entity"
        mislabelled = example.model_copy(update={"expect_scope_note": wrong})
        result = score_retrieval(store, resolve_example(mislabelled, store))
        assert result.scores.scope_note == 0.0 and result.failed


# -- documents the build skipped --------------------------------------------------------------------


def test_a_trace_naming_a_skipped_document_is_told_why_or_scored_without_it(store: Store) -> None:
    scan = "agreements/northwind-quarry-nda-signed.pdf"
    assert "corrupt or unreadable PDF" in store.catalog.skipped[scan]
    with pytest.raises(SkippedDocumentError, match=r"northwind-quarry-nda-signed\.pdf.*corrupt or unreadable PDF"):
        store.document_ids_for([scan])
    (gold_skipped,) = [e for e in EXAMPLES if scan in e.gold_documents]
    (result,) = evaluate([gold_skipped], store, mode="bm25")
    assert result.error is None and result.scores.recall_at_10 == 1.0
    assert result.notes == (f"{scan} left out: skipped when the index was built ({store.catalog.skipped[scan]})",)
    chip = make_example(corpus="contracts", case="chip", question="Who signed?", scope={"document_ids": [scan]})
    (failed,) = evaluate([chip], store, mode="bm25")
    assert failed.error is not None and "skipped when the index was built" in failed.error and scan in failed.error


# -- one derivation of a question's documents ---------------------------------------------------------


def test_a_questions_documents_are_derived_once_from_ask_to_the_citation_check(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    derive = scope_module.question_scope

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append("question_scope")
        return derive(*args, **kwargs)

    for module in (scope_module, planner_module):
        monkeypatch.setattr(module, "question_scope", counted)
    entity_scope = store.entity_scope
    looked_up: list[str] = []
    monkeypatch.setattr(store, "entity_scope", lambda e: looked_up.append(e) or entity_scope(e))
    done = _ask(store, "How long does the agreement remain in force?", resolve_scope(store, None, "quarry"))
    assert done.sections and calls == ["question_scope"] and len(looked_up) == 1
