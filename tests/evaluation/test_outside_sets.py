"""The labelled sets made from outside data (datasets/cuad, datasets/erc-round1): valid, split by contract
before any answering change, and asking what the issue of outside data asks for."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pipeline.evaluation.examples import load_example_set

ROOT = Path(__file__).resolve().parents[2]
CUAD = ROOT / "datasets" / "cuad" / "traces"
ERC = ROOT / "datasets" / "erc-round1" / "traces"
REQUIRED = {
    "anti-assignment",
    "cap-on-liability",
    "agreement-date",
    "effective-date",
    "expiration-date",
    "renewal-term",
    "governing-law",
    "parties",
    "non-compete",
    "exclusivity",
    "audit-rights",
    "license-grant",
}


def _tag(example, prefix: str) -> str:  # type: ignore[no-untyped-def]
    return next(t.split(":", 1)[1] for t in example.tags if t.startswith(prefix + ":"))


def test_cuad_splits_by_contract_and_asks_every_required_category_both_ways() -> None:
    dev, test = load_example_set(CUAD, split="dev"), load_example_set(CUAD, split="test")
    assert len(dev) > 300 and len(test) > 300

    def contracts(examples):  # type: ignore[no-untyped-def]
        return {
            d
            for e in examples
            for d in (*e.scope.document_ids, *e.gold_documents, *e.forbidden_documents)
            if e.case != "wrong_property"
        }

    assert not contracts(dev) & contracts(test)
    for examples in (dev, test):
        answerable = Counter(_tag(e, "category") for e in examples if not e.expect_not_found)
        absent = Counter(_tag(e, "category") for e in examples if e.expect_not_found and e.case != "wrong_property")
        assert {c for c, n in answerable.items() if n >= 5} >= REQUIRED
        assert REQUIRED - {"parties", "agreement-date"} <= set(absent)
        assert {e.case for e in examples} == {"chip", "property", "no_scope", "wrong_property"}


def test_every_answerable_cuad_example_rests_on_spans_and_values_are_facts_of_them() -> None:
    for example in load_example_set(CUAD):
        if example.expect_not_found:
            assert not example.answer_spans and not example.gold_documents
            continue
        assert example.answer_spans and example.gold_documents
        assert all(fact for fact in example.answer_facts)


def test_erc_holds_all_forty_questions_typed_with_the_accepted_answers() -> None:
    examples = load_example_set(ERC, split="dev")
    answers = json.loads((ROOT.parent / "shared" / "data" / "erc-round1" / "answers.json").read_text())
    assert len(examples) == 40
    assert all(e.expected_value is not None for e in examples)
    by_question = {e.question: e for e in examples}
    for item in answers:
        expected = by_question[item["question"]].expected_value
        assert expected is not None
        assert 1 + len(expected.also) == len(item["answer"])
        only_na = all(a == "N/A" for a in item["answer"])
        assert by_question[item["question"]].expect_not_found == only_na
