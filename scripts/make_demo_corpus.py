"""Generate the demo corpus in datasets/demo/: Nairobi real-estate documents with traps.

Run from the repository root:

    python scripts/make_demo_corpus.py

The output is byte-identical on every run: no clock, no unseeded randomness, PDFs carry a fixed creation
date. Everything in datasets/demo/ that this script writes (documents, corpus.toml, traps.toml, README.md)
is derived from the property records in scripts/demo_properties.toml, the document templates in
scripts/demo_corpus/<type>.toml and the trap documents and records in scripts/demo_corpus/documents.toml,
so a fact changed there changes consistently in the documents, the manifest, the trap list and the card.

All people, companies and parcels are fictional.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # scripts/ is no package: its builders import each other by name

from data_tables import table  # noqa: E402
from demo_facts import BY_SLUG, PROPERTIES, VALUATION_SUMMARY_EXTRA, d, ksh  # noqa: E402
from demo_rendering import PAGE_BREAK, render_markdown, render_pdf  # noqa: E402
from demo_templates import DOC_TYPES, TEMPLATES, TEMPLATES_DIR, Content, Doc, content  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "datasets" / "demo"
DOCUMENTS_FILE = TEMPLATES_DIR / "documents.toml"
GENERATED_FILES = ("corpus.toml", "traps.toml", "README.md")
TRAP_KINDS = (
    "filename_content_mismatch",
    "near_identical_address",
    "parcel_number",
    "two_property_summary",
    "lookalike_hides_entity",
    "lookalike_smuggles_other",
    "generic_summary",
)
# File-name stem of each base document type; every property has one document of each.
BASE_STEMS = (
    ("lease", "lease"),
    ("valuation", "valuation"),
    ("offer_letter", "offer-letter"),
    ("inspection_report", "inspection-report"),
    ("title_document", "title-document"),
)
DOCUMENT_FIELDS = {"path", "template", "property", "other", "banner", "values", "page_count", "entities", "note"}
TRAP_FIELDS = {"kind", "document", "asked_entity", "expected", "note"}


@dataclass(frozen=True)
class Trap:
    kind: str
    document: str
    asked_entity: str
    expected: str
    note: str


@dataclass
class Corpus:
    docs: list[Doc] = field(default_factory=list)
    traps: list[Trap] = field(default_factory=list)

    def add(self, path: str, content: Content, entities: Sequence[str], note: str = "") -> str:
        self.docs.append(Doc(path, content.type, tuple(entities), content.title, content.summary, content.pages, note))
        return path

    def trap(self, kind: str, document: str, asked: str, expected: str, note: str) -> None:
        self.traps.append(Trap(kind, document, asked, expected, note))


def base_path(prop_index: int, type_index: int, slug: str, stem: str) -> str:
    """Base documents alternate formats so each type and each property has both .md and .pdf."""
    ext = "pdf" if (prop_index + type_index) % 2 == 0 else "md"
    return f"{slug}/{stem}.{ext}"


def _property(slug: str | None, where: str) -> Any:
    if slug is not None and slug not in BY_SLUG:
        raise ValueError(f"{where}: unknown property {slug!r}")
    return BY_SLUG[slug] if slug is not None else None


def build_corpus(documents_file: Path = DOCUMENTS_FILE) -> Corpus:
    """Every document and every trap record of the demo corpus: each property's base documents, then the
    trap documents and records of `documents_file`."""
    c = Corpus()
    for i, p in enumerate(PROPERTIES):
        for j, (doc_type, stem) in enumerate(BASE_STEMS):
            extra = VALUATION_SUMMARY_EXTRA.get(p.slug, "") if doc_type == "valuation" else ""
            c.add(base_path(i, j, p.slug, stem), content(doc_type, p, summary_extra=extra), [p.slug])
    data = tomllib.loads(documents_file.read_text(encoding="utf-8"))
    for i, raw in enumerate(data["documents"]):
        where = f"{documents_file.name}: documents[{i}]"
        doc = table(raw, DOCUMENT_FIELDS, {"path", "template", "entities", "note"}, where)
        if doc["template"] not in TEMPLATES:
            raise ValueError(f"{where}.template: unknown template {doc['template']!r}")
        filled = content(
            doc["template"],
            _property(doc.get("property"), f"{where}.property"),
            other=_property(doc.get("other"), f"{where}.other"),
            values=doc.get("values"),
            banner=doc.get("banner"),
            page_count=doc.get("page_count"),
        )
        c.add(doc["path"], filled, doc["entities"], doc["note"])
    for i, raw in enumerate(data["traps"]):
        t = table(raw, TRAP_FIELDS, TRAP_FIELDS, f"{documents_file.name}: traps[{i}]")
        c.trap(t["kind"], t["document"], t["asked_entity"], t["expected"], t["note"])
    return c


# ---------------------------------------------------------------------------------------
# Manifest, trap list, dataset card
# ---------------------------------------------------------------------------------------


def toml_str(value: str) -> str:
    """A TOML basic string (JSON escapes are valid TOML escapes for these texts)."""
    return json.dumps(value, ensure_ascii=False)


def toml_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(toml_str(v) for v in values) + "]"


# The demo corpus's own words and patterns (pipeline/vocabulary.py), stored with its index.
VOCABULARY = r"""
[vocabulary]
# Words that name a kind of property or document, never one property.
generic_words = ["property", "properties", "premises", "house", "apartment", "townhouse", "document", "documents",
  "lease", "leases", "valuation", "valuations", "offer", "offers"]
# Currency words an amount is written with or without ("KSH 285,000", "285,000 Kenya shillings").
units = ["ksh", "kes", "kenya", "shilling", "shillings"]
# The Kenyan tax identification number is personal data.
pii_terms = ["kra pin"]

[vocabulary.addresses]
street_types = ["Lane", "Road", "Street", "Avenue", "Drive", "Close", "Court", "Gardens"]
# Heads that make "<Head> Road" or "<Head> Court" no address ("Main Road", "High Court").
head_stopwords = ["any", "each", "every", "our", "same", "main", "access", "private", "public", "service", "feeder",
  "bypass", "high", "supreme", "county", "district", "magistrate", "magistrates", "magistrate's", "magistrates'",
  "land", "environment", "commercial", "family", "appeal", "industrial", "new", "old"]

# Land registry numbers: "L.R. NO: 1160/88", "LR No. 2327 / 30", "title no. 209/8812", "parcel 1870/IV/171".
[[vocabulary.identifiers]]
name = "parcel_number"
label = "parcel"
pattern = '\b(?:l\s*\.?\s*r|title|parcel)\s*\.?\s*(?:no|number|#)?\s*\.?\s*[:.]?\s*(\d+(?:\s*/\s*[0-9a-z]+)+)'
# A registry number written alone in a property's alias: "1160/88".
bare = '\b\d+(?:\s*/\s*\d+)+\b'
"""


def render_manifest(corpus: Corpus) -> bytes:
    lines = [
        "# Generated by scripts/make_demo_corpus.py - edit the script, not this file.",
        'format = "scoperag-corpus/v1"',
        'name = "demo"',
        'entity_kind = "property"',
        "# The dataset card and the trap list live beside the documents but are not documents.",
        f"exclude = {toml_list(['README.md', 'traps.toml'])}",
        *VOCABULARY.rstrip("\n").split("\n"),
    ]
    for p in PROPERTIES:
        lines += ["", "[[entities]]", f"slug = {toml_str(p.slug)}", f"name = {toml_str(p.name)}",
                  f"aliases = {toml_list(p.aliases)}"]  # fmt: skip
    for doc in sorted(corpus.docs, key=lambda x: x.path):
        lines += ["", "[[documents]]", f"path = {toml_str(doc.path)}", f"type = {toml_str(doc.type)}",
                  f"entities = {toml_list(doc.entities)}"]  # fmt: skip
        if not doc.entities:
            # A common annex no property owns: served for every property's questions.
            lines.append('unowned = "shared"')
    return ("\n".join(lines) + "\n").encode("utf-8")


def render_traps(corpus: Corpus) -> bytes:
    lines = [
        "# Generated by scripts/make_demo_corpus.py - edit the script, not this file.",
        '# expected: should a question about asked_entity keep ("keep") or drop ("exclude") this document.',
        f"# kinds: {', '.join(TRAP_KINDS)}",
    ]
    for t in corpus.traps:
        lines += ["", "[[traps]]", f"kind = {toml_str(t.kind)}", f"document = {toml_str(t.document)}",
                  f"asked_entity = {toml_str(t.asked_entity)}", f"expected = {toml_str(t.expected)}",
                  f"note = {toml_str(t.note)}"]  # fmt: skip
    return ("\n".join(lines) + "\n").encode("utf-8")


def md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_card(corpus: Corpus) -> bytes:
    docs = sorted(corpus.docs, key=lambda x: x.path)
    n_md = sum(1 for x in docs if x.fmt == "md")
    out = [
        "# Demo corpus: Nairobi residential property documents",
        "",
        "A small, fully fictional corpus for scoperag's tests, examples and benchmarks: leases, valuations,"
        " offer letters, inspection reports and title documents for"
        f" {len(PROPERTIES)} residential properties in Nairobi, Kenya ({len(docs)} documents:"
        f" {n_md} Markdown, {len(docs) - n_md} PDF). Amounts are in Kenya shillings (KSH). Every person,"
        " company and parcel number is invented.",
        "",
        "The corpus exists to test the wrong-property guard (seed 002): the same templates are used for"
        " every property, addresses are near-identical, files are misnamed, and summaries mention more than"
        " one property. `traps.toml` lists those cases with the expected keep/exclude decision.",
        "",
        "## Files",
        "",
        "- `corpus.toml`: the manifest (`scoperag-corpus/v1`); the truth about which property each document"
        " is about (`entities`, primary first). The folder a file sits in is only organisation and is"
        " deliberately wrong for some files. Its `[vocabulary]` holds the corpus's own words and patterns"
        " (street types, parcel numbers, KSH, generic nouns), stored with the index.",
        "- `<property-slug>/*.md`: YAML front matter (`title`, `type`, `summary`), then pages separated by a"
        f" line `{PAGE_BREAK}`.",
        "- `<property-slug>/*.pdf`: one logical page per PDF page (core font Helvetica, latin-1 text); the"
        " PDF title is the document title and the PDF subject is the summary.",
        "- `traps.toml`: trap records (`kind`, `document`, `asked_entity`, `expected`, `note`).",
        "- `README.md`: this card. The manifest's `exclude` keeps this card and `traps.toml` out of the index.",
        "",
        "## How it was generated",
        "",
        "Everything here is written by `scripts/make_demo_corpus.py` from the property records in"
        " `scripts/demo_properties.toml` and the documents' texts in `scripts/demo_corpus/` (the document"
        " templates, one file per document type, and the trap documents and records):",
        "",
        "```",
        "python scripts/make_demo_corpus.py        # from the repository root",
        "```",
        "",
        "Regeneration is byte-identical: no clock and no randomness are used, and PDFs carry a fixed creation"
        " date (2024-01-01 UTC). Do not edit the generated files by hand; change the records or the script and"
        " rerun it.",
        "",
        "## Properties",
        "",
        "| slug | name | address | parcel | aliases | documents about it |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for p in PROPERTIES:
        count = sum(1 for x in docs if p.slug in x.entities)
        out.append(f"| `{p.slug}` | {p.name} | {p.full_address} | {p.parcel} | {'; '.join(p.aliases)} | {count} |")
    out += [
        "",
        "Near-identical pairs: Banda Lane / Banda Road (parcels 1160/88 and 1160/880), Karen Ridge /"
        " Karen Ridges Court, Mellifera Gardens / Mellifera Court; Banda Lane and Banda Road are also in"
        " the suburb Karen, which is not the property Karen Ridge.",
        "",
        "## Documents",
        "",
        "| path | type | entities | pages | note |",
        "| --- | --- | --- | --- | --- |",
    ]
    for x in docs:
        ents = ", ".join(f"`{s}`" for s in x.entities) or "(none)"
        out.append(f"| `{x.path}` | {x.type} | {ents} | {len(x.pages)} | {md_cell(x.note)} |")
    out += [
        "",
        "## Facts per property (for checking answers)",
        "",
        "| property | tenant | monthly rent | lease start, term | market value (valuer, date) | offer (buyer) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for p in PROPERTIES:
        out.append(
            f"| {p.name} | {p.tenant} | {ksh(p.rent)} | {d(p.lease_start)}, {p.term_years} y |"
            f" {ksh(p.market_value)} ({p.valuer_firm}, {d(p.valuation_date)}) | {ksh(p.offer_price)}"
            f" ({p.buyer}) |"
        )
    out += [
        "",
        "## Traps",
        "",
        "Each record says, for a question about `asked_entity`, whether the document must be kept or"
        " excluded. The look-alike documents use CYRILLIC SMALL LETTER A (U+0430) or O (U+043E) inside a"
        " property name, in Markdown only.",
        "",
    ]
    for kind in TRAP_KINDS:
        out += [
            f"### {kind}",
            "",
            "| document | asked entity | expected | note |",
            "| --- | --- | --- | --- |",
        ]
        for t in corpus.traps:
            if t.kind == kind:
                out.append(f"| `{t.document}` | `{t.asked_entity}` | {t.expected} | {md_cell(t.note)} |")
        out.append("")
    return "\n".join(out).encode("utf-8")


# ---------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------


def check(corpus: Corpus) -> None:
    """Raise if the corpus breaks its own rules (formats, references, trap kinds)."""
    paths = [x.path for x in corpus.docs]
    duplicates = sorted({p for p in paths if paths.count(p) > 1})
    if duplicates:
        raise ValueError(f"duplicate document paths: {duplicates}")
    for x in corpus.docs:
        if x.type not in DOC_TYPES:
            raise ValueError(f"{x.path}: unknown type {x.type}")
        if x.fmt == "pdf" and not 2 <= len(x.pages) <= 5:
            raise ValueError(f"{x.path}: PDFs must have 2-5 pages, not {len(x.pages)}")
        if any(s not in BY_SLUG for s in x.entities):
            raise ValueError(f"{x.path}: unknown entities {x.entities}")
    known = set(paths)
    for t in corpus.traps:
        if t.kind not in TRAP_KINDS or t.expected not in ("keep", "exclude") or t.document not in known:
            raise ValueError(f"bad trap record {t}")
        if t.asked_entity not in BY_SLUG:
            raise ValueError(f"bad trap entity {t}")
    missing = set(TRAP_KINDS) - {t.kind for t in corpus.traps}
    if missing:
        raise ValueError(f"no trap records of kind {sorted(missing)}")


def write(out_dir: Path) -> list[Path]:
    """Write the whole corpus into `out_dir` (replacing the property folders); the written paths."""
    corpus = build_corpus()
    check(corpus)
    out_dir.mkdir(parents=True, exist_ok=True)
    for p in PROPERTIES:
        folder = out_dir / p.slug
        if folder.exists():
            shutil.rmtree(folder)
    written = []
    for doc in corpus.docs:
        target = out_dir / doc.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(render_pdf(doc) if doc.fmt == "pdf" else render_markdown(doc))
        written.append(target)
    for name, data in (
        ("corpus.toml", render_manifest(corpus)),
        ("traps.toml", render_traps(corpus)),
        ("README.md", render_card(corpus)),
    ):
        (out_dir / name).write_bytes(data)
        written.append(out_dir / name)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default: datasets/demo)")
    args = parser.parse_args()
    written = write(args.out)
    total = sum(p.stat().st_size for p in written)
    print(f"wrote {len(written)} files ({total / 1024:.0f} KiB) to {args.out}")


if __name__ == "__main__":
    main()
