"""Generate the demo corpus in datasets/demo/: Nairobi real-estate documents with traps.

Run from the repository root:

    python scripts/make_demo_corpus.py

The output is byte-identical on every run: no clock, no unseeded randomness, PDFs carry a
fixed creation date. Everything in datasets/demo/ that this script writes (documents,
corpus.toml, traps.toml, README.md) is derived from the property records in
scripts/demo_properties.toml and the templates below, so a fact changed there changes
consistently in the documents, the manifest, the trap list and the card.

All people, companies and parcels are fictional.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from fpdf import FPDF

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "datasets" / "demo"
PDF_DATE = datetime(2024, 1, 1, tzinfo=UTC)
PAGE_BREAK = "<!-- pagebreak -->"
GENERATED_FILES = ("corpus.toml", "traps.toml", "README.md")
MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
DOC_TYPES = ("lease", "valuation", "offer_letter", "inspection_report", "title_document")
TRAP_KINDS = (
    "filename_content_mismatch",
    "near_identical_address",
    "parcel_number",
    "two_property_summary",
    "lookalike_hides_entity",
    "lookalike_smuggles_other",
    "generic_summary",
)
CYR_A = "\u0430"  # CYRILLIC SMALL LETTER A, looks like Latin "a"
CYR_O = "\u043e"  # CYRILLIC SMALL LETTER O, looks like Latin "o"

# A block of page content: ("h1"|"h2"|"p", str), ("ul", tuple[str, ...]) or ("kv", tuple[(key, value), ...]).
Block = tuple[str, object]
Page = list[Block]


# ---------------------------------------------------------------------------------------
# Facts
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# Formatting helpers
# ---------------------------------------------------------------------------------------


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


def lookalike(text: str, target: str, replacement: str) -> str:
    """`text` with every `target` spelled `replacement` (a homoglyph spelling)."""
    return text.replace(target, replacement)


# ---------------------------------------------------------------------------------------
# Documents
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Doc:
    """One file of the corpus: where it goes, what it is about, and its pages."""

    path: str
    type: str
    entities: tuple[str, ...]
    title: str
    summary: str
    pages: tuple[Page, ...]
    note: str = ""

    @property
    def fmt(self) -> str:
        return Path(self.path).suffix.lstrip(".")


@dataclass(frozen=True)
class Content:
    """What a template produces: title, summary and pages (the file name is chosen apart)."""

    type: str
    title: str
    summary: str
    pages: tuple[Page, ...]


# ---- lease ----------------------------------------------------------------------------


def lease(p: Property, banner: str | None = None) -> Content:
    """The four-page residential lease, the same template for every property."""
    deposit = p.rent * p.deposit_months
    annual = p.rent * 12
    first: Page = []
    if banner:
        first.append(("p", banner))
    first += [
        ("h1", "RESIDENTIAL LEASE AGREEMENT"),
        (
            "p",
            f"THIS LEASE is made on {d(p.lease_signed)} BETWEEN {p.landlord} of {p.landlord_box} (the"
            f' "Landlord") AND {p.tenant} (the "Tenant").',
        ),
        (
            "p",
            f"The Landlord lets and the Tenant takes the {p.desc} known as {p.full_address}, Nairobi,"
            f' erected on {p.parcel} (the "Premises"), on the terms below.',
        ),
        ("h2", "Particulars"),
        (
            "kv",
            (
                ("Premises", p.full_address),
                ("Parcel", p.parcel),
                ("Landlord", p.landlord),
                ("Tenant", p.tenant),
                ("Term", f"{p.term_years} year{'s' if p.term_years > 1 else ''}"),
                ("Commencement date", d(p.lease_start)),
                ("Monthly rent", ksh(p.rent)),
                ("Deposit", ksh(deposit)),
            ),
        ),
    ]
    second: Page = [
        ("h2", "1. Term and rent"),
        (
            "p",
            f"1.1 The term is {p.term_years} year{'s' if p.term_years > 1 else ''} commencing on"
            f" {d(p.lease_start)} and ending on {d(lease_end(p))}.",
        ),
        (
            "p",
            f"1.2 The Tenant shall pay rent of {ksh(p.rent)} per month ({ksh(annual)} per year), in advance,"
            " on or before the fifth day of each month, by bank transfer to the account the Landlord names"
            " in writing.",
        ),
        ("p", f"1.3 The rent shall increase by {p.escalation} on each anniversary of the commencement date."),
        ("p", "1.4 Rent unpaid fourteen days after it falls due bears interest at two per cent per month."),
        ("h2", "2. Deposit"),
        (
            "p",
            f"2.1 On signing, the Tenant pays a deposit of {ksh(deposit)}, equal to {p.deposit_months}"
            " months'"
            " rent. The deposit bears no interest and shall not be applied as rent.",
        ),
        (
            "p",
            "2.2 The deposit is refunded within thirty days after the Tenant gives up vacant possession,"
            " less the cost of making good any damage beyond fair wear and tear.",
        ),
        ("h2", "3. Outgoings"),
        (
            "p",
            "3.1 The Tenant pays for electricity, water, refuse collection and internet used at the Premises.",
        ),
        ("p", "3.2 The Landlord pays land rent, county rates and the insurance of the buildings."),
    ]
    third: Page = [
        ("h2", "4. Tenant's obligations"),
        (
            "ul",
            (
                "Keep the interior of the Premises clean and in good repair, fair wear and tear excepted.",
                "Not sublet, assign or part with possession without the Landlord's written consent.",
                "Not make structural alterations or additions to the Premises.",
                "Allow the Landlord or its agents to inspect the Premises on forty-eight hours' notice.",
                "Use the Premises as a private residence only.",
            ),
        ),
        ("h2", "5. Landlord's obligations"),
        (
            "ul",
            (
                "Keep the roof, main walls, main drains and structure of the Premises in good repair.",
                "Allow the Tenant quiet enjoyment of the Premises during the term.",
                "Carry out repairs reported in writing within a reasonable time.",
            ),
        ),
        ("h2", "6. Termination"),
        (
            "p",
            f"6.1 After the first year, either party may end this lease by giving {p.notice_months}"
            f" month{'s' if p.notice_months > 1 else ''}' written notice.",
        ),
        ("p", "6.2 The Landlord may re-enter if rent is unpaid for thirty days after a written demand."),
    ]
    fourth: Page = [
        ("h2", "7. Execution"),
        ("p", f"SIGNED by the Landlord, {p.landlord}, in the presence of an advocate."),
        ("p", f"SIGNED by the Tenant, {p.tenant}, in the presence of an advocate."),
        ("p", f"Drawn by {p.advocates}, Nairobi."),
        ("h2", "Schedule: stamp duty"),
        (
            "p",
            f"Stamp duty of {ksh(annual // 100)} (one per cent of the annual rent) assessed and paid on"
            f" {d(p.lease_signed + timedelta(days=7))}.",
        ),
    ]
    summary = (
        f"Lease of {p.full_address} ({p.desc}) from landlord {p.landlord} to tenant {p.tenant}:"
        f" {p.term_years}-year term from {d(p.lease_start)} at {ksh(p.rent)} per month."
    )
    return Content("lease", f"Lease Agreement - {p.address}", summary, (first, second, third, fourth))


# ---- valuation ------------------------------------------------------------------------


def valuation(p: Property, summary_extra: str = "", banner: str | None = None) -> Content:
    """The three-page valuation report, the same template for every property."""
    first: Page = []
    if banner:
        first.append(("p", banner))
    first += [
        ("h1", f"VALUATION REPORT - {p.valuer_firm.upper()}"),
        ("p", f"Prepared for {p.valuation_client} for {p.valuation_purpose} purposes."),
        (
            "kv",
            (
                (
                    "Property",
                    p.full_address,
                ),
                ("Parcel", p.parcel),
                ("Tenure", p.tenure),
                ("Land area", p.land_area),
                ("Registered proprietor", p.landlord),
                ("Date of inspection", d(p.valuation_date - timedelta(days=4))),
                ("Date of valuation", d(p.valuation_date)),
                ("Valuer", f"{p.valuer}, {p.valuer_firm}"),
            ),
        ),
        ("h2", "1. Location and description"),
        (
            "p",
            f"The property is a {p.desc} at {p.full_address}, Nairobi. The neighbourhood is residential"
            " with tarmacked access, mains electricity and county water.",
        ),
    ]
    second: Page = [
        ("h2", "2. Comparable evidence"),
        ("p", "The following transactions were analysed and adjusted for size, condition and date:"),
        ("ul", p.comparables),
        ("h2", "3. Tenancy"),
        (
            "p",
            f"The property is let to {p.tenant} at {ksh(p.rent)} per month. The valuation assumes that"
            " the tenancy may be terminated on notice.",
        ),
    ]
    third: Page = [
        ("h2", "4. Valuation"),
        (
            "kv",
            (
                ("Market value", ksh(p.market_value)),
                ("In words", words(p.market_value)),
                ("Forced sale value", ksh(p.forced_sale_value)),
                ("Insurance replacement value", ksh(p.insurance_value)),
            ),
        ),
        ("h2", "5. Assumptions"),
        (
            "p",
            "Good and marketable title free of onerous restrictions; no contamination; services"
            " connected; measurements taken from the deed plan.",
        ),
        ("p", f"Signed: {p.valuer}, for and on behalf of {p.valuer_firm}, on {d(p.valuation_date)}."),
    ]
    summary = (
        f"Valuation of {p.full_address} ({p.parcel}) by {p.valuer_firm} dated {d(p.valuation_date)}:"
        f" market value {ksh(p.market_value)}, forced sale value {ksh(p.forced_sale_value)}."
    )
    if summary_extra:
        summary += " " + summary_extra
    return Content("valuation", f"Valuation Report - {p.address}", summary, (first, second, third))


# ---- offer letter ---------------------------------------------------------------------


def offer_letter(p: Property) -> Content:
    """The two-page offer letter from the selling agent, the same template for every property."""
    deposit = p.offer_price // 10
    first: Page = [
        ("h1", p.agent.upper()),
        ("p", f"Date: {d(p.offer_date)}"),
        ("p", f"To: {p.landlord}, {p.landlord_box}"),
        ("h2", f"RE: OFFER TO PURCHASE {p.full_address.upper()}, NAIROBI ({p.parcel})"),
        (
            "p",
            f'We are pleased to convey an offer from {p.buyer} (the "Purchaser") to purchase the {p.desc}'
            f' known as {p.full_address} from {p.landlord} (the "Vendor") on the following terms:',
        ),
        (
            "kv",
            (
                ("Purchase price", ksh(p.offer_price)),
                ("In words", words(p.offer_price)),
                ("Deposit (10%)", f"{ksh(deposit)} on signing the sale agreement"),
                ("Balance", f"{ksh(p.offer_price - deposit)} on completion"),
                ("Completion", f"{p.completion_days} days from the date of the sale agreement"),
                ("Vendor's advocates", p.advocates),
            ),
        ),
    ]
    second: Page = [
        ("h2", "Conditions"),
        (
            "ul",
            (
                "The offer is subject to a satisfactory official search and to a valuation for the Purchaser's lender.",
                "The sale agreement will incorporate the Law Society Conditions of Sale (2015 edition).",
                "The property is sold subject to the existing tenancy; rent will be apportioned on completion.",
                "This offer is valid for fourteen days from its date and is not binding until a sale"
                " agreement"
                " is signed.",
            ),
        ),
        ("p", f"Yours faithfully, {p.agent_officer}, for {p.agent}."),
        ("h2", "Acceptance"),
        ("p", f"I, {p.landlord}, accept the offer of {ksh(p.offer_price)} from {p.buyer} for {p.address}."),
        ("p", "Signed: ____________________   Date: ____________________"),
    ]
    summary = (
        f"Offer letter from {p.agent} dated {d(p.offer_date)}: {p.buyer} offers {ksh(p.offer_price)} to buy"
        f" {p.full_address} from {p.landlord}, completion in {p.completion_days} days."
    )
    return Content("offer_letter", f"Offer Letter - {p.address}", summary, (first, second))


# ---- inspection report ----------------------------------------------------------------


def inspection(p: Property, banner: str | None = None) -> Content:
    """The three-page inspection report, the same template for every property."""
    total = sum(f.cost for f in p.findings)
    first: Page = []
    if banner:
        first.append(("p", banner))
    first += [
        ("h1", f"PROPERTY INSPECTION REPORT - {p.inspector_firm.upper()}"),
        (
            "kv",
            (
                ("Property", p.full_address),
                ("Inspection date", d(p.inspection_date)),
                ("Inspector", f"{p.inspector}, {p.inspector_firm}"),
                ("Commissioned by", f"{p.landlord} (registered proprietor)"),
                ("Occupation", f"Occupied by the tenant, {p.tenant}"),
            ),
        ),
        ("h2", "Summary of findings"),
        ("ul", tuple(f"{f.area}: {f.issue} ({f.severity} priority)." for f in p.findings)),
    ]
    second: Page = [("h2", "Detailed findings")]
    for number, f in enumerate(p.findings, start=1):
        cost = ksh(f.cost) if f.cost else "borne by the management company"
        second += [
            ("h2", f"{number}. {f.area}"),
            ("p", f"Observed: {f.issue}."),
            ("p", f"Recommended action: {f.action} Estimated cost: {cost}."),
        ]
    third: Page = [
        ("h2", "Recommendations"),
        (
            "p",
            "The items above should be attended to before any sale or renewal of the tenancy. Total"
            " estimated"
            f" cost of remedial works: {ksh(total)}.",
        ),
        ("h2", "Limitations"),
        (
            "p",
            "This is a visual, non-invasive inspection. Concealed parts of the structure, buried services"
            " and locked rooms were not inspected. No tests were made of electrical installations beyond"
            " switching on accessible fittings.",
        ),
        ("p", f"Report signed by {p.inspector} on {d(p.inspection_date + timedelta(days=2))}."),
    ]
    summary = (
        f"Inspection of {p.full_address} by {p.inspector_firm} on {d(p.inspection_date)}: "
        + ", ".join(f.short for f in p.findings[:-1])
        + f" and {p.findings[-1].short}; remedial works estimated at {ksh(total)}."
    )
    return Content("inspection_report", f"Inspection Report - {p.address}", summary, (first, second, third))


# ---- title document -------------------------------------------------------------------


def title_document(p: Property) -> Content:
    """The two-page certified copy of the land register, the same template for every property."""
    first: Page = [
        ("h1", "REPUBLIC OF KENYA - THE LAND REGISTRATION ACT, 2012"),
        ("p", "CERTIFIED COPY OF THE REGISTER"),
        ("h2", "Part A - Property section"),
        (
            "kv",
            (
                ("Parcel", p.parcel),
                ("Registration section", "Nairobi"),
                ("Land area", p.land_area),
                ("Tenure", p.tenure),
                ("Situation", f"{p.full_address}, Nairobi"),
            ),
        ),
        ("h2", "Part B - Proprietorship section"),
        (
            "kv",
            (("Entry 1", f"{d(p.registered)}: {p.landlord}, {p.landlord_box}, registered as proprietor."),),
        ),
    ]
    entries = p.encumbrances or ("No entries.",)
    second: Page = [
        ("h2", "Part C - Encumbrances section"),
        ("ul", entries),
        ("h2", "Certificate"),
        ("p", f"I certify that this is a true copy of the register of {p.parcel} as at {d(p.search_date)}."),
        ("p", "Land Registrar, Nairobi Central Registry. Search fee of KSH 500 paid."),
    ]
    tenure = p.tenure[0].lower() + p.tenure[1:]
    summary = (
        f"Certified copy of the register for {p.parcel}, {p.full_address}: {tenure}, {p.land_area},"
        f" registered proprietor {p.landlord} since {d(p.registered)}; {p.encumbrance_summary}."
    )
    return Content("title_document", f"Title Document - {p.parcel} ({p.address})", summary, (first, second))


def official_search(p: Property, searched: date, applicant: str, two_pages: bool) -> Content:
    """An official search certificate: names the parcel number only, never the street address."""
    encumbrance = "; ".join(p.encumbrances) if p.encumbrances else "No encumbrances registered."
    first: Page = [
        ("h1", "OFFICIAL SEARCH CERTIFICATE"),
        ("p", "Ministry of Lands, Public Works, Housing and Urban Development - Nairobi Central Registry"),
        (
            "kv",
            (
                ("Title number", p.parcel),
                ("Date of search", d(searched)),
                ("Applicant", applicant),
                ("Area", p.hectares),
                ("Registered proprietor", p.landlord),
                ("Encumbrances", encumbrance),
            ),
        ),
    ]
    pages: tuple[Page, ...] = (first,)
    if two_pages:
        pages = (first, [
            ("h2", "Notes"),
            ("p", "This search reflects the register at 8.00 a.m. on the date of search. Any dealing"
                  " presented after that time is not shown."),
            ("p", "Search fee of KSH 500 paid; receipt issued by the registry cashier."),
        ])  # fmt: skip
    summary = (
        f"Official search of {p.parcel} dated {d(searched)}: registered proprietor {p.landlord};"
        f" {p.encumbrance_summary}."
    )
    return Content("title_document", f"Official Search - {p.parcel}", summary, pages)


# ---- one-off documents for the traps --------------------------------------------------


def followup_inspection_banda(p: Property) -> Content:
    """Re-inspection of Banda Lane with the name spelled with a Cyrillic 'a' throughout."""
    spelled = lookalike(p.address, "Banda", f"B{CYR_A}nda")
    pages: tuple[Page, ...] = (
        [
            ("h1", f"FOLLOW-UP INSPECTION - {spelled.upper()}"),
            (
                "kv",
                (
                    ("Property", f"{spelled}, {p.locality}"),
                    ("Re-inspection date", d(date(2024, 9, 4))),
                    ("Inspector", f"{p.inspector}, {p.inspector_firm}"),
                    ("Original inspection", d(p.inspection_date)),
                ),
            ),
            ("h2", "Status of the items raised"),
            (
                "ul",
                (
                    "Roof: the cracked clay tiles above the master bedroom were replaced by Maji Safi"
                    " Plumbers and"
                    " Roofers at a cost of KSH 185,000; no leak seen after rain on 2 September 2024.",
                    "Plumbing: a booster pump was installed; upstairs water pressure is now adequate.",
                    "Security: the electric fence energiser has NOT been replaced and remains faulty.",
                ),
            ),
        ],
        [
            ("h2", "Conclusion"),
            (
                "p",
                f"Two of the three items at {spelled} are closed. The energiser should be replaced before the"
                " sale to the purchaser completes.",
            ),
            ("p", f"Signed: {p.inspector} on 5 September 2024."),
        ],
    )
    summary = (
        f"Follow-up inspection of {spelled}, {p.locality} by {p.inspector_firm} on 4 September 2024: the roof"
        " leak above the master bedroom is repaired and water pressure restored; the electric fence energiser"
        " is still faulty."
    )
    title = f"Follow-up Inspection - {spelled}"
    return Content("inspection_report", title, summary, pages)


def followup_inspection_mvuli(p: Property) -> Content:
    """Re-inspection of Mvuli Road that names Banda Lane in passing, with a Cyrillic 'a'."""
    smuggled = f"14 B{CYR_A}nda Lane"
    pages: tuple[Page, ...] = (
        [
            ("h1", f"FOLLOW-UP INSPECTION - {p.address.upper()}"),
            (
                "kv",
                (
                    ("Property", p.full_address),
                    ("Re-inspection date", d(date(2024, 10, 24))),
                    ("Inspector", f"{p.inspector}, {p.inspector_firm}"),
                    ("Original inspection", d(p.inspection_date)),
                ),
            ),
            ("h2", "Status of the items raised"),
            (
                "ul",
                (
                    "Plumbing: the burst pipe in the ground floor ceiling was replaced by Maji Safi"
                    " Plumbers and"
                    f" Roofers, the contractor previously used at {smuggled}; the gypsum ceiling is"
                    " repaired.",
                    "Windows: the two cracked panes in the study have not yet been reglazed.",
                    "Garage: a new garage door motor was fitted on 20 October 2024.",
                ),
            ),
        ],
        [
            ("h2", "Conclusion"),
            ("p", f"Two of the three items at {p.address} are closed; the study windows remain outstanding."),
            ("p", f"Signed: {p.inspector} on 25 October 2024."),
        ],
    )
    summary = (
        f"Follow-up inspection of {p.full_address} by {p.inspector_firm} on 24 October 2024: burst ceiling"
        " pipe"
        f" repaired by the contractor previously used at {smuggled}; cracked study window panes still"
        " outstanding."
    )
    return Content("inspection_report", f"Follow-up Inspection - {p.address}", summary, pages)


def counter_offer_karen_ridge(p: Property) -> Content:
    """Counter-offer for Karen Ridge that names Mellifera Gardens in passing, with a Cyrillic 'a'."""
    smuggled = f"House 9, Mellifera G{CYR_A}rdens"
    counter = 88_000_000
    pages: tuple[Page, ...] = (
        [
            ("h1", p.agent.upper()),
            ("p", f"Date: {d(date(2023, 12, 8))}"),
            ("p", f"To: {p.buyer}"),
            ("h2", f"RE: COUNTER-OFFER FOR {p.full_address.upper()}"),
            (
                "p",
                f"Our client {p.landlord} has considered your offer of {ksh(p.offer_price)} for {p.address}"
                f" and makes a counter-offer of {ksh(counter)} ({words(counter)}).",
            ),
            ("p", "All other terms of the original offer letter stand."),
        ],
        [
            ("h2", "Viewing and next steps"),
            (
                "p",
                f"A second viewing can be arranged on the same terms we used for {smuggled}, Runda: a"
                " two-hour slot with the tenant's consent.",
            ),
            ("p", f"Please respond within seven days. {p.agent_officer}, for {p.agent}."),
        ],
    )
    summary = (
        f"Counter-offer dated 8 December 2023 from {p.landlord} to {p.buyer} for {p.full_address}:"
        f" {ksh(counter)} against the offer of {ksh(p.offer_price)}; viewings as previously arranged for"
        f" {smuggled}."
    )
    return Content("offer_letter", f"Counter-offer - {p.address}", summary, pages)


def lease_renewal_mellifera_court(p: Property) -> Content:
    """Renewal of the Mellifera Court lease, the name spelled with a Cyrillic 'o' throughout."""
    spelled = lookalike(p.address, "Court", f"C{CYR_O}urt")
    new_rent = 90_000
    pages: tuple[Page, ...] = (
        [
            ("h1", "LEASE RENEWAL AGREEMENT"),
            (
                "p",
                f"The lease dated {d(p.lease_signed)} between {p.landlord} (Landlord) and {p.tenant}"
                " (Tenant) of"
                f" {spelled}, {p.locality}, is renewed on the terms below.",
            ),
            (
                "kv",
                (
                    ("Premises", f"{spelled}, {p.locality}"),
                    ("Renewed term", "1 year"),
                    ("Commencement date", d(date(2024, 10, 1))),
                    ("Monthly rent", ksh(new_rent)),
                    (
                        "Deposit",
                        f"{ksh(new_rent * 2)} (existing deposit topped up by {ksh((new_rent - p.rent) * 2)})",
                    ),
                ),
            ),
        ],
        [
            ("h2", "Other terms"),
            ("p", "All other terms of the original lease continue to apply."),
            ("p", f"SIGNED by {p.landlord} and {p.tenant} on 20 September 2024. Drawn by {p.advocates}."),
        ],
    )
    summary = (
        f"Renewal of the lease of {spelled}, {p.locality}: {p.tenant} renews for one year from 1 October 2024"
        f" at {ksh(new_rent)} per month, landlord {p.landlord}."
    )
    return Content("lease", f"Lease Renewal - {spelled}", summary, pages)


def standard_terms_annex(p: Property) -> Content:
    """Annex to one lease whose summary names no property at all."""
    pages: tuple[Page, ...] = (
        [
            ("h1", "ANNEX B - STANDARD TERMS FOR RESIDENTIAL LEASES"),
            ("p", f"This annex forms part of the lease of {p.full_address} dated {d(p.lease_signed)}."),
            ("h2", "B1. Deposit handling"),
            ("p", "Deposits are held in a separate client account and are never applied as rent."),
            ("h2", "B2. Notices"),
            ("p", "Notices are given in writing by hand delivery or email to the addresses in the lease."),
        ],
        [
            ("h2", "B3. Repairs"),
            (
                "p",
                "Urgent repairs (water, power, security) are attended to within forty-eight hours of report.",
            ),
            ("h2", "B4. Disputes"),
            (
                "p",
                "Disputes go first to mediation; failing settlement within thirty days, to the Business"
                " Premises"
                " Rent Tribunal or the courts, as the law provides.",
            ),
        ],
    )
    summary = "Standard terms annex for residential leases: deposit handling, notices, repairs and dispute resolution."
    return Content("lease", "Annex B - Standard Terms", summary, pages)


def valuation_assumptions_annex() -> Content:
    """General valuation assumptions, about no property in particular."""
    pages: tuple[Page, ...] = (
        [
            ("h1", "GENERAL ASSUMPTIONS AND LIMITING CONDITIONS"),
            (
                "p",
                "These assumptions apply to every residential valuation report unless the report states otherwise.",
            ),
            (
                "ul",
                (
                    "Title is good and marketable and free of undisclosed encumbrances.",
                    "Land areas are taken from the deed plan or the register and were not re-measured.",
                    "Services (water, electricity, sewer) are connected and adequate.",
                    "No deleterious materials or ground contamination are present.",
                ),
            ),
        ],
        [
            ("h2", "Basis of forced sale value"),
            (
                "p",
                "Forced sale value is reported at seventy-five per cent of market value, reflecting a sale"
                " within"
                " a restricted marketing period such as a sale by a chargee.",
            ),
            ("h2", "Insurance replacement value"),
            ("p", "The cost of rebuilding the improvements at current building costs, excluding land value."),
        ],
    )
    summary = (
        "General assumptions and limiting conditions for residential valuation reports: title, land areas,"
        " services, and the basis of forced sale and insurance values."
    )
    return Content("valuation", "Valuation Assumptions Annex", summary, pages)


def comparative_market_report(p: Property, other: Property) -> Content:
    """A market report on `p` that cites `other` briefly as a benchmark."""
    asking, asking_rent = 79_000_000, 240_000
    pages: tuple[Page, ...] = (
        [
            ("h1", f"COMPARATIVE MARKET REPORT - {p.address.upper()}"),
            ("p", f"Prepared by {p.valuer_firm} on 30 September 2024 for {p.landlord}."),
            (
                "kv",
                (
                    ("Subject property", p.full_address),
                    ("Parcel", p.parcel),
                    ("Market value", f"{ksh(p.market_value)} (valuation of {d(p.valuation_date)})"),
                    ("Recommended asking price", ksh(asking)),
                    ("Recommended asking rent", f"{ksh(asking_rent)} per month"),
                ),
            ),
        ],
        [
            ("h2", "Market evidence"),
            (
                "p",
                f"Townhouses in {p.locality} let within six weeks at {ksh(220_000)} to {ksh(250_000)} per"
                " month."
                f" The passing rent of {ksh(p.rent)} is below market.",
            ),
            ("h2", "Benchmark"),
            (
                "p",
                f"{other.full_address}, a larger house valued at {ksh(other.market_value)} in"
                f" {MONTHS[other.valuation_date.month - 1]} {other.valuation_date.year}, was used only as an"
                " upper"
                " benchmark.",
            ),
        ],
        [
            ("h2", "Recommendation"),
            (
                "p",
                f"Market {p.address} at {ksh(asking)} for sale, or re-let at {ksh(asking_rent)} per month"
                " when the"
                " current lease ends.",
            ),
        ],
    )
    summary = (
        f"Comparative market report on {p.full_address} by {p.valuer_firm}, 30 September 2024: recommended"
        f" asking price {ksh(asking)} and rent {ksh(asking_rent)} per month; {other.address},"
        f" {other.locality}"
        " is cited briefly as an upper benchmark."
    )
    return Content("valuation", f"Comparative Market Report - {p.address}", summary, pages)


def letting_report(p: Property, other: Property) -> Content:
    """A letting report on `p` (Karen Ridges Court) that compares with `other` (Karen Ridge) in passing."""
    achievable = 170_000
    pages: tuple[Page, ...] = (
        [
            ("h1", f"LETTING REPORT - {p.address.upper()}"),
            ("p", f"Prepared by {p.agent} on 15 April 2024 for {p.landlord}."),
            (
                "kv",
                (
                    ("Property", p.full_address),
                    ("Current tenant", p.tenant),
                    ("Passing rent", f"{ksh(p.rent)} per month"),
                    ("Achievable rent", f"{ksh(achievable)} per month"),
                ),
            ),
        ],
        [
            ("h2", "Comparison"),
            (
                "p",
                f"{other.full_address}, a detached villa on {other.acres:g} acres, is let at"
                f" {ksh(other.rent)}"
                f" per month; {p.name} townhouses do not command that level.",
            ),
            ("p", f"We recommend a review to {ksh(achievable)} per month at the next anniversary."),
        ],
    )
    summary = (
        f"Letting report on {p.full_address} by {p.agent}, 15 April 2024: achievable rent {ksh(achievable)}"
        " per"
        f" month against the passing {ksh(p.rent)}; a passing comparison is made with {other.address}."
    )
    return Content("valuation", f"Letting Report - {p.address}", summary, pages)


def portfolio_offer(a: Property, b: Property) -> Content:
    """One offer for two properties, each described on its own page: genuinely about both."""
    price_a, price_b = 57_000_000, 123_000_000
    buyer, agent = "Upendo Investments Ltd", "Westlands Property Hub"
    pages: tuple[Page, ...] = (
        [
            ("h1", agent.upper()),
            ("p", "Date: 27 November 2024"),
            ("h2", f"RE: PORTFOLIO OFFER FOR {a.address.upper()} AND {b.address.upper()}"),
            (
                "p",
                f"{buyer} offers {ksh(price_a + price_b)} ({words(price_a + price_b)}) for both properties"
                " together, conditional on both sales completing on the same day.",
            ),
        ],
        [
            ("h2", f"Lot 1: {a.full_address}"),
            (
                "kv",
                (
                    ("Parcel", a.parcel),
                    ("Vendor", a.landlord),
                    ("Price", ksh(price_a)),
                    ("Tenancy", f"Sold subject to the lease to {a.tenant}"),
                ),
            ),
        ],
        [
            ("h2", f"Lot 2: {b.full_address}"),
            (
                "kv",
                (
                    ("Parcel", b.parcel),
                    ("Vendor", b.landlord),
                    ("Price", ksh(price_b)),
                    ("Tenancy", f"Sold subject to the lease to {b.tenant}"),
                ),
            ),
        ],
        [
            ("h2", "Terms"),
            (
                "p",
                "Deposit of ten per cent of each price on signing; completion in 120 days; offer valid 14 days.",
            ),
            ("p", f"Kevin Otieno, for {agent}."),
        ],
    )
    summary = (
        f"Portfolio offer dated 27 November 2024 from {buyer}: {ksh(price_a)} for {a.full_address} (vendor"
        f" {a.landlord}) and {ksh(price_b)} for {b.full_address} (vendor {b.landlord}),"
        f" {ksh(price_a + price_b)}"
        " in total."
    )
    return Content("offer_letter", f"Portfolio Offer - {a.address} and {b.address}", summary, pages)


# ---------------------------------------------------------------------------------------
# The corpus: documents and traps
# ---------------------------------------------------------------------------------------

BASE_TEMPLATES: tuple[tuple[str, str, Callable[[Property], Content]], ...] = (
    ("lease", "lease", lease),
    ("valuation", "valuation", valuation),
    ("offer_letter", "offer-letter", offer_letter),
    ("inspection_report", "inspection-report", inspection),
    ("title_document", "title-document", title_document),
)


@dataclass(frozen=True)
class Trap:
    kind: str
    document: str
    asked_entity: str
    expected: str
    note: str


@dataclass
class Corpus:
    docs: list[Doc] = field(default_factory=list)
    traps: list[Trap] = field(default_factory=list)

    def add(self, path: str, content: Content, entities: Sequence[str], note: str = "") -> str:
        self.docs.append(Doc(path, content.type, tuple(entities), content.title, content.summary, content.pages, note))
        return path

    def trap(self, kind: str, document: str, asked: str, expected: str, note: str) -> None:
        self.traps.append(Trap(kind, document, asked, expected, note))


def base_path(prop_index: int, type_index: int, slug: str, stem: str) -> str:
    """Base documents alternate formats so each type and each property has both .md and .pdf."""
    ext = "pdf" if (prop_index + type_index) % 2 == 0 else "md"
    return f"{slug}/{stem}.{ext}"


def build_corpus() -> Corpus:
    """Every document and every trap record of the demo corpus."""
    c = Corpus()
    base: dict[tuple[str, str], str] = {}
    for i, p in enumerate(PROPERTIES):
        for j, (doc_type, stem, template) in enumerate(BASE_TEMPLATES):
            content = template(p)
            if doc_type == "valuation" and p.slug in VALUATION_SUMMARY_EXTRA:
                content = valuation(p, VALUATION_SUMMARY_EXTRA[p.slug])
            base[(p.slug, doc_type)] = c.add(base_path(i, j, p.slug, stem), content, [p.slug])

    bl, br, dd = BY_SLUG["banda-lane"], BY_SLUG["banda-road"], BY_SLUG["dik-dik-lane"]
    kr, krc = BY_SLUG["karen-ridge"], BY_SLUG["karen-ridges-court"]
    mg, mc = BY_SLUG["mellifera-gardens"], BY_SLUG["mellifera-court"]
    mk, mv, ot = BY_SLUG["mkungu-close"], BY_SLUG["mvuli-road"], BY_SLUG["othaya-road"]

    # (a) file name / folder names one property, content is about another.
    copy = c.add(
        "banda-lane/offer-letter-banda-lane-copy.pdf",
        lease(dd, banner="COPY - received by email from the agent"),
        [dd.slug],
        "file name says Banda Lane offer letter; content is the Dik Dik Lane lease (tenant Martin Wainaina)",
    )
    c.trap(
        "filename_content_mismatch",
        copy,
        bl.slug,
        "exclude",
        "filename and folder say Banda Lane offer letter; content and summary are the 3 Dik Dik Lane lease"
        " (tenant Martin Wainaina)",
    )
    c.trap(
        "filename_content_mismatch",
        copy,
        dd.slug,
        "keep",
        "misfiled under banda-lane/, but it is the Dik Dik Lane lease",
    )
    final = c.add(
        "karen-ridge/valuation-karen-ridge-final.md",
        valuation(krc, banner="FINAL - supersedes all drafts"),
        [krc.slug],
        "file name says Karen Ridge; content is the Karen Ridges Court valuation",
    )
    c.trap(
        "filename_content_mismatch",
        final,
        kr.slug,
        "exclude",
        "filename says Karen Ridge; content is the valuation of Townhouse 5, Karen Ridges Court"
        " (the summary contains the substring 'Karen Ridge')",
    )
    c.trap(
        "filename_content_mismatch",
        final,
        krc.slug,
        "keep",
        "misfiled under karen-ridge/, but it is the Karen Ridges Court valuation",
    )
    scan = c.add(
        "mellifera-gardens/inspection-mellifera-gardens-scan.pdf",
        inspection(mc, banner="SCANNED COPY"),
        [mc.slug],
        "file name says Mellifera Gardens; content is the Mellifera Court inspection",
    )
    c.trap(
        "filename_content_mismatch",
        scan,
        mg.slug,
        "exclude",
        "filename says Mellifera Gardens; content is the inspection of Apartment B4, Mellifera Court",
    )
    c.trap(
        "filename_content_mismatch",
        scan,
        mc.slug,
        "keep",
        "misfiled under mellifera-gardens/, but it is the Mellifera Court inspection",
    )
    generic_name = c.add(
        "mkungu-close/Offer_Letter.md",
        offer_letter(ot),
        [ot.slug],
        "generic file name in the Mkungu Close folder; content is the Othaya Road offer letter",
    )
    c.trap(
        "filename_content_mismatch",
        generic_name,
        mk.slug,
        "exclude",
        "generic filename in the mkungu-close/ folder; content is the offer letter for 31 Othaya Road",
    )
    road_copy = c.add(
        "banda-lane/valuation-banda-copy.md",
        valuation(br, banner="COPY"),
        [br.slug],
        "file name says Banda; content is the Banda Road (not Banda Lane) valuation",
    )
    c.trap(
        "filename_content_mismatch",
        road_copy,
        bl.slug,
        "exclude",
        "filed under banda-lane/ with 'banda' in the name; content is the 7 Banda Road valuation",
    )

    # (b) near-identical addresses: Banda Lane / Banda Road, Karen Ridge / Karen Ridges Court,
    # Mellifera Gardens / Mellifera Court; plus the shared suburb "Karen".
    c.trap(
        "near_identical_address",
        base[(br.slug, "lease")],
        bl.slug,
        "exclude",
        "7 Banda Road lease; shares the token 'banda' with Banda Lane",
    )
    c.trap(
        "near_identical_address",
        base[(bl.slug, "valuation")],
        br.slug,
        "exclude",
        "14 Banda Lane valuation; shares the token 'banda' with Banda Road",
    )
    c.trap(
        "near_identical_address",
        base[(bl.slug, "lease")],
        bl.slug,
        "keep",
        "control: the genuine Banda Lane lease",
    )
    c.trap(
        "near_identical_address",
        base[(krc.slug, "title_document")],
        kr.slug,
        "exclude",
        "Karen Ridges Court title; 'Karen Ridges Court' contains the substring 'Karen Ridge'",
    )
    c.trap(
        "near_identical_address",
        base[(kr.slug, "lease")],
        krc.slug,
        "exclude",
        "22 Karen Ridge lease; a prefix of 'Karen Ridges Court'",
    )
    c.trap(
        "near_identical_address",
        base[(kr.slug, "lease")],
        kr.slug,
        "keep",
        "control: the genuine Karen Ridge lease",
    )
    c.trap(
        "near_identical_address",
        base[(mc.slug, "valuation")],
        mg.slug,
        "exclude",
        "Mellifera Court valuation; shares 'Mellifera' with Mellifera Gardens",
    )
    c.trap(
        "near_identical_address",
        base[(mg.slug, "offer_letter")],
        mc.slug,
        "exclude",
        "Mellifera Gardens offer letter; shares 'Mellifera' with Mellifera Court",
    )
    c.trap(
        "near_identical_address",
        base[(bl.slug, "offer_letter")],
        kr.slug,
        "exclude",
        "14 Banda Lane, Hardy, Karen offer letter; the suburb 'Karen' is not the property Karen Ridge",
    )

    # (c) parcel numbers: "L.R. NO: 1160/88" (Banda Lane) is a prefix of "L.R. NO: 1160/880" (Banda Road).
    c.trap(
        "parcel_number",
        base[(br.slug, "title_document")],
        bl.slug,
        "exclude",
        "title of L.R. NO: 1160/880 (7 Banda Road); contains the string '1160/88' of Banda Lane's parcel",
    )
    c.trap(
        "parcel_number",
        base[(bl.slug, "title_document")],
        bl.slug,
        "keep",
        "control: title of L.R. NO: 1160/88, 14 Banda Lane",
    )
    search_dd = c.add(
        "dik-dik-lane/official-search-2327-30.md",
        official_search(dd, date(2024, 9, 16), dd.buyer, two_pages=False),
        [dd.slug],
        "summary names only the parcel number L.R. NO: 2327/30",
    )
    c.trap(
        "parcel_number",
        search_dd,
        dd.slug,
        "keep",
        "summary names only L.R. NO: 2327/30, an alias of Dik Dik Lane; no street name",
    )
    c.trap(
        "parcel_number",
        search_dd,
        bl.slug,
        "exclude",
        "official search of L.R. NO: 2327/30 (Dik Dik Lane); nothing about Banda Lane",
    )
    search_mg = c.add(
        "mellifera-gardens/official-search-7785-41.pdf",
        official_search(mg, date(2024, 6, 10), mg.buyer, two_pages=True),
        [mg.slug],
        "summary names only the parcel number L.R. NO: 7785/41",
    )
    c.trap(
        "parcel_number",
        search_mg,
        mg.slug,
        "keep",
        "summary names only L.R. NO: 7785/41, an alias of Mellifera Gardens",
    )
    c.trap(
        "parcel_number",
        search_mg,
        mc.slug,
        "exclude",
        "official search of L.R. NO: 7785/41 (Mellifera Gardens), not Mellifera Court (L.R. NO: 209/13544)",
    )

    # (d) summaries naming two properties, one dominant; and one document genuinely about two.
    c.trap(
        "two_property_summary",
        base[(dd.slug, "valuation")],
        bl.slug,
        "exclude",
        "Dik Dik Lane valuation; Banda Lane appears only as a comparable sale",
    )
    c.trap(
        "two_property_summary",
        base[(dd.slug, "valuation")],
        dd.slug,
        "keep",
        "Dik Dik Lane valuation with a passing mention of Banda Lane",
    )
    c.trap(
        "two_property_summary",
        base[(mv.slug, "valuation")],
        mk.slug,
        "exclude",
        "Mvuli Road valuation; Mkungu Close appears only as a comparable",
    )
    report = c.add(
        "mkungu-close/comparative-market-report.pdf",
        comparative_market_report(mk, ot),
        [mk.slug],
        "market report on Mkungu Close; Othaya Road cited briefly",
    )
    c.trap(
        "two_property_summary",
        report,
        ot.slug,
        "exclude",
        "comparative market report on 11 Mkungu Close; 31 Othaya Road is only a benchmark",
    )
    c.trap(
        "two_property_summary",
        report,
        mk.slug,
        "keep",
        "comparative market report on 11 Mkungu Close, the dominant property",
    )
    letting = c.add(
        "karen-ridges-court/comparative-letting-report.md",
        letting_report(krc, kr),
        [krc.slug],
        "letting report on Karen Ridges Court; Karen Ridge compared in passing",
    )
    c.trap(
        "two_property_summary",
        letting,
        kr.slug,
        "exclude",
        "letting report on Karen Ridges Court; 22 Karen Ridge is compared in passing",
    )
    c.trap(
        "two_property_summary",
        letting,
        krc.slug,
        "keep",
        "letting report on Karen Ridges Court, the dominant property",
    )
    portfolio = c.add(
        "mvuli-road/portfolio-offer-mvuli-othaya.pdf",
        portfolio_offer(mv, ot),
        [mv.slug, ot.slug],
        "one offer genuinely about two properties",
    )
    c.trap(
        "two_property_summary",
        portfolio,
        mv.slug,
        "keep",
        "portfolio offer genuinely about both 6 Mvuli Road and 31 Othaya Road (entities = both)",
    )
    c.trap(
        "two_property_summary",
        portfolio,
        ot.slug,
        "keep",
        "portfolio offer genuinely about both; Othaya Road is named second but is not a passing mention",
    )
    c.trap(
        "two_property_summary",
        portfolio,
        mk.slug,
        "exclude",
        "portfolio offer for Mvuli Road and Othaya Road; nothing about Mkungu Close",
    )

    # (e) look-alike letters (Markdown only: PDF core fonts are latin-1).
    hides = c.add(
        "banda-lane/inspection-followup.md",
        followup_inspection_banda(bl),
        [bl.slug],
        "Banda Lane spelled with CYRILLIC SMALL LETTER A (U+0430)",
    )
    c.trap(
        "lookalike_hides_entity",
        hides,
        bl.slug,
        "keep",
        "about 14 Banda Lane, written 'B\\u0430nda Lane' with a Cyrillic a throughout",
    )
    c.trap(
        "lookalike_hides_entity",
        hides,
        br.slug,
        "exclude",
        "about Banda Lane (look-alike spelling), not Banda Road",
    )
    renewal = c.add(
        "mellifera-court/lease-renewal.md",
        lease_renewal_mellifera_court(mc),
        [mc.slug],
        "Mellifera Court spelled with CYRILLIC SMALL LETTER O (U+043E)",
    )
    c.trap(
        "lookalike_hides_entity",
        renewal,
        mc.slug,
        "keep",
        "about Apartment B4, Mellifera Court, written 'Mellifera C\\u043eurt' with a Cyrillic o",
    )
    c.trap(
        "lookalike_hides_entity",
        renewal,
        mg.slug,
        "exclude",
        "about Mellifera Court (look-alike spelling), not Mellifera Gardens",
    )
    smuggle_mv = c.add(
        "mvuli-road/inspection-followup.md",
        followup_inspection_mvuli(mv),
        [mv.slug],
        "mentions Banda Lane in passing with a Cyrillic a",
    )
    c.trap(
        "lookalike_smuggles_other",
        smuggle_mv,
        bl.slug,
        "exclude",
        "about 6 Mvuli Road; '14 B\\u0430nda Lane' (Cyrillic a) appears only as the contractor's previous job",
    )
    c.trap(
        "lookalike_smuggles_other",
        smuggle_mv,
        mv.slug,
        "keep",
        "about 6 Mvuli Road; the look-alike Banda Lane must be read as another property, not as the subject",
    )
    smuggle_kr = c.add(
        "karen-ridge/counter-offer.md",
        counter_offer_karen_ridge(kr),
        [kr.slug],
        "mentions Mellifera Gardens in passing with a Cyrillic a",
    )
    c.trap(
        "lookalike_smuggles_other",
        smuggle_kr,
        mg.slug,
        "exclude",
        "counter-offer for 22 Karen Ridge; 'Mellifera G\\u0430rdens' (Cyrillic a) is a passing mention",
    )
    c.trap("lookalike_smuggles_other", smuggle_kr, kr.slug, "keep", "counter-offer for 22 Karen Ridge")

    # (f) summaries naming no property.
    annex = c.add(
        "banda-road/standard-terms-annex.md",
        standard_terms_annex(br),
        [br.slug],
        "summary names no property; page 1 says it is the annex to the 7 Banda Road lease",
    )
    c.trap(
        "generic_summary",
        annex,
        br.slug,
        "keep",
        "summary names no property (and no other address), so the summary gate must not exclude it;"
        " owned by Banda Road in the manifest",
    )
    assumptions = c.add(
        "mvuli-road/valuation-assumptions-annex.pdf",
        valuation_assumptions_annex(),
        [],
        'about no property; entities = [], unowned = "shared" (a common annex)',
    )
    c.trap(
        "generic_summary",
        assumptions,
        mv.slug,
        "keep",
        "generic annex about no property (entities = [], shared by every property); names no other address, so the gate"
        " keeps it, but it holds no facts about Mvuli Road",
    )
    return c


# ---------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------


def yaml_str(value: str) -> str:
    """A YAML double-quoted scalar (JSON string syntax is valid YAML)."""
    return json.dumps(value, ensure_ascii=False)


def render_markdown(doc: Doc) -> bytes:
    """Front matter, then the pages separated by a page-break comment line."""
    header = [
        "---",
        f"title: {yaml_str(doc.title)}",
        f"type: {doc.type}",
        f"summary: {yaml_str(doc.summary)}",
        "---",
    ]
    pages = []
    for page in doc.pages:
        lines: list[str] = []
        for kind, value in page:
            if kind == "h1":
                lines.append(f"# {value}")
            elif kind == "h2":
                lines.append(f"## {value}")
            elif kind == "p":
                lines.append(str(value))
            elif kind == "ul":
                lines.append("\n".join(f"- {item}" for item in value))  # type: ignore[attr-defined]
            elif kind == "kv":
                rows = ["| Item | Detail |", "| --- | --- |"]
                rows += [f"| {k} | {v} |" for k, v in value]  # type: ignore[attr-defined]
                lines.append("\n".join(rows))
            else:
                raise ValueError(f"unknown block kind {kind!r} in {doc.path}")
        pages.append("\n\n".join(lines))
    body = f"\n\n{PAGE_BREAK}\n\n".join(pages)
    return ("\n".join(header) + "\n\n" + body + "\n").encode("utf-8")


class _DemoPdf(FPDF):
    def __init__(self, total_pages: int) -> None:
        super().__init__(format="A4")
        self.total_pages = total_pages

    def footer(self) -> None:
        self.set_y(-12)
        self.set_font("Helvetica", "I", 8)
        self.cell(0, 5, f"Page {self.page_no()} of {self.total_pages}", align="C")


def _latin1(text: str, doc: Doc) -> str:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{doc.path}: PDF text must be latin-1 (core fonts): {text!r}") from exc
    return text


def render_pdf(doc: Doc) -> bytes:
    """A PDF with one logical page per PDF page, title and subject (= summary) in the metadata."""
    pdf = _DemoPdf(len(doc.pages))
    pdf.set_creation_date(PDF_DATE)
    pdf.set_compression(True)
    pdf.set_title(_latin1(doc.title, doc))
    pdf.set_subject(_latin1(doc.summary, doc))
    pdf.set_author("scoperag demo corpus (fictional)")
    pdf.set_creator("scripts/make_demo_corpus.py")
    pdf.set_auto_page_break(auto=True, margin=18)
    pdf.set_margins(18, 18, 18)
    for number, page in enumerate(doc.pages, start=1):
        pdf.add_page()
        for kind, value in page:
            if kind == "h1":
                pdf.set_font("Helvetica", "B", 14)
                pdf.multi_cell(0, 7, _latin1(str(value), doc), new_x="LMARGIN", new_y="NEXT")
                pdf.ln(2)
            elif kind == "h2":
                pdf.ln(1)
                pdf.set_font("Helvetica", "B", 11)
                pdf.multi_cell(0, 6, _latin1(str(value), doc), new_x="LMARGIN", new_y="NEXT")
            elif kind == "p":
                pdf.set_font("Helvetica", "", 10)
                pdf.multi_cell(0, 5, _latin1(str(value), doc), new_x="LMARGIN", new_y="NEXT")
                pdf.ln(1.5)
            elif kind == "ul":
                pdf.set_font("Helvetica", "", 10)
                for item in value:  # type: ignore[attr-defined]
                    pdf.set_x(pdf.l_margin + 4)
                    pdf.multi_cell(0, 5, _latin1(f"- {item}", doc), new_x="LMARGIN", new_y="NEXT")
                pdf.ln(1.5)
            elif kind == "kv":
                for key, val in value:  # type: ignore[attr-defined]
                    pdf.set_font("Helvetica", "B", 10)
                    pdf.cell(62, 5, _latin1(f"{key}:", doc))
                    pdf.set_font("Helvetica", "", 10)
                    pdf.multi_cell(0, 5, _latin1(str(val), doc), new_x="LMARGIN", new_y="NEXT")
                pdf.ln(1.5)
            else:
                raise ValueError(f"unknown block kind {kind!r} in {doc.path}")
        if pdf.page_no() != number:
            raise ValueError(f"{doc.path}: logical page {number} overflowed onto PDF page {pdf.page_no()}")
    return bytes(pdf.output())


# ---------------------------------------------------------------------------------------
# Manifest, trap list, dataset card
# ---------------------------------------------------------------------------------------


def toml_str(value: str) -> str:
    """A TOML basic string (JSON escapes are valid TOML escapes for these texts)."""
    return json.dumps(value, ensure_ascii=False)


def toml_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(toml_str(v) for v in values) + "]"


# The demo corpus's own words and patterns (pipeline/vocabulary.py), stored with its index.
VOCABULARY = r"""
[vocabulary]
# Words that name a kind of property or document, never one property.
generic_words = ["property", "properties", "premises", "house", "apartment", "townhouse", "document", "documents",
  "lease", "leases", "valuation", "valuations", "offer", "offers"]
# Currency words an amount is written with or without ("KSH 285,000", "285,000 Kenya shillings").
units = ["ksh", "kes", "kenya", "shilling", "shillings"]
# The Kenyan tax identification number is personal data.
pii_terms = ["kra pin"]

[vocabulary.addresses]
street_types = ["Lane", "Road", "Street", "Avenue", "Drive", "Close", "Court", "Gardens"]
# Heads that make "<Head> Road" or "<Head> Court" no address ("Main Road", "High Court").
head_stopwords = ["any", "each", "every", "our", "same", "main", "access", "private", "public", "service", "feeder",
  "bypass", "high", "supreme", "county", "district", "magistrate", "magistrates", "magistrate's", "magistrates'",
  "land", "environment", "commercial", "family", "appeal", "industrial", "new", "old"]

# Land registry numbers: "L.R. NO: 1160/88", "LR No. 2327 / 30", "title no. 209/8812", "parcel 1870/IV/171".
[[vocabulary.identifiers]]
name = "parcel_number"
label = "parcel"
pattern = '\b(?:l\s*\.?\s*r|title|parcel)\s*\.?\s*(?:no|number|#)?\s*\.?\s*[:.]?\s*(\d+(?:\s*/\s*[0-9a-z]+)+)'
# A registry number written alone in a property's alias: "1160/88".
bare = '\b\d+(?:\s*/\s*\d+)+\b'
"""


def render_manifest(corpus: Corpus) -> bytes:
    lines = [
        "# Generated by scripts/make_demo_corpus.py - edit the script, not this file.",
        'format = "scoperag-corpus/v1"',
        'name = "demo"',
        'entity_kind = "property"',
        "# The dataset card and the trap list live beside the documents but are not documents.",
        f"exclude = {toml_list(['README.md', 'traps.toml'])}",
        *VOCABULARY.rstrip("\n").split("\n"),
    ]
    for p in PROPERTIES:
        lines += ["", "[[entities]]", f"slug = {toml_str(p.slug)}", f"name = {toml_str(p.name)}",
                  f"aliases = {toml_list(p.aliases)}"]  # fmt: skip
    for doc in sorted(corpus.docs, key=lambda x: x.path):
        lines += ["", "[[documents]]", f"path = {toml_str(doc.path)}", f"type = {toml_str(doc.type)}",
                  f"entities = {toml_list(doc.entities)}"]  # fmt: skip
        if not doc.entities:
            # A common annex no property owns: served for every property's questions.
            lines.append('unowned = "shared"')
    return ("\n".join(lines) + "\n").encode("utf-8")


def render_traps(corpus: Corpus) -> bytes:
    lines = [
        "# Generated by scripts/make_demo_corpus.py - edit the script, not this file.",
        '# expected: should a question about asked_entity keep ("keep") or drop ("exclude") this document.',
        f"# kinds: {', '.join(TRAP_KINDS)}",
    ]
    for t in corpus.traps:
        lines += ["", "[[traps]]", f"kind = {toml_str(t.kind)}", f"document = {toml_str(t.document)}",
                  f"asked_entity = {toml_str(t.asked_entity)}", f"expected = {toml_str(t.expected)}",
                  f"note = {toml_str(t.note)}"]  # fmt: skip
    return ("\n".join(lines) + "\n").encode("utf-8")


def md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_card(corpus: Corpus) -> bytes:
    docs = sorted(corpus.docs, key=lambda x: x.path)
    n_md = sum(1 for x in docs if x.fmt == "md")
    out = [
        "# Demo corpus: Nairobi residential property documents",
        "",
        "A small, fully fictional corpus for scoperag's tests, examples and benchmarks: leases, valuations,"
        " offer letters, inspection reports and title documents for"
        f" {len(PROPERTIES)} residential properties in Nairobi, Kenya ({len(docs)} documents:"
        f" {n_md} Markdown, {len(docs) - n_md} PDF). Amounts are in Kenya shillings (KSH). Every person,"
        " company and parcel number is invented.",
        "",
        "The corpus exists to test the wrong-property guard (seed 002): the same templates are used for"
        " every property, addresses are near-identical, files are misnamed, and summaries mention more than"
        " one property. `traps.toml` lists those cases with the expected keep/exclude decision.",
        "",
        "## Files",
        "",
        "- `corpus.toml`: the manifest (`scoperag-corpus/v1`); the truth about which property each document"
        " is about (`entities`, primary first). The folder a file sits in is only organisation and is"
        " deliberately wrong for some files. Its `[vocabulary]` holds the corpus's own words and patterns"
        " (street types, parcel numbers, KSH, generic nouns), stored with the index.",
        "- `<property-slug>/*.md`: YAML front matter (`title`, `type`, `summary`), then pages separated by a"
        f" line `{PAGE_BREAK}`.",
        "- `<property-slug>/*.pdf`: one logical page per PDF page (core font Helvetica, latin-1 text); the"
        " PDF title is the document title and the PDF subject is the summary.",
        "- `traps.toml`: trap records (`kind`, `document`, `asked_entity`, `expected`, `note`).",
        "- `README.md`: this card. The manifest's `exclude` keeps this card and `traps.toml` out of the index.",
        "",
        "## How it was generated",
        "",
        "Everything here is written by `scripts/make_demo_corpus.py` from the property records in"
        " `scripts/demo_properties.toml`:",
        "",
        "```",
        "python scripts/make_demo_corpus.py        # from the repository root",
        "```",
        "",
        "Regeneration is byte-identical: no clock and no randomness are used, and PDFs carry a fixed creation"
        " date (2024-01-01 UTC). Do not edit the generated files by hand; change the records or the script and"
        " rerun it.",
        "",
        "## Properties",
        "",
        "| slug | name | address | parcel | aliases | documents about it |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for p in PROPERTIES:
        count = sum(1 for x in docs if p.slug in x.entities)
        out.append(f"| `{p.slug}` | {p.name} | {p.full_address} | {p.parcel} | {'; '.join(p.aliases)} | {count} |")
    out += [
        "",
        "Near-identical pairs: Banda Lane / Banda Road (parcels 1160/88 and 1160/880), Karen Ridge /"
        " Karen Ridges Court, Mellifera Gardens / Mellifera Court; Banda Lane and Banda Road are also in"
        " the suburb Karen, which is not the property Karen Ridge.",
        "",
        "## Documents",
        "",
        "| path | type | entities | pages | note |",
        "| --- | --- | --- | --- | --- |",
    ]
    for x in docs:
        ents = ", ".join(f"`{s}`" for s in x.entities) or "(none)"
        out.append(f"| `{x.path}` | {x.type} | {ents} | {len(x.pages)} | {md_cell(x.note)} |")
    out += [
        "",
        "## Facts per property (for checking answers)",
        "",
        "| property | tenant | monthly rent | lease start, term | market value (valuer, date) | offer (buyer) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for p in PROPERTIES:
        out.append(
            f"| {p.name} | {p.tenant} | {ksh(p.rent)} | {d(p.lease_start)}, {p.term_years} y |"
            f" {ksh(p.market_value)} ({p.valuer_firm}, {d(p.valuation_date)}) | {ksh(p.offer_price)}"
            f" ({p.buyer}) |"
        )
    out += [
        "",
        "## Traps",
        "",
        "Each record says, for a question about `asked_entity`, whether the document must be kept or"
        " excluded. The look-alike documents use CYRILLIC SMALL LETTER A (U+0430) or O (U+043E) inside a"
        " property name, in Markdown only.",
        "",
    ]
    for kind in TRAP_KINDS:
        out += [
            f"### {kind}",
            "",
            "| document | asked entity | expected | note |",
            "| --- | --- | --- | --- |",
        ]
        for t in corpus.traps:
            if t.kind == kind:
                out.append(f"| `{t.document}` | `{t.asked_entity}` | {t.expected} | {md_cell(t.note)} |")
        out.append("")
    return "\n".join(out).encode("utf-8")


# ---------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------


def check(corpus: Corpus) -> None:
    """Raise if the corpus breaks its own rules (formats, references, trap kinds)."""
    paths = [x.path for x in corpus.docs]
    duplicates = sorted({p for p in paths if paths.count(p) > 1})
    if duplicates:
        raise ValueError(f"duplicate document paths: {duplicates}")
    for x in corpus.docs:
        if x.type not in DOC_TYPES:
            raise ValueError(f"{x.path}: unknown type {x.type}")
        if x.fmt == "pdf" and not 2 <= len(x.pages) <= 5:
            raise ValueError(f"{x.path}: PDFs must have 2-5 pages, not {len(x.pages)}")
        if any(s not in BY_SLUG for s in x.entities):
            raise ValueError(f"{x.path}: unknown entities {x.entities}")
    known = set(paths)
    for t in corpus.traps:
        if t.kind not in TRAP_KINDS or t.expected not in ("keep", "exclude") or t.document not in known:
            raise ValueError(f"bad trap record {t}")
        if t.asked_entity not in BY_SLUG:
            raise ValueError(f"bad trap entity {t}")
    missing = set(TRAP_KINDS) - {t.kind for t in corpus.traps}
    if missing:
        raise ValueError(f"no trap records of kind {sorted(missing)}")


def write(out_dir: Path) -> list[Path]:
    """Write the whole corpus into `out_dir` (replacing the property folders); the written paths."""
    corpus = build_corpus()
    check(corpus)
    out_dir.mkdir(parents=True, exist_ok=True)
    for p in PROPERTIES:
        folder = out_dir / p.slug
        if folder.exists():
            shutil.rmtree(folder)
    written = []
    for doc in corpus.docs:
        target = out_dir / doc.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(render_pdf(doc) if doc.fmt == "pdf" else render_markdown(doc))
        written.append(target)
    for name, data in (
        ("corpus.toml", render_manifest(corpus)),
        ("traps.toml", render_traps(corpus)),
        ("README.md", render_card(corpus)),
    ):
        (out_dir / name).write_bytes(data)
        written.append(out_dir / name)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default: datasets/demo)")
    args = parser.parse_args()
    written = write(args.out)
    total = sum(p.stat().st_size for p in written)
    print(f"wrote {len(written)} files ({total / 1024:.0f} KiB) to {args.out}")


if __name__ == "__main__":
    main()
