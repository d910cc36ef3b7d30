"""The demo corpus as the index reads it, and the builder that checks every labelled example against it.

scripts/make_demo_traces.py decides what to ask; `Builder.add` stops the run unless, against the documents
themselves (Markdown pages split at the page-break comment, PDF pages extracted with pypdf, as the index reads
them), each answer fact occurs in a gold document, each "not found" example's answer is absent from its scope,
gold documents lie inside the scope and forbidden documents are about another property.
"""

from __future__ import annotations

import random
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from demo_questions import PARTNERS, Spec

from pipeline.evaluation.examples import ExampleScope, GoldPage, LabelledExample, example_id, make_example
from pipeline.store.reading import read_source

CORPUS = "demo"


def norm(text: str) -> str:
    """Case-folded text with whitespace collapsed (PDF line breaks fall anywhere)."""
    return " ".join(text.split()).casefold()


def states(text: str, fact: str) -> bool:
    """Whether normalised `text` states `fact` as a whole: "5%" is not in "7.5%", "1160/88" not in "1160/880"."""
    pattern = r"(?<!\w)(?<!\d[.,/])" + re.escape(norm(fact)) + r"(?!\w|[.,/]\d)"
    return re.search(pattern, text) is not None


@dataclass(frozen=True)
class Corpus:
    """Manifest entries, traps and the page texts of every document."""

    types: dict[str, str]
    owners: dict[str, tuple[str, ...]]
    pages: dict[str, tuple[str, ...]]
    traps: tuple[dict[str, str], ...]

    def docs_of(self, slug: str) -> list[str]:
        """The documents the manifest relates to a property (its property scope)."""
        return sorted(p for p, owners in self.owners.items() if slug in owners)

    def text(self, path: str) -> str:
        return norm(" ".join(self.pages[path]))

    def contains(self, path: str, fact: str) -> bool:
        return states(self.text(path), fact)

    def fact_pages(self, path: str, facts: Iterable[str]) -> list[int]:
        pages = enumerate(self.pages[path], start=1)
        return [i for i, page in pages if any(states(norm(page), f) for f in facts)]


def load_corpus(root: Path) -> Corpus:
    manifest = tomllib.loads((root / "corpus.toml").read_text(encoding="utf-8"))
    types = {doc["path"]: doc["type"] for doc in manifest["documents"]}
    owners = {doc["path"]: tuple(doc["entities"]) for doc in manifest["documents"]}
    pages = {path: read_source(root / path, path).pages for path in sorted(types)}
    traps = tuple(tomllib.loads((root / "traps.toml").read_text(encoding="utf-8"))["traps"])
    return Corpus(types, owners, pages, traps)


@dataclass
class Builder:
    """Collects examples; every add() checks the example against the documents or stops the run."""

    corpus: Corpus
    rng: random.Random
    examples: list[LabelledExample] = field(default_factory=list)
    owners: dict[str, str] = field(default_factory=dict)  # example id -> property the question is about

    def gold_of(self, s: Spec) -> tuple[str, ...]:
        if s.gold:
            return s.gold
        c = self.corpus
        return tuple(
            doc for doc in c.docs_of(s.owner) if c.types[doc] in s.types and any(c.contains(doc, f) for f in s.facts)
        )

    def confusables(self, slug: str) -> set[str]:
        """Documents about other properties that a question about `slug` invites: trap documents
        excluded for it, and every document of its near-identical partner."""
        c = self.corpus
        found = {t["document"] for t in c.traps if t["asked_entity"] == slug and t["expected"] == "exclude"}
        if slug in PARTNERS:
            found |= set(c.docs_of(PARTNERS[slug]))
        return {doc for doc in found if slug not in c.owners[doc]}

    def scope_docs(self, scope: dict[str, Any]) -> list[str]:
        if scope.get("document_ids"):
            return list(scope["document_ids"])
        if scope.get("property"):
            return self.corpus.docs_of(scope["property"])
        return sorted(self.corpus.types)

    def taken(self, s: Spec, scope: dict[str, Any]) -> bool:
        wanted = example_id(CORPUS, s.question, ExampleScope.model_validate(scope))
        return any(e.id == wanted for e in self.examples)

    def add(
        self,
        case: str,
        s: Spec,
        scope: dict[str, Any],
        *,
        not_found: bool = False,
        forbidden: Iterable[str] = (),
        tags: Sequence[str] = (),
    ) -> bool:
        """Check and keep one example; False (nothing kept) when its id is already taken."""
        if self.taken(s, scope):
            return False
        c = self.corpus
        where = f"{case} example {s.question!r} (scope {scope})"
        in_scope = self.scope_docs(scope)
        gold: tuple[str, ...] = ()
        pages: list[GoldPage] = []
        if not_found:
            present = sorted({doc for doc in in_scope for f in s.facts if c.contains(doc, f)})
            if present:
                raise SystemExit(f"{where}: expects 'not found' but {present} hold its answer {s.facts}")
            forbid = set(forbidden)
        else:
            gold = self.gold_of(s)
            if not gold:
                raise SystemExit(f"{where}: no gold document holds {s.facts}")
            for fact in s.facts:
                if not any(c.contains(doc, fact) for doc in gold):
                    raise SystemExit(f"{where}: fact {fact!r} occurs in none of its gold documents {gold}")
            for doc in gold:
                doc_pages = c.fact_pages(doc, s.facts)
                if not doc_pages:
                    raise SystemExit(f"{where}: gold document {doc} states none of {s.facts}")
                pages += [GoldPage(document=doc, page=n) for n in doc_pages]
            outside = sorted(set(gold) - set(in_scope))
            if outside:
                raise SystemExit(f"{where}: gold documents {outside} lie outside the scope")
            forbid = (set(forbidden) | self.confusables(s.owner)) - set(gold)
            about_owner = sorted(doc for doc in forbid if s.owner in c.owners[doc])
            if about_owner:
                raise SystemExit(f"{where}: forbidden documents {about_owner} are about {s.owner} itself")
        if case == "wrong_property" and not forbid:
            raise SystemExit(f"{where}: a wrong_property example needs forbidden documents")
        scope_tag = (
            "scope:chip" if scope.get("document_ids") else "scope:property" if scope.get("property") else "scope:none"
        )
        example = make_example(
            corpus=CORPUS,
            case=case,
            question=s.question,
            scope=scope,
            gold_documents=gold,
            gold_pages=tuple(pages),
            answer_facts=() if not_found else s.facts,
            forbidden_documents=tuple(sorted(forbid)),
            expect_not_found=not_found,
            expected_plan="two_step" if scope_tag == "scope:none" else "one_step",
            gold_sub_questions=() if not_found else s.sub_questions,
            tags=tuple(dict.fromkeys((f"topic:{s.topic}", *s.tags, *tags, scope_tag))),
        )
        self.examples.append(example)
        self.owners[example.id] = s.owner
        return True


def chip(*groups: Iterable[str]) -> dict[str, Any]:
    return {"document_ids": tuple(sorted({doc for group in groups for doc in group}))}
