"""The companies of the EDGAR filings set in their groups of close companies (scripts/edgar_companies.toml),
the concept families its questions ask about (scripts/edgar_questions.toml), and the split of each group.

The builders of the set's examples (scripts/make_edgar_traces.py and those that read the filings the way it
does) share these records.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pipeline.evaluation.examples import Split

# Share of companies in test and dev (whole groups of close companies, in hash order).
TEST_SHARE = 0.2
DEV_SHARE = 0.2


@dataclass(frozen=True)
class Company:
    """A filer: its ticker (its folder's name), its name, the name a question uses, and other aliases."""

    ticker: str
    name: str
    short: str
    aliases: tuple[str, ...] = ()

    @property
    def slug(self) -> str:
        return self.ticker.lower()


@dataclass(frozen=True)
class Family:
    """A concept family: the concepts that report it (in order of preference), whether it is a balance
    at a date, and its question wordings."""

    name: str
    concepts: tuple[str, ...]
    templates: tuple[str, ...]
    instant: bool = False
    core: bool = False


def _load(name: str, key: str) -> list[dict[str, Any]]:
    """The list under `key` of the TOML file `name` beside this script."""
    data = tomllib.loads(Path(__file__).with_name(name).read_text(encoding="utf-8"))
    return cast(list[dict[str, Any]], data[key])


def _groups() -> dict[str, tuple[Company, ...]]:
    raw = _load("edgar_companies.toml", "groups")
    return {
        g["name"]: tuple(
            Company(c["ticker"], c["name"], c["short"], tuple(c.get("aliases", ()))) for c in g["companies"]
        )
        for g in raw
    }


def _families() -> tuple[Family, ...]:
    raw = _load("edgar_questions.toml", "families")
    return tuple(
        Family(
            f["name"], tuple(f["concepts"]), tuple(f["templates"]), bool(f.get("instant", False)), bool(f.get("core"))
        )
        for f in raw
    )


GROUPS = _groups()
COMPANIES: dict[str, Company] = {c.ticker: c for group in GROUPS.values() for c in group}
GROUP_OF: dict[str, str] = {c.ticker: name for name, group in GROUPS.items() for c in group}
FAMILIES = _families()


def stable_hash(*parts: str) -> int:
    return int(hashlib.sha256("\x1f".join(parts).encode()).hexdigest(), 16)


def split_of_groups() -> dict[str, Split]:
    """Each group's split: whole groups in hash order to test, then dev, until each holds its share of
    companies; the rest to train."""
    total = sum(len(g) for g in GROUPS.values())
    splits: dict[str, Split] = {}
    counts = {"test": 0, "dev": 0}
    for name in sorted(GROUPS, key=lambda n: stable_hash("edgar-split", n)):
        size = len(GROUPS[name])
        if counts["test"] < TEST_SHARE * total:
            splits[name], counts["test"] = "test", counts["test"] + size
        elif counts["dev"] < DEV_SHARE * total:
            splits[name], counts["dev"] = "dev", counts["dev"] + size
        else:
            splits[name] = "train"
    return splits
