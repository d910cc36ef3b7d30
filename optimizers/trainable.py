"""A view of ScopedQA in which only the chosen predictors are parameters: the others stay frozen.

DSPy optimizers find what to change through `named_predictors()`. The view exposes the chosen
predictors as its own attributes (the very same objects the program uses) and keeps the program
itself in a holder DSPy does not walk into, so bootstrapping, instruction proposals and GEPA
mutations reach only the chosen predictors, while the program still runs every step.
"""

from __future__ import annotations

from collections.abc import Sequence

import dspy

from pipeline.intake.scope import Scope
from pipeline.program.module import ScopedQA


class Holder:
    """Hides the whole program from DSPy's parameter walk (it only looks into modules, lists and dicts)."""

    def __init__(self, program: ScopedQA) -> None:
        self.program = program


class TrainableView(dspy.Module):
    """`program` with only `modules` visible to optimizers; call `unwrap()` for the ScopedQA."""

    def __init__(self, program: ScopedQA, modules: Sequence[str]) -> None:
        super().__init__()
        known = [name for name, _ in program.named_predictors()]
        unknown = [m for m in modules if m not in known]
        if unknown or not modules:
            raise ValueError(f"modules must be a non-empty subset of {known}, got {list(modules)}")
        self._holder = Holder(program)
        self._modules = tuple(modules)
        for name in self._modules:
            setattr(self, name, getattr(program, name))

    def forward(self, question: str, scope: Scope) -> dspy.Prediction:
        return self._holder.program(question=question, scope=scope)

    def unwrap(self) -> ScopedQA:
        """The program, holding this view's predictors (re-attached in case an optimizer replaced one)."""
        program = self._holder.program
        for name in self._modules:
            setattr(program, name, getattr(self, name))
        return program
