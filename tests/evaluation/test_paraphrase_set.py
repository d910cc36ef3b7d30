"""The paraphrase set (datasets/paraphrases): every paraphrase keeps its original's labels and only its words
change; each meaning has one original and two different paraphrases; the per-set files hold the combined files'
records."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from pipeline.evaluation.examples import LabelledExample, example_id, load_example_set, load_examples

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "datasets" / "paraphrases"
SETS = ("sec-10q", "edgar-typed", "cuad", "erc-round1")
SPLITS = ("dev", "test")
NEW_PREFIXES = ("paraphrase_set:", "phrasing:", "meaning:")


def _tag(example: LabelledExample, prefix: str) -> str:
    values = [t.split(":", 1)[1] for t in example.tags if t.startswith(prefix + ":")]
    assert len(values) == 1, f"{example.id}: expected one {prefix}: tag, got {values}"
    return values[0]


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _groups(examples: list[LabelledExample]) -> dict[str, dict[str, LabelledExample]]:
    groups: dict[str, dict[str, LabelledExample]] = defaultdict(dict)
    for example in examples:
        meaning, phrasing = _tag(example, "meaning"), _tag(example, "phrasing")
        assert phrasing not in groups[meaning], f"two {phrasing} records for meaning {meaning}"
        groups[meaning][phrasing] = example
    return groups


@pytest.fixture(scope="module", params=SPLITS)
def split_examples(request: pytest.FixtureRequest) -> tuple[str, list[LabelledExample]]:
    return request.param, load_examples(SET / f"{request.param}.jsonl")


def test_the_folder_loads_as_a_trace_set_with_an_empty_train_split() -> None:
    assert load_example_set(SET, split="train") == []
    assert load_example_set(SET, split="dev") and load_example_set(SET, split="test")


def test_each_split_has_over_a_hundred_paraphrases_and_unique_ids(split_examples) -> None:  # type: ignore[no-untyped-def]
    split, examples = split_examples
    paraphrases = [e for e in examples if _tag(e, "phrasing") != "original"]
    assert len(paraphrases) >= 100
    assert len({e.id for e in examples}) == len(examples)
    assert all(e.split == split for e in examples)
    for example in examples:
        assert example.id == example_id(example.corpus, example.question, example.scope)


def test_each_meaning_has_one_original_and_two_paraphrases(split_examples) -> None:  # type: ignore[no-untyped-def]
    _, examples = split_examples
    for meaning, group in _groups(examples).items():
        assert set(group) == {"original", "p1", "p2"}, meaning
        assert group["original"].id == meaning
        assert len({_tag(e, "paraphrase_set") for e in group.values()}) == 1


def test_paraphrases_keep_every_label_of_their_original(split_examples) -> None:  # type: ignore[no-untyped-def]
    _, examples = split_examples
    ignored = {"id", "question", "tags"}
    for meaning, group in _groups(examples).items():
        original = group["original"]
        kept = [t for t in original.tags if not t.startswith(NEW_PREFIXES)]
        for name in ("p1", "p2"):
            paraphrase = group[name]
            assert paraphrase.model_dump(exclude=ignored) == original.model_dump(exclude=ignored), (meaning, name)
            assert [t for t in paraphrase.tags if not t.startswith(NEW_PREFIXES)] == kept, (meaning, name)


def test_paraphrases_differ_from_the_original_and_from_each_other(split_examples) -> None:  # type: ignore[no-untyped-def]
    _, examples = split_examples
    for meaning, group in _groups(examples).items():
        texts = {name: _norm(e.question) for name, e in group.items()}
        assert len(set(texts.values())) == 3, (meaning, texts)


def test_originals_are_the_source_examples_with_tags_added(split_examples) -> None:  # type: ignore[no-untyped-def]
    split, examples = split_examples
    sources = {
        "sec-10q": ROOT / "datasets" / "sec-10q" / "traces" / f"{split}.jsonl",
        "edgar-typed": ROOT / "datasets" / "edgar" / "typed" / f"{split}.jsonl",
        "cuad": ROOT / "datasets" / "cuad" / "traces" / f"{split}.jsonl",
        "erc-round1": ROOT / "datasets" / "erc-round1" / "traces" / "dev.jsonl",
    }
    by_id = {name: {e.id: e for e in load_examples(path)} for name, path in sources.items()}
    for meaning, group in _groups(examples).items():
        original = group["original"]
        source = by_id[_tag(original, "paraphrase_set")][meaning]
        assert original.model_dump(exclude={"tags", "split"}) == source.model_dump(exclude={"tags", "split"})
        assert [t for t in original.tags if not t.startswith(NEW_PREFIXES)] == list(source.tags)


def test_every_set_is_in_both_splits_and_erc_questions_are_not_shared() -> None:
    meanings = {split: _groups(load_examples(SET / f"{split}.jsonl")) for split in SPLITS}
    for split in SPLITS:
        sets = {_tag(g["original"], "paraphrase_set") for g in meanings[split].values()}
        assert sets == set(SETS), split
    erc = {
        split: {g["original"].question for g in meanings[split].values() if g["original"].corpus == "erc-round1"}
        for split in SPLITS
    }
    assert erc["dev"] and erc["test"] and not erc["dev"] & erc["test"]


def test_per_set_files_hold_the_combined_records() -> None:
    for split in SPLITS:
        combined = {e.id: e for e in load_examples(SET / f"{split}.jsonl")}
        parts: dict[str, LabelledExample] = {}
        for name in SETS:
            part = load_examples(SET / f"{split}-{name}.jsonl")
            assert part and all(_tag(e, "paraphrase_set") == name for e in part)
            assert len({e.corpus for e in part}) == 1, f"{split}-{name} mixes corpora"
            assert not set(parts) & {e.id for e in part}
            parts.update({e.id: e for e in part})
        assert parts == combined, split


def test_wordings_name_each_original_twice() -> None:
    rows = [json.loads(line) for line in (SET / "wordings.jsonl").read_text(encoding="utf-8").splitlines() if line]
    counts: dict[tuple[str, str], list[int]] = defaultdict(list)
    for row in rows:
        counts[(row["split"], row["of"])].append(row["n"])
    assert all(sorted(ns) == [1, 2] for ns in counts.values())
    assert len(rows) == sum(
        1 for s in SPLITS for e in load_examples(SET / f"{s}.jsonl") if _tag(e, "phrasing") != "original"
    )
