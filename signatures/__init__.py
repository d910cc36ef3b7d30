"""DSPy signatures, one per file; each docstring is the module's instruction."""

from signatures.answer_lines import AnswerLines
from signatures.choose_answer import ChooseAnswer
from signatures.compute_figure import ComputeFigure
from signatures.decompose import Decompose
from signatures.hyde import HyDE
from signatures.judge_claim import JudgeClaim
from signatures.score_relevance import ScoreRelevance

__all__ = ["AnswerLines", "ChooseAnswer", "ComputeFigure", "Decompose", "HyDE", "JudgeClaim", "ScoreRelevance"]
