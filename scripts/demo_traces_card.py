"""The dataset card of the demo traces (datasets/demo-traces/README.md): counts, cases, fields, tags, how the
labels were checked, splits, and how to regenerate them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from demo_questions import ABSENT_ASKS

from pipeline.evaluation.examples import CASES, LabelledExample, counts_table

TAG_MEANINGS = (
    ("topic:<name>", "what is asked (rent, tenant, market_value, offer, inspection_high, parcel, ...)"),
    ("multi_part", "needs decomposition; `gold_sub_questions` lists the parts"),
    ("literal", "names a literal string: a parcel number (L.R. NO: ...) or a quoted clause"),
    ("quoted_clause", "quotes the lease text"),
    ("not_in_scope", "the answer is not in the scope: `expect_not_found`, no facts, no gold"),
    ("absent_fact", "no document of the corpus holds the answer (service charge, parking, ...)"),
    ("absent_in_scope", "the right documents selected or the property as scope; the fact is in none of them"),
    ("chip_of:<types>", "not-in-scope chip: the document types selected"),
    ("trap:<kind>", "built from a trap record of datasets/demo/traps.toml (kind as there)"),
    ("trap_expected:keep", "the trap document is about the asked property: gold"),
    ("trap_expected:exclude", "the trap document is about another property: forbidden"),
    ("lookalike", "a Cyrillic look-alike letter in a property name, in the question or the documents"),
    ("lookalike:question", "the question itself spells the property with a Cyrillic letter"),
    ("other_property_in_question", "property scope, question about another property (not found)"),
    ("chip_of_other_property", "chip of another property's documents (not found; the chip is forbidden)"),
    ("folder_chip", "chip = every file of a folder that holds misfiled documents of other properties"),
    ("scope:none", "asked without scope"),
    ("scope:chip", "asked with selected documents"),
    ("scope:property", "asked with a property as scope"),
)


def card(examples: Sequence[LabelledExample]) -> str:
    tags = Counter(t for e in examples for t in e.tags)

    def count(tag: str) -> int:
        """Examples with the tag; a pattern "kind:<x>" counts every tag starting "kind:"."""
        prefix = tag.split("<")[0]
        return sum(n for t, n in tags.items() if t.startswith(prefix)) if "<" in tag else tags[tag]

    kinds = Counter(t.split(":", 1)[1] for e in examples for t in e.tags if t.startswith("trap:"))
    not_found = Counter(e.case for e in examples if e.expect_not_found)
    lines = [
        "# Demo corpus: labelled traces",
        "",
        "Labelled questions over the demo corpus (`datasets/demo`, fictional Nairobi property documents) in",
        "the four scope cases, as `pipeline.evaluation.examples.LabelledExample` JSONL. Documents are named by",
        'their relative path in the corpus ("banda-lane/lease.pdf"), property scopes by slug ("banda-lane"), so',
        "the traces survive index rebuilds. Load with",
        "`pipeline.evaluation.examples.load_examples(path, split=..., cases=...)`.",
        "",
        "## Counts",
        "",
        *counts_table(examples),
        "",
        "Examples expecting 'not found': " + ", ".join(f"{c} {not_found[c]}" for c in CASES) + ".",
        "",
        "## The cases",
        "",
        "- `no_scope`: questions naming a property by name or address; two-step plan expected.",
        "- `chip`: the selected documents are the gold documents plus up to two other documents of the same",
        "  property; one in ten asks for a fact the selected documents do not hold (`not_in_scope`, e.g. the",
        "  inspection report selected, the market value asked), and two per property select the documents",
        "  the question needs and ask a fact none of them states (`absent_in_scope`, below).",
        '- `property`: the property as scope; many questions do not repeat its name ("the property"); one',
        "  in ten asks for a fact no document holds, and one or two per property more (`absent_in_scope`).",
        "- `wrong_property`: the question or the corpus invites a document about another property, which",
        "  is listed in `forbidden_documents`: one example per trap record of `datasets/demo/traps.toml`",
        "  (filename/content mismatches, Banda Lane / Banda Road and the other near-identical pairs, parcel",
        "  1160/88 inside 1160/880, passing mentions, Cyrillic look-alike letters), questions spelling a",
        "  name with a Cyrillic letter, property scopes asked about another property, chips of another",
        "  property's documents, and chips of whole folders that hold misfiled documents. Scopes vary.",
        "",
        *absent_section(examples),
        "## Fields",
        "",
        "- `gold_documents`: the asked property's documents of the type that answers (lease, valuation,",
        "  offer letter, inspection report, title document, or the one-off document asked about) that state",
        "  at least one answer fact; `gold_pages`: every page of those documents stating a fact (PDF page or",
        "  Markdown page between page-break comments, 1-based).",
        '- `answer_facts`: short strings a correct answer must state ("KSH 285,000", "1 March 2023", names).',
        "- `forbidden_documents`: documents about other properties the question invites: the trap",
        "  documents excluded for the asked property in traps.toml and every document of its near-identical",
        "  partner (set on all cases), plus the example's own bait. Never overlaps the gold documents.",
        "- `expected_plan`: `two_step` without scope, `one_step` with a chip or a property.",
        "",
        "## Tags",
        "",
        "| tag | meaning | examples |",
        "| --- | --- | --- |",
        *[f"| `{tag}` | {meaning} | {count(tag)} |" for tag, meaning in TAG_MEANINGS],
        "",
        "Trap kinds used: " + ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) + ".",
        "",
        "## How the labels were checked",
        "",
        "`scripts/make_demo_traces.py` takes every fact from the property records in",
        "`scripts/demo_properties.toml` (as `scripts/make_demo_corpus.py` loads them) and",
        "stops unless, against the documents as the index reads them (Markdown pages, PDF text by pypdf),",
        "every answer fact occurs (case-insensitively, whitespace collapsed) in a gold document, every gold",
        "document states a fact and lies inside the scope, no 'not found' example's answer occurs in its",
        "scope, no forbidden document is about the asked property, and every trap record is used.",
        "The facts of the `absent_in_scope` examples are checked by their markers (`scripts/absence.py`):",
        "none may occur in any page of a document in scope, nor, with `--index`, in any chunk of it.",
        "`tests/evaluation/test_demo_traces.py` re-checks the committed files independently.",
        "",
        "## Splits",
        "",
        "Fixed on disk (`train.jsonl`, `dev.jsonl`, `test.jsonl`; each example's `split` says the same):",
        "60/20/20 per case, and every variant of one question (same text about the same property) in the",
        "same split, so no question leaks from train into dev or test. The `absent_in_scope` examples are",
        "split after the others, by the same rule from their own random stream, so none of the others moved.",
        "",
        "## Regenerate",
        "",
        "```",
        "python scripts/make_demo_corpus.py    # the corpus, if its records changed",
        "python scripts/make_demo_traces.py    # from the repository root; same output on every run",
        "# the same, and the absent facts also checked in the chunks of a built index:",
        "scoperag index datasets/demo --out .scoperag/index",
        "python scripts/make_demo_traces.py --index .scoperag/index",
        "```",
        "",
    ]
    return "\n".join(lines)


def absent_section(examples: Sequence[LabelledExample]) -> list[str]:
    """The card's section on the unanswerable-in-scope examples: counts and the facts asked."""
    absent = [e for e in examples if "absent_in_scope" in e.tags]
    topics = Counter(t.split(":", 1)[1] for e in absent for t in e.tags if t.startswith("topic:"))
    chip_only = ", ".join(a.topic for a in ABSENT_ASKS if a.chip_only)
    return [
        "## Unanswerable in scope",
        "",
        "Questions a reader of the documents would ask whose answer none of the documents in scope states",
        "(tags `absent_in_scope`, `not_in_scope`; `expect_not_found`, no facts, no gold documents; the",
        "property's confusable documents forbidden as on its answerable examples). Chips select the",
        "property's documents of the type the question is about (`chip_of:<type>`: the lease for a pets",
        "clause, the offer letter for an agent's commission); property scopes ask in another wording, of",
        "every document of the property and the shared ones. `absent_fact` is added where no document of",
        "the corpus uses the fact's markers at all.",
        "",
        *counts_table(absent),
        "",
        "Facts asked: " + ", ".join(f"{t} {n}" for t, n in sorted(topics.items())) + ".",
        "Asked only with the documents selected, as another document of the property uses a marker (a search",
        f"fee on a title is no valuer's fee): {chip_only}.",
        "",
    ]
