"""Labelled examples over CUAD v1 contracts (datasets/cuad): questions templated from the lawyers' labels.

Run from the repository root (the data folder holds `cuad-dev/`):

    python scripts/make_cuad_set.py [--data ../shared/data]

Reads `cuad-dev/master_clauses.csv` (per clause category the spans lawyers marked, and a normalised answer)
and the contracts' text inside `cuad-dev/contracts.tar.xz`, and writes

- `datasets/cuad/corpus.toml`: each contract owned by its parties (entities named as the labels name them);
- `datasets/cuad/traces/{dev,test}.jsonl`: split by contract before any answering change, half each
  (by a hash of the file name), so no contract of the test split is read while a rule is written.

Every contract is asked about each of CATEGORIES. A category whose span list is empty is a clause the contract
does not have: the question expects "not stated" (`expect_not_found`). A category with spans expects an answer
resting on them (`answer_spans`); where the normalised answer is a value the spans state (a date, a place, a
duration, a party's name) it is also an answer fact. Each question takes one of several wordings, chosen by a
hash of contract and category, and one of the four cases. Deterministic; a span that does not occur in its
contract's text stops the run.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import json
import re
import sys
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pipeline.evaluation.examples import (  # noqa: E402
    ExpectedValue,
    LabelledExample,
    make_example,
    write_example_set,
)
from pipeline.evaluation.metrics import fact_present  # noqa: E402
from pipeline.text import normalise  # noqa: E402

CORPUS = "cuad"
OUT = ROOT / "datasets" / "cuad"
SEED = "cuad-2026-12"

# category column -> (answer column, question wordings about "the agreement"). Wordings are plain questions a
# reader of a contract asks, several per category, none copied from a rule of the answering code.
CATEGORIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "Parties": (
        "Parties-Answer",
        (
            "Who are the parties to {doc}?",
            "Which companies or persons signed {doc}?",
            "Between whom is {doc} made?",
        ),
    ),
    "Agreement Date": (
        "Agreement Date-Answer",
        ("What is the date of {doc}?", "When was {doc} entered into?", "On what date was {doc} made?"),
    ),
    "Effective Date": (
        "Effective Date-Answer",
        ("What is the effective date of {doc}?", "When does {doc} take effect?", "From what date is {doc} effective?"),
    ),
    "Expiration Date": (
        "Expiration Date-Answer",
        (
            "When does {doc} expire?",
            "When does the initial term of {doc} end?",
            "How long does {doc} last before it expires?",
        ),
    ),
    "Renewal Term": (
        "Renewal Term-Answer",
        (
            "What is the renewal term of {doc}?",
            "Does {doc} renew automatically, and for how long?",
            "For what period is {doc} extended after its initial term?",
        ),
    ),
    "Notice Period To Terminate Renewal": (
        "Notice Period To Terminate Renewal- Answer",
        (
            "How much notice is needed to stop {doc} from renewing?",
            "What notice period applies to terminating the renewal of {doc}?",
            "How far in advance must a party give notice of non-renewal of {doc}?",
        ),
    ),
    "Governing Law": (
        "Governing Law-Answer",
        (
            "Which law governs {doc}?",
            "Under which state's or country's laws is {doc} construed?",
            "What is the governing law of {doc}?",
        ),
    ),
    "Anti-Assignment": (
        "Anti-Assignment-Answer",
        (
            "Can either party assign {doc} without the other party's consent?",
            "Is consent required to assign {doc} to a third party?",
            "What does {doc} say about assigning it?",
        ),
    ),
    "Cap On Liability": (
        "Cap On Liability-Answer",
        (
            "Is there a cap on liability under {doc}?",
            "What is the maximum amount a party can be liable for under {doc}?",
            "How is each party's liability limited in {doc}?",
        ),
    ),
    "Non-Compete": (
        "Non-Compete-Answer",
        (
            "Does {doc} restrict a party from competing?",
            "Is there a non-compete obligation in {doc}?",
            "What competition restrictions does {doc} impose?",
        ),
    ),
    "Exclusivity": (
        "Exclusivity-Answer",
        (
            "Is there an exclusivity commitment in {doc}?",
            "Does {doc} grant any exclusive rights?",
            "Is a party bound to deal exclusively with the other under {doc}?",
        ),
    ),
    "Audit Rights": (
        "Audit Rights-Answer",
        (
            "Does a party have the right to audit the other's books under {doc}?",
            "Are there audit or inspection rights in {doc}?",
            "Can records be inspected under {doc}?",
        ),
    ),
    "License Grant": (
        "License Grant-Answer",
        (
            "Does {doc} grant a license?",
            "What license is granted under {doc}?",
            "Is either party licensed to use the other's intellectual property under {doc}?",
        ),
    ),
    "Termination For Convenience": (
        "Termination For Convenience-Answer",
        (
            "Can a party terminate {doc} without cause?",
            "Can {doc} be ended for convenience by giving notice?",
            "Is termination of {doc} for any reason allowed?",
        ),
    ),
    "Insurance": (
        "Insurance-Answer",
        (
            "What insurance must a party maintain under {doc}?",
            "Does {doc} require insurance coverage?",
            "Is there an insurance obligation in {doc}?",
        ),
    ),
    "Change Of Control": (
        "Change Of Control-Answer",
        (
            "What happens under {doc} if a party undergoes a change of control?",
            "Does a merger or acquisition of a party affect {doc}?",
            "Is there a change of control provision in {doc}?",
        ),
    ),
}
# Categories whose question is a yes/no one: the wording index that asks it as yes/no (the typed value is True
# when the clause exists). The other wordings ask what the clause says.
YES_NO_WORDINGS: dict[str, frozenset[int]] = {
    "Anti-Assignment": frozenset({1}),  # the category is "consent or notice is required to assign"
    "Cap On Liability": frozenset({0}),
    "Non-Compete": frozenset({0, 1}),
    "Exclusivity": frozenset({0, 1}),
    "Audit Rights": frozenset({0, 1, 2}),
    "License Grant": frozenset({0, 2}),
    "Termination For Convenience": frozenset({0, 1, 2}),
    "Insurance": frozenset({1, 2}),
    "Change Of Control": frozenset({1, 2}),
}
# Wordings broader than their category ("What does it say about assigning it?" is answered by any assignment
# clause, not only one requiring consent): a contract whose labels lack the category is asked in the category's
# first wording instead, so "not stated" is the right answer to what is asked.
BROAD_WORDINGS = frozenset({("Anti-Assignment", 2), ("Cap On Liability", 1), ("Exclusivity", 1)})
# Categories whose normalised answer is a value the spans state (checked per contract).
VALUE_CATEGORIES = frozenset(
    {
        "Parties",
        "Agreement Date",
        "Effective Date",
        "Expiration Date",
        "Renewal Term",
        "Notice Period To Terminate Renewal",
        "Governing Law",
    }
)
# Share of absent clauses asked about (every present one is asked): enough absent examples to measure
# abstention without letting them outnumber the answerable ones.
ABSENT_SHARE = 0.45
# Share of examples per case, by a hash of contract and category.
CASE_SHARES = (("chip", 0.70), ("property", 0.12), ("no_scope", 0.12), ("wrong_property", 0.06))
_SUFFIXES = re.compile(
    r",?\s+\b(?:inc|incorporated|corp|corporation|co|company|llc|l\.l\.c|ltd|limited|plc|lp|l\.p|llp|sa|s\.a|ag|gmbh|"
    r"n\.v|nv|b\.v|bv|pte|pty|s\.r\.l|spa|s\.p\.a)\b\.?$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Contract:
    path: str  # relative path in the index: the text file's name
    title: str  # the document name the labels give
    parties: tuple[str, ...]
    text: str
    row: dict[str, str]


def _hash(*parts: str) -> int:
    return int(hashlib.sha256("|".join((SEED, *parts)).encode()).hexdigest()[:12], 16)


def _share(*parts: str) -> float:
    return (_hash(*parts) % 10_000) / 10_000


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", normalise(name)).strip("-")[:60]


def party_names(answer: str) -> tuple[str, ...]:
    """The parties the labels' answer names ('SQUARE TWO GOLF INC. ("Company"); KATHY WHITWORTH ("Professional")'),
    each without its defined term in brackets, in order, once."""
    names: list[str] = []
    for part in answer.split(";"):
        name = re.split(r"\s*[(\[]", part.replace("\xa0", " "), maxsplit=1)[0].strip(" ,;:\"'")
        name = " ".join(name.split())
        if len(name) >= 3 and any(c.isalpha() for c in name) and name.casefold() not in {n.casefold() for n in names}:
            names.append(name)
    return tuple(names)


def short_name(name: str) -> str:
    """A party's name without its company form ("Playboy.com, Inc." -> "Playboy.com")."""
    short = _SUFFIXES.sub("", name).strip(" ,")
    return short if len(short) >= 3 else name


def spans_of(cell: str) -> tuple[str, ...]:
    """The clause spans of a label cell (a Python list literal of strings), whitespace collapsed."""
    value = ast.literal_eval(cell) if cell.strip() else []
    if not isinstance(value, list):
        raise ValueError(f"a span cell is not a list: {cell[:80]!r}")
    return tuple(" ".join(str(s).split()) for s in value if str(s).strip())


def read_contracts(data: Path) -> list[Contract]:
    """Each labelled contract with its text (from the archive), parties and title."""
    with (data / "cuad-dev" / "master_clauses.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    texts: dict[str, str] = {}
    with tarfile.open(data / "cuad-dev" / "contracts.tar.xz") as archive:
        for member in archive.getmembers():
            if member.isfile() and member.name.endswith(".txt"):
                handle = archive.extractfile(member)
                if handle is not None:
                    texts[Path(member.name).name] = handle.read().decode("utf-8")
    contracts = []
    for row in rows:
        path = Path(row["Filename"]).with_suffix(".txt").name
        if path not in texts:
            raise SystemExit(f"{row['Filename']}: no text file {path} in the archive")
        title = " ".join((row.get("Document Name-Answer") or "").split()) or Path(path).stem
        contracts.append(Contract(path, title, party_names(row["Parties-Answer"]), texts[path], row))
    return contracts


def split_of(contract: Contract) -> str:
    """dev or test, half each, by a hash of the file name (a contract's questions are all in one split)."""
    return "dev" if _hash(contract.path, "split") % 2 == 0 else "test"


def _flat(text: str) -> str:
    return " ".join(normalise(text).split())


def check_spans(contract: Contract, spans: Sequence[str]) -> None:
    """Every span (its parts around '<omitted>') occurs in the contract's text, or the run stops."""
    flat = _flat(contract.text)
    for span in spans:
        for part in span.split("<omitted>"):
            if part.strip() and _flat(part) not in flat:
                raise SystemExit(f"{contract.path}: a labelled span is not in the text: {part[:100]!r}")


def value_facts(category: str, answer: str, spans: Sequence[str], contract: Contract) -> tuple[str, ...]:
    """The normalised answer as facts, where the spans state it (a computed expiry date is not a fact)."""
    answer = " ".join(answer.replace("\xa0", " ").split())
    if not answer or answer.casefold() == "nan" or "[]" in answer:
        return ()
    joined = " ".join(spans)
    if category == "Parties":
        return tuple(short_name(n) for n in contract.parties if fact_present(short_name(n), contract.text[:20000]))
    if category in ("Renewal Term", "Notice Period To Terminate Renewal"):
        answer = re.sub(r"^(?:successive|succsive)\s+", "", answer, flags=re.IGNORECASE)
    candidates = [a.strip() for a in re.split(r";", answer) if a.strip()]
    facts = []
    for candidate in candidates:
        if category == "Governing Law":
            candidate = candidate.split(",")[0].strip()
        if fact_present(candidate, joined):
            facts.append(candidate)
    return tuple(facts)


def wording(category: str, contract: Contract) -> tuple[int, str]:
    forms = CATEGORIES[category][1]
    index = _hash(contract.path, category, "wording") % len(forms)
    return index, forms[index]


def case_of(contract: Contract, category: str) -> str:
    share = _share(contract.path, category, "case")
    total = 0.0
    for case, part in CASE_SHARES:
        total += part
        if share < total:
            return case
    return "chip"


def doc_phrase(contract: Contract, case: str) -> str:
    """How the question names the contract: "this agreement" when it is selected or its party is the scope, its
    title and parties when nothing is (the question must say which contract it asks about)."""
    if case in ("chip", "property"):
        return "this agreement"
    names = [short_name(p) for p in contract.parties[:2]]
    between = f" between {' and '.join(names)}" if names else ""
    return f"the {contract.title}{between}"


def examples_of(
    contract: Contract, contracts: Sequence[Contract], owners: dict[str, tuple[str, ...]]
) -> list[LabelledExample]:
    split = split_of(contract)
    out: list[LabelledExample] = []
    for category, (answer_column, _) in CATEGORIES.items():
        spans = spans_of(contract.row[category])
        absent = not spans
        if absent and _share(contract.path, category, "absent") >= ABSENT_SHARE:
            continue
        check_spans(contract, spans)
        facts = value_facts(category, contract.row.get(answer_column, ""), spans, contract) if spans else ()
        if category in VALUE_CATEGORIES and spans and not facts and category != "Expiration Date":
            continue  # a value the labels do not give in usable form: not asked
        case = case_of(contract, category)
        index, form = wording(category, contract)
        if absent and (category, index) in BROAD_WORDINGS:
            index, form = 0, CATEGORIES[category][1][0]
        tags = [f"category:{slug(category)}", f"wording:{index}", f"scope:{case}", f"contract:{slug(contract.title)}"]
        expected = None
        if category in YES_NO_WORDINGS and index in YES_NO_WORDINGS[category]:
            expected = (
                ExpectedValue(kind="boolean", absent=True) if absent else ExpectedValue(kind="boolean", value=True)
            )
            tags.append("kind:boolean")
        fields: dict[str, object] = {"corpus": CORPUS, "split": split}
        parties = owners[contract.path]
        if case == "wrong_property":
            other = _other_contract(contract, contracts, owners)
            if other is None:
                continue
            question = form.format(doc=doc_phrase(contract, "no_scope"))
            question = question[0].upper() + question[1:]
            out.append(
                make_example(
                    **fields,
                    case="wrong_property",
                    question=question,
                    scope={"document_ids": [other.path]},
                    forbidden_documents=[contract.path],
                    expect_not_found=True,
                    expect_scope_note="other_entity",
                    expected_plan="one_step",
                    tags=(*tags, "wrong_entity", "not_in_scope"),
                )
            )
            continue
        question = form.format(doc=doc_phrase(contract, case))
        question = question[0].upper() + question[1:]
        scope: dict[str, object] = {}
        if case == "chip":
            scope = {"document_ids": [contract.path]}
        elif case == "property":
            if not parties:
                scope, case = {"document_ids": [contract.path]}, "chip"
            else:
                scope = {"property": parties[_hash(contract.path, category, "party") % len(parties)]}
        others = sorted({c.path for c in contracts if c.path != contract.path and _scope_reads(scope, c, owners)})
        if others:
            continue  # a party's scope that holds another labelled contract: the labels speak of one contract
        out.append(
            make_example(
                **fields,
                case=case,
                question=question,
                scope=scope,
                gold_documents=() if absent else (contract.path,),
                answer_facts=facts,
                answer_spans=() if absent else spans,
                expect_not_found=absent,
                expected_plan="two_step" if case == "no_scope" else "one_step",
                expected_value=expected,
                tags=(*tags, "absent_in_scope" if absent else "answerable"),
            )
        )
    return out


def _scope_reads(scope: dict[str, object], contract: Contract, owners: dict[str, tuple[str, ...]]) -> bool:
    party = scope.get("property")
    return isinstance(party, str) and party in owners[contract.path]


def _other_contract(
    contract: Contract, contracts: Sequence[Contract], owners: dict[str, tuple[str, ...]]
) -> Contract | None:
    """Another contract of the same split that shares no party, chosen by hash."""
    mine = set(owners[contract.path])
    pool = [c for c in contracts if c.path != contract.path and not (set(owners[c.path]) & mine)]
    if not pool:
        return None
    return pool[_hash(contract.path, "other") % len(pool)]


def manifest(contracts: Sequence[Contract], owners: dict[str, tuple[str, ...]]) -> str:
    """corpus.toml: every party an entity (its name and its name without the company form), each contract owned
    by its parties."""
    names: dict[str, str] = {}
    for contract in contracts:
        for name in contract.parties:
            names.setdefault(slug(short_name(name)), name)
    lines = [
        "# Generated by scripts/make_cuad_set.py - edit the script, not this file.",
        'format = "scoperag-corpus/v1"',
        f'name = "{CORPUS}"',
        'entity_kind = "party"',
        "",
        "[vocabulary]",
        'generic_words = ["agreement", "agreements", "contract", "contracts", "party", "parties"]',
        "",
    ]
    for key in sorted(names):
        name = names[key]
        short = short_name(name)
        aliases = [short] if short != name and len(short) >= 4 else []
        lines += ["[[entities]]", f"slug = {json.dumps(key)}", f"name = {json.dumps(name)}"]
        lines += [f"aliases = {json.dumps(aliases)}", ""]
    for contract in sorted(contracts, key=lambda c: c.path):
        lines += ["[[documents]]", f"path = {json.dumps(contract.path)}", 'type = "contract"']
        lines += [f"title = {json.dumps(contract.title)}", f"entities = {json.dumps(list(owners[contract.path]))}", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data", help="folder holding cuad-dev/")
    args = parser.parse_args()
    contracts = read_contracts(args.data)
    owners = {c.path: tuple(dict.fromkeys(slug(short_name(p)) for p in c.parties)) for c in contracts}
    examples: list[LabelledExample] = []
    for contract in contracts:
        examples += examples_of(contract, contracts, owners)
    (OUT / "traces").mkdir(parents=True, exist_ok=True)
    (OUT / "corpus.toml").write_text(manifest(contracts, owners) + "\n", encoding="utf-8")
    counts = write_example_set(OUT / "traces", examples)
    print(f"{len(contracts)} contracts; examples per split: {counts}")


if __name__ == "__main__":
    main()
