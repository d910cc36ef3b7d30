"""Comparisons across 3-5 companies of one split for the EDGAR typed set (scripts/make_edgar_typed.py): the
lowest or highest figure of a concept family each company reports; some leave out a company whose filings
neither report nor mention the figure, some quote a company that is not in the corpus. Drawn by a generator
seeded with the split's name.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Literal, cast

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # scripts/ is no package: its builders import each other by name

import make_edgar_traces as edgar  # noqa: E402
from absence import marker_hits  # noqa: E402
from edgar_typed_questions import CONFIG, REPORT, TypedQuestion, fill, gold  # noqa: E402

from pipeline.evaluation.examples import ComparedEntity, ExpectedValue, Split  # noqa: E402
from pipeline.store.xbrl import PageFact  # noqa: E402


@dataclass(frozen=True)
class Figure:
    """One company's figure for a comparison: its filing, the fact, its pages."""

    filing: edgar.Filing
    fact: PageFact
    pages: tuple[int, ...]


def comparison_questions(filings: Sequence[edgar.Filing], split: Split) -> list[TypedQuestion]:
    """Comparisons across 3-5 companies of one split, each from its filing of one form: the winner by the
    lowest or highest figure of a shared family; some leave out a company whose filings neither report nor
    mention the figure, some quote a company that is not in the corpus (the answer must name it)."""
    spec = CONFIG["comparisons"]
    target = spec["per_split"][split]
    topics = {t["name"]: t for t in CONFIG["absent"]}
    by_form: dict[str, list[edgar.Filing]] = {}
    for filing in filings:
        if filing.source.facts:
            by_form.setdefault(filing.form, []).append(filing)
    figures: dict[tuple[str, str], dict[str, Figure]] = {}
    lacking: dict[tuple[str, str], list[edgar.Filing]] = {}
    families = {f.name: f for f in edgar.FAMILIES}
    for form, group in by_form.items():
        for name in spec["families"]:
            for filing in group:
                found = edgar.candidate_facts(filing).get(name)
                if found and found[0].unit == "USD" and (form == "10-K" or found[1] in ("quarter", "instant")):
                    figures.setdefault((form, name), {})[filing.company.ticker] = Figure(filing, found[0], found[2])
                elif name in topics and _lacks(filing, filings, families[name].concepts, topics[name]["markers"]):
                    lacking.setdefault((form, name), []).append(filing)
    rng = random.Random(f"edgar-typed-comparisons:{split}")
    variants = ("plain", "excluded", "plain", "unknown")
    out: list[TypedQuestion] = []
    seen: set[tuple[str, ...]] = set()
    for attempt in range(target * 20):
        if len(out) >= target:
            break
        variant = variants[attempt % len(variants)]
        keys = sorted(k for k, v in figures.items() if len(v) >= 3 or (len(v) >= 2 and variant != "plain"))
        if variant == "excluded":
            keys = [k for k in keys if lacking.get(k)]
        if not keys:
            continue
        form, name = rng.choice(keys)
        which = rng.choice(("lowest", "highest"))
        have = sorted(figures[(form, name)])
        size = rng.randint(3, min(5, len(have) + (variant != "plain")))
        picked = rng.sample(have, size - (variant != "plain"))
        extra: str | edgar.Filing | None = None
        if variant == "excluded":
            extra = rng.choice(lacking[(form, name)])
        elif variant == "unknown":
            extra = rng.choice(spec["unknown"])
        question = _comparison(figures[(form, name)], picked, extra, form, name, which, rng)
        key = (form, name, which, *sorted(picked), str(extra))
        if question is None or key in seen:
            continue
        seen.add(key)
        out.append(question)
    return out


def _lacks(
    filing: edgar.Filing, filings: Sequence[edgar.Filing], concepts: Sequence[str], markers: Sequence[str]
) -> bool:
    """Whether none of the company's filings reports any of `concepts` or mentions the figure (its markers)."""
    own = [f for f in filings if f.company == filing.company]
    if any(f.concept in concepts for o in own for f in o.source.facts):
        return False
    texts = {o.relpath: o.source.pages for o in own}
    return not marker_hits(markers, texts, texts)


def _comparison(
    have: Mapping[str, Figure],
    picked: Sequence[str],
    extra: str | edgar.Filing | None,
    form: str,
    family: str,
    which: str,
    rng: random.Random,
) -> TypedQuestion | None:
    """One comparison question, or None when two compared figures tie."""
    entities = [
        ComparedEntity(
            quoted=have[t].filing.company.short,
            entity=have[t].filing.company.slug,
            name=have[t].filing.company.name,
            document=have[t].filing.relpath,
            value=float(Decimal(have[t].fact.value)),
        )
        for t in picked
    ]
    filings = [have[t].filing for t in picked]
    if isinstance(extra, str):
        entities.append(ComparedEntity(quoted=extra))
    elif extra is not None:
        filings.append(extra)
        entities.append(
            ComparedEntity(
                quoted=extra.company.short, entity=extra.company.slug, name=extra.company.name, document=extra.relpath
            )
        )
    order = list(range(len(entities)))
    rng.shuffle(order)
    entities = [entities[i] for i in order]
    values = [e.value for e in entities if e.value is not None]
    best = min(values) if which == "lowest" else max(values)
    if values.count(best) > 1:
        return None
    winner = next(have[t].filing.company for t in picked if float(Decimal(have[t].fact.value)) == best)
    template = rng.choice(CONFIG["comparisons"]["text"])
    names = ", ".join(f'"{e.quoted}"' for e in entities)
    metric = CONFIG["metrics"][family]["metric"]
    question = fill(template, None, which=which, metric=metric, names=names, report=REPORT[form], form=form)
    expected = ExpectedValue(
        kind="name",
        value=winner.name,
        aliases={winner.name: tuple(a for a in (winner.short, *winner.aliases) if a != winner.name)},
        compare=cast(Literal["lowest", "highest"], which),
        entities=tuple(entities),
    )
    pages = tuple(p for t in picked for p in gold(have[t].filing, have[t].pages))
    variant = "unknown" if isinstance(extra, str) else ("excluded" if extra is not None else "plain")
    tags = (f"compare:{which}", f"variant:{variant}", f"companies:{len(entities)}")
    period = "instant" if any(f.instant for f in edgar.FAMILIES if f.name == family) else "year"
    return TypedQuestion(
        "comparison",
        family,
        question,
        tuple(filings),
        expected,
        pages,
        (winner.short,),
        None,
        period if form == "10-K" else ("instant" if period == "instant" else "quarter"),
        tags,
        compared=tuple(f.company for f in filings),
    )
