"""Labelled traces: what optimisers compile against and what every quality claim rests on.

JSONL, one example per line, validated by `LabelledExample`; ids are content hashes of the
question and scope. Loaded as a Hugging Face `datasets.Dataset` or as `dspy.Example`s.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from pipeline.errors import ExamplesError
from pipeline.files import write_file_atomic
from pipeline.types import Strict
from pipeline.values.typed import Plain, Scale, ValueKind

Case = Literal["no_scope", "chip", "property", "wrong_property"]
Split = Literal["train", "dev", "test"]
CASES: tuple[Case, ...] = ("no_scope", "chip", "property", "wrong_property")
SPLITS: tuple[Split, ...] = ("train", "dev", "test")
MAX_LINE_BYTES = 1 << 20


class ExampleScope(Strict):
    """The scope a question was asked in: selected documents, a property, or neither."""

    document_ids: tuple[str, ...] = ()
    property: str | None = None


class GoldPage(Strict):
    """A page of a gold document that supports the answer (page None: any page)."""

    document: str = Field(description="relative path of the document in its corpus, or its document id")
    page: int | None = Field(default=None, ge=1)


class ComparedEntity(Strict):
    """An entity a comparison question names, as the question quotes it: the corpus entity it is (None: not
    one of the corpus, so the answer must name it as unknown), the document its figure is read from and the
    figure (None: the document does not report it, so the comparison leaves the entity out)."""

    quoted: str = Field(min_length=1, max_length=200)
    entity: str | None = None
    name: str | None = None
    document: str | None = None
    value: float | None = None

    @property
    def status(self) -> Literal["compared", "excluded", "unknown"]:
        """How the comparison treats the entity: compared, excluded (no figure) or unknown (no such entity)."""
        if self.entity is None:
            return "unknown"
        return "excluded" if self.value is None else "compared"


class ExpectedValue(Strict):
    """The typed answer an example expects (pipeline.values.typed): a number (right within `tolerance`,
    relative), true or false, a name, names, a date; or, with `absent`, the question's own absent value.

    A number is in units ("$406.1 million" is 406100000), sign as reported; `scale` is the scale the question
    asks the answer to be written in ("Answer in millions"), and `unit` "%" marks a percentage written in
    percent (12.5, not 0.125). `aliases` gives other accepted forms of an expected name (of `value`, or of an
    item of a names list): "NYSE" for "New York Stock Exchange". A comparison across entities (`compare`,
    `entities`) expects the name of the winning entity as `value`."""

    kind: ValueKind
    value: Plain = None
    absent: bool = False
    currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")
    unit: str | None = None
    tolerance: float = Field(default=0.01, ge=0, le=1)
    scale: Scale | None = None
    aliases: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    compare: Literal["lowest", "highest"] | None = None
    entities: tuple[ComparedEntity, ...] = ()
    # Other answers accepted as right (a question set that accepts "N/A" or either of two figures).
    also: tuple[ExpectedValue, ...] = ()

    @model_validator(mode="after")
    def _typed(self) -> ExpectedValue:
        value = self.value
        if (self.compare is None) != (not self.entities):
            raise ValueError("a comparison has both `compare` and `entities`; other values have neither")
        if self.entities and self.kind != "name":
            raise ValueError("a comparison expects a name (the winning entity's)")
        if self.absent:
            return self
        expected: dict[str, tuple[type, ...]] = {
            "number": (int, float),
            "boolean": (bool,),
            "name": (str,),
            "names": (list,),
            "date": (str,),
            "text": (str,),
        }
        allowed = expected[self.kind]
        if (isinstance(value, bool) and bool not in allowed) or not isinstance(value, allowed):
            raise ValueError(f"a {self.kind} value cannot be {value!r}")
        if self.entities and value != comparison_winner(self.compare, self.entities):
            raise ValueError(f"the {self.compare} of the compared entities is not {value!r}")
        return self


def comparison_winner(compare: Literal["lowest", "highest"] | None, entities: Sequence[ComparedEntity]) -> str | None:
    """The name of the compared entity with the lowest or highest figure (None when none has a figure or
    two share it)."""
    compared = [e for e in entities if e.status == "compared" and e.value is not None]
    if not compared or compare is None:
        return None
    values = [e.value for e in compared if e.value is not None]
    best = min(values) if compare == "lowest" else max(values)
    winners = [e for e in compared if e.value == best]
    return (winners[0].name or winners[0].quoted) if len(winners) == 1 else None


class LabelledExample(Strict):
    """One labelled question. Documents are named by relative path (stable across rebuilds) or by
    document id (a UUID, stable while the corpus name and the path stay the same)."""

    id: str = Field(pattern=r"^[0-9a-f]{16}$")
    corpus: str
    case: Case
    question: str = Field(min_length=1, max_length=2000)
    scope: ExampleScope = ExampleScope()
    gold_documents: tuple[str, ...] = ()
    gold_pages: tuple[GoldPage, ...] = ()
    answer_facts: tuple[str, ...] = ()
    # Passages a right answer rests on (a clause lawyers marked), for questions whose answer is the passage's
    # meaning rather than a value: the answer line is right when it or its first quote states one of them
    # (pipeline.evaluation.metrics.span_answer).
    answer_spans: tuple[str, ...] = ()
    forbidden_documents: tuple[str, ...] = ()
    expect_not_found: bool = False
    # The note the answer must carry about whose documents the scope selected (pipeline.intake.scope):
    # "other_entity" (another entity's, nothing read) or "no_entity" (no entity's, read as selected).
    expect_scope_note: Literal["other_entity", "no_entity"] | None = None
    expected_plan: Literal["two_step", "one_step"] | None = None
    expected_strategy: Literal["direct_answer", "retrieve_then_answer", "clarify_then_retrieve", "defer_or_refuse"] = (
        "retrieve_then_answer"
    )
    gold_sub_questions: tuple[str, ...] = ()
    # The typed answer (pipeline.values.typed) the question asks for, when it asks for one.
    expected_value: ExpectedValue | None = None
    tags: tuple[str, ...] = ()
    split: Split | None = None

    @model_validator(mode="after")
    def _consistent(self) -> LabelledExample:
        if self.id != example_id(self.corpus, self.question, self.scope):
            raise ValueError("id is not the content hash of corpus, question and scope")
        if set(self.gold_documents) & set(self.forbidden_documents):
            raise ValueError("a document cannot be both gold and forbidden")
        if self.expect_not_found and (self.answer_facts or self.answer_spans):
            raise ValueError("an example that expects 'not found' has no answer facts or spans")
        if self.case == "chip" and not self.scope.document_ids:
            raise ValueError("a chip example needs scope.document_ids")
        if self.case == "property" and not self.scope.property:
            raise ValueError("a property example needs scope.property")
        # The evaluator resolves the scope, not the case: a scope the case does not allow
        # would silently score the example as another case.
        if self.case == "property" and self.scope.document_ids:
            raise ValueError("a property example has no scope.document_ids (selected documents make it a chip)")
        if self.case == "no_scope" and (self.scope.document_ids or self.scope.property):
            raise ValueError("a no_scope example has an empty scope")
        if self.expect_scope_note is not None and not (self.scope.document_ids or self.scope.property):
            raise ValueError("only a scoped example (a chip or a property) can expect a scope note")
        if self.case == "wrong_property" and not self.forbidden_documents:
            raise ValueError("a wrong_property example needs forbidden_documents")
        return self


def example_id(corpus: str, question: str, scope: ExampleScope) -> str:
    """Content hash of corpus, question and scope: the same example always gets the same id."""
    payload = json.dumps(
        {"corpus": corpus, "question": " ".join(question.split()), "scope": scope.model_dump(mode="json")},
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def make_example(**fields: Any) -> LabelledExample:
    """A LabelledExample whose id is computed from its content."""
    scope = ExampleScope.model_validate(fields.pop("scope", {}))
    return LabelledExample(id=example_id(fields["corpus"], fields["question"], scope), scope=scope, **fields)


def load_examples(path: Path, split: Split | None = None, cases: Sequence[Case] | None = None) -> list[LabelledExample]:
    """Every valid example of a JSONL file, filtered; ExamplesError names the first bad line."""
    if not path.is_file():
        raise ExamplesError(f"{path}: no such trace file")
    examples: list[LabelledExample] = []
    seen: dict[str, int] = {}
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if len(raw) > MAX_LINE_BYTES:
                raise ExamplesError(f"{path}:{number}: line longer than {MAX_LINE_BYTES} bytes")
            if not raw.strip():
                continue
            try:
                example = LabelledExample.model_validate_json(raw)
            except ValidationError as exc:
                raise ExamplesError(f"{path}:{number}: invalid example: {exc}") from exc
            if example.id in seen:
                raise ExamplesError(f"{path}:{number}: duplicate id {example.id} (first on line {seen[example.id]})")
            seen[example.id] = number
            examples.append(example)
    return [e for e in examples if (split is None or e.split == split) and (cases is None or e.case in cases)]


def load_example_set(
    path: Path, split: Split | None = None, cases: Sequence[Case] | None = None
) -> list[LabelledExample]:
    """Examples from a JSONL file, or from a directory's train/dev/test.jsonl (split selects one)."""
    if not path.is_dir():
        return load_examples(path, split, cases)
    files = [path / f"{name}.jsonl" for name in SPLITS if split in (None, name)]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise ExamplesError(f"{path}: trace set is missing {', '.join(missing)}")
    return [e for f in files for e in load_examples(f, split, cases)]


def stratified_sample(examples: Sequence[LabelledExample], n: int, seed: int) -> list[LabelledExample]:
    """Up to `n` examples taken round-robin over cases (in CASES order), each case shuffled by `seed`.

    Deterministic: the same examples (in any order), `n` and `seed` give the same list. Every case
    present is represented as soon as `n` >= the number of cases, and every prefix of the result is
    itself balanced, so optimizers that read the trainset in order see the cases interleaved.
    """
    rng = random.Random(seed)
    present = {e.case for e in examples}
    groups: list[list[LabelledExample]] = []
    for case in [c for c in CASES if c in present]:
        group = sorted((e for e in examples if e.case == case), key=lambda e: e.id)
        rng.shuffle(group)
        groups.append(group)
    picked: list[LabelledExample] = []
    depth = 0
    while len(picked) < n and any(depth < len(g) for g in groups):
        for group in groups:
            if depth < len(group) and len(picked) < n:
                picked.append(group[depth])
        depth += 1
    return picked


def of_kinds(examples: Iterable[LabelledExample], kinds: Iterable[ValueKind]) -> list[LabelledExample]:
    """The examples that expect a typed value of one of `kinds` (a comparison's is a name), in order."""
    wanted = frozenset(kinds)
    return [e for e in examples if e.expected_value is not None and e.expected_value.kind in wanted]


def write_examples(path: Path, examples: Iterable[LabelledExample]) -> int:
    """Write examples as JSONL atomically (the file holds the old examples or all the new ones); the count."""
    lines = [example.model_dump_json(exclude_defaults=True) + "\n" for example in examples]
    write_file_atomic(path, "".join(lines).encode("utf-8"))
    return len(lines)


def write_example_set(directory: Path, examples: Sequence[LabelledExample]) -> dict[Split, int]:
    """Write examples by their split as `directory`/{train,dev,test}.jsonl (what load_example_set reads); counts."""
    return {
        split: write_examples(directory / f"{split}.jsonl", [e for e in examples if e.split == split])
        for split in SPLITS
    }


def counts_table(examples: Sequence[LabelledExample]) -> list[str]:
    """A Markdown table of the examples per case (rows) and split (columns), with totals: a dataset card's counts."""
    counts = Counter((e.case, e.split) for e in examples)
    rows = [
        f"| {case} | "
        + " | ".join(str(counts[(case, s)]) for s in SPLITS)
        + f" | {sum(counts[(case, s)] for s in SPLITS)} |"
        for case in CASES
    ]
    totals = " | ".join(str(sum(counts[(c, s)] for c in CASES)) for s in SPLITS)
    return [
        "| case | " + " | ".join(SPLITS) + " | all |",
        "|" + " --- |" * (len(SPLITS) + 2),
        *rows,
        f"| all | {totals} | {len(examples)} |",
    ]


def to_hf_dataset(examples: Sequence[LabelledExample]) -> Any:
    """The examples as a Hugging Face `datasets.Dataset` (nested fields as JSON-compatible values)."""
    # Imported by name: type checkers would resolve "datasets" to this project's data folder.
    hf_datasets = importlib.import_module("datasets")
    return hf_datasets.Dataset.from_list([e.model_dump(mode="json") for e in examples])


def missing_cases(examples: Iterable[LabelledExample], required: Iterable[str]) -> list[str]:
    """The required cases that no example has, in CASES order (unknown names last, sorted)."""
    present = {e.case for e in examples}
    wanted = set(required)
    ordered = [c for c in CASES if c in wanted] + sorted(wanted - set(CASES))
    return [case for case in ordered if case not in present]
