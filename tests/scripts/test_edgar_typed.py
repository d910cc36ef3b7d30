"""The EDGAR typed set (scripts/make_edgar_typed.py): each kind's expected value from hand-written inline XBRL
filings, the builder deterministic, every example valid; and the committed set split by company."""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from pipeline.evaluation.examples import SPLITS, LabelledExample, load_example_set
from pipeline.text import normalise
from tests.support.paths import ROOT
from tests.support.scripts import load_script

typed = load_script("make_edgar_typed")
edgar = load_script("make_edgar_traces")
questions_module = load_script("edgar_typed_questions")
COMMITTED = ROOT / "datasets" / "edgar" / "typed"

_CONTEXTS = {
    "fy": "<xbrli:startDate>2023-01-01</xbrli:startDate><xbrli:endDate>2023-12-31</xbrli:endDate>",
    "py": "<xbrli:startDate>2022-01-01</xbrli:startDate><xbrli:endDate>2022-12-31</xbrli:endDate>",
    "end": "<xbrli:instant>2023-12-31</xbrli:instant>",
}


def _fact(concept: str, context: str, shown: str, *, sign: str = "", fmt: str = "") -> str:
    extra = (f' sign="{sign}"' if sign else "") + (f' format="{fmt}"' if fmt else "")
    return (
        f'<ix:nonFraction name="{concept}" contextRef="{context}" unitRef="usd" scale="6"{extra}>{shown}'
        "</ix:nonFraction>"
    )


def _cover(name: str, value: str, fmt: str = "") -> str:
    extra = f' format="{fmt}"' if fmt else ""
    return f'<ix:nonNumeric name="{name}" contextRef="fy"{extra}>{value}</ix:nonNumeric>'


BREAK = '<hr style="page-break-after:always"/>'
STATE = ("dei:EntityIncorporationStateCountryCode", "Delaware", "ixt-sec:stateprovnameen")
EXCHANGE = ("dei:SecurityExchangeName", "New York Stock Exchange", "ixt-sec:exchnameen")
REPURCHASES = "us-gaap:PaymentsForRepurchaseOfCommonStock"


def _line(label: str, concept: str, context: str, shown: str, **kwargs: str) -> str:
    return f"<p>{label} {_fact(concept, context, shown, **kwargs)}</p>"


def filing_html(registrant: str, ticker: str, figures: dict[str, Any], extra_text: str = "") -> str:
    """A 10-K of six printed pages: cover, business, income statement, balance sheet, cash flows, audit report.
    `figures`: revenue, operating income, net income, assets, cash, investing cash flow (negative), R&D (None:
    not reported), repurchases ("—": printed as zero; None: not reported), prior-year repurchases, dividends."""
    contexts = "".join(
        f'<xbrli:context id="{cid}"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier></xbrli:entity>'
        f"<xbrli:period>{period}</xbrli:period></xbrli:context>"
        for cid, period in _CONTEXTS.items()
    )
    header = (
        '<div style="display:none"><ix:header><ix:hidden>'
        + _cover("dei:DocumentFiscalYearFocus", "2023")
        + _cover("dei:DocumentFiscalPeriodFocus", "FY")
        + f'</ix:hidden><ix:resources>{contexts}<xbrli:unit id="usd"><xbrli:measure>iso4217:USD</xbrli:measure>'
        "</xbrli:unit></ix:resources></ix:header></div>"
    )
    cover = (
        f"<p>FORM {_cover('dei:DocumentType', '10-K')}</p>"
        f"<p>{_cover('dei:EntityRegistrantName', registrant)}</p>"
        f"<p>State of incorporation: {_cover(*STATE)}</p>"
        "<table><tr><td>Title of each class</td><td>Trading Symbol</td><td>Exchange</td></tr>"
        f"<tr><td>Common Stock</td><td>{_cover('dei:TradingSymbol', ticker)}</td><td>{_cover(*EXCHANGE)}</td></tr>"
        "</table>"
    )
    business = f"<p>Business overview. {extra_text}</p>"
    income = [
        _line("Net revenues", "us-gaap:Revenues", "fy", figures["revenue"]),
        _line("Operating income", "us-gaap:OperatingIncomeLoss", "fy", figures["operating"]),
        _line("Net income", "us-gaap:NetIncomeLoss", "fy", figures["net"]),
    ]
    if figures.get("rd"):
        income.append(_line("Research and development", "us-gaap:ResearchAndDevelopmentExpense", "fy", figures["rd"]))
    balance = [
        _line("Cash and cash equivalents", "us-gaap:CashAndCashEquivalentsAtCarryingValue", "end", figures["cash"]),
        _line("Total assets", "us-gaap:Assets", "end", figures["assets"]),
    ]
    investing = "us-gaap:NetCashProvidedByUsedInInvestingActivities"
    flows = [_line("Net cash used in investing activities", investing, "fy", figures["investing"], sign="-")]
    repurchases = figures.get("repurchases")
    if repurchases == "—":
        flows.append(_line("Purchases of stock", REPURCHASES, "fy", "—", fmt="ixt:fixed-zero"))
    elif repurchases:
        flows.append(_line("Purchases of stock", REPURCHASES, "fy", repurchases))
    if figures.get("prior_repurchases"):
        flows.append(_line("Purchases of stock, 2022", REPURCHASES, "py", figures["prior_repurchases"]))
    if figures.get("dividends"):
        flows.append(_line("Dividends", "us-gaap:PaymentsOfDividends", "fy", figures["dividends"]))
    audit = f"<p>/s/ {_cover('dei:AuditorName', 'Ernst &amp; Young LLP')}</p><p>Our auditor since 1990.</p>"
    pages = [cover, business, "".join(income), "".join(balance), "".join(flows), audit]
    return f"<html><body>{header}{BREAK.join(pages)}</body></html>"


COMPANIES: dict[str, tuple[str, dict[str, Any], str]] = {
    "KO": (
        "The Coca-Cola Company",
        {
            "revenue": "45,754",
            "operating": "11,311",
            "net": "10,714",
            "assets": "97,703",
            "cash": "9,366",
            "investing": "3,349",
            "rd": "120",
            "repurchases": "2,289",
            "dividends": "7,952",
        },
        "Advertising expenses were significant.",
    ),
    "PEP": (
        "PepsiCo, Inc.",
        {
            "revenue": "91,471",
            "operating": "11,986",
            "net": "9,074",
            "assets": "100,495",
            "cash": "9,711",
            "investing": "7,000",
            "rd": "813",
            "repurchases": "—",
        },
        "",
    ),
    "V": (
        "Visa Inc.",
        {
            "revenue": "32,653",
            "operating": "21,000",
            "net": "17,273",
            "assets": "90,499",
            "cash": "16,286",
            "investing": "1,200",
            "rd": "900",
        },
        "",
    ),
    "MA": (
        "Mastercard Incorporated",
        {
            "revenue": "25,098",
            "operating": "14,000",
            "net": "11,195",
            "assets": "42,448",
            "cash": "8,588",
            "investing": "1,400",
            "rd": "700",
            "prior_repurchases": "8,753",
        },
        "",
    ),
    "AXP": (
        "American Express Company",
        {
            "revenue": "60,515",
            "operating": "10,500",
            "net": "8,374",
            "assets": "261,108",
            "cash": "46,596",
            "investing": "22,000",
            "repurchases": "3,300",
            "dividends": "1,723",
        },
        "",
    ),
}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    folder = tmp_path_factory.mktemp("edgar") / "edgar-filings"
    for ticker, (name, figures, text) in COMPANIES.items():
        path = folder / "10-K" / ticker / f"0000-{ticker}" / "primary-document.html"
        path.parent.mkdir(parents=True)
        path.write_text(filing_html(name, ticker, figures, text), encoding="utf-8")
    return folder, edgar.read_filings(folder)


def _filing(filings: list[Any], ticker: str) -> Any:
    return next(f for f in filings if f.company.ticker == ticker)


def test_a_figure_is_asked_with_its_value_in_units_signed_as_reported_and_its_pages(small: tuple) -> None:
    _, filings = small
    ko = _filing(filings, "KO")
    questions = typed.number_questions(ko)
    assert len(questions) >= 4 and all("Coca-Cola" in q.question for q in questions)
    for q in questions:
        if q.family == "operating_margin" or q.family == "net_margin":
            numerator = {"operating_margin": 11311, "net_margin": 10714}[q.family]
            assert q.expected.value == pytest.approx(numerator / 45754 * 100) and q.expected.unit == "%"
            assert {p.page for p in q.gold_pages} == {3}
            continue
        facts = [f for f in ko.source.facts if Decimal(f.value) == Decimal(str(q.expected.value))]
        assert facts, q
        assert {p.page for p in q.gold_pages} == {f.page for f in facts}
        assert q.expected.currency == "USD" and q.answer_facts
        if "USD millions" in q.question:
            assert q.expected.scale == "million"
    assert any(q.family in ("operating_margin", "net_margin") for q in questions)


def test_yes_no_is_true_on_a_positive_figure_false_on_a_zero_or_on_nothing_and_unsettled_otherwise(
    small: tuple,
) -> None:
    _, filings = small

    def answer(ticker: str, name: str) -> tuple[Any, ...] | None:
        found = [q for q in typed.boolean_questions(_filing(filings, ticker)) if q.family == name]
        return (
            (found[0].expected.value, found[0].expected.absent, [p.page for p in found[0].gold_pages])
            if found
            else None
        )

    assert answer("KO", "share_repurchases") == (True, False, [5])
    assert answer("PEP", "share_repurchases") == (False, False, [5])  # printed as a dash: evidence of none
    assert answer("V", "share_repurchases") == (False, True, [])  # never reported: the absent value
    assert answer("MA", "share_repurchases") is None  # a prior year's buyback only: not settled either way
    assert answer("KO", "dividends") == (True, False, [5]) and answer("PEP", "dividends") == (False, True, [])
    both = typed.balanced([q for f in filings for q in typed.boolean_questions(f)])
    assert Counter(q.expected.value for q in both)[True] == Counter(q.expected.value for q in both)[False] > 0


def test_cover_names_come_from_the_dei_facts_on_the_pages_that_print_them(small: tuple) -> None:
    folder, filings = small
    questions = {q.family: q for q in typed.name_questions(_filing(filings, "KO"), folder)}
    assert set(questions) == {"exchanges", "tickers", "incorporation", "auditor"}
    exchanges = questions["exchanges"].expected
    assert exchanges.kind == "names" and exchanges.value == ["New York Stock Exchange"]
    assert "NYSE" in exchanges.aliases["New York Stock Exchange"]
    assert questions["tickers"].expected.value == ["KO"]
    incorporation = questions["incorporation"].expected
    assert (incorporation.value, incorporation.aliases["Delaware"]) == ("Delaware", ("DE",))
    assert questions["auditor"].expected.value == "Ernst & Young LLP"
    assert [p.page for p in questions["auditor"].gold_pages] == [6]
    assert all([p.page for p in questions[n].gold_pages] == [1] for n in ("exchanges", "tickers", "incorporation"))


def test_an_absent_figure_is_neither_reported_nor_mentioned_and_a_currency_is_one_not_used(small: tuple) -> None:
    _, filings = small
    for filing in filings:
        own = [filing]
        for q in typed.absent_questions(filing, own):
            assert q.expected.absent and q.expected.value == "N/A" and not q.stated
            if "absent:topic" in q.tags:
                topic = next(t for t in questions_module.CONFIG["absent"] if t["name"] == q.family)
                text = normalise(" ".join(filing.source.pages))
                assert not any(re.search(m, text) for m in topic["markers"]), q.question
                assert not {f.concept for f in filing.source.facts} & set(topic["concepts"])
                assert not (filing.company.ticker == "KO" and q.family == "advertising")  # KO mentions it
            else:
                assert q.expected.currency in q.question and q.expected.currency != "USD"


def test_comparisons_name_the_winner_and_leave_out_or_name_what_they_must(small: tuple) -> None:
    _, filings = small
    questions = typed.comparison_questions(filings, "dev")
    assert questions
    variants = Counter(next(t for t in q.tags if t.startswith("variant:")) for q in questions)
    assert {"variant:plain", "variant:unknown", "variant:excluded"} <= set(variants)
    for q in questions:
        expected = q.expected
        compared = [e for e in expected.entities if e.status == "compared"]
        values = [e.value for e in compared]
        best = min(values) if expected.compare == "lowest" else max(values)
        assert expected.value == next(e.name for e in compared if e.value == best)
        assert 3 <= len(expected.entities) <= 5 and all(f'"{e.quoted}"' in q.question for e in expected.entities)
        for e in expected.entities:
            if e.status == "excluded":
                assert e.entity == "axp" and q.family == "research_development"  # AXP neither reports nor mentions R&D
        assert {p.document for p in q.gold_pages} == {e.document for e in compared}


def test_the_scope_cases_of_a_question_and_of_a_comparison(small: tuple) -> None:
    folder, filings = small
    examples, by_split = typed.typed_examples(filings, folder)
    assert by_split["dev"] and not by_split["train"] and not by_split["test"]
    cases: dict[str, Counter[str]] = {}
    for e in examples:
        kind = next(t for t in e.tags if t.startswith("kind:"))
        cases.setdefault(kind, Counter())[e.case] += 1
    assert set(cases) == {f"kind:{k}" for k in typed.KIND_ORDER}
    assert cases["kind:comparison"]["property"] == 0 and cases["kind:comparison"]["chip"] > 0
    assert cases["kind:number"]["property"] == cases["kind:number"]["chip"] == cases["kind:number"]["no_scope"]
    for e in examples:
        assert e.expected_value is not None
        if e.case == "wrong_property":
            assert e.expect_not_found and e.expected_value.absent and not e.gold_documents
        if e.expect_not_found:
            assert not e.answer_facts and not e.gold_pages


def test_the_builder_is_deterministic_and_every_example_is_valid(small: tuple) -> None:
    folder, filings = small
    first, _ = typed.typed_examples(filings, folder)
    second, _ = typed.typed_examples(filings, folder)
    assert [e.model_dump_json() for e in first] == [e.model_dump_json() for e in second]
    assert len({e.id for e in first}) == len(first)
    for e in first:
        assert LabelledExample.model_validate_json(e.model_dump_json(exclude_defaults=True)) == e


def test_the_absent_value_is_read_from_the_question() -> None:
    assert typed.absent_value("What was X? If data is not available, return 'N/A'.") == "N/A"
    assert typed.absent_value("Did X buy back stock? If there is no mention, return False.") is False
    assert typed.absent_value("Which firm audited X?") is None


# ---- the committed set ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def committed() -> list[LabelledExample]:
    return load_example_set(COMMITTED)


def _companies(example: LabelledExample) -> set[str]:
    """The companies an example asks about (a wrong-entity example's scope is another's)."""
    expected = example.expected_value
    if expected is not None and expected.entities:
        return {e.entity.upper() for e in expected.entities if e.entity}
    return {t.removeprefix("company:") for t in example.tags if t.startswith("company:")}


def test_the_committed_set_is_valid_and_its_test_split_holds_enough_answerable_questions(
    committed: list[LabelledExample],
) -> None:
    assert all(e.corpus == "edgar" and e.split and e.expected_value is not None for e in committed)
    questions = [e for e in committed if e.case == "no_scope"]  # one per question
    answerable = [
        e
        for e in questions
        if e.split == "test" and not e.expected_value.absent and e.expected_value.value is not False  # type: ignore[union-attr]
    ]
    assert len(answerable) >= 150
    for split in SPLITS:
        kinds = {t for e in questions if e.split == split for t in e.tags if t.startswith("kind:")}
        assert kinds == {f"kind:{k}" for k in typed.KIND_ORDER}, split
        answers = Counter(e.expected_value.value for e in questions if e.split == split and "kind:boolean" in e.tags)  # type: ignore[union-attr]
        assert answers[True] == answers[False] > 0


def test_an_exchange_dei_names_nasdaq_is_right_as_the_cover_prints_it(committed: list[LabelledExample]) -> None:
    # MARA's and RIOT's covers print "The Nasdaq Capital Market" where their dei:SecurityExchangeName says NASDAQ
    from pipeline.evaluation.value_metrics import value_correct
    from pipeline.values.typed import TypedValue

    assert "The Nasdaq Capital Market" in questions_module.name_aliases("Nasdaq")
    nasdaq = [e for e in committed if e.expected_value is not None and e.expected_value.value == ["Nasdaq"]]
    assert {c for e in nasdaq for c in _companies(e)} == {"MARA", "RIOT"}
    for example in nasdaq:
        for printed in ("The Nasdaq Capital Market", "Nasdaq Capital Market", "Nasdaq"):
            assert value_correct(example.expected_value, TypedValue(kind="names", value=[printed])) == 1.0  # type: ignore[arg-type]
        assert value_correct(example.expected_value, TypedValue(kind="names", value=["NYSE"])) == 0.0  # type: ignore[arg-type]


def test_no_company_is_in_two_splits_and_a_comparison_stays_in_its_own(committed: list[LabelledExample]) -> None:
    seen: dict[str, set[str]] = {s: set() for s in SPLITS}
    splits = edgar.split_of_groups()
    for e in committed:
        if e.case == "wrong_property":
            continue
        companies = {c for c in _companies(e) if c in edgar.COMPANIES}
        assert companies, e.id
        assert all(splits[edgar.GROUP_OF[c]] == e.split for c in companies), e.id
        seen[e.split or ""] |= companies
    assert not seen["train"] & seen["test"] and not seen["train"] & seen["dev"] and not seen["dev"] & seen["test"]


def test_the_committed_card_counts_what_the_files_hold(committed: list[LabelledExample]) -> None:
    card = (COMMITTED / "README.md").read_text(encoding="utf-8")
    total = Counter(e.split for e in committed)
    assert f"| all | {total['train']} | {total['dev']} | {total['test']} | {len(committed)} |" in card
