"""A short name other organisations' documents also write ("MGM" of MGM Resorts International): the build says
so, and a question writing it in capitals still names its entity."""

from __future__ import annotations

from pathlib import Path

from pipeline.intake.analysis import analyse_question
from pipeline.settings import PlannerConfig
from pipeline.store import open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder

MANIFEST = """format = "scoperag-corpus/v1"
name = "casinos"
entity_kind = "company"

[[entities]]
slug = "mgm"
name = "MGM Resorts International"

[[entities]]
slug = "harbor"
name = "Harbor Lending Bank"

[[documents]]
path = "mgm/annual.md"
entities = ["mgm"]

[[documents]]
path = "harbor/annual.md"
entities = ["harbor"]

[[documents]]
path = "harbor/loans.md"
entities = ["harbor"]
"""


def test_a_capitalised_short_name_names_its_entity_though_others_write_it(tmp_path: Path) -> None:
    source = tmp_path / "corpus"
    files = {
        "corpus.toml": MANIFEST,
        "mgm/annual.md": "MGM Resorts International annual report. Revenue was $16 billion.",
        "harbor/annual.md": "Harbor Lending Bank annual report. Our largest borrower is MGM, a casino operator.",
        "harbor/loans.md": "Harbor Lending Bank loan book. Loans to MGM grew in 2023.",
    }
    for relative, text in files.items():
        (source / relative).parent.mkdir(parents=True, exist_ok=True)
        (source / relative).write_text(text, encoding="utf-8")
    report = build_index(source, tmp_path / "index", HashEmbedder(32))
    assert ("mgm", "MGM Resorts International") in report.too_common
    store = open_store(tmp_path / "index", HashEmbedder(32))
    entities = list(store.catalog.entities.values())
    vocabulary = store.catalog.vocabulary
    mgm = next(e.entity_id for e in entities if e.slug == "mgm")
    assert "mgm" in vocabulary.not_alone  # other organisations' documents write it
    intake = analyse_question("What was MGM's revenue in 2023?", entities, set(), PlannerConfig(), vocabulary)
    assert intake.entity_ids == (mgm,)
