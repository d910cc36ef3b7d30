"""A comparison across entities, decided by code (pure functions): which entity the question quotes is which
catalog entity, and, from each entity's own typed figure, which has the lowest or highest.

An entity whose figure is absent, or in another currency than the others (or than the one asked), is left out
of the comparison and named; a name the catalog does not know is named too, never silently dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.answering.typed_answers import absent
from pipeline.entities import scan_entity_mentions
from pipeline.intake.analysis import find_partial_entities
from pipeline.intake.comparison import Extreme
from pipeline.intake.contract import Contract
from pipeline.types import Entity
from pipeline.values.typed import TypedValue
from pipeline.vocabulary import Vocabulary


@dataclass(frozen=True)
class Compared:
    """One entity of a comparison: the name as the question quotes it, the catalog entity it names (None: none
    does) and the value its own documents gave (None: it was not asked, having no documents in scope)."""

    quoted: str
    entity_id: str | None
    value: TypedValue | None = None


@dataclass(frozen=True)
class Outcome:
    """The entity a comparison picks (None: no entity had a comparable figure), and those left out, each with
    why."""

    winner: Compared | None
    left_out: tuple[tuple[str, str], ...]
    # the parts whose figures were compared
    compared: tuple[Compared, ...] = ()


def named_entity(quoted: str, entities: Sequence[Entity], vocabulary: Vocabulary) -> str | None:
    """The catalog entity a quoted name names (in full, as people shorten it, or by a word only it uses);
    None when it names none or several."""
    scan = scan_entity_mentions(quoted, entities, vocabulary)
    found = list(dict.fromkeys(m.entity_id for m in scan.mentions if m.entity_id))
    found += [e for e in find_partial_entities(quoted, entities, tuple(found), vocabulary) if e not in found]
    return found[0] if len(found) == 1 else None


def compare(parts: Sequence[Compared], extreme: Extreme, contract: Contract | None = None) -> Outcome:
    """The part with the lowest or highest figure among those with a comparable one: a number, present, in one
    currency (the one asked, else the one most of them report in)."""
    left_out: list[tuple[str, str]] = []
    present: list[Compared] = []
    for part in parts:
        value = part.value
        if part.entity_id is None:
            left_out.append((part.quoted, "not a known entity of this collection"))
        elif value is None:
            left_out.append((part.quoted, "no document of it in scope"))
        elif value.absent or not isinstance(value.value, int | float) or isinstance(value.value, bool):
            left_out.append((part.quoted, value.note or "its documents do not state it"))
        else:
            present.append(part)
    asked = contract.currency if contract else None
    currencies = Counter(p.value.currency for p in present if p.value is not None and p.value.currency)
    currency = asked or (currencies.most_common(1)[0][0] if currencies else None)
    comparable: list[Compared] = []
    for part in present:
        found = part.value.currency if part.value is not None else None
        if currency and found and found != currency:
            left_out.append((part.quoted, f"reported in {found}, not {currency}"))
        else:
            comparable.append(part)
    if not comparable:
        return Outcome(None, tuple(left_out))

    def figure(part: Compared) -> float:
        value = part.value.value if part.value is not None else None
        return float(value) if isinstance(value, int | float) else 0.0

    pick = min if extreme == "lowest" else max
    return Outcome(pick(comparable, key=figure), tuple(left_out), tuple(comparable))


def plural(kind: str) -> str:
    """The plural of an entity kind as the catalog names it ("property" -> "properties", "company" -> "companies")."""
    return f"{kind[:-1]}ies" if kind.endswith("y") and not kind.endswith(("ay", "ey", "oy")) else f"{kind}s"


def outcome_line(outcome: Outcome, extreme: Extreme, metric: str, entities: str = "companies") -> str:
    """The comparison's answer line: the entity picked with its figure, and who was left out and why (`entities`
    names what is compared, in the plural)."""
    winner = outcome.winner
    left = "; ".join(f"{name} ({why})" for name, why in outcome.left_out)
    if winner is None or winner.value is None:
        head = f"None of the {entities} has a comparable {metric}"
    else:
        shown = winner.value.as_written or str(winner.value.value)
        head = f"{extreme.capitalize()} {metric}: {winner.quoted} ({shown})"
    return f"{head}. Left out: {left}." if left else f"{head}."


def outcome_value(outcome: Outcome, contract: Contract | None) -> TypedValue:
    """The comparison's typed value: the name picked, as the question quotes it, with the pages its figure
    rests on; absent (the question's own absent value) when none is comparable."""
    note = "; ".join(f"{name}: {why}" for name, why in outcome.left_out)[:400] or None
    winner = outcome.winner
    if winner is None or winner.value is None:
        return absent("name", contract, note)
    # the comparison rests on every figure compared, the winner's first
    compared = [p for p in outcome.compared if p.value is not None and p is not winner]
    pages = tuple(dict.fromkeys([*winner.value.pages, *(page for p in compared if p.value for page in p.value.pages)]))
    return TypedValue(kind="name", value=winner.quoted, pages=pages, note=note)
