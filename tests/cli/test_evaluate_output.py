"""What a retrieval-only `scoperag evaluate` prints: which examples it read (no "split=None"), and "-" where a
metric applies to no example of a case (not NaN)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli.main import main
from pipeline.evaluation.examples import write_examples
from tests.optimizers.test_optimizers import demo_examples


def test_a_retrieval_only_table_says_what_it_read_and_shows_no_nan_and_no_warnings(
    tmp_path: Path, demo_index_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    examples = [
        e.model_copy(update={"gold_documents": ()}) if e.case == "wrong_property" else e for e in demo_examples()
    ]
    traces = tmp_path / "traces"
    for split in ("train", "dev", "test"):
        write_examples(traces / f"{split}.jsonl", [e.model_copy(update={"split": split}) for e in examples])
    capsys.readouterr()
    common = ["evaluate", "--traces", str(traces), "--index", str(demo_index_dir), "--retrieval-only"]
    assert main([*common, "--mode", "bm25"]) == 0
    captured = capsys.readouterr()
    assert f"examples from {traces}, every split)" in " ".join(captured.out.split()) and "None" not in captured.out
    row = next(line for line in captured.out.splitlines() if line.startswith("wrong_property"))
    assert "NaN" not in captured.out and " - " in f" {row} "  # no gold document: recall applies to none
    assert main([*common, "--mode", "bm25", "--split", "dev"]) == 0
    assert f"examples from {traces}, split dev)" in " ".join(capsys.readouterr().out.split())
