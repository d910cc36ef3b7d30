"""DSPy signatures, one per file; each docstring is the module's instruction."""

from signatures.decompose import Decompose
from signatures.hyde import HyDE
from signatures.score_relevance import ScoreRelevance
from signatures.sectioned_answer import SectionedAnswer
from signatures.select_sentences import SelectSentences

__all__ = ["Decompose", "HyDE", "ScoreRelevance", "SectionedAnswer", "SelectSentences"]
