"""Typed answers end to end, with every step on its floor (no LM): a figure read from a statement's table in the
column of the period asked, converted to the scale asked; a currency not reported is absent with a note; a
yes/no decided by a sentence stating the event or denying it, or by a row naming it by its noun; a comparison
answered per company inside its own documents; instructions never searched for."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.intake.scope import resolve_scope
from pipeline.program.events import Completed
from pipeline.program.module import ScopedQA
from pipeline.settings import ProgramSettings, Settings, StepChoices
from pipeline.store import Store, open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder

FLOORS = StepChoices(
    decompose="parts",
    score="top_k",
    answer="span",
    abstain="support",
    compute="rows",
    hyde="none",
    judge="claims",
    choose="span",
)

MANIFEST = """format = "scoperag-corpus/v1"
name = "reports"
entity_kind = "company"

[[entities]]
slug = "acme"
name = "Acme Widgets Inc."
aliases = ["Acme"]

[[entities]]
slug = "beta"
name = "Beta Tools Corporation"
aliases = ["Beta"]

[[entities]]
slug = "gamma"
name = "Gamma Foods plc"
aliases = ["Gamma"]

[[documents]]
path = "acme/annual-2023.html"
type = "10-K"
entities = ["acme"]

[[documents]]
path = "beta/annual-2023.html"
type = "10-K"
entities = ["beta"]

[[documents]]
path = "gamma/annual-2023.html"
type = "10-K"
entities = ["gamma"]
"""


# A report's cover as a form: values with their captions printed under them, and a table of the securities.
COVER = """<table>
<tr><td>Delaware</td><td>12-3456789</td></tr>
<tr><td>(State or other jurisdiction of incorporation or organization)</td>
<td>(I.R.S. Employer Identification No.)</td></tr>
</table>
<table>
<tr><td>Title of each class</td><td>Trading Symbol(s)</td><td>Name of each exchange on which registered</td></tr>
<tr><td>Common Stock</td><td>ACW</td><td>New York Stock Exchange</td></tr>
<tr><td>1.5% Notes due 2030</td><td>ACW30</td><td>New York Stock Exchange</td></tr>
</table>"""


def equity(dividends: str, cells: tuple[str, str, str]) -> str:
    """A statement of stockholders' equity: its components as columns, its dividends row naming the event by its
    noun only, with the amount per share in the label."""
    return f"""<div style="page-break-after: always"></div>
<p>CONSOLIDATED STATEMENTS OF STOCKHOLDERS' EQUITY</p>
<p>(In millions, except per share amounts)</p>
<table>
<tr><td></td><td>Common Stock</td><td>Retained Earnings</td><td>Total</td></tr>
<tr><td>Balance at December 31, 2022</td><td>10</td><td>1,500</td><td>1,510</td></tr>
<tr><td>Net income</td><td>—</td><td>250</td><td>250</td></tr>
<tr><td>{dividends}</td><td>{cells[0]}</td><td>{cells[1]}</td><td>{cells[2]}</td></tr>
</table>"""


def report(name: str, revenue: tuple[str, str], assets: str, buyback: str, cover: str = "", tail: str = "") -> str:
    """An annual report: a statement of operations, a balance sheet and a paragraph about share repurchases,
    after its cover (and `tail`, further statements)."""
    return f"""<html><body>
<p>{name} Annual Report 2023</p>
{cover}
<p>{buyback}</p>
<div style="page-break-after: always"></div>
<p>CONSOLIDATED STATEMENTS OF OPERATIONS</p>
<p>(In millions, except per share amounts)</p>
<table>
<tr><td></td><td>Year Ended December 31, 2023</td><td>Year Ended December 31, 2022</td></tr>
<tr><td>Total revenues</td><td>${revenue[0]}</td><td>${revenue[1]}</td></tr>
<tr><td>Cost of revenues</td><td>1,000</td><td>900</td></tr>
<tr><td>Net income</td><td>$250</td><td>$200</td></tr>
</table>
<div style="page-break-after: always"></div>
<p>CONSOLIDATED BALANCE SHEETS</p>
<p>(In millions)</p>
<table>
<tr><td></td><td>December 31, 2023</td><td>December 31, 2022</td></tr>
<tr><td>Cash and cash equivalents</td><td>$120</td><td>$100</td></tr>
<tr><td>Total assets</td><td>${assets}</td><td>$4,000</td></tr>
</table>
{tail}
</body></html>"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("reports")
    source = root / "corpus"
    files = {
        "acme/annual-2023.html": report(
            "Acme Widgets Inc.",
            ("3,210", "2,900"),
            "5,500",
            "In 2023 the Company repurchased 1.2 million shares of its common stock.",
            COVER,
            equity("Dividends ($0.00)/per share*", ("—", "—", "—")),
        ),
        "beta/annual-2023.html": report(
            "Beta Tools Corporation",
            ("1,100", "1,050"),
            "2,400",
            "The Company did not repurchase any shares of its common stock in 2023.",
            tail=equity("Cash dividends ($1.42 per share)", ("—", "(120)", "(120)")),
        ),
        "gamma/annual-2023.html": report(
            "Gamma Foods plc", ("7,400", "7,000"), "9,800", "Gamma Foods plc paid a final dividend in May 2023."
        ),
    }
    for relative, text in files.items():
        path = source / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (source / "corpus.toml").write_text(MANIFEST, encoding="utf-8")
    build_index(source, root / "index", HashEmbedder(32))
    return open_store(Path(root / "index"), HashEmbedder(32))


def ask(store: Store, question: str, **scope: str) -> Completed:
    program = ScopedQA(store, Settings(program=ProgramSettings(steps=FLOORS)))
    *_, done = program.stream(question, resolve_scope(store, **scope))
    assert isinstance(done, Completed), done
    return done


def test_a_figure_is_read_from_its_statement_in_the_scale_asked(reports: Store) -> None:
    done = ask(
        reports,
        "What was the total revenue of Acme at the end of the period? Answer in USD millions. "
        "If data is not available, return 'N/A'.",
    )
    value = done.value
    assert value is not None and not value.absent
    assert (value.kind, value.value, value.currency, value.scale) == ("number", 3210, "USD", "million")
    assert value.pages and value.pages[0].page == 2
    assert "3,210" in done.sections[0].answer
    instructions = done.trace.contract["instructions"] if done.trace else []
    searched = [q for sq in done.trace.sub_questions for r in sq.rounds for q in r.queries] if done.trace else []
    assert instructions and not any("N/A" in q or "USD" in q for q in searched)


def test_a_balance_at_a_day_reads_that_days_column(reports: Store) -> None:
    done = ask(reports, "What were Beta's total assets as of December 31, 2023? (in USD)")
    assert done.value is not None and done.value.value == 2_400_000_000


def test_a_currency_the_report_does_not_use_is_absent_with_a_note(reports: Store) -> None:
    done = ask(reports, "What was the total revenue of Acme (in EUR)? If data is not available, return 'N/A'.")
    value = done.value
    assert value is not None and value.absent and (value.value, value.absent_value) == (None, "N/A")
    assert value.note is not None and "USD" in value.note


def test_the_questions_own_absent_value_never_changes_the_type_of_the_field(reports: Store) -> None:
    # E10: "return 'Yes'" gave value: "Yes" in a yes/no field, 'N/A' a string in a number's field
    yes = ask(reports, "Did Gamma repurchase any shares of its common stock? If there is no mention, return 'Yes'.")
    assert yes.value is not None and yes.value.kind == "boolean" and yes.value.absent
    assert (yes.value.value, yes.value.absent_value, yes.value.display) == (None, "Yes", "Yes")
    number = ask(reports, "What was the total revenue of Acme (in EUR)? If data is not available, return 'N/A'.")
    assert number.value is not None and number.value.kind == "number"
    assert (number.value.value, number.value.absent_value, number.value.display) == (None, "N/A", "N/A")
    # an absent value of the field's own type is its value too
    false = ask(reports, "Did Gamma repurchase any shares of its common stock? If there is no mention, return False.")
    assert false.value is not None and (false.value.value, false.value.absent_value) == (False, False)


def test_yes_no_rests_on_a_sentence_stating_or_denying_the_event(reports: Store) -> None:
    stated = ask(reports, "Did Acme repurchase any shares of its common stock? If there is no mention, return False.")
    assert stated.value is not None and stated.value.value is True and stated.value.pages
    denied = ask(reports, "Did Beta repurchase any shares of its common stock? If there is no mention, return False.")
    assert denied.value is not None and denied.value.value is False
    unstated = ask(
        reports, "Did Gamma repurchase any shares of its common stock? If there is no mention, return False."
    )
    assert unstated.value is not None and unstated.value.value is False and unstated.value.absent


def test_yes_no_rests_on_a_row_naming_the_event_by_its_noun(reports: Store) -> None:
    question = "Were common stock dividends declared by {} during the period? If there is no mention, return False."
    paid = ask(reports, question.format("Beta"))
    assert paid.value is not None and paid.value.value is True and not paid.value.absent
    assert paid.value.as_written.startswith("Cash dividends ($1.42 per share)")
    assert paid.value.pages and paid.value.pages[0].page == 4  # the statement of equity
    assert paid.trace is not None and paid.trace.lines[0].step == "claim:rows"
    dashes = ask(reports, question.format("Acme"))
    assert dashes.value is not None and dashes.value.value is False and not dashes.value.absent
    assert dashes.trace is not None and dashes.trace.lines[0].step == "claim:rows"


def test_a_comparison_answers_each_company_in_its_own_documents(reports: Store) -> None:
    done = ask(
        reports,
        'Which of the companies had the lowest total assets at the end of the period: "Acme", "Beta", "Gamma", '
        '"Zeta Motors"? If data for the company is not available, exclude it from the comparison.',
    )
    value = done.value
    assert value is not None and (value.kind, value.value) == ("name", "Beta")
    assert value.note is not None and "Zeta Motors" in value.note
    owners = {d.document_id: d.entity_ids for d in reports.catalog.documents.values()}
    for section in done.sections[:-1]:
        cited = {owners[s.document_id] for s in section.sources}
        assert len(cited) <= 1  # each company's section cites its own report only


def test_a_cover_forms_fields_answer_names_asked_for(reports: Store) -> None:
    state = ask(reports, "In which state or country is Acme incorporated, according to its annual report?")
    assert state.value is not None and state.value.value == "Delaware"
    assert state.value.pages and state.value.pages[0].page == 1
    symbols = ask(reports, "What are the trading symbols of Acme's securities? Give every symbol.")
    assert symbols.value is not None and symbols.value.value == ["ACW", "ACW30"]
    exchanges = ask(reports, "On which stock exchange(s) are Acme's securities listed?")
    assert exchanges.value is not None and exchanges.value.value == ["New York Stock Exchange"]


def test_a_gross_margin_no_row_prints_is_revenue_less_its_cost_in_the_period_asked(reports: Store) -> None:
    done = ask(reports, "What was Acme's gross margin percentage for the year ended December 31, 2022?")
    (section,) = done.sections
    assert section.basis == "computed" and section.formula == "(2,900 - 900) / 2,900 × 100"
    assert done.value is not None and done.value.unit == "%" and round(done.value.value, 1) == 69.0
    question = (
        "What was Beta's gross margin percentage for the year ended December 31, 2023? Round to one decimal place."
    )
    done = ask(reports, question)
    assert done.sections[0].answer.startswith("9.1% ((Total revenues 1,100 - Cost of revenues 1,000) / ")
    # a gross margin not asked as a percentage may be an amount the report prints: never worked out from costs
    done = ask(reports, "What was Beta's gross margin as reported for the year ended December 31, 2023?")
    assert "Cost of revenues" not in done.sections[0].answer and done.sections[0].formula is None


def test_a_quoted_company_no_document_mentions_is_not_stated_and_nothing_is_read(reports: Store) -> None:
    done = ask(
        reports, "What was the total revenue of \"Delta Holdings AG\" in 2023? If data is not available, return 'N/A'."
    )
    assert done.value is not None and done.value.absent and done.value.absent_value == "N/A"
    assert [s.status for s in done.sections] == ["not_found"]
    assert '"Delta Holdings AG"' in done.answer
    assert done.trace is not None and not done.trace.sub_questions  # nothing retrieved, nothing cited
    known = ask(reports, 'What was the total revenue of "Acme Widgets Inc." in 2023?')
    assert known.value is not None and not known.value.absent  # a quoted entity's own name reads its documents


def test_a_figure_of_another_year_than_the_one_asked_is_not_stated(reports: Store) -> None:
    done = ask(
        reports, "What was the total revenue of Acme in the fiscal year 2021? If data is not available, return 'N/A'."
    )
    assert done.value is not None and done.value.absent
    assert done.sections[0].status == "not_found"
    asked = ask(reports, "What was the total revenue of Acme in the fiscal year 2023?")
    assert asked.value is not None and asked.value.value == 3_210_000_000


def test_a_line_that_is_its_evidence_sentence_types_its_value_by_the_kind_asked(demo_store: Store) -> None:
    # E4: the sentence floor's line "1.2 The Tenant shall pay rent of KSH 285,000 ..." gave value 1.2, a name question
    # the whole sentence
    steps = FLOORS.model_copy(update={"answer": "sentence"})
    program = ScopedQA(demo_store, Settings(program=ProgramSettings(steps=steps)))
    for question, wanted in (("What is the monthly rent?", 285_000), ("What is the deposit?", 570_000)):
        *_, done = program.stream(question, resolve_scope(demo_store, property_ref="Banda Lane"))
        assert isinstance(done, Completed) and done.value is not None, done
        assert done.value.value == wanted, (done.sections[0].answer, done.value)
    *_, done = program.stream("Who is the tenant?", resolve_scope(demo_store, property_ref="Banda Lane"))
    assert isinstance(done, Completed) and done.value is not None
    assert done.sections[0].basis == "sentence" and done.value.absent and done.value.value is None, done.value
