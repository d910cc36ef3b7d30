"""Yes/no claims, lists of names and comparisons without an LM (pipeline.answering.claims, name_lists,
comparisons): one test per branch."""

from __future__ import annotations

from dataclasses import replace

from pipeline.answering.claims import claim_terms, denies, event_nouns, stated_claim, stated_text, states
from pipeline.answering.comparisons import Compared, compare, outcome_line, outcome_value
from pipeline.answering.figures import MetricAsk, reports_event, row_figures
from pipeline.answering.name_lists import (
    asks_organisation,
    captioned_values,
    field_names,
    head_phrase,
    head_term,
    listed_names,
    organisation_name,
)
from pipeline.answering.sentences import OfferedSentence
from pipeline.intake.contract import read_contract
from pipeline.types import Chunk, ChunkHit, RowCell, TableRow
from pipeline.values.typed import TypedValue

HIT = ChunkHit(Chunk(0, "d", 1, 0, "text"), "d.pdf", 1.0)


def offered(*texts: str) -> list[OfferedSentence]:
    return [OfferedSentence(i, text, HIT) for i, text in enumerate(texts)]


def test_claim_terms_leave_out_framing_and_the_time_clause() -> None:
    assert claim_terms("Has the fence energiser been replaced since the inspection?") == ("fenc", "energis", "replac")
    # a "buyback" is what reports call a repurchase
    assert claim_terms("Did the company announce any share buyback plans in the annual report?") == (
        "announc",
        "share",
        "repurchas",
        "plan",
    )


def test_a_sentence_states_negates_or_supposes_the_event() -> None:
    terms = ("repurchas", "share")
    assert states("In 2023 we repurchased 2 million shares.", terms) == 1.0
    assert states("We did not repurchase any shares.", terms) == 0.0
    assert denies("We did not repurchase any shares.", terms) == 1.0
    assert states("We may repurchase shares if market conditions allow.", terms) == 0.0
    assert denies("We may not repurchase shares.", terms) == 0.0


def test_the_stated_claim_prefers_a_statement_to_a_denial_and_needs_every_short_terms_word() -> None:
    terms = ("fenc", "energis", "replac")
    found = stated_claim(offered("The fence energiser is faulty.", "The fence energiser has not been replaced."), terms)
    assert found is not None and not found.happened and found.sentence.sentence_id == 1
    happened = stated_claim(offered("The fence energiser was replaced in June."), terms)
    assert happened is not None and happened.happened
    assert stated_claim(offered("The fence energiser is faulty."), terms) is None


def test_the_events_noun_is_the_head_of_the_verbs_object() -> None:
    assert event_nouns("were common stock dividends declared during the period?") == {"dividend"}
    assert event_nouns("did the company declare or pay any dividends to its common shareholders?") == {"dividend"}
    assert event_nouns("Has the company paid a dividend in the period?") == {"dividend"}
    assert event_nouns("Did the company pay any share repurchases in the last period?") == {"repurchas"}
    # the verb names the event itself: its object is not the event ("common stock" is no repurchase)
    assert event_nouns("did the company buy back any of its common stock during the period?") == frozenset()
    assert event_nouns("did the company pay to acquire any businesses during the period?") == frozenset()


def test_no_just_before_the_events_word_denies_it() -> None:
    text = "Our remaining share-purchase authorization was $3.3 billion, with no repurchases in the first half."
    terms = ("share", "repurchas")
    assert states(text, terms) == 0.0
    assert denies(text, terms) == 1.0
    assert states("We repurchased shares at no cost to holders.", terms) == 1.0


def test_table_cells_in_a_sentence_state_nothing() -> None:
    cells = "| — (Total Number of Shares Repurchased as Part of Publicly Announced Plans)"
    assert stated_text(cells) == ""
    assert stated_claim(offered(cells), ("repurchas", "share"), frozenset({"repurchas"})) is None
    # words before the first cell, and prose after a cell, are still read
    prose = "$1.30 (Dividend Per Share) We repurchased 4 million shares in 2023."
    assert stated_text(f"02/18/21 | {prose}").endswith("We repurchased 4 million shares in 2023.")
    found = stated_claim(offered(f"02/18/21 | {prose}"), ("repurchas", "share"), frozenset({"repurchas"}))
    assert found is not None and found.happened


def dividends_ask() -> MetricAsk:
    """What "were common stock dividends declared" asks of the tables, as the claims floor sets it."""
    terms = ("common", "stock", "dividend", "declar")
    return MetricAsk(
        terms=terms, any_kind=True, min_score=0.5, required=frozenset({"declar"}), nouns=frozenset({"dividend"})
    )


def equity_row(label: str, *cells: str, title: str = "CONSOLIDATED STATEMENTS OF STOCKHOLDERS' EQUITY") -> TableRow:
    """A statement of equity's row: its components as columns, no period in their headers."""
    headers = ("Common Stock", "Retained Earnings", "Total")
    row_cells = tuple(RowCell(c, h) for c, h in zip(cells, headers, strict=True))
    return TableRow(1, 0, 0, label, row_cells, scale="million", title=title)


def test_a_row_naming_the_events_noun_with_its_per_share_amount_reports_it() -> None:
    row = equity_row("Cash dividends ($1.42 per share)", "", "(6,020)", "(6,020)")
    found = row_figures(dividends_ask(), "d", [row])
    assert found and found[0].row.label == row.label and reports_event(found[0])
    assert row_figures(replace(dividends_ask(), nouns=frozenset()), "d", [row]) == []  # the noun is what reads it


def test_a_dash_row_naming_the_event_reports_it_did_not_happen() -> None:
    found = row_figures(dividends_ask(), "d", [equity_row("Dividends ($1.79)/per share*", "—", "—", "—")])
    assert found and not reports_event(found[0])


def test_a_row_of_dividends_received_or_of_another_event_does_not_name_it() -> None:
    rows = [
        equity_row("Dividend income", "", "12", "12"),
        equity_row("Dividends received from equity investees", "", "40", "40"),
        equity_row("Dividends and distributions", "", "40", "40"),
        equity_row("Common stock issued", "5", "", "5"),
    ]
    assert row_figures(dividends_ask(), "d", rows) == []


def test_a_notes_row_naming_the_events_noun_is_not_read() -> None:
    # goodwill by segment: what an acquisition added to goodwill, not the acquisition
    ask = MetricAsk(terms=("complet", "acquisit", "busi", "combin"), any_kind=True, nouns=frozenset({"acquisit"}))
    note = equity_row("Acquisitions", "—", "336", "336", title="Goodwill")
    assert row_figures(ask, "d", [note]) == []
    assert row_figures(ask, "d", [equity_row("Acquisitions", "—", "336", "336")])  # in a statement it is read


def test_names_prefer_those_ending_in_the_noun_asked_about() -> None:
    question = "On which stock exchange(s) are the company's securities listed?"
    assert head_term(question, ("stock", "exchang"), ()) == "exchang"
    sentences = offered(
        "Common Stock | ACME | New York Stock Exchange",
        "Registered with the Securities and Exchange Commission under the Securities Exchange Act.",
    )
    found = listed_names(question, sentences, ("stock", "exchang", "list"), ("exchang",), frozenset({"stock"}))
    assert [f.name for f in found] == ["New York Stock Exchange"]


def test_names_without_the_head_noun_come_from_the_best_sentence() -> None:
    question = "What are the names of all new executives who joined the board?"
    assert head_term(question, (), ()) == "execut"
    sentences = offered("The board appointed Jane Doe Smith and John Roe Brown as new executives in March.")
    found = listed_names(question, sentences, ("new", "execut", "board"), ("execut",), frozenset())
    assert [f.name for f in found] == ["Jane Doe Smith", "John Roe Brown"]


def number(value: float, currency: str | None = "USD") -> TypedValue:
    return TypedValue(kind="number", value=value, currency=currency)


def test_a_comparison_picks_the_extreme_and_names_who_was_left_out() -> None:
    contract = read_contract('Which of the companies had the lowest total assets: "A", "B", "C", "D", "E"?')
    parts = [
        Compared("A", "a", number(5.0)),
        Compared("B", "b", number(2.0)),
        Compared("C", "c", TypedValue(kind="number", value="N/A", absent=True, note="not stated")),
        Compared("D", None),
        Compared("E", "e", number(1.0, "EUR")),
    ]
    outcome = compare(parts, "lowest", contract)
    assert outcome.winner is not None and outcome.winner.quoted == "B"
    left = dict(outcome.left_out)
    assert left["C"] == "not stated" and "known" in left["D"] and "EUR" in left["E"]
    assert compare(parts, "highest", contract).winner == parts[0]
    line = outcome_line(outcome, "lowest", "total assets")
    assert line.startswith("Lowest total assets: B") and "Left out" in line
    assert outcome_value(outcome, contract).value == "B"


def test_a_comparison_with_nothing_comparable_is_the_absent_value() -> None:
    contract = read_contract(
        'Which of the companies had the highest revenue: "A", "B"? If data is not available, return \'N/A\'.'
    )
    outcome = compare([Compared("A", None), Compared("B", "b", None)], "highest", contract)
    assert outcome.winner is None
    value = outcome_value(outcome, contract)
    assert value.absent and value.value == "N/A"


def test_codes_are_read_when_ticker_symbols_are_asked() -> None:
    question = "List all ticker symbols on the cover page."
    sentences = offered(
        "Common Stock | ACME | New York Stock Exchange 1.5% Notes due 2026 | ACME26 | New York Stock Exchange "
        "(Title of each class) | (Trading Symbol) | (Name of each exchange on which registered)"
    )
    found = listed_names(question, sentences, ("ticker", "symbol", "cover", "page"), ("symbol",), frozenset())
    assert [f.name for f in found] == ["ACME", "ACME26"]


def test_an_organisation_asked_for_is_a_name_ending_in_its_legal_form() -> None:
    question = "Which firm audited the company's financial statements?"
    assert asks_organisation(question) and not asks_organisation("Who is the tenant?")
    sentences = offered(
        "We have audited the financial statements of the Company, as described in the Annual Report.",
        "/s/ Fahari Valuers LLP We have audited the financial statements since 2009.",
    )
    found = organisation_name(sentences, ("audit", "financi", "statement"), frozenset())
    assert found is not None and found.name == "Fahari Valuers LLP"


COVER = (
    "Acme Corp (Exact name of registrant as specified in its charter) | Delaware (State or other jurisdiction of "
    "incorporation or organization) | 12-3456789 (I.R.S. Employer Identification No.) Title of each class | Trading "
    "Symbol(s) | Name of each exchange on which registered Common Stock | ACM (Trading Symbol(s)) | New York Stock "
    "Exchange (Name of each exchange on which registered) 1.5% Notes due 2030 | ACM30 (Trading Symbol(s)) | New York "
    "Stock Exchange (Name of each exchange on which registered)"
)


def test_captioned_values_run_back_to_their_cell_or_the_caption_before() -> None:
    pairs = captioned_values(COVER)
    assert ("Delaware", "State or other jurisdiction of incorporation or organization") in pairs
    assert ("ACM30", "Trading Symbol(s)") in pairs
    assert ("12-3456789", "I.R.S. Employer Identification No.") in pairs
    # a run of more than a few words before a caption is text, not a value the caption names
    assert captioned_values("We sell widgets in many markets around the world today (see Note 3) | 12") == []
    # a caption in prose, in no table's cell, is read as prose
    assert captioned_values("Drainage: blocked sewer (High priority). Paving: cracked (Low priority).") == []


def test_a_field_is_the_value_under_the_caption_naming_what_is_asked() -> None:
    sentences = offered("Revenue rose in Delaware (see Note 3).", COVER)
    question = "In which state or country is Acme incorporated?"
    terms = ["state", "countri", "incorpor"]
    assert head_phrase(question) == ["state", "countri"] and head_term(question, terms, terms) == "countri"
    # "state" names the caption though the question's terms left it out
    [found] = field_names(sentences, ["countri", "incorpor"], head_phrase(question), 1)
    assert found.name == "Delaware" and found.sentence.sentence_id == 1
    codes = field_names(sentences, ["ticker", "symbol"], ["symbol"])
    assert [f.name for f in codes] == ["ACM", "ACM30"]
    exchanges = field_names(sentences, ["stock", "exchang"], ["exchang"])
    assert [f.name for f in exchanges] == ["New York Stock Exchange"]
    # a caption holding one question term and not the head noun names something else
    assert field_names(sentences, ["employ", "count"], ["count"]) == []
    # a form's code in the question ("10-K") names no caption
    assert field_names(offered("Items 10 through 14 (Form 10-K Reference)"), ["10-k", "10", "k"], ["k"]) == []


def test_listed_names_read_captioned_fields_first() -> None:
    sentences = offered("Our shares trade on the Pacific Exchange and the Boston Exchange.", COVER)
    found = listed_names(
        "On which stock exchange(s) are Acme's securities listed?", sentences, ["stock", "exchang"], ["exchang"], set()
    )
    assert [f.name for f in found] == ["New York Stock Exchange"]


def test_a_comparison_names_what_it_compares_in_the_plural() -> None:
    from pipeline.answering.comparisons import Outcome, outcome_line, plural

    assert [plural(k) for k in ("property", "company", "entity", "party", "survey")] == [
        "properties",
        "companies",
        "entities",
        "parties",
        "surveys",
    ]
    none = Outcome(None, (("Banda Lane", "its documents do not state it"),))
    assert outcome_line(none, "highest", "monthly rent", "properties").startswith(
        "None of the properties has a comparable monthly rent"
    )


def test_a_may_states_what_a_question_asking_permission_asks() -> None:
    clause = "Either party may terminate this Agreement for convenience upon thirty days written notice."
    terms = claim_terms("Can either party terminate this agreement for convenience?")
    assert states(clause, terms, permission=True) == 1.0
    assert states(clause, terms) == 0.0  # a report's "may" is a possibility, not a fact
    assert states("If Acme breaches, either party may terminate for convenience.", terms, permission=True) == 0.0
