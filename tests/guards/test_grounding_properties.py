"""The grounding guard as a property (hypothesis): a line its evidence states is grounded; the same line with its
meaning changed in any one way is refused, however the figure, the currency, the scale, the period and the parties
are written.

Each generated case is an evidence sentence of a contract or a report ("2.1 The Tenant shall pay to the Landlord a
deposit of KSH 570,000 per month, in advance.") and a line that states it (three forms: the figure alone, the
party paying it, a labelled field). Controls: the line as generated must be grounded. Perturbations, each of which
must be refused: a minus sign, accounting brackets or a loss word added (or the evidence's own sign dropped); a
scale word added, changed or dropped; another currency; another period (or one the evidence does not give); a
negation; another party paying, or a party the sentence does not name; a number word ("twice", "and a half").

The default run checks FAST_CASES generated cases (at least MIN_PERTURBATIONS perturbations in all), derandomized;
the slow run (`-m slow`) ten times as many.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.guards.grounding import ground_line
from pipeline.values.figures import Passage

FAST_CASES = 150
SLOW_CASES = 1500
MIN_PERTURBATIONS = 1000

# Pairs of parties: the first pays the second.
PARTIES = (
    ("Tenant", "Landlord"),
    ("Buyer", "Seller"),
    ("Borrower", "Lender"),
    ("Licensee", "Licensor"),
    ("Employer", "Employee"),
    ("Purchaser", "Vendor"),
)
# A party no generated sentence names.
STRANGER = "Guarantor"
CURRENCIES = ("KSH ", "USD ", "EUR ", "GBP ", "KES ", "$", "€", "£")
SCALES = ("thousand", "million", "billion")
PERIODS = ("month", "year", "quarter", "week")
NOUNS = ("rent", "deposit", "fee", "service charge", "sum", "premium")
VERBS = ("shall pay", "pays", "must pay", "will pay")
# How a sentence writes a negative figure: brackets, or a word of loss before it.
SIGNS = ("", "brackets", "loss")


@dataclass(frozen=True)
class Case:
    """One generated evidence sentence and what it states."""

    clause: str
    payer: str
    payee: str
    verb: str
    noun: str
    currency: str
    amount: str
    scale: str | None
    period: str | None
    sign: str

    def figure(self, currency: str | None = None, amount: str | None = None, scale: str | None = "same") -> str:
        """The figure as written ("KSH 570,000 million"), with any part replaced."""
        number = amount if amount is not None else self.amount
        if self.sign == "brackets" and amount is None:
            number = f"({number})"
        used = self.scale if scale == "same" else scale
        return f"{currency if currency is not None else self.currency}{number}{f' {used}' if used else ''}"

    def per(self, period: str | None = "same") -> str:
        used = self.period if period == "same" else period
        return f" per {used}" if used else ""

    @property
    def evidence(self) -> str:
        what = f"a {self.noun} deficit of" if self.sign == "loss" else f"a {self.noun} of"
        return (
            f"{self.clause} The {self.payer} {self.verb} to the {self.payee} {what} {self.figure()}{self.per()}, "
            "in advance, on or before the fifth day."
        )

    def line(self, form: int, **parts: str | None) -> str:
        """The grounded line in one of three forms, with any part of its figure or period replaced."""
        period = parts.pop("period", "same")
        payer = parts.pop("payer", self.payer)
        verb = parts.pop("verb", self.verb)
        figure = f"{self.figure(**parts)}{self.per(period)}"  # type: ignore[arg-type]
        if self.sign == "loss":
            figure = f"a deficit of {figure}"
        if form == 0:
            return figure
        if form == 1:
            return f"The {payer} {verb} {figure}"
        return f"{self.noun.capitalize()}: {figure}"


def _amounts() -> st.SearchStrategy[str]:
    whole = st.integers(min_value=1_000, max_value=99_999_999).map(lambda n: f"{n:,}")
    decimal = st.tuples(st.integers(1, 999), st.integers(1, 99)).map(lambda t: f"{t[0]}.{t[1]:02d}")
    return st.one_of(whole, decimal)


CASES = st.builds(
    Case,
    clause=st.tuples(st.integers(1, 19), st.integers(1, 9)).map(lambda t: f"{t[0]}.{t[1]}"),
    payer=st.just(""),
    payee=st.just(""),
    verb=st.sampled_from(VERBS),
    noun=st.sampled_from(NOUNS),
    currency=st.sampled_from(CURRENCIES),
    amount=_amounts(),
    scale=st.one_of(st.none(), st.sampled_from(SCALES)),
    period=st.one_of(st.none(), st.sampled_from(PERIODS)),
    sign=st.sampled_from(SIGNS),
)


def _other(options: tuple[str, ...], current: str | None) -> str:
    return next(o for o in options if o != current)


def perturbations(case: Case, form: int) -> dict[str, str]:
    """Each way of changing what the line says, by name: the changed line."""
    negative = case.sign != ""
    out: dict[str, str] = {}
    if negative:
        # the evidence's own sign left out: a loss shown as a plain figure
        plain = Case(**{**case.__dict__, "sign": ""})
        out["sign dropped"] = plain.line(form)
    else:
        out["minus added"] = case.line(form, amount=f"-{case.amount}")
        out["brackets added"] = case.line(form, amount=f"({case.amount})")
        out["loss word added"] = (
            f"A net loss of {case.line(0)}"
            if form != 1
            else case.line(1).replace(f" {case.verb} ", f" {case.verb} a net loss of ", 1)
        )
    if case.scale is None:
        out["scale added"] = case.line(form, scale="million")
    else:
        out["scale changed"] = case.line(form, scale=_other(SCALES, case.scale))
        out["scale dropped"] = case.line(form, scale=None)
    out["currency changed"] = case.line(form, currency=_other(CURRENCIES, case.currency))
    if case.period is None:
        out["period added"] = case.line(form, period="month")
    else:
        out["period changed"] = case.line(form, period=_other(PERIODS, case.period))
    if form == 1:
        out["negation added"] = case.line(1, verb=case.verb.replace("pays", "does not pay").replace(" pay", " not pay"))
        out["payer swapped"] = case.line(1, payer=case.payee)
        out["stranger pays"] = case.line(1, payer=STRANGER)
    else:
        out["negation added"] = f"No {case.line(form)}" if form == 0 else case.line(form).replace(": ", ": not ", 1)
        out["payer swapped"] = f"The {case.payee} pays {case.line(0)}"
        out["stranger pays"] = f"{case.line(form)}, paid by the {STRANGER}"
    out["number word added"] = f"{case.line(form)} twice"
    return out


def check(case: Case, form: int, parties: tuple[str, str], count: Callable[[int], None]) -> None:
    case = Case(**{**case.__dict__, "payer": parties[0], "payee": parties[1]})
    evidence = [Passage(case.evidence)]
    line = case.line(form)
    control = ground_line(line, evidence)
    assert control.grounded, (line, case.evidence, control)
    changed = perturbations(case, form)
    for what, perturbed in changed.items():
        verdict = ground_line(perturbed, evidence)
        assert not verdict.grounded, (what, perturbed, case.evidence)
    count(len(changed))


def _run(cases: int) -> int:
    counted = [0]

    @settings(
        max_examples=cases,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(case=CASES, form=st.integers(0, 2), parties=st.sampled_from(PARTIES))
    def run(case: Case, form: int, parties: tuple[str, str]) -> None:
        check(case, form, parties, lambda n: counted.__setitem__(0, counted[0] + n))

    run()
    return counted[0]


def test_every_perturbation_of_a_grounded_line_is_refused() -> None:
    # hypothesis also runs shrinking and replays; the count is over every case it checked
    assert _run(FAST_CASES) >= MIN_PERTURBATIONS


@pytest.mark.slow
def test_every_perturbation_of_a_grounded_line_is_refused_slow() -> None:
    assert _run(SLOW_CASES) >= 10 * MIN_PERTURBATIONS
