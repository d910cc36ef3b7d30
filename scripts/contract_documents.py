"""The documents of the contract corpus: parties, agreements and blank forms as scripts/contract_corpus/ states
them (parties.toml, agreements.toml, nda_template.toml), checked when loaded, and how their pages are written.

The agreements are near-identical on purpose: most are the one template filled with other terms. An error in
a data file names the file, the table and the field (scripts/data_tables.py); `check` then makes sure every
blank form leaves its counterparty blank and every agreement names both of its parties on page 1.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from data_tables import load, table, tables, text, texts

DATA_DIR = Path(__file__).with_name("contract_corpus")
PAGE_BREAK = "\n<!-- pagebreak -->\n"


@dataclass(frozen=True)
class Party:
    slug: str
    name: str
    aliases: tuple[str, ...]
    description: str
    notice: str


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


@dataclass(frozen=True)
class Template:
    """The template's pages (each a list of paragraphs with str.format fields) and what a blank form writes
    where a party is missing."""

    pages: tuple[tuple[str, ...], ...]
    blank: dict[str, str]


@dataclass(frozen=True)
class Documents:
    parties: tuple[Party, ...]
    agreements: tuple[Agreement, ...]
    forms: tuple[Agreement, ...]
    corrupt_scan: str
    corrupt_bytes: bytes
    corrupt_owners: tuple[str, ...]


TERM_FIELDS = {f.name for f in dataclasses.fields(Terms)}
PARTY_FIELDS = {f.name for f in dataclasses.fields(Party)}
AGREEMENT_FIELDS = {"path", "first", "second", "first_written", "summary", "amends", "terms", "pages"}
BLANK_FIELDS = {"first", "second", "description", "notice"}
NO_TERMS = Terms(*["" for _ in TERM_FIELDS])


def _terms(raw: Any, where: str) -> Terms:
    fields = table(raw, TERM_FIELDS, TERM_FIELDS, where)
    return Terms(**{name: text(fields, name, where) for name in TERM_FIELDS})


def load_template(path: Path) -> Template:
    """The template of `path`; ValueError names a bad page, paragraph or field."""
    data = table(load(path), {"pages", "blank"}, {"pages", "blank"}, path.name)
    if not isinstance(data["pages"], list) or not data["pages"]:
        raise ValueError(f"{path.name}.pages: expected a list of pages")
    for i, page in enumerate(data["pages"]):
        if not isinstance(page, list) or not all(isinstance(paragraph, str) for paragraph in page):
            raise ValueError(f"{path.name}.pages[{i}]: expected a list of paragraphs (strings), got {page!r}")
    pages = tuple(tuple(page) for page in data["pages"])
    blank = table(data["blank"], BLANK_FIELDS, BLANK_FIELDS, f"{path.name}.blank")
    return Template(pages, {name: text(blank, name, f"{path.name}.blank") for name in BLANK_FIELDS})


def load_documents(folder: Path = DATA_DIR) -> Documents:
    """The parties, agreements, forms and corrupt scan of parties.toml and agreements.toml in `folder`;
    ValueError names the file, the table and the field of anything missing, unknown or mistyped."""
    raw_parties = load(folder / "parties.toml")
    parties: dict[str, Party] = {}
    for i, raw in enumerate(tables(raw_parties, "parties", "parties.toml")):
        where = f"parties.toml: parties[{i}]"
        fields = table(raw, PARTY_FIELDS, PARTY_FIELDS, where)
        slug = text(fields, "slug", where)
        if slug in parties:
            raise ValueError(f"{where}.slug: party {slug!r} is listed twice")
        parties[slug] = Party(
            slug, text(fields, "name", where), texts(fields, "aliases", where), text(fields, "description", where),
            text(fields, "notice", where),
        )  # fmt: skip

    def party(fields: dict[str, Any], key: str, where: str) -> Party | None:
        if key not in fields:
            return None
        slug = text(fields, key, where)
        if slug not in parties:
            raise ValueError(f"{where}.{key}: unknown party {slug!r} (parties.toml lists {sorted(parties)})")
        return parties[slug]

    name = "agreements.toml"
    data = table(load(folder / name), {"agreements", "forms", "form_terms", "corrupt_scan"}, set(), name)
    agreements = []
    for i, raw in enumerate(tables(data, "agreements", name)):
        where = f"{name}: agreements[{i}]"
        fields = table(raw, AGREEMENT_FIELDS, {"path", "first", "second"}, where)
        if ("terms" in fields) == ("pages" in fields):
            raise ValueError(f"{where}: expected either terms (the template filled) or pages (its own text)")
        first = party(fields, "first", where)
        if "first_written" in fields and first is not None:
            first = dataclasses.replace(first, name=text(fields, "first_written", where))
        own = PAGE_BREAK.join(texts(fields, "pages", where)) + "\n" if "pages" in fields else None
        agreements.append(
            Agreement(
                text(fields, "path", where),
                first,
                party(fields, "second", where),
                _terms(fields["terms"], f"{where}.terms") if "terms" in fields else NO_TERMS,
                summary=text(fields, "summary", where) if "summary" in fields else None,
                text=own,
                amends=text(fields, "amends", where) if "amends" in fields else None,
            )
        )
    form_terms = _terms(data.get("form_terms"), f"{name}: form_terms")
    forms = []
    for i, raw in enumerate(tables(data, "forms", name)):
        where = f"{name}: forms[{i}]"
        fields = table(raw, {"path", "first"}, {"path"}, where)
        forms.append(Agreement(text(fields, "path", where), party(fields, "first", where), None, form_terms))
    where = f"{name}: corrupt_scan"
    scan = table(data.get("corrupt_scan"), {"path", "entities", "content"}, {"path", "entities", "content"}, where)
    return Documents(
        tuple(parties.values()),
        tuple(agreements),
        tuple(forms),
        text(scan, "path", where),
        text(scan, "content", where).encode("utf-8"),
        texts(scan, "entities", where),
    )


TEMPLATE = load_template(DATA_DIR / "nda_template.toml")
DOCUMENTS = load_documents()
PARTIES = DOCUMENTS.parties
AGREEMENTS = DOCUMENTS.agreements
FORMS = DOCUMENTS.forms
ALL = (*AGREEMENTS, *FORMS)
BY_PATH = {a.path: a for a in ALL}
BY_SLUG = {p.slug: p for p in PARTIES}


def render(agreement: Agreement) -> str:
    """The agreement's pages: its own text, else the pages of the one template filled with its parties and terms."""
    if agreement.text is not None:
        return agreement.text
    a, b, blank = agreement.first, agreement.second, TEMPLATE.blank
    fields = {
        **dataclasses.asdict(agreement.terms),
        "first": a.name if a else blank["first"],
        "second": b.name if b else blank["second"],
        "first_description": a.description if a else blank["description"],
        "second_description": b.description if b else blank["description"],
        "first_notice": a.notice if a else blank["notice"],
        "second_notice": b.notice if b else blank["notice"],
    }
    pages = ("\n\n".join(paragraph.format(**fields) for paragraph in page) for page in TEMPLATE.pages)
    return PAGE_BREAK.join(pages) + "\n"


def pages(path: str) -> list[str]:
    """The pages of the document at `path` (an agreement or form) as written."""
    return render(BY_PATH[path]).split(PAGE_BREAK)


def slugs(agreement: Agreement) -> list[str]:
    """The parties an agreement is owned by (a blank form: none)."""
    return [p.slug for p in (agreement.first, agreement.second) if p is not None and agreement in AGREEMENTS]


def check() -> None:
    """Every blank form names no counterparty; every agreement names both of its parties on page 1 and amends
    only an agreement of the corpus."""
    for form in FORMS:
        if form.second is not None or not re.search(r"_{5,}", pages(form.path)[0]):
            raise SystemExit(f"{form.path}: a form must leave its counterparty blank")
    for a in AGREEMENTS:
        page = pages(a.path)[0]
        if not all(p is not None and p.name in page for p in (a.first, a.second)):
            raise SystemExit(f"{a.path}: page 1 must name both parties")
        if a.amends is not None and a.amends not in BY_PATH:
            raise SystemExit(f"{a.path}: amends {a.amends}, which is no agreement here")
