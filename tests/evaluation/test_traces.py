"""The trace format: content-hash ids, strict validation, JSONL files, HF and DSPy conversion."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pipeline.errors import ExamplesError
from pipeline.evaluation.examples import (
    ExampleScope,
    LabelledExample,
    example_id,
    load_examples,
    make_example,
    to_hf_dataset,
    write_examples,
)


def _example(**overrides: Any) -> LabelledExample:
    fields: dict[str, Any] = {
        "corpus": "demo",
        "case": "property",
        "question": "What is the monthly rent?",
        "scope": {"property": "banda-lane"},
        "gold_documents": ("banda-lane/lease.pdf",),
        "gold_pages": ({"document": "banda-lane/lease.pdf", "page": 2},),
        "answer_facts": ("KSH 285,000",),
        "forbidden_documents": ("banda-road/lease.md",),
        "expected_plan": "one_step",
        "tags": ("topic:rent",),
        "split": "train",
    }
    fields.update(overrides)
    return make_example(**fields)


def _examples() -> list[LabelledExample]:
    return [
        _example(),
        _example(
            case="chip",
            question="Who is the tenant?",
            scope={"document_ids": ["banda-road/lease.md"]},
            gold_documents=("banda-road/lease.md",),
            gold_pages=(),
            answer_facts=("Helen Achieng Odhiambo",),
            forbidden_documents=(),
            split="dev",
        ),
        _example(
            case="wrong_property",
            question="What is the rent at Banda Road?",
            scope={"property": "banda-lane"},
            gold_documents=(),
            gold_pages=(),
            answer_facts=(),
            expect_not_found=True,
            split="test",
        ),
        _example(
            case="no_scope",
            question="What is the rent at Karen Ridge and when does the lease end?",
            scope={},
            gold_documents=("karen-ridge/lease.md",),
            gold_pages=(),
            answer_facts=("KSH 210,000", "31 December 2026"),
            forbidden_documents=(),
            expected_plan="two_step",
            gold_sub_questions=("What is the rent at Karen Ridge?", "When does the lease end?"),
        ),
    ]


# ---- ids ------------------------------------------------------------------------------


def test_id_is_the_content_hash_of_corpus_question_and_scope() -> None:
    example = _example()
    assert example.id == example_id("demo", "What is the monthly rent?", ExampleScope(property="banda-lane"))
    assert len(example.id) == 16 and int(example.id, 16) >= 0
    # Whitespace inside the question does not change the id; anything else in the key does.
    assert _example(question="  What is the   monthly rent? ").id == example.id
    assert _example(question="What is the deposit?").id != example.id
    assert _example(scope={"property": "banda-road"}).id != example.id
    assert _example(corpus="other").id != example.id
    # Labels are not part of the id: relabelling keeps the example's identity.
    assert _example(answer_facts=("KSH 300,000",)).id == example.id


def test_an_id_that_is_not_the_content_hash_is_rejected() -> None:
    data = _example().model_dump(mode="json")
    data["id"] = "0" * 16
    with pytest.raises(ValidationError, match="content hash"):
        LabelledExample.model_validate(data)


# ---- consistency rules ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"forbidden_documents": ("banda-lane/lease.pdf",)}, "both gold and forbidden"),
        ({"expect_not_found": True}, "no answer facts"),
        ({"case": "chip"}, "chip example needs scope.document_ids"),
        ({"case": "property", "scope": {}}, "property example needs scope.property"),
        ({"scope": {"property": "banda-lane", "document_ids": ["banda-lane/lease.pdf"]}}, "make it a chip"),
        ({"case": "no_scope"}, "no_scope example has an empty scope"),
        ({"case": "wrong_property", "forbidden_documents": ()}, "needs forbidden_documents"),
        ({"gold_pages": ({"document": "banda-lane/lease.pdf", "page": 0},)}, "greater than or equal to 1"),
        ({"case": "unknown"}, "case"),
        ({"question": ""}, "at least 1 character"),
    ],
)
def test_inconsistent_examples_are_rejected(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        _example(**overrides)


def test_unknown_fields_are_rejected() -> None:
    data = _example().model_dump(mode="json")
    data["answer"] = "free text"
    with pytest.raises(ValidationError, match="answer"):
        LabelledExample.model_validate(data)


# ---- files ------------------------------------------------------------------------------


def test_write_then_load_round_trips_and_filters(tmp_path: Path) -> None:
    path = tmp_path / "traces" / "all.jsonl"
    examples = _examples()
    assert write_examples(path, examples) == len(examples)
    assert not list(path.parent.glob("*.tmp"))
    assert load_examples(path) == examples
    assert [e.split for e in load_examples(path, split="dev")] == ["dev"]
    assert [e.case for e in load_examples(path, cases=["chip", "no_scope"])] == ["chip", "no_scope"]


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_examples(path, _examples()[:2])
    path.write_text(path.read_text().replace("\n", "\n\n", 1))
    assert len(load_examples(path)) == 2


def test_a_bad_line_is_named_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_examples(path, _examples()[:2])
    lines = path.read_text().splitlines()
    broken = json.loads(lines[1])
    broken["case"] = "chip"
    broken["scope"] = {}
    path.write_text("\n".join([lines[0], json.dumps(broken)]) + "\n")
    with pytest.raises(ExamplesError, match=rf"{path.name}:2: invalid example"):
        load_examples(path)
    path.write_text(lines[0] + "\n{not json\n")
    with pytest.raises(ExamplesError, match=rf"{path.name}:2: invalid example"):
        load_examples(path)


def test_duplicate_ids_are_refused_naming_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first = _examples()[0]
    write_examples(path, [first, _examples()[1], first])
    with pytest.raises(ExamplesError, match=rf"{path.name}:3: duplicate id {first.id} \(first on line 1\)"):
        load_examples(path)


def test_missing_file_and_overlong_line(tmp_path: Path) -> None:
    with pytest.raises(ExamplesError, match="no such trace file"):
        load_examples(tmp_path / "absent.jsonl")
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"x" * (1 << 20) + b"\n")
    with pytest.raises(ExamplesError, match=r"long\.jsonl:1: line longer than"):
        load_examples(path)


# ---- conversions ------------------------------------------------------------------------


def test_hugging_face_dataset_keeps_every_field() -> None:
    examples = _examples()
    dataset = to_hf_dataset(examples)
    assert dataset.num_rows == len(examples)
    assert set(dataset.column_names) == set(LabelledExample.model_fields)
    row = dataset[3]
    assert row["case"] == "no_scope"
    assert row["answer_facts"] == ["KSH 210,000", "31 December 2026"]
    assert row["gold_sub_questions"] == ["What is the rent at Karen Ridge?", "When does the lease end?"]
    assert dataset[0]["gold_pages"] == [{"document": "banda-lane/lease.pdf", "page": 2}]
    assert dataset[0]["scope"]["property"] == "banda-lane"
    assert dataset[1]["scope"]["document_ids"] == ["banda-road/lease.md"]
    # A row converts back into the same example.
    assert LabelledExample.model_validate(dataset[0]) == examples[0]


def test_trace_set_directory_reads_every_split(tmp_path: Path) -> None:
    from pipeline.errors import ExamplesError
    from pipeline.evaluation.examples import load_example_set, make_example, write_examples

    for split in ("train", "dev", "test"):
        write_examples(
            tmp_path / f"{split}.jsonl", [make_example(corpus="c", case="no_scope", question=f"q {split}", split=split)]
        )
    assert [e.split for e in load_example_set(tmp_path)] == ["train", "dev", "test"]
    assert [e.question for e in load_example_set(tmp_path, split="dev")] == ["q dev"]
    (tmp_path / "test.jsonl").unlink()
    with pytest.raises(ExamplesError, match=r"test\.jsonl"):
        load_example_set(tmp_path)


def test_write_trace_set_splits_by_example_and_loads_back(tmp_path: Path) -> None:
    from pipeline.evaluation.examples import load_example_set, write_example_set

    examples = _examples()
    assert write_example_set(tmp_path / "set", examples) == {"train": 2, "dev": 1, "test": 1}
    assert load_example_set(tmp_path / "set") == [examples[0], examples[3], examples[1], examples[2]]


def test_counts_table_counts_cases_by_split() -> None:
    from pipeline.evaluation.examples import counts_table

    assert counts_table(_examples()) == [
        "| case | train | dev | test | all |",
        "| --- | --- | --- | --- | --- |",
        "| no_scope | 1 | 0 | 0 | 1 |",
        "| chip | 0 | 1 | 0 | 1 |",
        "| property | 1 | 0 | 0 | 1 |",
        "| wrong_property | 0 | 0 | 1 | 1 |",
        "| all | 2 | 1 | 1 | 4 |",
    ]


def test_stratified_sample_is_balanced_and_deterministic() -> None:
    from pipeline.evaluation.examples import stratified_sample

    examples = [make_example(corpus="c", case="no_scope", question=f"n{i}") for i in range(5)] + [
        make_example(corpus="c", case="chip", question=f"c{i}", scope={"document_ids": ["a.md"]}) for i in range(2)
    ]
    picked = stratified_sample(examples, 4, seed=1)
    assert [e.case for e in picked] == ["no_scope", "chip", "no_scope", "chip"]
    assert picked == stratified_sample(list(reversed(examples)), 4, seed=1)
    assert len(stratified_sample(examples, 100, seed=1)) == 7


def test_examples_of_kinds_keep_those_expecting_such_a_value() -> None:
    from pipeline.evaluation.examples import ExpectedValue, of_kinds

    yes = _example(question="Did it pay dividends?", expected_value=ExpectedValue(kind="boolean", value=True))
    figure = _example(question="What was revenue?", expected_value=ExpectedValue(kind="number", value=5))
    untyped = _example()
    assert of_kinds([untyped, figure, yes], ["boolean"]) == [yes]
    assert of_kinds([untyped, figure, yes], ["number", "boolean"]) == [figure, yes]
