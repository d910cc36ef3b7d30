"""Decompose: a question into the sub-questions that retrieval and the answer are organised by."""

from __future__ import annotations

import dspy


class Decompose(dspy.Signature):
    """Break the question into 1 to 5 simple, self-contained sub-questions that together answer it.
    A simple question stays a single sub-question. Keep names, addresses, parcel numbers, dates
    and quoted text exactly as written. Do not answer the question."""

    question: str = dspy.InputField()
    sub_questions: list[str] = dspy.OutputField(desc="1 to 5 sub-questions")
