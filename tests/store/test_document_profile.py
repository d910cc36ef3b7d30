"""Titles and summaries from the document when its metadata is no title: accession numbers, form codes
alone, file names, hashes, nothing. Built PDFs with such metadata, and the SEC 10-Q filings."""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF

from pipeline.store import open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder
from pipeline.store.profile import is_title, profile_document
from pipeline.store.reading import read_source
from tests.support.paths import ROOT

SEC_DOCS = ROOT.parent / "shared" / "data" / "sec-10q" / "docs"

COVER = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
Washington, D.C. 20549
FORM 10-K
ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the fiscal year ended {date}
Commission File Number 001-12345
{name}
(Exact name of registrant as specified in its charter)
Delaware 12-3456789
Indicate by check mark whether the registrant has filed all reports required to be filed."""

NDA = """MUTUAL NON-DISCLOSURE AGREEMENT
This Mutual Non-Disclosure Agreement (the "Agreement") is entered into as of March 3, 2021 by and between
{first}, a Delaware corporation ("Discloser"), and {second}, with offices in Haifa ("Recipient").
Each party may disclose Confidential Information to the other."""


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("0001193125-22-185257", False),  # accession number
        ("10-K", False),  # a form code alone
        ("Form 10-K", False),
        ("d41d8cd98f00b204e9800998ecf8427e", False),  # md5 of the file
        ("1b4e28ba-2fa1-11d2-883f-0016d3cca427", False),
        ("nda-acme", False),  # the file's own name
        ("Microsoft Word - nda_final.docx", False),
        ("", False),
        (None, False),
        ("Form 10-Q for Boreal Corp filed 10/24/2022", True),
        ("Lease Agreement - 14 Elm Close", True),
    ],
)
def test_metadata_is_a_title_only_when_it_describes_the_document(text: str | None, title: bool) -> None:
    assert is_title(text, "filings/nda-acme.pdf") is title


def test_a_filing_cover_gives_name_form_and_period() -> None:
    profile = profile_document((COVER.format(date="December 31, 2021", name="BOREAL SYSTEMS CORPORATION"),))
    assert profile.names == ("BOREAL SYSTEMS CORPORATION",)
    assert profile.form == "FORM 10-K"
    assert (profile.period, profile.period_end) == ("fiscal year ended December 31, 2021", "2021-12-31")
    assert profile.description == "BOREAL SYSTEMS CORPORATION, FORM 10-K, fiscal year ended December 31, 2021"


def test_a_contract_gives_its_parties_and_heading() -> None:
    profile = profile_document((NDA.format(first="Acme Robotics, Inc.", second="Mobileye Global Inc."),))
    assert profile.parties == ("Acme Robotics, Inc.", "Mobileye Global Inc.") and not profile.blank_party
    assert profile.form == "MUTUAL NON-DISCLOSURE AGREEMENT"
    assert profile.period_end == "2021-03-03"
    assert "between Acme Robotics, Inc. and Mobileye Global Inc." in profile.description
    assert "by and between Acme Robotics" in profile.opening


def test_an_and_inside_a_party_description_does_not_part_the_parties() -> None:
    text = (
        "NON-DISCLOSURE AGREEMENT\nThis Agreement is made between Helix Robotics Ltd, a company registered in"
        " England and Wales, and Aster Systems Inc., a Delaware corporation. Each party may disclose information."
    )
    assert profile_document((text,)).parties == ("Helix Robotics Ltd", "Aster Systems Inc.")
    # without a described first party, the plain "A and B" split still holds
    plain = profile_document(("This Agreement is made between Helix Robotics Ltd and Aster Systems Inc. Each party.",))
    assert plain.parties == ("Helix Robotics Ltd", "Aster Systems Inc")


def test_a_blank_form_names_one_party_and_says_the_other_is_blank() -> None:
    profile = profile_document((NDA.format(first="Acme Robotics, Inc.", second="______________"),))
    assert profile.parties == ("Acme Robotics, Inc.",) and profile.blank_party
    bracketed = profile_document((NDA.format(first="[COMPANY NAME]", second="[RECIPIENT]"),))
    assert bracketed.parties == () and bracketed.blank_party


def _pdf(path: Path, pages: list[str], title: str | None, subject: str | None) -> None:
    document = FPDF()
    document.set_font("Helvetica", size=10)
    if title is not None:
        document.set_title(title)
    if subject is not None:
        document.set_subject(subject)
    for text in pages:
        document.add_page()
        document.multi_cell(0, 5, text)
    document.output(str(path))


def test_pdfs_whose_metadata_is_no_title_are_titled_from_their_first_pages(tmp_path: Path) -> None:
    source = tmp_path / "corpus"
    source.mkdir()
    cover = COVER.format(date="June 30, 2022", name="Boreal Systems Corporation")
    body = "Revenue grew in every segment. Operating income was $1,234 million for the year."
    _pdf(source / "0001193125-22-185257.pdf", [cover, body], "0001193125-22-185257", "10-K")
    _pdf(source / "d41d8cd98f00b204e9800998ecf8427e.pdf", [cover, body], "d41d8cd98f00b204e9800998ecf8427e", "")
    _pdf(source / "empty.pdf", [cover, body], None, None)
    _pdf(source / "titled.pdf", [cover, body], "Boreal annual report 2022", "Annual report of Boreal Systems")
    build_index(source, tmp_path / "index", HashEmbedder(32))
    documents = {d.filename: d for d in open_store(tmp_path / "index", HashEmbedder(32)).catalog.documents.values()}
    wanted = "Boreal Systems Corporation, FORM 10-K, fiscal year ended June 30, 2022"
    for name in ("0001193125-22-185257.pdf", "d41d8cd98f00b204e9800998ecf8427e.pdf", "empty.pdf"):
        assert documents[name].title == wanted, name
        assert documents[name].summary.startswith(f"{wanted}. "), name
        assert ("period_end", "2022-06-30") in documents[name].attributes
        assert "Boreal Systems Corporation" in documents[name].opening
    # Metadata that describes the document is kept as it is.
    assert documents["titled.pdf"].title == "Boreal annual report 2022"
    assert documents["titled.pdf"].summary == "Annual report of Boreal Systems"


@pytest.mark.skipif(not SEC_DOCS.is_dir(), reason=f"{SEC_DOCS} not present")
def test_every_sec_filing_is_described_by_its_registrant_form_and_period() -> None:
    registrants = {"AAPL": "Apple", "AMZN": "AMAZON", "INTC": "INTEL", "MSFT": "MICROSOFT", "NVDA": "NVIDIA"}
    for path in sorted(SEC_DOCS.glob("*.pdf")):
        pages = read_source(path, path.name).pages
        profile = profile_document(pages)
        assert profile.names and profile.names[0].startswith(registrants[path.stem.split()[-1]]), path.name
        assert profile.form == "FORM 10-Q", path.name
        assert profile.period is not None and profile.period.casefold().startswith("quarterly period ended")
    # Hand-checked against the cover page of the 2022 Q3 AAPL filing.
    aapl = profile_document(read_source(SEC_DOCS / "2022 Q3 AAPL.pdf", "2022 Q3 AAPL.pdf").pages)
    assert aapl.description == "Apple Inc., FORM 10-Q, quarterly period ended June 25, 2022"


@pytest.mark.parametrize(
    ("first_page", "parties"),
    [
        (
            "SERVICES AGREEMENT In the event of a conflict between the terms contained in a Protocol or workscope"
            " and this Agreement, this Agreement controls. This Agreement is entered into by and between Veltra"
            " Research Ltd., a Delaware corporation, and Solenne Biotech, Inc., a California corporation.",
            ("Veltra Research Ltd.", "Solenne Biotech, Inc."),
        ),
        (
            'CONSULTING AGREEMENT This Agreement is made on 1 May 2020. Orbis Apparel, Inc. (the "Company") and'
            ' Jane Roe (the "Consultant") agree as follows. Any conflict between this Agreement and any Second'
            " Level Agreement is resolved by this Agreement.",
            ("Orbis Apparel, Inc.", "Jane Roe"),
        ),
    ],
)
def test_the_parties_come_from_the_parties_clause_not_from_clauses_set_side_by_side(
    first_page: str, parties: tuple[str, str]
) -> None:
    assert profile_document((first_page,)).parties == parties
