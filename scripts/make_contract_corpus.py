"""Generate the contract development corpus (datasets/contracts) and its labelled traces
(datasets/contracts-traces/dev.jsonl, and test.jsonl: held out, other questions in other words).

Run from the repository root:

    python scripts/make_contract_corpus.py

Fictional non-disclosure agreements built from one template, so the documents are near-identical:
two-party agreements owned by both parties (one party, Northwind, signs with four others; Helix
also signs with Aster: another pair sharing a party), blank forms naming no counterparty that no
entity owns, and a metadata summary that names only the shared party. Deterministic; before writing,
every answer fact is checked to occur on its gold page. Any failure stops the run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import InputFileError
from pipeline.evaluation.examples import ExampleScope, GoldPage, LabelledExample, example_id, write_examples
from pipeline.store.reading import read_source

SCRIPTS = Path(__file__).resolve().parent
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))  # scripts/ is no package: its builders import each other by name

from absence import index_chunks, require_absent  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CORPUS = "contracts"
PAGE_BREAK = "\n<!-- pagebreak -->\n"


@dataclass(frozen=True)
class Party:
    slug: str
    name: str
    aliases: tuple[str, ...]
    description: str
    notice: str


NORTHWIND = Party(
    "northwind",
    "Northwind Systems Inc.",
    ("Northwind Systems", "Northwind"),
    "a Delaware corporation",
    "400 Harbour Street, Wilmington",
)
HELIX = Party(
    "helix",
    "Helix Robotics Ltd",
    ("Helix Robotics",),
    "a company registered in England and Wales",
    "12 Mill Lane, Cambridge",
)
ASTER = Party("aster", "Aster Biologics GmbH", ("Aster Biologics",), "a German limited company", "Seestrasse 8, Zurich")
QUARRY = Party(
    "quarry", "Quarry Analytics LLC", ("Quarry Analytics",), "a New York limited liability company", "PO Box 88, Albany"
)
HARBOR = Party(
    "blue-harbor",
    "Blue Harbor Logistics Corp.",
    ("Blue Harbor Logistics", "Blue Harbor"),
    "a Texas corporation",
    "9 Dock Road, Houston",
)
ORBIS = Party("orbis", "Orbis Apparel, Inc.", ("Orbis Apparel",), "a Delaware corporation", "55 Loom Street, Milwaukee")
# Its name as the manifest writes it; documents write it "Stremwoods Dairy Farms, LLC" too.
STREMWOOD = Party(
    "stremwood",
    "Stremwood's Dairy Farms",
    (),
    "a Wisconsin limited liability company",
    "Route 9, Dodgeville",
)
# The same party as its own documents write it.
STREMWOODS_LLC = Party(
    "stremwood", "Stremwoods Dairy Farms, LLC", (), "a Wisconsin limited liability company", "Route 9, Dodgeville"
)
VELTRA = Party("veltra", "Veltra Research Ltd.", ("Veltra Research",), "a Delaware corporation", "1 Quay Road, Boston")
SOLENNE = Party(
    "solenne", "Solenne Biotech, Inc.", ("Solenne Biotech",), "a California corporation", "77 Vine Street, San Diego"
)
PARTIES = (NORTHWIND, HELIX, ASTER, QUARRY, HARBOR, ORBIS, STREMWOOD, VELTRA, SOLENNE)


@dataclass(frozen=True)
class Terms:
    """What differs between two agreements built from the template."""

    date: str
    purpose: str
    term: str
    survival: str
    return_days: str
    law: str
    forum: str
    signer_a: str
    signer_b: str


@dataclass(frozen=True)
class Agreement:
    path: str
    first: Party | None
    second: Party | None
    terms: Terms
    # A summary the manifest gives (as a document system would); None: made from the first pages.
    summary: str | None = None
    # Its own pages when it is not written from the template.
    text: str | None = None
    # The agreement it amends (an amendment declares no owners: it has its agreement's).
    amends: str | None = None


def _name(party: Party | None, blank: str) -> str:
    return party.name if party else blank


def render(agreement: Agreement) -> str:
    """The agreement's pages: its own text, else the three pages of the one template."""
    if agreement.text is not None:
        return agreement.text
    a, b, t = agreement.first, agreement.second, agreement.terms
    first = _name(a, "[DISCLOSING PARTY NAME]")
    second = _name(b, "______________________")
    a_desc = a.description if a else "[DESCRIPTION]"
    b_desc = b.description if b else "[DESCRIPTION]"
    page1 = "\n\n".join(
        (
            "MUTUAL NON-DISCLOSURE AGREEMENT",
            f'This Mutual Non-Disclosure Agreement (the "Agreement") is made as of {t.date} (the "Effective Date")'
            f" between {first}, {a_desc}, and {second}, {b_desc}.",
            "1. Purpose. The parties wish to exchange Confidential Information solely to evaluate"
            f' {t.purpose} (the "Purpose").',
            '2. Confidential Information. "Confidential Information" means all non-public business, technical and'
            " financial information a party discloses, including data analytics, information systems, product"
            " designs, health and safety records and customer lists, whether disclosed orally or in writing.",
        )
    )
    page2 = "\n\n".join(
        (
            "3. Obligations. The receiving party shall use Confidential Information only for the Purpose, shall"
            " protect it with at least reasonable care and to the best of its abilities, and shall disclose it"
            " only to employees and advisers who need to know it.",
            f"4. Term. This Agreement remains in force for {t.term} from the Effective Date. The obligations of"
            f" confidentiality survive for {t.survival} after the Agreement ends.",
            f"5. Return of materials. Within {t.return_days} days of a written request, the receiving party shall"
            " return or destroy all Confidential Information and certify that it has done so.",
        )
    )
    notices = (
        f"Notices to {first} go to {a.notice if a else '[ADDRESS]'}; notices to {second} go to "
        f"{b.notice if b else '[ADDRESS]'}."
    )
    page3 = "\n\n".join(
        (
            f"6. Governing law. This Agreement is governed by the laws of {t.law}, and any dispute is resolved by"
            f" {t.forum}.",
            f"7. Notices. {notices}",
            f"Signed for {first}: {t.signer_a}\nSigned for {second}: {t.signer_b}",
        )
    )
    return PAGE_BREAK.join((page1, page2, page3)) + "\n"


AGREEMENTS = (
    Agreement(
        "agreements/northwind-helix-nda.txt",
        NORTHWIND,
        HELIX,
        Terms(
            "3 March 2021",
            "a robotic warehouse picking collaboration",
            "three (3) years",
            "five (5) years",
            "fifteen (15)",
            "the State of Delaware",
            "the courts of Wilmington",
            "Dana Whitfield, General Counsel",
            "Oliver Brandt, Chief Executive Officer",
        ),
    ),
    Agreement(
        "agreements/northwind-quarry-nda.txt",
        NORTHWIND,
        QUARRY,
        Terms(
            "14 June 2022",
            "a pilot of a demand forecasting platform",
            "two (2) years",
            "three (3) years",
            "thirty (30)",
            "the State of New York",
            "arbitration in New York City",
            "Dana Whitfield, General Counsel",
            "Priya Raman, Managing Member",
        ),
        # What a document system often stores: a summary that names only the shared party.
        summary="Mutual non-disclosure agreement of Northwind Systems Inc. for a demand forecasting pilot.",
    ),
    Agreement(
        "agreements/northwind-aster-nda.txt",
        NORTHWIND,
        ASTER,
        Terms(
            "1 September 2020",
            "a joint assay development programme",
            "four (4) years",
            "seven (7) years",
            "ten (10)",
            "England and Wales",
            "the courts of London",
            "Marcus Lee, Vice President Legal",
            "Katrin Vogel, Geschaeftsfuehrerin",
        ),
    ),
    Agreement(
        "agreements/northwind-blue-harbor-nda.txt",
        NORTHWIND,
        HARBOR,
        Terms(
            "20 January 2023",
            "a shared cold-chain shipping route",
            "eighteen (18) months",
            "two (2) years",
            "twenty (20)",
            "the State of Texas",
            "the courts of Harris County",
            "Marcus Lee, Vice President Legal",
            "Ray Okafor, President",
        ),
    ),
    Agreement(
        "agreements/helix-aster-nda.txt",
        HELIX,
        ASTER,
        Terms(
            "9 November 2022",
            "sterile laboratory automation",
            "five (5) years",
            "ten (10) years",
            "forty-five (45)",
            "Switzerland",
            "arbitration in Zurich",
            "Oliver Brandt, Chief Executive Officer",
            "Katrin Vogel, Geschaeftsfuehrerin",
        ),
    ),
)
# An undertaking owned by both parties whose summary and most pages name only Orbis: Stremwood's is "the
# Recipient" after the parties clause.
UNDERTAKING = (
    PAGE_BREAK.join(
        (
            "CONFIDENTIALITY UNDERTAKING\n\nThis Confidentiality Undertaking is made on 2 February 2022 by and between"
            ' Orbis Apparel, Inc., a Delaware corporation ("Orbis"), and Stremwood\'s Dairy Farms, a Wisconsin limited'
            ' liability company (the "Recipient").\n\n1. As an associate of Orbis Apparel, Inc., the Recipient agrees'
            " to keep confidential all information Orbis Apparel discloses about its casein fibre programme.",
            "2. Use. The Recipient shall use information received from Orbis Apparel only to evaluate a supply of"
            " casein fibre to Orbis Apparel.\n\n3. Return. The Recipient shall return all materials to Orbis Apparel"
            " within twelve (12) days of a written request from Orbis Apparel.",
            "4. Law. This undertaking is governed by the laws of the State of Wisconsin. Notices to Orbis Apparel go"
            " to 55 Loom Street, Milwaukee.\n\nSigned for Orbis Apparel, Inc.: Lena Marsh, Counsel\nSigned for the"
            " Recipient: Tom Stremwood, Owner",
        )
    )
    + "\n"
)
# A services agreement whose first page sets clauses side by side ("between the terms ... and this
# Agreement") before its parties clause.
SERVICES = (
    PAGE_BREAK.join(
        (
            "CLINICAL SERVICES AGREEMENT\n\nIn the event of a conflict between the terms contained in a Protocol or"
            " workscope and this Agreement, this Agreement controls. This Clinical Services Agreement is entered into"
            " as of 8 August 2021 by and between Veltra Research Ltd., a Delaware corporation, and Solenne Biotech,"
            " Inc., a California corporation.\n\n1. Services. Veltra Research performs the stability studies each"
            " workscope describes.",
            "2. Fees. Solenne Biotech pays each invoice within forty (40) days.\n\n3. Order of precedence. Any"
            " conflict between this Agreement and any Second Level Agreement is resolved by this Agreement.",
        )
    )
    + "\n"
)
AMENDMENT = (
    "AMENDMENT No. 1 TO THE MUTUAL NON-DISCLOSURE AGREEMENT\n\nThis Amendment No. 1 is made on 5 June 2024"
    " between Northwind Systems Inc. and Blue Harbor Logistics Corp. and amends the Mutual Non-Disclosure"
    " Agreement between them dated 20 January 2023.\n\n1. Term. Section 4 is amended so that the Agreement"
    " remains in force for thirty-six (36) months from the Effective Date.\n\n2. All other terms of the"
    " Agreement remain unchanged.\n"
)
NO_TERMS = Terms(*["" for _ in range(9)])
AGREEMENTS = (
    *AGREEMENTS,
    Agreement(
        "agreements/orbis-stremwood-undertaking.txt",
        ORBIS,
        STREMWOOD,
        NO_TERMS,
        summary="As an associate of Orbis Apparel, Inc., the recipient agrees to keep Orbis Apparel's information"
        " confidential.",
        text=UNDERTAKING,
    ),
    Agreement(
        "agreements/stremwood-northwind-nda.txt",
        STREMWOODS_LLC,
        NORTHWIND,
        Terms(
            "11 April 2022",
            "a supply of dairy analytics sensors",
            "two (2) years",
            "four (4) years",
            "twenty-five (25)",
            "the State of Wisconsin",
            "the courts of Madison",
            "Tom Stremwood, Owner",
            "Dana Whitfield, General Counsel",
        ),
        # the party's name spelt as its documents spell it, not as the manifest does
        summary="Mutual non-disclosure agreement between Stremwoods Dairy Farms, LLC and Northwind Systems Inc.",
    ),
    Agreement("agreements/veltra-solenne-services.txt", VELTRA, SOLENNE, NO_TERMS, text=SERVICES),
    Agreement(
        "agreements/northwind-blue-harbor-nda-amendment-1.txt",
        NORTHWIND,
        HARBOR,
        NO_TERMS,
        text=AMENDMENT,
        amends="agreements/northwind-blue-harbor-nda.txt",
    ),
)
# A signed scan of the Quarry agreement that cannot be read: the build skips it.
CORRUPT_SCAN = "agreements/northwind-quarry-nda-signed.pdf"
CORRUPT_BYTES = b"%PDF-1.4\n% a scan cut off in transfer\n1 0 obj << /Type /Catalog"
# Blank forms: no counterparty, no entity owns them; the values are the ones most agreements use.
FORM_TERMS = Terms(
    "____________",
    "a possible business relationship",
    "two (2) years",
    "three (3) years",
    "thirty (30)",
    "the State of Delaware",
    "the courts of Wilmington",
    "______________________",
    "______________________",
)
FORMS = (
    Agreement("forms/mutual-nda-form.txt", NORTHWIND, None, FORM_TERMS),
    Agreement("forms/mutual-nda-form-v2.txt", NORTHWIND, None, FORM_TERMS),
    Agreement("forms/nda-template-blank.txt", None, None, FORM_TERMS),
)


def _slugs(agreement: Agreement) -> list[str]:
    return [p.slug for p in (agreement.first, agreement.second) if p is not None and agreement in AGREEMENTS]


def _owners(agreement: Agreement) -> list[str]:
    """The owners its manifest rule declares: none for an amendment (it has its agreement's)."""
    return [] if agreement.amends else _slugs(agreement)


def manifest() -> str:
    """corpus.toml: the parties as entities, both parties owning each agreement, forms owned by none."""
    lines = [
        "# Generated by scripts/make_contract_corpus.py - edit the script, not this file.",
        'format = "scoperag-corpus/v1"',
        f'name = "{CORPUS}"',
        'entity_kind = "company"',
        'exclude = ["README.md"]',
        "# A document no party owns (a blank form) lies outside every party's scope.",
        'unowned = "outside"',
        "",
        "[vocabulary]",
        'generic_words = ["agreement", "agreements", "nda", "ndas", "contract", "contracts", "form", "forms",'
        ' "company", "party", "parties"]',
    ]
    for p in PARTIES:
        lines += ["", "[[entities]]", f"slug = {json.dumps(p.slug)}", f"name = {json.dumps(p.name)}"]
        lines.append(f"aliases = [{', '.join(json.dumps(a) for a in p.aliases)}]")
    for a in (*AGREEMENTS, *FORMS):
        lines += ["", "[[documents]]", f"path = {json.dumps(a.path)}", 'type = "nda"']
        lines.append(f"entities = [{', '.join(json.dumps(s) for s in _owners(a))}]")
        if a.summary:
            lines.append(f"summary = {json.dumps(a.summary)}")
        if a.amends:
            lines.append(f"amends = {json.dumps(a.amends)}")
    lines += ["", "[[documents]]", f"path = {json.dumps(CORRUPT_SCAN)}", 'type = "nda"']
    lines.append('entities = ["northwind", "quarry"]')
    return "\n".join(lines) + "\n"


ALL = (*AGREEMENTS, *FORMS)
BY_PATH = {a.path: a for a in ALL}


def _pages(path: str) -> list[str]:
    return render(BY_PATH[path]).split(PAGE_BREAK)


def _not_for(*owners: Party) -> tuple[str, ...]:
    """Documents a question about `owners` must never read: other agreements (those owned by none of
    them, or, for two named parties, not by both) and every blank form."""
    slugs = {p.slug for p in owners}
    out = []
    for a in AGREEMENTS:
        mine = set(_slugs(a))
        if (len(slugs) > 1 and not slugs <= mine) or not slugs & mine:
            out.append(a.path)
    return (*out, *(f.path for f in FORMS))


def _example(
    case: str,
    question: str,
    gold: Sequence[tuple[str, int]] = (),
    facts: Sequence[str] = (),
    forbidden: Sequence[str] = (),
    scope: ExampleScope | None = None,
    tags: Sequence[str] = (),
    not_found: bool = False,
    note: str | None = None,
    split: str = "dev",
) -> LabelledExample:
    scope = scope or ExampleScope()
    for fact in facts:
        if not any(path in BY_PATH and fact in _pages(path)[page - 1] for path, page in gold):
            raise SystemExit(f"fact {fact!r} of {question!r} is on none of its gold pages")
    plan = "two_step" if case == "no_scope" or (case == "wrong_property" and not scope.document_ids) else "one_step"
    if scope.property:
        plan = "one_step"
    return LabelledExample(
        id=example_id(CORPUS, question, scope),
        corpus=CORPUS,
        case=case,  # type: ignore[arg-type]
        question=question,
        scope=scope,
        gold_documents=tuple(dict.fromkeys(p for p, _ in gold)),
        gold_pages=tuple(GoldPage(document=p, page=n or None) for p, n in gold),
        answer_facts=tuple(facts),
        forbidden_documents=tuple(f for f in forbidden if f not in {p for p, _ in gold}),
        expect_not_found=not_found,
        expect_scope_note=note,  # type: ignore[arg-type]
        expected_plan=plan,  # type: ignore[arg-type]
        tags=tuple(tags),
        split=split,  # type: ignore[arg-type]
    )


NH, NQ, NA, NB, HA, OS, SN, VS, NBA = (a.path for a in AGREEMENTS)
FORM, FORM2, BLANK = (f.path for f in FORMS)


def examples() -> list[LabelledExample]:
    """The labelled questions: each case, each finding (ordinary words, unowned forms, two parties)."""
    return [
        # -- no scope: the named party's own agreement, never a form or another pair's agreement
        _example(
            "no_scope",
            "Which law governs the NDA between Northwind Systems and Helix Robotics?",
            [(NH, 3)],
            ["the State of Delaware"],
            _not_for(NORTHWIND, HELIX),
            tags=["finding:two_parties", "scope:none"],
        ),
        _example(
            "no_scope",
            "How long do confidentiality obligations survive under the Quarry Analytics NDA?",
            [(NQ, 2)],
            ["three (3) years"],
            _not_for(QUARRY),
            tags=["finding:unowned_forms", "finding:summary_names_other_party", "scope:none"],
        ),
        _example(
            "no_scope",
            "Within how many days must Helix Robotics return Aster Biologics materials?",
            [(HA, 2)],
            ["forty-five (45)"],
            _not_for(HELIX, ASTER),
            tags=["finding:two_parties", "scope:none"],
        ),
        _example(
            "no_scope",
            "What purpose does the Blue Harbor Logistics agreement cover?",
            [(NB, 1)],
            ["a shared cold-chain shipping route"],
            _not_for(HARBOR),
            tags=["finding:unowned_forms", "scope:none"],
        ),
        _example(
            "no_scope",
            "Who signed the Aster Biologics agreement with Northwind?",
            [(NA, 3)],
            ["Katrin Vogel"],
            _not_for(ASTER, NORTHWIND),
            tags=["finding:two_parties", "scope:none"],
        ),
        _example(
            "no_scope",
            "Under the Helix Robotics NDA, are data analytics and health and safety records confidential?",
            [(NH, 1)],
            ["data analytics", "health and safety records"],
            _not_for(HELIX),
            tags=["finding:ordinary_words", "scope:none"],
        ),
        # -- chip: the selected agreement or form
        _example(
            "chip",
            "How long does this agreement remain in force?",
            [(NH, 2)],
            ["three (3) years"],
            _not_for(NORTHWIND, HELIX),
            ExampleScope(document_ids=(NH,)),
            tags=["scope:chip"],
        ),
        _example(
            "chip",
            "What is the purpose of the Quarry Analytics agreement?",
            [(NQ, 1)],
            ["a pilot of a demand forecasting platform"],
            _not_for(QUARRY),
            ExampleScope(document_ids=(NQ,)),
            tags=["finding:summary_names_other_party", "scope:chip"],
        ),
        _example(
            "chip",
            "How long do confidentiality obligations survive under the form?",
            [(FORM, 2)],
            ["three (3) years"],
            (),
            ExampleScope(document_ids=(FORM,)),
            tags=["finding:unowned_forms", "unowned_selected", "scope:chip"],
        ),
        _example(
            "chip",
            "Which courts resolve disputes under the Aster Biologics agreements?",
            [(NA, 3), (HA, 3)],
            ["the courts of London", "arbitration in Zurich"],
            _not_for(ASTER),
            ExampleScope(document_ids=(NA, HA)),
            tags=["finding:two_parties", "scope:chip"],
        ),
        # -- property: every agreement the party owns, its shorter-summary ones too
        _example(
            "property",
            "How long does the agreement remain in force?",
            [(NQ, 2)],
            ["two (2) years"],
            _not_for(QUARRY),
            ExampleScope(property=QUARRY.slug),
            tags=["finding:summary_names_other_party", "scope:property"],
        ),
        _example(
            "property",
            "Which law governs each agreement?",
            [(NH, 3), (HA, 3)],
            ["the State of Delaware", "Switzerland"],
            _not_for(HELIX),
            ExampleScope(property=HELIX.slug),
            tags=["finding:two_parties", "scope:property"],
        ),
        _example(
            "property",
            "Within how many days must materials be returned?",
            [(NH, 2), (NQ, 2), (NA, 2), (NB, 2), (SN, 2)],
            ["fifteen (15)", "thirty (30)", "ten (10)", "twenty (20)", "twenty-five (25)"],
            _not_for(NORTHWIND),
            ExampleScope(property=NORTHWIND.slug),
            tags=["finding:two_parties", "finding:summary_names_other_party", "scope:property"],
        ),
        _example(
            "property",
            "Who signed for Blue Harbor?",
            [(NB, 3)],
            ["Ray Okafor"],
            _not_for(HARBOR),
            ExampleScope(property=HARBOR.slug),
            tags=["scope:property"],
        ),
        # -- wrong property: another party's agreement selected, another pair's agreement, a form
        _example(
            "wrong_property",
            "Which law governs the Helix Robotics agreement?",
            forbidden=(NQ, NH),
            scope=ExampleScope(document_ids=(NQ,)),
            tags=["wrong_entity", "not_in_scope", "scope:chip"],
            not_found=True,
            note="other_entity",
        ),
        _example(
            "wrong_property",
            "What is the purpose of the Quarry Analytics agreement?",
            forbidden=(NA, HA, NQ),
            scope=ExampleScope(property=ASTER.slug),
            tags=["wrong_entity", "not_in_scope", "scope:property"],
            not_found=True,
            note="other_entity",
        ),
        _example(
            "wrong_property",
            "What does the NDA between Northwind Systems and Helix Robotics say about returning materials?",
            [(NH, 2)],
            ["fifteen (15)"],
            _not_for(NORTHWIND, HELIX),
            tags=["wrong_entity", "finding:two_parties", "scope:none"],
        ),
        _example(
            "wrong_property",
            "Which law governs the NDA between Northwind Systems and Helix Robotics?",
            [(NH, 3)],
            ["the State of Delaware"],
            _not_for(NORTHWIND, HELIX),
            ExampleScope(property=NORTHWIND.slug),
            tags=["wrong_entity", "finding:two_parties", "scope:property"],
        ),
        _example(
            "wrong_property",
            "How long does the NDA between Northwind Systems and Quarry Analytics remain in force?",
            [(NQ, 2)],
            ["two (2) years"],
            _not_for(NORTHWIND, QUARRY),
            ExampleScope(document_ids=(NH, NQ, NB)),
            tags=["wrong_entity", "finding:two_parties", "finding:summary_names_other_party", "scope:chip"],
        ),
        _example(
            "wrong_property",
            "What is the term of the NDA between Helix Robotics and Aster Biologics?",
            [(HA, 2)],
            ["five (5) years"],
            _not_for(HELIX, ASTER),
            tags=["wrong_entity", "finding:two_parties", "scope:none"],
        ),
        _example(
            "wrong_property",
            "How many days does Quarry Analytics have to return materials?",
            [(NQ, 2)],
            ["thirty (30)"],
            _not_for(QUARRY),
            tags=["wrong_entity", "finding:unowned_forms", "scope:none"],
        ),
        _example(
            "wrong_property",
            "Which courts hear disputes under the Blue Harbor agreement?",
            [(NB, 3)],
            ["the courts of Harris County"],
            _not_for(HARBOR),
            tags=["wrong_entity", "finding:unowned_forms", "scope:none"],
        ),
        # -- the catalog decides whose a document is, whatever its summary or pages name
        _example(
            "property",
            "Within how many days must materials be returned?",
            [(OS, 2)],
            ["twelve (12)"],
            _not_for(STREMWOOD),
            ExampleScope(property=STREMWOOD.slug),
            tags=["finding:summary_names_other_party", "finding:catalog_decides", "scope:property"],
        ),
        _example(
            "chip",
            "Which law governs Stremwood's Dairy Farms' agreement?",
            [(SN, 3)],
            ["the State of Wisconsin"],
            _not_for(STREMWOOD),
            ExampleScope(document_ids=(SN,)),
            tags=["finding:name_spelling", "finding:catalog_decides", "scope:chip"],
        ),
        _example(
            "no_scope",
            "Who pays invoices under the Solenne Biotech services agreement, and within how many days?",
            [(VS, 2)],
            ["forty (40)"],
            _not_for(SOLENNE),
            tags=["finding:parties_clause", "scope:none"],
        ),
        # -- an agreement is read with its amendment; a question can name the amendment
        _example(
            "no_scope",
            "How long does the NDA between Northwind Systems and Blue Harbor Logistics remain in force, as amended?",
            [(NB, 2), (NBA, 1)],
            ["eighteen (18) months", "thirty-six (36) months"],
            _not_for(NORTHWIND, HARBOR),
            tags=["finding:amendment", "finding:two_parties", "scope:none"],
        ),
        _example(
            "chip",
            "How long does the agreement remain in force?",
            [(NBA, 1)],
            ["thirty-six (36) months"],
            _not_for(HARBOR),
            ExampleScope(document_ids=(NBA,)),
            tags=["finding:amendment", "scope:chip"],
        ),
        # -- a note on every empty scope
        _example(
            "wrong_property",
            "Within how many days must Northwind Systems return Quarry Analytics materials?",
            forbidden=(NH, HA),
            scope=ExampleScope(property=HELIX.slug),
            tags=["wrong_entity", "not_in_scope", "finding:two_parties", "scope:property"],
            not_found=True,
            note="other_entity",
        ),
        _example(
            "chip",
            "What is the term of the Quarry Analytics agreement?",
            [(FORM, 2)],
            ["two (2) years"],
            (),
            ExampleScope(document_ids=(FORM,)),
            tags=["finding:unowned_forms", "unowned_selected", "scope:chip"],
            note="no_entity",
        ),
        # -- a gold document the build skipped (a corrupt scan): scored with it left out, and said so
        _example(
            "property",
            "Who signed for Quarry Analytics?",
            [(NQ, 3), (CORRUPT_SCAN, 0)],
            ["Priya Raman"],
            _not_for(QUARRY),
            ExampleScope(property=QUARRY.slug),
            tags=["finding:skipped_document", "scope:property"],
        ),
    ]


# ---- unanswerable in scope: the right agreement or party, a term no agreement of it has ----------


@dataclass(frozen=True)
class AbsentTerm:
    """A term a reader of an NDA would ask about that the template has no clause for: asked with agreements
    selected (`chip`) and with `party` as scope, and the markers a clause stating it would use
    (scripts/absence.py)."""

    topic: str
    markers: tuple[str, ...]
    chip: tuple[str, ...]
    chip_question: str
    party: Party
    scope_question: str


ABSENT_TERMS = (
    AbsentTerm(
        "liability_cap",
        # Not "liability" alone: "a New York limited liability company" names a party, no cap.
        ("limitation of liability", r"liability (?:is|shall|will|of|under|for)", "liable", "cap", "capped"),
        (NH,),
        "What is the cap on each party's liability under this agreement?",
        QUARRY,
        "Does the Quarry Analytics NDA limit either party's liability, and to what amount?",
    ),
    AbsentTerm(
        "early_termination",
        ("terminate", "terminated", "termination", "break clause", "early"),
        (NQ,),
        "Can either party end the Quarry Analytics agreement early by giving notice?",
        HELIX,
        "How much notice does Helix Robotics need to give to terminate its NDAs before the term ends?",
    ),
    AbsentTerm(
        "fee",
        ("fee", "fees", "payment", "payable", "consideration", "price"),
        (NA,),
        "What fee does the receiving party pay under the NDA between Northwind and Aster Biologics?",
        HARBOR,
        "How much does Blue Harbor pay under its agreement?",
    ),
    AbsentTerm(
        "non_solicitation",
        ("solicit", "solicitation", "non-solicitation", "hire", "hiring", "poach"),
        (NB,),
        "Does this agreement stop Northwind from hiring Blue Harbor Logistics employees?",
        ASTER,
        "Do Aster Biologics' NDAs include a non-solicitation clause?",
    ),
    AbsentTerm(
        "liquidated_damages",
        ("liquidated damages", "damages", "penalty", "penalties", "breach"),
        (HA,),
        "What liquidated damages are payable for a breach of the Helix Robotics and Aster Biologics NDA?",
        NORTHWIND,
        "What penalty does a party pay for breaching confidentiality under Northwind's NDAs?",
    ),
    AbsentTerm(
        "renewal",
        ("renew", "renews", "renewal", "renewed", "automatically", "extend", "extension"),
        (NH, NA),
        "Do these agreements renew automatically when their term ends?",
        QUARRY,
        "Will the Quarry Analytics NDA be extended automatically at the end of its term?",
    ),
)


# ---- held out: test.jsonl, written before any answering change and not read while making one ----------


def test_examples() -> list[LabelledExample]:
    """The held-out questions (split test): the four cases again, over other clauses and in other words than
    examples() (dates the preamble defines, defined terms, sections named by their heading, notices)."""
    test = "test"
    return [
        # -- no scope
        _example(
            "no_scope",
            "What is the effective date of the NDA between Northwind Systems and Aster Biologics?",
            [(NA, 1)],
            ["1 September 2020"],
            _not_for(NORTHWIND, ASTER),
            tags=["finding:two_parties", "scope:none"],
            split=test,
        ),
        _example(
            "no_scope",
            "Who has jurisdiction over disputes under the Helix Robotics and Aster Biologics NDA?",
            [(HA, 3)],
            ["arbitration in Zurich"],
            _not_for(HELIX, ASTER),
            tags=["finding:two_parties", "scope:none"],
            split=test,
        ),
        _example(
            "no_scope",
            "For how long does Stremwood's Dairy Farms' NDA with Northwind stay in effect?",
            [(SN, 2)],
            ["two (2) years"],
            _not_for(STREMWOOD, NORTHWIND),
            tags=["finding:name_spelling", "finding:two_parties", "scope:none"],
            split=test,
        ),
        _example(
            "no_scope",
            "Where are notices to Quarry Analytics sent?",
            [(NQ, 3)],
            ["PO Box 88, Albany"],
            _not_for(QUARRY),
            tags=["finding:unowned_forms", "scope:none"],
            split=test,
        ),
        _example(
            "no_scope",
            "What counts as Confidential Information in the Blue Harbor Logistics NDA?",
            [(NB, 1)],
            ["non-public business, technical and financial information"],
            _not_for(HARBOR),
            tags=["finding:defined_term", "scope:none"],
            split=test,
        ),
        _example(
            "no_scope",
            "On what date was the Orbis Apparel confidentiality undertaking made?",
            [(OS, 1)],
            ["2 February 2022"],
            _not_for(ORBIS),
            tags=["finding:catalog_decides", "scope:none"],
            split=test,
        ),
        _example(
            "no_scope",
            "Who signed the Quarry Analytics NDA on behalf of Northwind Systems?",
            [(NQ, 3)],
            ["Dana Whitfield"],
            _not_for(QUARRY, NORTHWIND),
            tags=["finding:two_parties", "scope:none"],
            split=test,
        ),
        _example(
            "no_scope",
            "When was Amendment No. 1 to the Blue Harbor Logistics NDA made?",
            [(NBA, 1)],
            ["5 June 2024"],
            _not_for(HARBOR),
            tags=["finding:amendment", "scope:none"],
            split=test,
        ),
        # -- chip
        _example(
            "chip",
            "What is the Effective Date of this agreement?",
            [(NA, 1)],
            ["1 September 2020"],
            _not_for(NORTHWIND, ASTER),
            ExampleScope(document_ids=(NA,)),
            tags=["finding:defined_term", "scope:chip"],
            split=test,
        ),
        _example(
            "chip",
            "What is the Purpose of this NDA?",
            [(NB, 1)],
            ["a shared cold-chain shipping route"],
            _not_for(NORTHWIND, HARBOR),
            ExampleScope(document_ids=(NB,)),
            tags=["finding:defined_term", "scope:chip"],
            split=test,
        ),
        _example(
            "chip",
            "How long do the confidentiality obligations last after the agreement ends?",
            [(HA, 2)],
            ["ten (10) years"],
            _not_for(HELIX, ASTER),
            ExampleScope(document_ids=(HA,)),
            tags=["scope:chip"],
            split=test,
        ),
        _example(
            "chip",
            "What does the governing law section of this agreement provide?",
            [(SN, 3)],
            ["the State of Wisconsin"],
            _not_for(STREMWOOD, NORTHWIND),
            ExampleScope(document_ids=(SN,)),
            tags=["finding:heading", "scope:chip"],
            split=test,
        ),
        _example(
            "chip",
            "What does the Term section say?",
            [(NQ, 2)],
            ["two (2) years"],
            _not_for(NORTHWIND, QUARRY),
            ExampleScope(document_ids=(NQ,)),
            tags=["finding:heading", "scope:chip"],
            split=test,
        ),
        _example(
            "chip",
            "When was the Clinical Services Agreement entered into?",
            [(VS, 1)],
            ["8 August 2021"],
            _not_for(VELTRA, SOLENNE),
            ExampleScope(document_ids=(VS,)),
            tags=["finding:parties_clause", "scope:chip"],
            split=test,
        ),
        _example(
            "chip",
            "How many days does the receiving party have to hand back materials under this form?",
            [(FORM2, 2)],
            ["thirty (30)"],
            (),
            ExampleScope(document_ids=(FORM2,)),
            tags=["finding:unowned_forms", "unowned_selected", "scope:chip"],
            split=test,
        ),
        # -- property
        _example(
            "property",
            "What is the effective date of each agreement?",
            [(NA, 1), (HA, 1)],
            ["1 September 2020", "9 November 2022"],
            _not_for(ASTER),
            ExampleScope(property=ASTER.slug),
            tags=["finding:defined_term", "scope:property"],
            split=test,
        ),
        _example(
            "property",
            "For how many years do the confidentiality obligations continue after the agreement ends?",
            [(NQ, 2)],
            ["three (3) years"],
            _not_for(QUARRY),
            ExampleScope(property=QUARRY.slug),
            tags=["finding:summary_names_other_party", "scope:property"],
            split=test,
        ),
        _example(
            "property",
            "Which courts resolve disputes?",
            [(NB, 3)],
            ["the courts of Harris County"],
            _not_for(HARBOR),
            ExampleScope(property=HARBOR.slug),
            tags=["scope:property"],
            split=test,
        ),
        _example(
            "property",
            "Which state's laws govern the undertaking?",
            [(OS, 3)],
            ["the State of Wisconsin"],
            _not_for(ORBIS),
            ExampleScope(property=ORBIS.slug),
            tags=["finding:catalog_decides", "scope:property"],
            split=test,
        ),
        _example(
            "property",
            "Within how many days are invoices paid?",
            [(VS, 2)],
            ["forty (40)"],
            _not_for(VELTRA),
            ExampleScope(property=VELTRA.slug),
            tags=["finding:parties_clause", "scope:property"],
            split=test,
        ),
        _example(
            "property",
            "What is meant by Confidential Information?",
            [(NH, 1), (HA, 1)],
            ["non-public business, technical and financial information"],
            _not_for(HELIX),
            ExampleScope(property=HELIX.slug),
            tags=["finding:defined_term", "scope:property"],
            split=test,
        ),
        # -- wrong property
        _example(
            "wrong_property",
            "What is the effective date of the agreement between Helix Robotics and Aster Biologics?",
            [(HA, 1)],
            ["9 November 2022"],
            _not_for(HELIX, ASTER),
            tags=["wrong_entity", "finding:two_parties", "scope:none"],
            split=test,
        ),
        _example(
            "wrong_property",
            "When does the NDA between Northwind Systems and Blue Harbor Logistics take effect?",
            [(NB, 1)],
            ["20 January 2023"],
            _not_for(NORTHWIND, HARBOR),
            ExampleScope(property=NORTHWIND.slug),
            tags=["wrong_entity", "finding:two_parties", "scope:property"],
            split=test,
        ),
        _example(
            "wrong_property",
            "Who signed the Northwind and Aster Biologics NDA for Aster?",
            [(NA, 3)],
            ["Katrin Vogel"],
            _not_for(NORTHWIND, ASTER),
            ExampleScope(document_ids=(NH, NA, NQ)),
            tags=["wrong_entity", "finding:two_parties", "scope:chip"],
            split=test,
        ),
        _example(
            "wrong_property",
            "Where are notices to Blue Harbor Logistics sent?",
            [(NB, 3)],
            ["9 Dock Road, Houston"],
            _not_for(HARBOR),
            tags=["wrong_entity", "finding:unowned_forms", "scope:none"],
            split=test,
        ),
        _example(
            "wrong_property",
            "What is the effective date of the Quarry Analytics NDA?",
            forbidden=(NH, NQ),
            scope=ExampleScope(document_ids=(NH,)),
            tags=["wrong_entity", "not_in_scope", "scope:chip"],
            not_found=True,
            note="other_entity",
            split=test,
        ),
        _example(
            "wrong_property",
            "Who signed the Blue Harbor Logistics agreement for Blue Harbor?",
            forbidden=(SN, OS, NB),
            scope=ExampleScope(property=STREMWOOD.slug),
            tags=["wrong_entity", "not_in_scope", "scope:property"],
            not_found=True,
            note="other_entity",
            split=test,
        ),
    ]


# Held-out terms the template has no clause for, asked in other words than ABSENT_TERMS (a liability cap and
# renewal again, and four terms dev does not ask about).
TEST_ABSENT_TERMS = (
    AbsentTerm(
        "liability_cap",
        ("limitation of liability", r"liability (?:is|shall|will|of|under|for)", "liable", "cap", "capped", "maximum"),
        (NB,),
        "Is there a maximum amount either party can be liable for under this NDA?",
        HELIX,
        "Up to what amount is Helix Robotics' liability limited under its NDAs?",
    ),
    AbsentTerm(
        "indemnification",
        ("indemnif", "indemnity", "hold harmless"),
        (NQ,),
        "Which party must indemnify the other under this agreement?",
        ORBIS,
        "Does Orbis Apparel's undertaking require the Recipient to indemnify Orbis?",
    ),
    AbsentTerm(
        "assignment",
        ("assign", "assignment", "transfer", "successor"),
        (HA,),
        "May either party assign this agreement to an affiliate?",
        STREMWOOD,
        "Can Stremwood's Dairy Farms transfer its agreements to a successor?",
    ),
    AbsentTerm(
        "non_compete",
        ("compete", "competing", "competition", "non-compete"),
        (NA,),
        "Does this NDA bar Aster Biologics from competing with Northwind?",
        QUARRY,
        "What non-compete period applies to Quarry Analytics?",
    ),
    AbsentTerm(
        "insurance",
        ("insurance", "insured", "insure"),
        (SN,),
        "What insurance must each party carry under this agreement?",
        NORTHWIND,
        "How much insurance coverage do Northwind's agreements require?",
    ),
    AbsentTerm(
        "renewal",
        ("renew", "renews", "renewal", "renewed", "automatically", "extend", "extension", "roll over", "rollover"),
        (HA,),
        "Is there an automatic renewal term once this NDA expires?",
        ASTER,
        "Does the term of Aster Biologics' agreements roll over once it expires?",
    ),
)


def corpus_on_disk(corpus_dir: Path) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """(pages, owning party slugs) of every document of the corpus as written, read the way the index reads it."""
    manifest = tomllib.loads((corpus_dir / "corpus.toml").read_text(encoding="utf-8"))
    owners = {doc["path"]: tuple(doc.get("entities", ())) for doc in manifest["documents"] if "*" not in doc["path"]}
    pages: dict[str, tuple[str, ...]] = {}
    for path in owners:
        try:
            pages[path] = tuple(read_source(corpus_dir / path, path).pages)
        except InputFileError:  # a file the index skips (the corrupt fixture) holds nothing to find either
            pages[path] = ()
    return pages, owners


def absent_in_scope_examples(
    corpus_dir: Path,
    chunks: Mapping[str, Sequence[str]] | None = None,
    terms: Sequence[AbsentTerm] | None = None,
    split: str = "dev",
) -> list[LabelledExample]:
    """Per `terms` entry (default ABSENT_TERMS), a chip and a party-scope example expecting "not found", each
    checked: no marker in any page of a document in scope (nor, given, in any of its index chunks)."""
    pages, owners = corpus_on_disk(corpus_dir)
    out: list[LabelledExample] = []
    tags = ("not_in_scope", "absent_in_scope")
    for term in ABSENT_TERMS if terms is None else terms:
        chip_parties = [p for p in PARTIES if all(p.slug in owners[path] for path in term.chip)]
        scoped = [path for path, slugs in owners.items() if term.party.slug in slugs]
        for case, question, scope, in_scope, forbidden in (
            ("chip", term.chip_question, ExampleScope(document_ids=term.chip), term.chip, _not_for(*chip_parties)),
            ("property", term.scope_question, ExampleScope(property=term.party.slug), scoped, _not_for(term.party)),
        ):
            require_absent(f"{case} example {question!r}", term.markers, in_scope, pages, chunks)
            scope_tag = "scope:chip" if case == "chip" else "scope:property"
            out.append(
                _example(
                    case,
                    question,
                    forbidden=forbidden,
                    scope=scope,
                    tags=(*tags, f"topic:{term.topic}", scope_tag),
                    not_found=True,
                    split=split,
                )
            )
    return out


def write(corpus_dir: Path, traces_dir: Path, index: Path | None = None) -> list[Path]:
    """Write the corpus and its traces; the paths written. With `index` (an index of the corpus), the
    absent terms are also checked against its chunks."""
    written = []
    for agreement in ALL:
        path = corpus_dir / agreement.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(agreement), encoding="utf-8")
        written.append(path)
    scan = corpus_dir / CORRUPT_SCAN
    scan.write_bytes(CORRUPT_BYTES)
    written.append(scan)
    (corpus_dir / "corpus.toml").write_text(manifest(), encoding="utf-8")
    written.append(corpus_dir / "corpus.toml")
    traces_dir.mkdir(parents=True, exist_ok=True)
    chunks = index_chunks(index) if index is not None else None
    write_examples(traces_dir / "dev.jsonl", [*examples(), *absent_in_scope_examples(corpus_dir, chunks)])
    written.append(traces_dir / "dev.jsonl")
    held_out = absent_in_scope_examples(corpus_dir, chunks, TEST_ABSENT_TERMS, split="test")
    write_examples(traces_dir / "test.jsonl", [*test_examples(), *held_out])
    written.append(traces_dir / "test.jsonl")
    return written


def _check() -> None:
    """Every blank form names no counterparty; every agreement names both of its parties on page 1."""
    for form in FORMS:
        if form.second is not None or not re.search(r"_{5,}", _pages(form.path)[0]):
            raise SystemExit(f"{form.path}: a form must leave its counterparty blank")
    for a in AGREEMENTS:
        page = _pages(a.path)[0]
        if not all(p is not None and p.name in page for p in (a.first, a.second)):
            raise SystemExit(f"{a.path}: page 1 must name both parties")
        if a.amends is not None and a.amends not in BY_PATH:
            raise SystemExit(f"{a.path}: amends {a.amends}, which is no agreement here")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "datasets" / "contracts")
    parser.add_argument("--traces", type=Path, default=ROOT / "datasets" / "contracts-traces")
    parser.add_argument("--index", type=Path, help="an index of the corpus: absent terms are checked in its chunks too")
    args = parser.parse_args()
    _check()
    for path in write(args.corpus, args.traces, args.index):
        print(path)


if __name__ == "__main__":
    main()
