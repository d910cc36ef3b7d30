"""benchmarks/paraphrases.py: a paraphrase is compared with its own original, by the verdict its set scores."""

from __future__ import annotations

from tests.support.scripts import load_benchmark

paraphrases = load_benchmark("paraphrases")


def test_right_reads_the_typed_value_first_then_the_line_then_the_abstention() -> None:
    assert paraphrases.right({"value_correct": 0.0, "answer_line_correct": 1.0}) == 0.0
    assert paraphrases.right({"answer_line_correct": 1.0, "abstention": 0.0}) == 1.0
    assert paraphrases.right({"abstention": 1.0}) == 1.0
    assert paraphrases.right({}) is None


def test_each_paraphrase_is_paired_with_its_own_original() -> None:
    groups = {"a": ("m1", "original"), "b": ("m1", "p1"), "c": ("m1", "p2"), "d": ("m2", "original"), "e": ("m2", "p1")}
    rows = [
        {"id": "a", "answer_line_correct": 1.0, "typed_value": "x"},
        {"id": "b", "answer_line_correct": 0.0, "typed_value": "y"},
        {"id": "c", "answer_line_correct": 1.0, "typed_value": "x"},
        {"id": "d", "answer_line_correct": 0.0},
        {"id": "e", "answer_line_correct": 0.0},
    ]
    result = paraphrases.compare(rows, groups)
    assert result["n"] == 3
    assert result["original"] == 2 / 3 and result["paraphrased"] == 1 / 3
    assert result["same_verdict"] == 2 / 3 and result["same_value"] == 2 / 3
