"""The typed value of an answer: what a question asked for, as a program reads it (a number in units, true
or false, a name, a list of names, a date), beside the answer line a person reads.

A number is normalised: "€406.1 million" is 406100000 with currency "EUR", unless the question asked for a
scale ("in EUR millions"), in which case `value` is in that scale and `scale` names it. When nothing in
scope states the value, `absent` is true and `value` is the question's own absent value ("N/A", False) or
None when the question named none.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pipeline.types import SourceRef, Strict

ValueKind = Literal["number", "boolean", "name", "names", "date", "text"]
KINDS: tuple[ValueKind, ...] = ("number", "boolean", "name", "names", "date", "text")
Scale = Literal["thousand", "million", "billion"]
# A JSON value a typed answer may hold: a number, true/false, a string, a list of strings, or nothing.
Plain = bool | int | float | str | list[str] | None
MAX_NAMES = 20


class TypedValue(Strict):
    """One answer's value, typed (see the module docstring); `pages` are the pages it rests on."""

    kind: ValueKind
    value: Plain = None
    absent: bool = False
    unit: str | None = Field(default=None, max_length=40)
    currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")
    scale: Scale | None = None
    period: str | None = Field(default=None, max_length=200)
    as_written: str | None = Field(default=None, max_length=600)
    pages: tuple[SourceRef, ...] = ()
    # Why the value is absent or how it was read ("reported in GBP, not the EUR asked for").
    note: str | None = Field(default=None, max_length=400)

    @property
    def display(self) -> str:
        """The value as one short string ("406100000", "True", "Acme Ltd", "A; B")."""
        if isinstance(self.value, list):
            return "; ".join(self.value)
        return "" if self.value is None else str(self.value)
