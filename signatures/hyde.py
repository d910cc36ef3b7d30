"""HyDE: a hypothetical passage used as a dense query, only for rounds that allow it."""

from __future__ import annotations

import dspy


class HyDE(dspy.Signature):
    """Write a short passage, as it might appear in a document of this collection, that would
    answer the question. It is used only as a search query, never shown as an answer."""

    question: str = dspy.InputField()
    passage: str = dspy.OutputField(desc="2-4 sentences")
