"""The facts of the demo corpus: the property records of scripts/demo_properties.toml, checked when loaded,
and the way the documents write dates and amounts.

scripts/make_demo_corpus.py writes the documents from these records and scripts/make_demo_traces.py asks
about them, so a fact changed in the records changes in both. All people, companies and parcels are fictional.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


@dataclass(frozen=True)
class Finding:
    """One inspection finding: where, what, how serious, what to do, estimated cost."""

    area: str
    issue: str
    short: str
    severity: str
    action: str
    cost: int


@dataclass(frozen=True)
class Property:
    """Every fact the templates need about one property; all values are fictional."""

    slug: str
    name: str
    address: str
    locality: str
    aliases: tuple[str, ...]
    lr: str
    acres: float
    desc: str
    tenure: str
    landlord: str
    landlord_box: str
    tenant: str
    rent: int
    deposit_months: int
    escalation: str
    notice_months: int
    term_years: int
    lease_start: date
    lease_signed: date
    advocates: str
    valuer_firm: str
    valuer: str
    valuation_date: date
    valuation_client: str
    valuation_purpose: str
    market_value: int
    comparables: tuple[str, ...]
    buyer: str
    offer_price: int
    offer_date: date
    agent: str
    agent_officer: str
    completion_days: int
    inspection_date: date
    inspector_firm: str
    inspector: str
    findings: tuple[Finding, ...]
    registered: date
    encumbrances: tuple[str, ...]
    encumbrance_summary: str
    search_date: date

    @property
    def parcel(self) -> str:
        """The parcel number as written in title documents: 'L.R. NO: 1160/88'."""
        return f"L.R. NO: {self.lr}"

    @property
    def hectares(self) -> str:
        return f"{self.acres * 0.404686:.4f} ha"

    @property
    def land_area(self) -> str:
        acres = f"{self.acres:g} acre" + ("" if self.acres == 1 else "s")
        return f"{self.hectares} ({acres})"

    @property
    def forced_sale_value(self) -> int:
        return self.market_value * 3 // 4

    @property
    def insurance_value(self) -> int:
        return self.market_value * 45 // 10_000_000 * 100_000

    @property
    def full_address(self) -> str:
        return f"{self.address}, {self.locality}"


FACTS_FILE = Path(__file__).with_name("demo_properties.toml")
# Field types of the records as the TOML file may write them (dates are TOML local dates).
_SCALARS: dict[str, type] = {"str": str, "int": int, "float": float, "date": date}


def _record(cls: type[Any], raw: dict[str, Any], where: str) -> Any:
    """A `cls` built from one TOML table; ValueError names a missing, extra or mistyped field."""
    fields = {f.name: str(f.type) for f in dataclasses.fields(cls)}
    if set(raw) != set(fields):
        raise ValueError(f"{where}: fields differ from {cls.__name__}: {sorted(set(raw) ^ set(fields))}")
    values: dict[str, Any] = {}
    for name, kind in fields.items():
        value = raw[name]
        if kind == "tuple[Finding, ...]":
            value = tuple(_record(Finding, f, f"{where}.{name}[{i}]") for i, f in enumerate(value))
        elif kind == "tuple[str, ...]":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{where}.{name}: expected a list of strings, got {value!r}")
            value = tuple(value)
        elif not isinstance(value, _SCALARS[kind]) or isinstance(value, bool):
            raise ValueError(f"{where}.{name}: expected {kind}, got {value!r}")
        values[name] = value
    return cls(**values)


def load_facts(path: Path = FACTS_FILE) -> tuple[tuple[Property, ...], dict[str, str]]:
    """The property records of `path`, in file order, and the extra sentences of valuation summaries."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    properties = tuple(
        _record(Property, raw, f"{path.name}: properties[{i}]") for i, raw in enumerate(data["properties"])
    )
    return properties, dict(data["valuation_summary_extra"])


PROPERTIES, VALUATION_SUMMARY_EXTRA = load_facts()
BY_SLUG = {p.slug: p for p in PROPERTIES}


def d(value: date) -> str:
    """'1 March 2023' (fixed English month names, no locale)."""
    return f"{value.day} {MONTHS[value.month - 1]} {value.year}"


def ksh(amount: int) -> str:
    return f"KSH {amount:,}"


_ONES = (
    "", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten",
    "Eleven", "Twelve", "Thirteen", "Fourteen", "Fifteen", "Sixteen", "Seventeen", "Eighteen", "Nineteen",
)  # fmt: skip
_TENS = ("", "", "Twenty", "Thirty", "Forty", "Fifty", "Sixty", "Seventy", "Eighty", "Ninety")


def _below_thousand(n: int) -> str:
    hundreds, rest = divmod(n, 100)
    parts = [f"{_ONES[hundreds]} Hundred"] if hundreds else []
    if rest:
        if hundreds:
            parts.append("and")
        if rest < 20:
            parts.append(_ONES[rest])
        else:
            tens, ones = divmod(rest, 10)
            parts.append(_TENS[tens] + (f"-{_ONES[ones]}" if ones else ""))
    return " ".join(parts)


def words(n: int) -> str:
    """Kenya Shillings in words, as written on valuations and offers: 'Kenya Shillings ... Only'."""
    parts = []
    for scale, label in ((1_000_000_000, "Billion"), (1_000_000, "Million"), (1_000, "Thousand"), (1, "")):
        chunk, n = divmod(n, scale)
        if chunk:
            parts.append(f"{_below_thousand(chunk)} {label}".strip())
    return "Kenya Shillings " + " ".join(parts) + " Only"


def lease_end(p: Property) -> date:
    start = p.lease_start
    return date(start.year + p.term_years, start.month, start.day) - timedelta(days=1)
