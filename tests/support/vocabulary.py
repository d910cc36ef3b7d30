"""The demo corpus's vocabulary as its manifest declares it, for tests that match text without an index."""

from __future__ import annotations

from pipeline.store.corpus import load_manifest
from pipeline.vocabulary import Vocabulary
from tests.support.paths import DATASETS

DEMO_VOCABULARY: Vocabulary = load_manifest(DATASETS / "demo" / "corpus.toml").vocabulary


def demo_vocabulary_with(*other_locations: str) -> Vocabulary:
    """The demo vocabulary with `other_locations` configured as addresses of other properties."""
    addresses = DEMO_VOCABULARY.addresses.model_copy(update={"other_locations": other_locations})
    return DEMO_VOCABULARY.model_copy(update={"addresses": addresses})
