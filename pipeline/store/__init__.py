"""The index directory: SQLite catalog, BM25 and dense indexes, published by manifest."""

from pipeline.store.catalog import Catalog
from pipeline.store.generations import IndexManifest, open_generation, publish_generation
from pipeline.store.index import Store, open_store

__all__ = ["Catalog", "IndexManifest", "Store", "open_generation", "open_store", "publish_generation"]
