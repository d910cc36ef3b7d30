"""The SEC 10-Q filings set: its filings, the companies that filed them, and the split a question falls in.

Shared by the builders of the set's traces (scripts/make_sec_traces.py, scripts/sec_computed.py,
scripts/sec_absent.py), which all name filings and companies the same way.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from pipeline.evaluation.examples import Split

CORPUS = "sec-10q"
QUARTERS: tuple[str, ...] = ("2022 Q3", "2023 Q1", "2023 Q2", "2023 Q3")
# Ticker -> the names a question may use for the company (lower case).
COMPANY_NAMES: Mapping[str, tuple[str, ...]] = {
    "AAPL": ("apple", "aapl"),
    "AMZN": ("amazon", "amzn"),
    "INTC": ("intel", "intc"),
    "MSFT": ("microsoft", "msft"),
    "NVDA": ("nvidia", "nvda"),
}
TICKERS: tuple[str, ...] = tuple(sorted(COMPANY_NAMES))
SEC_DOCUMENTS: tuple[str, ...] = tuple(f"{q} {t}.pdf" for t in TICKERS for q in QUARTERS)


def ticker_of(document: str) -> str:
    """'2023 Q3 AAPL.pdf' -> 'AAPL'."""
    return Path(document).stem.split()[-1]


def names_company(question: str, ticker: str) -> bool:
    """Whether the question names the company (so another company's filings cannot answer it)."""
    words = set(re.findall(r"[a-z]+", question.casefold()))
    return any(name in words for name in COMPANY_NAMES[ticker])


def split_of(question: str) -> Split:
    """60/20/20 by a hash of the question: every variant of a question shares its split."""
    bucket = int(hashlib.sha256(" ".join(question.split()).casefold().encode()).hexdigest(), 16) % 10
    return "train" if bucket < 6 else "dev" if bucket < 8 else "test"


def swap_company(
    documents: Sequence[str], ticker: str, documents_known: Sequence[str] = SEC_DOCUMENTS
) -> tuple[str, ...]:
    """The same quarters' filings of another company (those that exist)."""
    known = set(documents_known)
    quarters = sorted({Path(d).stem.rsplit(" ", 1)[0] for d in documents})
    return tuple(f"{q} {ticker}.pdf" for q in quarters if f"{q} {ticker}.pdf" in known)


def other_tickers(question: str, own: Sequence[str]) -> tuple[str, str]:
    """Two other companies, picked deterministically from the question's hash."""
    others = [t for t in TICKERS if t not in own]
    start = int(hashlib.sha256(question.encode()).hexdigest(), 16) % len(others)
    return others[start], others[(start + 1) % len(others)]
