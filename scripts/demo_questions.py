"""What the demo traces ask, as scripts/demo_traces/ states it, checked when loaded: the topics asked about
every property and the one-off documents' questions (topics.toml), the wrong_property plans
(wrong_property.toml) and the unanswerable-in-scope asks (absent_in_scope.toml).

A question's text and facts are str.format templates filled from the property records
(scripts/demo_properties.toml) with the documents' own format specs (scripts/demo_templates.py: `ksh`, `date`),
so the questions ask exactly what the documents state; what is computed from a record rather than stated in
it (a deposit, a lease's last day, an inspection's worst findings) is derived here. An error in a data file
names the file, the table and the field (scripts/data_tables.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from data_tables import load, one_of, table, tables, text, texts
from demo_facts import BY_SLUG, Property, lease_end
from demo_templates import DOC_TYPES, FORMATTER

DATA_DIR = Path(__file__).with_name("demo_traces")
P = BY_SLUG  # slug -> Property
LEASE, VALUATION, OFFER = ("lease",), ("valuation",), ("offer_letter",)
INSPECTION, TITLE = ("inspection_report",), ("title_document",)
REF_KINDS = ("name", "address", "none")
SCOPE_KINDS = ("none", "chip", "property")
FACT_LISTS = ("worst", "encumbrance")


@dataclass(frozen=True)
class Spec:
    """A question about `owner`; gold = owner's documents of `types` holding a fact, or `gold`."""

    topic: str
    owner: str
    question: str
    facts: tuple[str, ...]
    types: tuple[str, ...] = ()
    gold: tuple[str, ...] = ()
    sub_questions: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Topic:
    """One table of topics.toml: templates to fill, and where it stands (for errors)."""

    where: str
    question: str
    facts: tuple[str, ...]
    facts_from: str | None
    types: tuple[str, ...]
    sub_questions: tuple[str, ...]
    tags: tuple[str, ...]
    owner: str | None = None  # a one-off document's property
    gold: str | None = None  # and the document


@dataclass(frozen=True)
class TrapPlan:
    """How one trap record of traps.toml becomes a question about its asked property.

    exclude: the trap document is forbidden (and put in the chip when the scope is a chip).
    keep: the trap document is gold; `lure` is the property it could be mistaken for, whose
    documents of the same type are forbidden (and put in the chip).
    """

    document: str
    asked: str
    topic: str
    ref: str
    scope: str  # none | chip | property
    lure: str | None = None


@dataclass(frozen=True)
class AbsentAsk:
    """A fact a reader of the property's documents would ask for that none of them states: the document
    types a reader would select to ask it (a chip of the property's documents of those types), two
    wordings ({r}: the property, {lease}: which lease) and the markers a document stating it would use
    (scripts/absence.py). `chip_only`: some other document of a property may use a marker (a title search
    fee is no valuer's fee), so the fact is asked only of the selected documents."""

    topic: str
    types: tuple[str, ...]
    wordings: tuple[str, str]
    markers: tuple[str, ...]
    chip_only: bool = False


class LookalikeQuestion(NamedTuple):
    """A question spelling `slug` with a Cyrillic look-alike letter, in a scope, with bait in a chip."""

    topic: str
    slug: str
    spelling: str
    scope: str
    bait: tuple[str, ...]


class OtherPropertyQuestion(NamedTuple):
    """A property scope asked about another property's fact."""

    scope_slug: str
    topic: str
    asked: str
    ref: str


class ChipOfOther(NamedTuple):
    """A chip of another property's documents, asked about a property it does not hold."""

    docs: tuple[str, ...]
    topic: str
    asked: str
    ref: str


class FolderChip(NamedTuple):
    """A chip of a whole folder that holds misfiled documents about other properties."""

    folder: str
    topic: str
    ref: str


# ---- topics.toml ------------------------------------------------------------------------------------------

TOPIC_FIELDS = {"question", "facts", "facts_from", "types", "sub_questions", "tags"}
ONE_OFF_FIELDS = {"property", "question", "facts", "gold", "sub_questions", "tags"}


def _slug(value: Any, where: str) -> str:
    return str(one_of(value, P, where))


def _topic(raw: Any, where: str, one_off: bool) -> Topic:
    if one_off:
        fields = table(raw, ONE_OFF_FIELDS, {"property", "question", "facts", "gold"}, where)
    else:
        fields = table(raw, TOPIC_FIELDS, {"question", "types"}, where)
        if ("facts" in fields) == ("facts_from" in fields):
            raise ValueError(f"{where}: expected facts (templates) or facts_from (one of {FACT_LISTS})")
    types = texts(fields, "types", where)
    for kind in types:
        one_of(kind, DOC_TYPES, f"{where}.types")
    return Topic(
        where,
        text(fields, "question", where),
        texts(fields, "facts", where),
        one_of(fields["facts_from"], FACT_LISTS, f"{where}.facts_from") if "facts_from" in fields else None,
        types,
        texts(fields, "sub_questions", where),
        texts(fields, "tags", where),
        _slug(fields["property"], f"{where}.property") if one_off else None,
        text(fields, "gold", where) if one_off else None,
    )


def load_topics(path: Path) -> dict[str, Any]:
    """topics, one_off, groups, partners and absent_facts of topics.toml; ValueError names a bad field."""
    name = path.name
    data = table(load(path), {"groups", "partners", "topics", "one_off", "absent_facts"}, {"topics"}, name)
    topics = {key: _topic(raw, f"{name}: [topics.{key}]", False) for key, raw in data["topics"].items()}
    one_off = {key: _topic(raw, f"{name}: [one_off.{key}]", True) for key, raw in data.get("one_off", {}).items()}
    if set(topics) & set(one_off):
        raise ValueError(f"{name}: topics and one_off share names {sorted(set(topics) & set(one_off))}")
    groups = table(data.get("groups"), {"multi", "literal", "plain"}, {"multi", "literal", "plain"}, f"{name}: groups")
    for group in groups:
        for topic in texts(groups, group, f"{name}: groups"):
            one_of(topic, topics, f"{name}: groups.{group}")
    partners = data.get("partners", {})
    for slug, partner in partners.items():
        _slug(slug, f"{name}: partners")
        _slug(partner, f"{name}: partners.{slug}")
    absent = []
    for i, raw in enumerate(tables(data, "absent_facts", name)):
        where = f"{name}: absent_facts[{i}]"
        fields = table(raw, {"question", "term"}, {"question", "term"}, where)
        absent.append((text(fields, "question", where), text(fields, "term", where)))
    return {
        "topics": topics,
        "one_off": one_off,
        "groups": {group: texts(groups, group, name) for group in groups},
        "partners": dict(partners),
        "absent_facts": tuple(absent),
    }


_TOPICS = load_topics(DATA_DIR / "topics.toml")
TOPICS: dict[str, Topic] = _TOPICS["topics"]
ONE_OFF: dict[str, Topic] = _TOPICS["one_off"]
SPECIAL_TOPICS = tuple(ONE_OFF)
MULTI, LITERAL, PLAIN = (_TOPICS["groups"][group] for group in ("multi", "literal", "plain"))
PARTNERS: dict[str, str] = _TOPICS["partners"]
ABSENT: tuple[tuple[str, str], ...] = _TOPICS["absent_facts"]


def _high_phrase(issue: str) -> str:
    """The head of a finding before its location or cause: a substring of the report text."""
    return re.split(r" caused by| at the | in the | on the | along | under | after | for |;", issue)[0]


def _encumbrance_facts(text: str) -> tuple[str, ...]:
    charge = re.match(r"Charge to (.+?) to secure (KSH [\d,]+), registered", text)
    if charge:
        return charge.group(1), charge.group(2)
    caveat = re.match(r"Caveat lodged by (.+?) as purchaser, registered (.+)\.$", text)
    if caveat:
        return caveat.group(1), caveat.group(2)
    raise SystemExit(f"unparsed encumbrance: {text}")


def _context(p: Property, r: str) -> dict[str, Any]:
    """What a question about `p` named `r` is filled from: the record and the values derived from it."""
    severity = next(level for level in ("High", "Medium", "Low") if any(f.severity == level for f in p.findings))
    return {
        "p": p,
        "r": r,
        # The Mellifera Court lease was renewed at a new rent: ask about the original lease.
        "lease": "original 2023 lease" if p.slug == "mellifera-court" else "lease",
        "deposit": p.rent * p.deposit_months,
        "stamp_duty": p.rent * 12 // 100,
        "lease_end": lease_end(p),
        "notice": f"{p.notice_months} month{'s' if p.notice_months > 1 else ''}",
        "total": sum(f.cost for f in p.findings),
        "priority": severity.lower(),
        "worst": tuple(_high_phrase(f.issue) for f in p.findings if f.severity == severity),
        "encumbrance": _encumbrance_facts(p.encumbrances[0]) if p.encumbrances else (),
    }


def _fill(template: str, ctx: dict[str, Any], where: str) -> str:
    try:
        return FORMATTER.vformat(template, (), ctx)
    except (KeyError, AttributeError, IndexError, ValueError) as exc:
        raise ValueError(f"{where}: cannot fill {template!r}: {exc!r}") from exc


def _spec(topic: str, t: Topic, slug: str, r: str) -> Spec:
    ctx = _context(P[slug], r)
    facts = ctx[t.facts_from] if t.facts_from else tuple(_fill(f, ctx, f"{t.where}.facts") for f in t.facts)
    if not facts:
        raise SystemExit(f"{slug} has no {topic}")
    subs = tuple(_fill(q, ctx, f"{t.where}.sub_questions") for q in t.sub_questions)
    question = _fill(t.question, ctx, f"{t.where}.question")
    tags = (*t.tags, "multi_part") if subs else t.tags
    return Spec(topic, slug, question, facts, t.types, (t.gold,) if t.gold else (), subs, tags)


def spec(topic: str, slug: str, r: str) -> Spec:
    """The question of `topic` about property `slug`, naming it as `r`."""
    if topic not in TOPICS:
        raise SystemExit(f"unknown topic {topic}")
    return _spec(topic, TOPICS[topic], slug, r)


def special(topic: str, r: str) -> Spec:
    """Questions answered only by the one-off documents of the corpus (follow-ups, annexes...)."""
    t = ONE_OFF[topic]
    assert t.owner is not None
    return _spec(topic, t, t.owner, r)


def ref(slug: str, kind: str) -> str:
    """How a question names the property: its name, its address, or not at all (property scope)."""
    p = P[slug]
    return {"name": p.name, "address": p.address, "none": "the property"}.get(kind, kind)


def make_spec(topic: str, slug: str, ref_kind: str) -> Spec:
    """A table topic or a one-off document's topic, about `slug`."""
    r = ref(slug, ref_kind)
    if topic not in SPECIAL_TOPICS:
        return spec(topic, slug, r)
    s = special(topic, r)
    if s.owner != slug:
        raise SystemExit(f"special topic {topic} is about {s.owner}, not {slug}")
    return s


# ---- wrong_property.toml and absent_in_scope.toml ---------------------------------------------------------


def _asked(fields: dict[str, Any], where: str, slug_key: str = "asked", ref_key: str = "ref") -> tuple[str, str]:
    """(topic, slug) of a plan, both checked; and its ref kind."""
    one_of(text(fields, "topic", where), {*TOPICS, *ONE_OFF}, f"{where}.topic")
    _slug(fields[slug_key], f"{where}.{slug_key}")
    return fields["topic"], fields[slug_key]


def load_wrong_property(path: Path) -> dict[str, tuple[Any, ...]]:
    """The trap plans, look-alike questions, other-property scopes, chips of other properties' documents and
    folder chips of wrong_property.toml; ValueError names a bad field."""
    name = path.name
    keys = {"traps", "lookalike_questions", "other_property_in_scope", "chip_of_other", "folder_chips"}
    data = table(load(path), keys, keys, name)
    out: dict[str, list[Any]] = {key: [] for key in keys}
    for i, raw in enumerate(tables(data, "traps", name)):
        where = f"{name}: traps[{i}]"
        fields = table(
            raw,
            {"document", "asked", "topic", "ref", "scope", "lure"},
            {"document", "asked", "topic", "ref", "scope"},
            where,
        )
        topic, asked = _asked(fields, where)
        lure = _slug(fields["lure"], f"{where}.lure") if "lure" in fields else None
        out["traps"].append(
            TrapPlan(
                text(fields, "document", where),
                asked,
                topic,
                one_of(fields["ref"], REF_KINDS, f"{where}.ref"),
                one_of(fields["scope"], SCOPE_KINDS, f"{where}.scope"),
                lure,
            )
        )
    for i, raw in enumerate(tables(data, "lookalike_questions", name)):
        where = f"{name}: lookalike_questions[{i}]"
        fields = table(
            raw, {"topic", "property", "spelling", "scope", "bait"}, {"topic", "property", "spelling", "scope"}, where
        )
        topic, slug = _asked(fields, where, "property")
        out["lookalike_questions"].append(
            LookalikeQuestion(
                topic,
                slug,
                text(fields, "spelling", where),
                one_of(fields["scope"], SCOPE_KINDS, f"{where}.scope"),
                texts(fields, "bait", where),
            )
        )
    for i, raw in enumerate(tables(data, "other_property_in_scope", name)):
        where = f"{name}: other_property_in_scope[{i}]"
        fields = table(
            raw, {"scope_property", "topic", "asked", "ref"}, {"scope_property", "topic", "asked", "ref"}, where
        )
        topic, asked = _asked(fields, where)
        scope = _slug(fields["scope_property"], f"{where}.scope_property")
        ref_kind = one_of(fields["ref"], REF_KINDS, f"{where}.ref")
        out["other_property_in_scope"].append(OtherPropertyQuestion(scope, topic, asked, ref_kind))
    for i, raw in enumerate(tables(data, "chip_of_other", name)):
        where = f"{name}: chip_of_other[{i}]"
        fields = table(raw, {"chip", "topic", "asked", "ref"}, {"chip", "topic", "asked", "ref"}, where)
        topic, asked = _asked(fields, where)
        ref_kind = one_of(fields["ref"], REF_KINDS, f"{where}.ref")
        out["chip_of_other"].append(ChipOfOther(texts(fields, "chip", where), topic, asked, ref_kind))
    for i, raw in enumerate(tables(data, "folder_chips", name)):
        where = f"{name}: folder_chips[{i}]"
        fields = table(raw, {"folder", "topic", "ref"}, {"folder", "topic", "ref"}, where)
        topic, folder = _asked(fields, where, "folder")
        out["folder_chips"].append(FolderChip(folder, topic, one_of(fields["ref"], REF_KINDS, f"{where}.ref")))
    return {key: tuple(values) for key, values in out.items()}


def load_asks(path: Path) -> tuple[AbsentAsk, ...]:
    """The asks of absent_in_scope.toml; ValueError names a bad field."""
    out = []
    for i, raw in enumerate(tables(load(path), "asks", path.name)):
        where = f"{path.name}: asks[{i}]"
        fields = table(
            raw,
            {"topic", "types", "wordings", "markers", "chip_only"},
            {"topic", "types", "wordings", "markers"},
            where,
        )
        types = tuple(one_of(kind, DOC_TYPES, f"{where}.types") for kind in texts(fields, "types", where))
        wordings = texts(fields, "wordings", where)
        if len(wordings) != 2:
            raise ValueError(f"{where}.wordings: expected two wordings (chip, property scope), got {len(wordings)}")
        chip_only = fields.get("chip_only", False)
        if not isinstance(chip_only, bool):
            raise ValueError(f"{where}.chip_only: expected true or false, got {chip_only!r}")
        out.append(
            AbsentAsk(
                text(fields, "topic", where),
                types,
                (wordings[0], wordings[1]),
                texts(fields, "markers", where),
                chip_only,
            )
        )
    return tuple(out)


_WRONG = load_wrong_property(DATA_DIR / "wrong_property.toml")
TRAP_PLANS: tuple[TrapPlan, ...] = _WRONG["traps"]
LOOKALIKE_QUESTIONS: tuple[LookalikeQuestion, ...] = _WRONG["lookalike_questions"]
OTHER_PROPERTY_IN_SCOPE: tuple[OtherPropertyQuestion, ...] = _WRONG["other_property_in_scope"]
CHIP_OF_OTHER: tuple[ChipOfOther, ...] = _WRONG["chip_of_other"]
FOLDER_CHIPS: tuple[FolderChip, ...] = _WRONG["folder_chips"]
ABSENT_ASKS = load_asks(DATA_DIR / "absent_in_scope.toml")
