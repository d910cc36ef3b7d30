"""The document templates of the demo corpus (scripts/demo_corpus/<type>.toml) and how they are filled.

A template's title, summary and pages are text in the data file; a property record fills them through
str.format fields ("{p.landlord}", "{p.rent:ksh}"). What is computed from the record rather than stated
in it (a deposit, a lease's last day, an inspection's total) is derived here, per template, so the data
files hold words and the code holds arithmetic. Templates are checked when loaded: an error names the file,
the template and the field.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from demo_facts import MONTHS, Property, d, ksh, lease_end, words

TEMPLATES_DIR = Path(__file__).with_name("demo_corpus")
DOC_TYPES = ("lease", "valuation", "offer_letter", "inspection_report", "title_document")
TEMPLATE_FIELDS = {"title", "summary", "pages", "values", "lookalike"}
BLOCK_KINDS = ("h1", "h2", "p", "ul", "kv", "each")

# A block of page content: ("h1"|"h2"|"p", str), ("ul", tuple[str, ...]) or ("kv", tuple[(key, value), ...]).
Block = tuple[str, object]
Page = list[Block]


@dataclass(frozen=True)
class Content:
    """What a template produces: title, summary and pages (the file name is chosen apart)."""

    type: str
    title: str
    summary: str
    pages: tuple[Page, ...]


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


class _DocumentFormatter(string.Formatter):
    """str.format with the documents' own specs: `date` ('1 March 2023'), `month` ('March 2023'),
    `ksh` ('KSH 285,000'), `words` (an amount in words) and `upper`."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec == "date":
            return d(value)
        if format_spec == "month":
            return f"{MONTHS[value.month - 1]} {value.year}"
        if format_spec == "ksh":
            return ksh(value)
        if format_spec == "words":
            return words(value)
        if format_spec == "upper":
            return str(value).upper()
        return str(super().format_field(value, format_spec))


FORMATTER = _DocumentFormatter()


def _plural(count: int, unit: str) -> str:
    return f"{count} {unit}{'s' if count > 1 else ''}"


def _lease(p: Property, v: Mapping[str, Any]) -> dict[str, Any]:
    annual = p.rent * 12
    return {
        "deposit": p.rent * p.deposit_months,
        "annual": annual,
        "term": _plural(p.term_years, "year"),
        "lease_end": lease_end(p),
        "notice": _plural(p.notice_months, "month"),
        "stamp_duty": annual // 100,
        "stamp_date": p.lease_signed + timedelta(days=7),
    }


def _inspection(p: Property, v: Mapping[str, Any]) -> dict[str, Any]:
    findings = [
        {"number": n, "f": f, "cost": ksh(f.cost) if f.cost else "borne by the management company"}
        for n, f in enumerate(p.findings, start=1)
    ]
    return {
        "findings": findings,
        "total": sum(f.cost for f in p.findings),
        "signed": p.inspection_date + timedelta(days=2),
        "first_shorts": ", ".join(f.short for f in p.findings[:-1]),
        "last_short": p.findings[-1].short,
    }


# Per template: the values derived from the record (and the template's own values) that its text names.
DERIVED: dict[str, Callable[[Property, Mapping[str, Any]], dict[str, Any]]] = {
    "lease": _lease,
    "valuation": lambda p, v: {"inspected": p.valuation_date - timedelta(days=4)},
    "offer_letter": lambda p, v: {"deposit": p.offer_price // 10, "balance": p.offer_price - p.offer_price // 10},
    "inspection_report": _inspection,
    "title_document": lambda p, v: {
        "entries": p.encumbrances or ("No entries.",),
        "tenure": p.tenure[0].lower() + p.tenure[1:],
    },
    "official_search": lambda p, v: {
        "encumbrance": "; ".join(p.encumbrances) if p.encumbrances else "No encumbrances registered."
    },
    "lease_renewal_mellifera_court": lambda p, v: {
        "new_deposit": v["new_rent"] * 2,
        "deposit_top_up": (v["new_rent"] - p.rent) * 2,
    },
    "portfolio_offer": lambda p, v: {"total": v["price_a"] + v["price_b"]},
}


@dataclass(frozen=True)
class Template:
    """One template as its data file states it."""

    name: str
    type: str
    title: str
    summary: str
    pages: tuple[list[Any], ...]
    values: Mapping[str, Any]
    lookalike: tuple[str, str] | None


def _check_blocks(blocks: Any, where: str) -> None:
    if not isinstance(blocks, list):
        raise ValueError(f"{where}: expected a list of blocks, got {blocks!r}")
    for i, block in enumerate(blocks):
        if not isinstance(block, list) or not block or block[0] not in BLOCK_KINDS:
            raise ValueError(f"{where}[{i}]: expected [kind, ...] with kind one of {BLOCK_KINDS}, got {block!r}")
        if block[0] == "each":
            if len(block) != 3 or not isinstance(block[1], str):
                raise ValueError(f'{where}[{i}]: expected ["each", name, [block, ...]], got {block!r}')
            _check_blocks(block[2], f"{where}[{i}]")
        elif len(block) != 2:
            raise ValueError(f"{where}[{i}]: expected [kind, value], got {block!r}")
        elif block[0] in ("h1", "h2", "p") and not isinstance(block[1], str):
            raise ValueError(f"{where}[{i}]: a {block[0]} holds text, got {block[1]!r}")


def load_templates(folder: Path = TEMPLATES_DIR) -> dict[str, Template]:
    """Every template of the type files in `folder`, by name; ValueError names a bad file, template or field."""
    out: dict[str, Template] = {}
    for doc_type in DOC_TYPES:
        path = folder / f"{doc_type}.toml"
        for name, raw in tomllib.loads(path.read_text(encoding="utf-8")).items():
            where = f"{path.name}: [{name}]"
            if not isinstance(raw, dict) or set(raw) - TEMPLATE_FIELDS or {"title", "summary", "pages"} - set(raw):
                raise ValueError(f"{where}: fields must be title, summary, pages (values, lookalike optional)")
            if name in out:
                raise ValueError(f"{where}: a template of this name is defined twice")
            for i, page in enumerate(raw["pages"]):
                _check_blocks(page, f"{where}.pages[{i}]")
            lookalike = raw.get("lookalike")
            if lookalike is not None and (len(lookalike) != 2 or not all(isinstance(s, str) for s in lookalike)):
                raise ValueError(f"{where}.lookalike: expected [target, replacement], got {lookalike!r}")
            out[name] = Template(
                name,
                doc_type,
                raw["title"],
                raw["summary"],
                tuple(raw["pages"]),
                dict(raw.get("values", {})),
                tuple(lookalike) if lookalike else None,
            )
    return out


TEMPLATES = load_templates()


def _fill(text: str, ctx: Mapping[str, Any], where: str) -> str:
    try:
        return FORMATTER.vformat(text, (), ctx)
    except (KeyError, AttributeError, ValueError) as exc:
        raise ValueError(f"{where}: cannot fill {text!r}: {exc!r}") from exc


def _items(value: Any, ctx: Mapping[str, Any], where: str) -> tuple[str, ...]:
    """A list block's items: written out, a field of the context ("p.comparables"), or one per item of a
    context list ({ each = "findings", text = ... })."""
    if isinstance(value, str):
        return tuple(FORMATTER.get_field(value, (), ctx)[0])
    if isinstance(value, dict):
        return tuple(_fill(value["text"], {**ctx, **item}, where) for item in ctx[value["each"]])
    return tuple(_fill(item, ctx, where) for item in value)


def _blocks(blocks: list[Any], ctx: Mapping[str, Any], where: str) -> Page:
    out: Page = []
    for kind, *rest in blocks:
        if kind == "each":
            name, inner = rest
            for item in ctx[name]:
                out += _blocks(inner, {**ctx, **item}, where)
        elif kind == "ul":
            out.append((kind, _items(rest[0], ctx, where)))
        elif kind == "kv":
            out.append((kind, tuple((_fill(k, ctx, where), _fill(v, ctx, where)) for k, v in rest[0])))
        else:
            out.append((kind, _fill(rest[0], ctx, where)))
    return out


def content(
    name: str,
    p: Property | None = None,
    *,
    other: Property | None = None,
    values: Mapping[str, Any] | None = None,
    banner: str | None = None,
    page_count: int | None = None,
    summary_extra: str = "",
) -> Content:
    """The template `name` filled from `p` (and `other`), with `banner` above page 1, only the first
    `page_count` pages when given, and `summary_extra` appended to the summary."""
    template = TEMPLATES[name]
    ctx: dict[str, Any] = {"p": p, "other": other, **template.values, **(values or {})}
    if p is not None:
        derive = DERIVED.get(name)
        if derive is not None:
            ctx.update(derive(p, ctx))
        if template.lookalike:
            ctx["spelled"] = p.address.replace(*template.lookalike)
    where = f"{template.type}.toml: [{name}]"
    pages = tuple(_blocks(page, ctx, where) for page in template.pages[:page_count])
    if banner:
        pages[0].insert(0, ("p", banner))
    summary = _fill(template.summary, ctx, where)
    if summary_extra:
        summary += " " + summary_extra
    return Content(template.type, _fill(template.title, ctx, where), summary, pages)
