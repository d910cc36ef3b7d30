"""The corpus vocabulary: validated from corpus.toml, stored with the index, the only source of a
corpus's words and patterns, and what drives matching (pipeline/ itself holds none of them)."""

from __future__ import annotations

import re
import sqlite3
import tomllib
from pathlib import Path

import pytest

from pipeline.entities import find_entity_mentions, scan_addresses
from pipeline.errors import IndexCorruptError, ManifestError
from pipeline.evaluation.metrics import fact_present
from pipeline.guards.entity_gate import gate, gate_inputs
from pipeline.intake.analysis import Intake, analyse_question
from pipeline.intake.planner import plan_question
from pipeline.intake.scope import NO_SCOPE
from pipeline.settings import EntityGateConfig, PlannerConfig
from pipeline.store import Store, open_store
from pipeline.store.build import build_index
from pipeline.store.catalog import Catalog, CatalogWriter
from pipeline.store.corpus import CorpusManifest, load_manifest
from pipeline.store.embedders import HashEmbedder
from pipeline.types import Entity
from pipeline.vocabulary import Vocabulary, dump_vocabulary, load_vocabulary
from tests.support.paths import DATASETS, ROOT
from tests.support.vocabulary import DEMO_VOCABULARY

# Words and names that belong to one corpus (the demo's Kenyan property documents, the SEC filings):
# they live in that corpus's corpus.toml, never in the runtime.
CORPUS_WORDS = (
    *("ksh", "kes", "kenya", "kenyan", "shilling", "shillings", "kra pin", "nairobi", "parcel", "parcels", "l.r."),
    *("premises", "townhouse", "apartment", "lease", "leases", "valuation", "valuations", "offer", "offers"),
    *("lane", "road", "avenue", "gardens", "magistrate", "feeder"),
    *("banda", "dik dik", "karen", "mellifera", "mkungu", "mvuli", "othaya", "nzohe", "langata", "ngong", "hardy"),
    *("usd", "10-q", "ticker", "apple", "amazon", "nvidia", "microsoft", "aapl", "amzn", "intc", "msft", "nvda"),
)


def corpus_words_in(text: str) -> list[str]:
    """The corpus words `text` contains as whole words (case-insensitive)."""
    folded = text.casefold()
    return [w for w in CORPUS_WORDS if re.search(rf"(?<![\w.]){re.escape(w)}(?![\w])", folded)]


def test_the_scan_finds_corpus_words_where_they_belong() -> None:
    demo = corpus_words_in((DATASETS / "demo" / "corpus.toml").read_text(encoding="utf-8"))
    sec = corpus_words_in((DATASETS / "sec-10q" / "corpus.toml").read_text(encoding="utf-8"))
    assert {"ksh", "kra pin", "parcel", "l.r.", "premises", "lane", "gardens", "banda"} <= set(demo)
    assert {"usd", "apple", "aapl", "10-q"} <= set(sec)


def test_pipeline_holds_no_corpus_vocabulary() -> None:
    # the one home of the ISO 4217 currency codes (a world list, not a corpus's) may name any of them
    world = {"pipeline/values/money.py": {"usd", "kes"}}
    found = {
        relative: words
        for path in sorted((ROOT / "pipeline").rglob("*.py"))
        if (
            words := sorted(
                set(corpus_words_in(path.read_text(encoding="utf-8")))
                - world.get(relative := str(path.relative_to(ROOT)), set())
            )
        )
    }
    assert found == {}


# ---- a corpus with its own identifier pattern ---------------------------------------------------

CONTRACTS_MANIFEST = r"""
format = "scoperag-corpus/v1"
name = "contracts"
entity_kind = "party"
# documents are given owners by folder: the gate's text rules judge owned documents too
ownership = "text"

[vocabulary]
generic_words = ["agreement", "agreements", "contract", "contracts"]
units = ["eur", "euros"]
pii_terms = ["tax number"]

[[vocabulary.identifiers]]
name = "contract_number"
label = "contract"
pattern = '\bcontract\s+(?:no\.?|number)\s*:?\s*([a-z]{2}-\d{4}-\d+)'

[[entities]]
slug = "acme"
name = "Acme Supplies"
aliases = ["Contract No. CS-2021-7"]

[[entities]]
slug = "borealis"
name = "Borealis Freight"
aliases = ["Contract No. CS-2022-3"]

[[documents]]
path = "acme/terms.md"
entities = ["acme"]
summary = "Supply terms of Acme Supplies under contract no. CS-2021-7: delivery within 10 days."

[[documents]]
path = "acme/renewal.md"
entities = ["acme"]
summary = "Renewal of contract number cs-2022-3 for one more year."

[[documents]]
path = "borealis/terms.md"
entities = ["borealis"]
summary = "Freight terms under Contract No. CS-2022-3."
"""


@pytest.fixture(scope="module")
def contracts(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """A small contracts corpus indexed with its own vocabulary."""
    root = tmp_path_factory.mktemp("contracts")
    source = root / "corpus"
    for relpath in ("acme/terms.md", "acme/renewal.md", "borealis/terms.md"):
        (source / relpath).parent.mkdir(parents=True, exist_ok=True)
        (source / relpath).write_text(f"# {relpath}\n\nThe text of {relpath}.\n", encoding="utf-8")
    (source / "corpus.toml").write_text(CONTRACTS_MANIFEST, encoding="utf-8")
    build_index(source, root / "index", HashEmbedder(32))
    return open_store(root / "index", HashEmbedder(32))


def _entity(store: Store, slug: str) -> Entity:
    return next(e for e in store.catalog.entities.values() if e.slug == slug)


def test_the_index_keeps_the_vocabulary_of_its_manifest(contracts: Store) -> None:
    vocabulary = contracts.catalog.vocabulary
    assert vocabulary == CorpusManifest.model_validate(tomllib.loads(CONTRACTS_MANIFEST)).vocabulary
    assert [p.name for p in vocabulary.identifiers] == ["contract_number"]


def test_the_corpus_identifier_drives_the_gate(contracts: Store) -> None:
    acme = _entity(contracts, "acme")
    asked, others = gate_inputs([acme.entity_id], contracts.catalog.entities)
    documents = list(contracts.catalog.documents.values())
    by_path = {d.relpath: d.document_id for d in documents}
    result = gate(documents, asked, others, EntityGateConfig(), contracts.catalog.vocabulary)
    assert result.kept_ids == (by_path["acme/terms.md"],)
    renewal = next(e for e in result.exclusions if e.document_id == by_path["acme/renewal.md"])
    assert renewal.reasons == ("entity_not_in_summary", "other_address_in_summary")
    assert renewal.other_addresses == ("Borealis Freight",)
    # Without the corpus's pattern the misfiled renewal names nothing the gate knows and stays in.
    blind = gate(documents, asked, others, EntityGateConfig(), Vocabulary())
    assert by_path["acme/renewal.md"] in blind.kept_ids


def test_the_corpus_identifier_names_its_owner_and_is_a_literal_term(contracts: Store) -> None:
    vocabulary = contracts.catalog.vocabulary
    entities = list(contracts.catalog.entities.values())
    # written unlike the alias ("Contract No. CS-2022-3"), so only the identifier pattern finds it
    found = find_entity_mentions("Who signed contract number cs-2022-3?", entities, vocabulary)
    assert [m.entity_id for m in found] == [_entity(contracts, "borealis").entity_id]
    assert [m.source for m in found] == ["contract_number"]
    question = "What does Contract No. CS-2021-7 say about delivery?"
    intake = analyse_question(question, entities, set(), PlannerConfig(), vocabulary)
    assert [(t.text, t.kind) for t in intake.literal_terms] == [("Contract No. CS-2021-7", "contract_number")]
    assert intake.entity_ids == (_entity(contracts, "acme").entity_id,)
    plan = plan_question(intake, NO_SCOPE, contracts.catalog.entities, PlannerConfig())
    assert "corpus_identifier_present" in plan.planner_meta.rationale_tags
    assert plan.literal_constraints.must_preserve_terms == ("Contract No. CS-2021-7",)
    # without the corpus's pattern only the generic code shape is seen, not the whole reference
    blind = analyse_question(question, entities, set(), PlannerConfig(), Vocabulary())
    assert [(t.text, t.kind) for t in blind.literal_terms] == [("CS-2021-7", "identifier")]


def test_generic_words_units_and_pii_terms_come_from_the_vocabulary(contracts: Store) -> None:
    vocabulary = contracts.catalog.vocabulary
    entities = list(contracts.catalog.entities.values())

    def intake(question: str, vocab: Vocabulary) -> Intake:
        return analyse_question(question, entities, set(), PlannerConfig(), vocab)

    # "contract" is in both parties' aliases, but names a kind of document, not a party.
    assert intake("What does the contract say?", vocabulary).ambiguous_entities == ()
    assert intake("What does the contract say?", Vocabulary()).ambiguous_entities != ()
    assert intake("What do all the agreements say?", vocabulary).requires_synthesis
    assert not intake("What do all the agreements say?", Vocabulary()).requires_synthesis
    assert intake("What is Acme's tax number?", vocabulary).pii_request
    assert not intake("What is Acme's tax number?", Vocabulary()).pii_request
    assert fact_present("EUR 12,000", "It costs 12000.", vocabulary.unit_words)
    assert not fact_present("EUR 12,000", "It costs 12000.")


def test_street_pattern_and_configured_locations_come_from_the_vocabulary() -> None:
    lane = Entity("e-1", "one", "Alpha Lane")
    assert scan_addresses("Works at Beta Street.", [lane], [], DEMO_VOCABULARY).other_labels == ("beta street",)
    assert scan_addresses("Works at Beta Street.", [lane], [], Vocabulary()).others == ()
    harbour = DEMO_VOCABULARY.model_copy(
        update={"addresses": DEMO_VOCABULARY.addresses.model_copy(update={"other_locations": ("harbour view",)})}
    )
    assert scan_addresses("A flat at Harbour View.", [lane], [], harbour).other_labels == ("harbour view",)
    assert scan_addresses("A flat at Harbour View.", [lane], [], DEMO_VOCABULARY).others == ()


def test_every_dataset_manifest_declares_a_valid_vocabulary() -> None:
    demo = load_manifest(DATASETS / "demo" / "corpus.toml").vocabulary
    assert [p.name for p in demo.identifiers] == ["parcel_number"] and "kra pin" in demo.pii_terms
    assert load_manifest(DATASETS / "adversarial" / "corpus.toml").vocabulary.addresses.street_types
    sec = load_manifest(DATASETS / "sec-10q" / "corpus.toml").vocabulary
    assert "usd" in sec.unit_words and not sec.addresses.street_types and not sec.identifiers


# ---- validation and storage ---------------------------------------------------------------------


def _manifest_with(tmp_path: Path, vocabulary: str) -> Path:
    path = tmp_path / "corpus.toml"
    path.write_text(f'format = "scoperag-corpus/v1"\nname = "c"\n{vocabulary}', encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("vocabulary", "problem"),
    [
        ("[[vocabulary.identifiers]]\nname = \"ref\"\npattern = 'ref \\d+'", "needs exactly 1"),
        ("[[vocabulary.identifiers]]\nname = \"ref\"\npattern = '(ref) (\\d+)'", "needs exactly 1"),
        ("[[vocabulary.identifiers]]\nname = \"ref\"\npattern = 'ref (\\d+'", "does not compile"),
        ("[[vocabulary.identifiers]]\nname = \"ref\"\npattern = 'ref (\\d+)'\nbare = '(\\d+)'", "needs exactly 0"),
        ("[[vocabulary.identifiers]]\nname = \"clause\"\npattern = 'ref (\\d+)'", "reserved"),
        ("[[vocabulary.identifiers]]\nname = \"Ref No\"\npattern = 'ref (\\d+)'", "string_pattern_mismatch"),
        (
            "[[vocabulary.identifiers]]\nname = \"ref\"\npattern = 'a (\\d+)'\n"
            "[[vocabulary.identifiers]]\nname = \"ref\"\npattern = 'b (\\d+)'",
            "named twice: ref",
        ),
        ('[vocabulary]\nstopwords = ["the"]', "stopwords"),
    ],
)
def test_a_bad_vocabulary_is_refused_naming_the_problem(tmp_path: Path, vocabulary: str, problem: str) -> None:
    with pytest.raises(ManifestError, match=re.escape(problem)):
        load_manifest(_manifest_with(tmp_path, vocabulary))


def test_a_manifest_without_vocabulary_has_the_empty_generic_one(tmp_path: Path) -> None:
    assert load_manifest(_manifest_with(tmp_path, "")).vocabulary == Vocabulary()


def test_the_stored_vocabulary_round_trips_and_is_versioned() -> None:
    stored = dump_vocabulary(DEMO_VOCABULARY)
    assert '"format": "scoperag-vocabulary/v1"' in stored
    assert load_vocabulary(stored) == DEMO_VOCABULARY
    with pytest.raises(ValueError, match="stored vocabulary is invalid"):
        load_vocabulary(stored.replace("scoperag-vocabulary/v1", "scoperag-vocabulary/v9"))


def test_a_catalog_without_a_stored_vocabulary_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    CatalogWriter(path, DEMO_VOCABULARY).close()
    assert Catalog(path).vocabulary == DEMO_VOCABULARY
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM meta WHERE key = 'vocabulary'")
    db.close()
    with pytest.raises(IndexCorruptError, match="no corpus vocabulary"):
        Catalog(path)
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO meta VALUES ('vocabulary', '{\"format\": \"scoperag-vocabulary/v1\"}')")
    db.close()
    with pytest.raises(IndexCorruptError, match="stored vocabulary is invalid"):
        Catalog(path)
