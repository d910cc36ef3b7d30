"""Adding the unanswerable-in-scope and computed-figure examples moved no existing example: every earlier
example keeps its id, its content and its split, in every set, and the added ones regenerate identically."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pipeline.evaluation.examples import SPLITS, load_examples
from tests.support.paths import DATASETS, ROOT
from tests.support.scripts import load_script

SEC = DATASETS / "sec-10q" / "traces"
SHARED = ROOT.parent / "shared" / "data" / "sec-10q"
ADDED = {"computed", "absent_in_scope"}


def test_demo_examples_are_the_same_with_and_without_the_added_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    demo = load_script("make_demo_traces")
    everything = demo.build(demo.DEMO)
    monkeypatch.setattr(demo, "absent_in_scope_cases", lambda b, chunks=None: [])
    before = demo.build(demo.DEMO)
    added = everything[len(before) :]
    assert everything[: len(before)] == before
    assert added and all("absent_in_scope" in e.tags for e in added)
    assert not {e.id for e in added} & {e.id for e in before}
    assert {e.split for e in added} == set(SPLITS)


def test_contract_examples_keep_their_place_and_the_added_ones_follow() -> None:
    contracts = load_script("make_contract_corpus")
    committed = load_examples(DATASETS / "contracts-traces" / "dev.jsonl")
    earlier = contracts.examples()
    assert committed[: len(earlier)] == earlier
    added = committed[len(earlier) :]
    assert added == contracts.absent_in_scope_examples(DATASETS / "contracts")
    assert len(added) >= 10 and all("absent_in_scope" in e.tags and e.split == "dev" for e in added)


def test_sec_examples_keep_their_splits_and_the_added_ones_regenerate(sec_pages: dict[str, Sequence[str]]) -> None:
    sec = load_script("make_sec_traces")
    texts = sec_pages
    question_set = sec.sec_examples(SHARED / "qna_data.csv", texts)
    by_split = {s: load_examples(SEC / f"{s}.jsonl") for s in SPLITS}
    for split in SPLITS:
        earlier = [e for e in question_set if e.split == split]
        assert by_split[split][: len(earlier)] == earlier, split
    added = sec.added_examples(texts)
    committed_added = [e for s in SPLITS for e in by_split[s] if ADDED & set(e.tags)]
    assert sorted(committed_added, key=lambda e: e.id) == sorted(added.all, key=lambda e: e.id)
    assert len(added.computed) >= 60 and len(added.absent) >= 40
    assert {e.split for e in added.computed} == set(SPLITS)
