"""Entity matching on distinctive words: the confusion sets of datasets/confusion (near-miss phrases
that share ordinary words with entity names) name no entity, while every true name and alias does.

What is ordinary comes from the corpus text (pipeline/store/name_words.py), not from these lists:
company filings use the SEC 10-Q filings (skipped when they are not beside the project), properties
the demo corpus.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from pipeline.entities import find_entity_mentions
from pipeline.intake.analysis import analyse_question
from pipeline.settings import PlannerConfig
from pipeline.store import Store
from pipeline.store.catalog import entity_id
from pipeline.store.corpus import load_manifest
from pipeline.store.name_words import NameWordCounter
from pipeline.store.reading import read_source
from pipeline.types import Entity
from pipeline.vocabulary import Vocabulary
from tests.support.paths import DATASETS, ROOT

CONFUSION = DATASETS / "confusion"
SEC_DOCS = ROOT.parent / "shared" / "data" / "sec-10q" / "docs"
FILINGS: dict[str, Any] = tomllib.loads((CONFUSION / "filings.toml").read_text(encoding="utf-8"))
PROPERTIES: dict[str, Any] = tomllib.loads((CONFUSION / "properties.toml").read_text(encoding="utf-8"))


def _named(text: str, entities: list[Entity], vocabulary: Vocabulary) -> tuple[set[str], list[str]]:
    """(slugs the question intake names, labels matched as document text). A word shared by two
    names ("banda") may still make a question ambiguous: it then asks back, naming no entity."""
    slugs = {e.entity_id: e.slug for e in entities}
    intake = analyse_question(text, entities, ["document"], PlannerConfig(), vocabulary)
    mentions = find_entity_mentions(text, entities, vocabulary)
    return {slugs[e] for e in intake.entity_ids}, [m.label for m in mentions]


@pytest.fixture(scope="module")
def companies() -> tuple[list[Entity], Vocabulary]:
    """The SEC companies plus the confusion set's, with the name-word statistics of the real filings."""
    if not SEC_DOCS.is_dir():
        pytest.skip(f"{SEC_DOCS} not present")
    manifest = load_manifest(DATASETS / "sec-10q" / "corpus.toml")
    declared = [(s.slug, s.name, tuple(s.aliases)) for s in manifest.entities]
    declared += [(e["slug"], e["name"], tuple(e["aliases"])) for e in FILINGS["entities"]]
    entities = {slug: Entity(entity_id(manifest.name, slug), slug, name, aliases) for slug, name, aliases in declared}
    counter = NameWordCounter(entities.values(), manifest.vocabulary)
    for path in sorted(SEC_DOCS.glob("*.pdf")):
        spec = manifest.metadata_for(path.name)
        owners = [entities[s].entity_id for s in (spec.entities if spec else [])]
        counter.add(read_source(path, path.name).pages, owners)
    return list(entities.values()), counter.vocabulary(manifest.vocabulary)


def test_each_confusion_set_has_at_least_fifty_near_misses() -> None:
    assert len(FILINGS["near_misses"]) >= 50 and len(PROPERTIES["near_misses"]) >= 50
    assert "to the best of your abilities" in FILINGS["near_misses"]
    assert "formerly Consumer Health business segment" in FILINGS["near_misses"]


def test_no_company_near_miss_names_a_company(companies: tuple[list[Entity], Vocabulary]) -> None:
    entities, vocabulary = companies
    false = {t: found for t in FILINGS["near_misses"] if any(found := _named(t, entities, vocabulary))}
    assert false == {}


def test_the_ordinary_words_come_from_the_filings(companies: tuple[list[Entity], Vocabulary]) -> None:
    _, vocabulary = companies
    # Written in lower case in the filings: ordinary; company names the filings never write so are not.
    assert {"best", "buy", "health", "target", "technologies", "general"} <= set(vocabulary.ordinary_words)
    assert not {"apple", "intel", "nvidia", "cvs", "mobileye"} & set(vocabulary.ordinary_words)
    # "Texas" is capitalised but used by filings that Texas Instruments does not own.
    assert "texas" in vocabulary.shared_name_words


def test_true_company_mentions_name_their_companies(companies: tuple[list[Entity], Vocabulary]) -> None:
    entities, vocabulary = companies
    wrong = {}
    for mention in FILINGS["mentions"]:
        named, _ = _named(mention["text"], entities, vocabulary)
        if named != set(mention["entities"]):
            wrong[mention["text"]] = named
    assert wrong == {}


def test_every_company_name_and_alias_still_names_its_company(companies: tuple[list[Entity], Vocabulary]) -> None:
    entities, vocabulary = companies
    missed = [
        (entity.slug, name)
        for entity in entities
        for name in entity.names
        if entity.slug not in _named(f"What did {name} report for the year?", entities, vocabulary)[0]
    ]
    assert missed == []


def _demo(store: Store) -> tuple[list[Entity], Vocabulary]:
    return list(store.catalog.entities.values()), store.catalog.vocabulary


def test_no_property_near_miss_names_a_property(demo_store: Store) -> None:
    entities, vocabulary = _demo(demo_store)
    false = {t: found for t in PROPERTIES["near_misses"] if any(found := _named(t, entities, vocabulary))}
    assert false == {}


def test_true_property_mentions_and_every_alias_still_match(demo_store: Store) -> None:
    entities, vocabulary = _demo(demo_store)
    wrong = {
        m["text"]: named
        for m in PROPERTIES["mentions"]
        if (named := _named(m["text"], entities, vocabulary)[0]) != set(m["entities"])
    }
    assert wrong == {}
    missed = [
        (e.slug, name)
        for e in entities
        for name in e.names
        if e.slug not in _named(f"What is the rent at {name}?", entities, vocabulary)[0]
    ]
    assert missed == []


def test_a_name_of_ordinary_words_matches_only_as_written() -> None:
    vocabulary = Vocabulary(ordinary_words=("best", "buy", "target"))
    best_buy = Entity("e-bby", "bby", "Best Buy Co., Inc.", ("Best Buy",))
    target = Entity("e-tgt", "tgt", "Target Corporation", ("Target",))
    entities = [best_buy, target]

    def ids(text: str) -> list[str | None]:
        return [m.entity_id for m in find_entity_mentions(text, entities, vocabulary)]

    assert ids("What did Best Buy and Target report?") == ["e-bby", "e-tgt"]
    assert ids("BEST BUY CO., INC. annual report") == ["e-bby"]
    assert ids("the best buy for our target customers") == []


def test_statistics_need_two_documents_and_skip_web_addresses(tmp_path: Path) -> None:
    acme = Entity("e-acme", "acme", "Acme Target Systems", ("Acme",))
    counter = NameWordCounter([acme], Vocabulary())
    counter.add(["Visit www.acme.com or write to ir@acme.example. Our target is growth."], ["e-acme"])
    counter.add(["We met the target.", "Systems and processes."], [])
    found = counter.vocabulary(Vocabulary())
    # "acme" is lower case only in addresses; "target" twice in running text; "Systems" only capitalised.
    assert found.ordinary_words == ("target",)
    assert found.shared_name_words == ()  # one foreign document is not enough
