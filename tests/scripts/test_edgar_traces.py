"""EDGAR traces from the filings' own inline XBRL: questions, gold facts and pages, the four cases, the split
by company; on two small hand-written filings and on the committed trace set."""

from __future__ import annotations

import tomllib
from collections import Counter
from pathlib import Path

import pytest

from pipeline.evaluation.examples import CASES, load_example_set
from pipeline.store.corpus import load_manifest
from pipeline.store.xbrl import PageFact
from tests.support.paths import ROOT
from tests.support.scripts import load_script

edgar = load_script("make_edgar_traces")
COMMITTED = ROOT / "datasets" / "edgar" / "traces"


def _filing(registrant: str, revenue: str, assets: str) -> str:
    contexts = (
        '<xbrli:context id="fy"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier></xbrli:entity>'
        "<xbrli:period><xbrli:startDate>2023-01-01</xbrli:startDate><xbrli:endDate>2023-12-31</xbrli:endDate>"
        "</xbrli:period></xbrli:context>"
        '<xbrli:context id="end"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier></xbrli:entity>'
        "<xbrli:period><xbrli:instant>2023-12-31</xbrli:instant></xbrli:period></xbrli:context>"
        '<xbrli:context id="py"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier></xbrli:entity>'
        "<xbrli:period><xbrli:startDate>2022-01-01</xbrli:startDate><xbrli:endDate>2022-12-31</xbrli:endDate>"
        "</xbrli:period></xbrli:context>"
        '<xbrli:unit id="usd"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit>'
    )
    header = (
        '<div style="display:none"><ix:header><ix:hidden>'
        '<ix:nonNumeric name="dei:DocumentFiscalYearFocus" contextRef="fy">2023</ix:nonNumeric>'
        '<ix:nonNumeric name="dei:DocumentFiscalPeriodFocus" contextRef="fy">FY</ix:nonNumeric>'
        f"</ix:hidden><ix:resources>{contexts}</ix:resources></ix:header></div>"
    )
    cover = (
        '<p>FORM <ix:nonNumeric name="dei:DocumentType" contextRef="fy">10-K</ix:nonNumeric></p>'
        f'<p><ix:nonNumeric name="dei:EntityRegistrantName" contextRef="fy">{registrant}</ix:nonNumeric></p>'
    )

    def fact(name: str, context: str, shown: str) -> str:
        return f'<ix:nonFraction name="{name}" contextRef="{context}" unitRef="usd" scale="6">{shown}</ix:nonFraction>'

    statement = (
        "<table><tr><td></td><td>2023</td><td>2022</td></tr>"
        f"<tr><td>Net operating revenues</td><td>{fact('us-gaap:Revenues', 'fy', revenue)}</td>"
        f"<td>{fact('us-gaap:Revenues', 'py', '43,004')}</td></tr></table>"
    )
    balance = f"<p>Total assets {fact('us-gaap:Assets', 'end', assets)}</p>"
    pages = [cover, "<p>Business overview.</p>", statement, balance]
    body = '<hr style="page-break-after:always"/>'.join(pages)
    return f"<html><body>{header}{body}</body></html>"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[list, list, list]:
    folder = tmp_path_factory.mktemp("edgar") / "edgar-filings"
    for ticker, name, revenue, assets in (
        ("KO", "COCA COLA CO", "45,754", "97,703"),
        ("PEP", "PepsiCo, Inc.", "91,471", "100,495"),
    ):
        path = folder / "10-K" / ticker / f"0000-{ticker}" / "primary-document.html"
        path.parent.mkdir(parents=True)
        path.write_text(_filing(name, revenue, assets), encoding="utf-8")
    filings = edgar.read_filings(folder)
    examples, questions = edgar.edgar_examples(filings)
    return filings, examples, questions


def test_each_fact_of_the_filings_own_period_becomes_a_question_with_its_gold_page(small: tuple) -> None:
    _, examples, questions = small
    ko = {q.family.name: q for q in questions if q.filing.company.ticker == "KO"}
    assert set(ko) == {"revenue", "total_assets"}  # the prior year's revenue is not asked about
    revenue = ko["revenue"]
    assert (revenue.fact.value, revenue.pages, revenue.answer, revenue.period_kind) == (
        "45754000000",
        (3,),
        "$45,754 million",
        "year",
    )
    assert "Coca-Cola" in revenue.question and ("2023" in revenue.question or "December 31, 2023" in revenue.question)
    chip = next(e for e in examples if e.case == "chip" and e.question == revenue.question)
    assert chip.gold_documents == ("10-K/KO/0000-KO/primary-document.html",)
    assert [(p.document, p.page) for p in chip.gold_pages] == [("10-K/KO/0000-KO/primary-document.html", 3)]
    assert chip.answer_facts == ("$45,754 million",)


def test_five_examples_per_fact_in_the_four_cases_with_a_close_company_as_the_wrong_entity(small: tuple) -> None:
    _, examples, questions = small
    assert len(examples) == 5 * len(questions)
    assert Counter(e.case for e in examples) == {
        "chip": len(questions),
        "property": len(questions),
        "no_scope": len(questions),
        "wrong_property": 2 * len(questions),
    }
    ko_question = next(q.question for q in questions if q.filing.company.ticker == "KO")
    wrong = [e for e in examples if e.question == ko_question and e.case == "wrong_property"]
    assert {e.scope.property for e in wrong} == {"pep", None}
    assert all(e.expect_not_found and "other:PEP" in e.tags for e in wrong)
    no_scope = next(e for e in examples if e.question == ko_question and e.case == "no_scope")
    assert no_scope.forbidden_documents == ("10-K/PEP/0000-PEP/primary-document.html",)


def test_the_manifest_names_every_company_and_owns_each_filing(small: tuple, tmp_path: Path) -> None:
    filings, _, _ = small
    (tmp_path / "corpus.toml").write_text(edgar.manifest(filings), encoding="utf-8")
    manifest = load_manifest(tmp_path / "corpus.toml")
    assert {e.slug: e.name for e in manifest.entities} == {"ko": "The Coca-Cola Company", "pep": "PepsiCo, Inc."}
    spec = manifest.metadata_for("10-K/KO/0000-KO/primary-document.html")
    assert spec is not None and spec.entities == ["ko"]
    assert manifest.exclude == ["*.json", "LICENSE"]


@pytest.mark.parametrize(
    ("kind", "start", "end", "expected"),
    [
        ("year", "2023-01-01", "2023-12-31", "for fiscal 2023"),
        ("quarter", "2023-04-02", "2023-07-01", "in the third quarter of fiscal 2023"),
        ("ytd", "2022-09-25", "2023-07-01", "for the nine months ended July 1, 2023"),
        ("instant", None, "2023-07-01", "as of July 1, 2023"),
    ],
)
def test_period_phrases_name_the_period_as_filings_do(kind: str, start: str | None, end: str, expected: str) -> None:
    attributes = {"period_end": end, "fiscal_year": "FY2023", "fiscal_period": "2023 Q3", "form": "10-Q"}
    fact = PageFact(1, "us-gaap:Revenues", "1", "1", 0, "USD", start, end)
    assert expected in [trailing for trailing, _ in edgar.period_phrases(kind, attributes, fact)]


def test_answer_facts_carry_scale_and_unit() -> None:
    def fact(shown: str, scale: int, unit: str) -> PageFact:
        return PageFact(1, "c", "0", shown, scale, unit, None, "2023-12-31")

    assert edgar.answer_fact(fact("2.47", 0, "USD/shares")) == "$2.47 per share"
    assert edgar.answer_fact(fact("15,634,232", 3, "shares")) == "15,634,232 thousand shares"
    assert edgar.answer_fact(fact("—", 6, "USD")) is None
    assert edgar.possessive("General Dynamics") == "General Dynamics'" and edgar.possessive("Apple") == "Apple's"


def test_every_company_is_in_one_group_and_groups_are_whole_in_one_split() -> None:
    raw = tomllib.loads((ROOT / "scripts" / "edgar_companies.toml").read_text(encoding="utf-8"))
    tickers = [c["ticker"] for g in raw["groups"] for c in g["companies"]]
    assert len(tickers) == len(set(tickers)) == 65
    splits = edgar.split_of_groups()
    assert set(splits.values()) == {"train", "dev", "test"} and set(splits) == {g["name"] for g in raw["groups"]}


# ---- the committed trace set ------------------------------------------------------------------


def _company(example: object) -> str:
    documents = [*example.gold_documents, *example.scope.document_ids]  # type: ignore[attr-defined]
    return example.scope.property.upper() if not documents else documents[0].split("/")[1]  # type: ignore[attr-defined]


def test_the_committed_traces_hold_over_a_thousand_examples_in_four_cases() -> None:
    examples = load_example_set(COMMITTED)
    assert len(examples) >= 1000
    assert {e.case for e in examples} == set(CASES)
    assert all(e.corpus == "edgar" and e.split is not None for e in examples)
    assert all(e.answer_facts and e.gold_pages for e in examples if not e.expect_not_found)


def test_test_companies_are_never_seen_in_training() -> None:
    examples = load_example_set(COMMITTED)
    companies = {
        split: {_company(e) for e in examples if e.split == split and e.case != "wrong_property"}
        for split in ("train", "dev", "test")
    }
    assert all(companies.values())
    assert not companies["train"] & companies["test"] and not companies["train"] & companies["dev"]
    assert not companies["dev"] & companies["test"]
    # A wrong-entity scope is a close company's, of the same split.
    splits = edgar.split_of_groups()
    for e in examples:
        if e.case == "wrong_property":
            other = next(t.removeprefix("other:") for t in e.tags if t.startswith("other:"))
            assert splits[edgar.GROUP_OF[other]] == e.split


def test_the_close_pairs_of_the_issue_are_asked_about_each_other() -> None:
    asked = {
        (_company(e) if e.scope.document_ids else "", t.removeprefix("other:"))
        for e in load_example_set(COMMITTED)
        if e.case == "wrong_property"
        for t in e.tags
        if t.startswith("other:")
    }
    others = {other for _, other in asked}
    assert {"KO", "PEP", "INTC", "AMD"} <= others and {"V", "MA"} & others
