"""Generate labelled traces for the demo corpus: datasets/demo-traces/{train,dev,test}.jsonl + card.

Run from the repository root (after scripts/make_demo_corpus.py):

    python scripts/make_demo_traces.py

Deterministic: facts come from the property records in scripts/demo_properties.toml (read by
scripts/make_demo_corpus.py, whose helpers this script shares), what is asked from scripts/demo_traces/
(topics, wrong_property plans, unanswerable-in-scope asks; read by scripts/demo_questions.py), every random
choice from one random.Random(SEED), and the output is identical on every run. Before writing, every
example is checked against the documents themselves (scripts/demo_trace_builder.py: Markdown pages split at
the page-break comment, PDF pages extracted with pypdf, as the index reads them): each answer fact occurs in a
gold document, each "not found" example's answer is absent from its scope, gold documents lie
inside the scope, forbidden documents are about another property, and every trap of
datasets/demo/traps.toml is exercised by a wrong_property example. Any failure stops the run.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipeline.evaluation.examples import CASES, SPLITS, LabelledExample, Split, write_example_set

SCRIPTS = Path(__file__).resolve().parent
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))  # scripts/ is no package: its builders import each other by name

from absence import index_chunks, marker_hits, require_absent  # noqa: E402
from demo_questions import (  # noqa: E402
    ABSENT,
    ABSENT_ASKS,
    CHIP_OF_OTHER,
    FOLDER_CHIPS,
    LEASE,
    LITERAL,
    LOOKALIKE_QUESTIONS,
    MULTI,
    OTHER_PROPERTY_IN_SCOPE,
    PLAIN,
    TRAP_PLANS,
    AbsentAsk,
    P,
    Spec,
    make_spec,
    ref,
    spec,
)
from demo_trace_builder import Builder, chip, load_corpus, norm  # noqa: E402
from demo_traces_card import card  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo"
DEFAULT_OUT = ROOT / "datasets" / "demo-traces"
SEED = 20240601
SPLIT_SHARES = {"train": 0.6, "dev": 0.2, "test": 0.2}
# Named here too: tests build an ask of their own (AbsentAsk, LEASE) and replace ABSENT_ASKS in this module.
__all__ = ["LEASE", "AbsentAsk", "build", "card", "main"]


# ---------------------------------------------------------------------------------------
# The four cases
# ---------------------------------------------------------------------------------------


def topics_for(slug: str, rng: random.Random) -> list[str]:
    """A multi-part topic, a literal one, then every topic, each list shuffled."""
    plain = [t for t in PLAIN if t != "encumbrance" or P[slug].encumbrances]
    multi, literal, rest = list(MULTI), list(LITERAL), [*MULTI, *LITERAL, *plain]
    for group in (multi, literal, rest):
        rng.shuffle(group)
    return list(dict.fromkeys([multi[0], literal[0], *rest]))


def answerable(b: Builder, case: str, slug: str, refs: Sequence[str], count: int) -> None:
    """`count` answerable examples about `slug` in `case` (no_scope, chip or property)."""
    added = 0
    for topic in topics_for(slug, b.rng):
        s = spec(topic, slug, ref(slug, b.rng.choice(refs)))
        if case == "no_scope":
            scope: dict[str, Any] = {}
        elif case == "property":
            scope = {"property": slug}
        else:
            others = [doc for doc in b.corpus.docs_of(slug) if doc not in b.gold_of(s)]
            scope = chip(b.gold_of(s), b.rng.sample(others, b.rng.randint(0, 2)))
        added += b.add(case, s, scope, tags=s.tags)
        if added == count:
            return
    raise SystemExit(f"only {added} {case} examples for {slug}")


def chip_not_in_scope(b: Builder, slug: str) -> None:
    """A chip of documents that cannot answer the question (e.g. the inspection, asked the value)."""
    c = b.corpus
    for topic in b.rng.sample(PLAIN, len(PLAIN)):
        if topic == "encumbrance" and not P[slug].encumbrances:
            continue
        s = spec(topic, slug, ref(slug, b.rng.choice(["name", "address"])))
        candidates = [
            doc
            for doc in c.docs_of(slug)
            if c.types[doc] not in s.types and not any(c.contains(doc, f) for f in s.facts)
        ]
        if candidates:
            picked = b.rng.sample(candidates, min(len(candidates), b.rng.randint(1, 2)))
            kinds = "+".join(sorted({c.types[doc] for doc in picked}))
            if b.add("chip", s, chip(picked), not_found=True, tags=("not_in_scope", f"chip_of:{kinds}")):
                return
    raise SystemExit(f"no not-in-scope chip for {slug}")


def absent(b: Builder, case: str, slug: str, index: int, refs: Sequence[str]) -> None:
    """A question about a fact no document holds (service charge, parking...): 'not found'."""
    template, term = ABSENT[index % len(ABSENT)]
    s = Spec("absent", slug, template.format(r=ref(slug, b.rng.choice(refs))), (term,))
    scope = {"property": slug} if case == "property" else {}
    if not b.add(case, s, scope, not_found=True, tags=("not_in_scope", "absent_fact")):
        raise SystemExit(f"duplicate absent-fact example for {slug}")


def regular_cases(b: Builder) -> None:
    for i, slug in enumerate(P):
        answerable(b, "no_scope", slug, ["name", "address"], 6)
        absent(b, "no_scope", slug, i, ["name", "address"])
        answerable(b, "chip", slug, ["name", "address"], 6)
        chip_not_in_scope(b, slug)
        answerable(b, "property", slug, ["name", "address", "none", "none"], 6)
        absent(b, "property", slug, i + 1, ["name", "none"])


# ---------------------------------------------------------------------------------------
# wrong_property: every trap, look-alike spellings, scopes that cannot answer
# ---------------------------------------------------------------------------------------


def lure_docs(b: Builder, lure: str, asked: str, gold: Sequence[str]) -> list[str]:
    """The lure property's documents of the gold documents' types (none about `asked`)."""
    c = b.corpus
    kinds = {c.types[doc] for doc in gold}
    return [doc for doc in c.docs_of(lure) if c.types[doc] in kinds and asked not in c.owners[doc]]


def trap_examples(b: Builder) -> None:
    plans = {(t.document, t.asked) for t in TRAP_PLANS}
    records = {(t["document"], t["asked_entity"]) for t in b.corpus.traps}
    if plans != records:
        raise SystemExit(f"trap plans and traps.toml differ: {sorted(plans ^ records)}")
    kinds = {(t["document"], t["asked_entity"]): (t["kind"], t["expected"]) for t in b.corpus.traps}
    for plan in TRAP_PLANS:
        kind, expected = kinds[(plan.document, plan.asked)]
        s = make_spec(plan.topic, plan.asked, plan.ref)
        gold = b.gold_of(s)
        if expected == "keep":
            if plan.document not in gold or plan.lure is None:
                raise SystemExit(f"keep trap {plan}: the trap document must be gold and a lure named")
            bait = lure_docs(b, plan.lure, plan.asked, gold)
        else:
            if plan.document in gold:
                raise SystemExit(f"exclude trap {plan}: the trap document answers the question")
            bait = [plan.document]
        scope = {"none": {}, "property": {"property": plan.asked}, "chip": chip(gold, bait)}[plan.scope]
        tags = (*s.tags, f"trap:{kind}", f"trap_expected:{expected}")
        if kind.startswith("lookalike"):
            tags += ("lookalike",)
        if not b.add("wrong_property", s, scope, forbidden=bait, tags=tags):
            raise SystemExit(f"trap example collides with another example: {plan}")


def wrong_property_cases(b: Builder) -> None:
    c = b.corpus
    trap_examples(b)
    for topic, slug, spelling, scope_kind, bait in LOOKALIKE_QUESTIONS:
        s = make_spec(topic, slug, spelling)
        scope = {"none": {}, "property": {"property": slug}, "chip": chip(b.gold_of(s), bait)}[scope_kind]
        if not b.add("wrong_property", s, scope, forbidden=bait, tags=(*s.tags, "lookalike", "lookalike:question")):
            raise SystemExit(f"look-alike example collides: {s.question}")
    for scope_slug, topic, asked, ref_kind in OTHER_PROPERTY_IN_SCOPE:
        s = make_spec(topic, asked, ref_kind)
        holders = [doc for doc in c.docs_of(asked) if any(c.contains(doc, f) for f in s.facts)]
        tags = ("not_in_scope", "other_property_in_question")
        if not b.add("wrong_property", s, {"property": scope_slug}, not_found=True, forbidden=holders, tags=tags):
            raise SystemExit(f"other-property example collides: {s.question}")
    for docs, topic, asked, ref_kind in CHIP_OF_OTHER:
        s = make_spec(topic, asked, ref_kind)
        holders = [doc for doc in c.docs_of(asked) if any(c.contains(doc, f) for f in s.facts)]
        tags = ("not_in_scope", "chip_of_other_property")
        if not b.add("wrong_property", s, chip(docs), not_found=True, forbidden=[*docs, *holders], tags=tags):
            raise SystemExit(f"chip-of-other example collides: {s.question}")
    for folder, topic, ref_kind in FOLDER_CHIPS:
        s = make_spec(topic, folder, ref_kind)
        docs = [doc for doc in c.types if doc.startswith(f"{folder}/")]
        misfiled = [doc for doc in docs if folder not in c.owners[doc] and c.owners[doc]]
        if not b.add("wrong_property", s, chip(docs), forbidden=misfiled, tags=(*s.tags, "folder_chip")):
            raise SystemExit(f"folder example collides: {s.question}")


# ---------------------------------------------------------------------------------------
# Unanswerable in scope: the right documents or the property as scope, the fact in none of them
# ---------------------------------------------------------------------------------------

ABSENT_CHIPS_PER_PROPERTY = 2
ABSENT_SEED = SEED + 1


def absent_in_scope_cases(b: Builder, chunks: dict[str, tuple[str, ...]] | None = None) -> list[LabelledExample]:
    """Per property, chips of the documents a question would need with the fact asked in none of them, and
    property scopes with the fact in none of the property's documents (shared ones included); every one
    checked absent from its scope's pages (and, given, the index's chunks). The examples, without split."""
    c = b.corpus
    shared = [doc for doc in c.types if not c.owners[doc]]
    first = len(b.examples)
    asks = list(ABSENT_ASKS)
    scoped = [a for a in ABSENT_ASKS if not a.chip_only]
    for i, slug in enumerate(P):
        picks = [asks[(ABSENT_CHIPS_PER_PROPERTY * i + k) % len(asks)] for k in range(ABSENT_CHIPS_PER_PROPERTY)]
        for k, ask in enumerate(picks):
            docs = [doc for doc in c.docs_of(slug) if c.types[doc] in ask.types]
            r = ref(slug, ("name", "address")[(i + k) % 2])
            s = Spec(ask.topic, slug, _absent_question(ask, 0, slug, r), ask.markers)
            _add_absent(b, "chip", s, chip(docs), docs, chunks, f"chip_of:{'+'.join(ask.types)}")
        # Property scope: the asks no document of the property may hold, in their second wording.
        for ask in (scoped[i % len(scoped)], scoped[(i + 5) % len(scoped)])[: 2 if i % 2 == 0 else 1]:
            r = ref(slug, ("none", "name")[i % 2])
            s = Spec(ask.topic, slug, _absent_question(ask, 1, slug, r), ask.markers)
            _add_absent(b, "property", s, {"property": slug}, [*c.docs_of(slug), *shared], chunks)
    return b.examples[first:]


def _absent_question(ask: AbsentAsk, wording: int, slug: str, r: str) -> str:
    lease = "original 2023 lease" if slug == "mellifera-court" else "lease"
    return ask.wordings[wording].format(r=r, lease=lease)


def _add_absent(
    b: Builder,
    case: str,
    s: Spec,
    scope: dict[str, Any],
    in_scope: Sequence[str],
    chunks: dict[str, tuple[str, ...]] | None,
    *extra: str,
) -> None:
    c = b.corpus
    where = f"{case} example {s.question!r} (scope {scope})"
    require_absent(where, s.facts, in_scope, c.pages, chunks)
    anywhere = not marker_hits(s.facts, c.pages, c.types)
    tags = ("not_in_scope", "absent_in_scope", *extra, *(("absent_fact",) if anywhere else ()))
    if not b.add(case, s, scope, not_found=True, forbidden=b.confusables(s.owner), tags=tags):
        raise SystemExit(f"{where}: collides with another example")


def absent_splits(
    new: Sequence[LabelledExample], owners: dict[str, str], existing: Sequence[LabelledExample]
) -> list[LabelledExample]:
    """Splits for the unanswerable-in-scope examples without moving any existing one: a question (text and
    property) already in a split stays there; the others 60/20/20 per case, as assign_splits does."""
    known = {(norm(e.question), owners[e.id]): e.split for e in existing}
    rest = [e for e in new if (norm(e.question), owners[e.id]) not in known]
    split_of = {e.id: e.split for e in assign_splits(rest, owners, random.Random(ABSENT_SEED))}
    return [e.model_copy(update={"split": split_of.get(e.id) or known[(norm(e.question), owners[e.id])]}) for e in new]


# ---------------------------------------------------------------------------------------
# Splits, card, entry point
# ---------------------------------------------------------------------------------------


def assign_splits(
    examples: Sequence[LabelledExample], owners: dict[str, str], rng: random.Random
) -> list[LabelledExample]:
    """60/20/20 per case; the variants of one question (same text, same property) share a split."""
    groups: dict[tuple[str, str], list[LabelledExample]] = {}
    for e in examples:
        groups.setdefault((norm(e.question), owners[e.id]), []).append(e)
    totals = Counter(e.case for e in examples)
    assigned: Counter[tuple[str, str]] = Counter()
    split_of: dict[str, Split] = {}
    order = list(groups)
    rng.shuffle(order)
    for key in order:
        members = groups[key]

        def deficit(split: Split, members: list[LabelledExample] = members) -> float:
            return sum(SPLIT_SHARES[split] * totals[e.case] - assigned[(e.case, split)] for e in members)

        best = max(SPLITS, key=deficit)
        for e in members:
            assigned[(e.case, best)] += 1
            split_of[e.id] = best
    return [e.model_copy(update={"split": split_of[e.id]}) for e in examples]


def build(root: Path, index: Path | None = None) -> list[LabelledExample]:
    """Every example, checked against the corpus in `root` (and, given, the absent facts against the chunks
    of the index at `index`), with its split."""
    rng = random.Random(SEED)
    b = Builder(load_corpus(root), rng)
    wrong_property_cases(b)
    regular_cases(b)
    examples = assign_splits(b.examples, b.owners, rng)
    counts = Counter(e.case for e in examples)
    short = [case for case in CASES if counts[case] < 60]
    if len(examples) < 240 or short:
        raise SystemExit(f"too few examples: {len(examples)} in all, per case {dict(counts)}")
    # Added after the others are split, from their own random stream: no existing example moves.
    absent = absent_in_scope_cases(b, index_chunks(index) if index is not None else None)
    return [*examples, *absent_splits(absent, b.owners, examples)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEMO, help="the demo corpus (default: datasets/demo)")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="output directory (default: datasets/demo-traces)"
    )
    parser.add_argument(
        "--index", type=Path, help="an index of the corpus: absent facts are also checked against its chunks"
    )
    args = parser.parse_args()
    examples = build(args.corpus, args.index)
    for split, count in write_example_set(args.out, examples).items():
        print(f"{split}: {count} examples")
    (args.out / "README.md").write_text(card(examples), encoding="utf-8")
    print(f"wrote {len(examples)} examples to {args.out}")


if __name__ == "__main__":
    main()
