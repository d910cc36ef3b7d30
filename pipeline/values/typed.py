"""The typed value of an answer: what a question asked for, as a program reads it (a number in units, true
or false, a name, a list of names, a date), beside the answer line a person reads.

A number is normalised: "€406.1 million" is 406100000 with currency "EUR", unless the question asked for a
scale ("in EUR millions"), in which case `value` is in that scale and `scale` names it. When nothing in
scope states the value, `absent` is true, `absent_value` is the question's own absent value as it names it
("N/A", False; None when it names none) and `value` keeps the field's type: the absent value when it is of the
kind's type (False for a yes/no question, 'N/A' for a name or a text), else None ('N/A' for a number, 'Yes' for a
yes/no question); a yes/no question naming no absent value of its own is False.
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
    # The question's own absent value ("If data is not available, return 'N/A'"), when it names one and nothing
    # in scope states the value; `value` holds it only when it is of the kind's type (see `fits`).
    absent_value: Plain = None

    @property
    def display(self) -> str:
        """The value as one short string ("406100000", "True", "Acme Ltd", "A; B"); an absent value the field
        could not hold, as the question names it ("N/A")."""
        shown = self.absent_value if self.value is None and self.absent else self.value
        if isinstance(shown, list):
            return "; ".join(shown)
        return "" if shown is None else str(shown)


def fits(kind: ValueKind, value: Plain) -> bool:
    """Whether `value` is of the type a value of `kind` holds: true/false for a yes/no question, a number (not a
    boolean) for a number, a list of names for names, a string for a name, a date or a text; None fits every
    kind."""
    if value is None:
        return True
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "names":
        return isinstance(value, list)
    return isinstance(value, str)
