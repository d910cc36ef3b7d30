"""Hybrid retrieval: BM25 (bm25s), dense (faiss) and reciprocal rank fusion."""

from pipeline.retrieval.bm25 import BM25Index
from pipeline.retrieval.dense import DenseIndex
from pipeline.retrieval.fusion import Fused, reciprocal_rank_fusion

__all__ = ["BM25Index", "DenseIndex", "Fused", "reciprocal_rank_fusion"]
