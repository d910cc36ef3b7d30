"""The committed demo corpus and its labelled traces are exactly what the scripts write from the
property records in scripts/demo_properties.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.evaluation.examples import write_example_set
from tests.support.paths import DATASETS, ROOT
from tests.support.scripts import load_script

DEMO = DATASETS / "demo"
TRACES = DATASETS / "demo-traces"


def _differing(written: list[Path], out: Path, committed: Path) -> list[str]:
    return [str(p.relative_to(out)) for p in written if p.read_bytes() != (committed / p.relative_to(out)).read_bytes()]


def test_the_demo_corpus_is_what_its_script_writes_from_the_records(tmp_path: Path) -> None:
    generator = load_script("make_demo_corpus")
    out = tmp_path / "demo"
    written = generator.write(out)
    assert _differing(written, out, DEMO) == [], "datasets/demo is stale: run scripts/make_demo_corpus.py"
    committed = {p.relative_to(DEMO) for p in DEMO.rglob("*") if p.is_file()}
    assert committed == {p.relative_to(out) for p in written}


def test_the_demo_traces_are_what_their_script_writes(tmp_path: Path) -> None:
    traces = load_script("make_demo_traces")
    examples = traces.build(DEMO)
    out = tmp_path / "traces"
    write_example_set(out, examples)
    (out / "README.md").write_text(traces.card(examples), encoding="utf-8")
    written = sorted(out.iterdir())
    assert _differing(written, out, TRACES) == [], "datasets/demo-traces is stale: run scripts/make_demo_traces.py"


def test_a_bad_property_record_is_refused_naming_its_field(tmp_path: Path) -> None:
    generator = load_script("demo_facts")
    source = (ROOT / "scripts" / "demo_properties.toml").read_text(encoding="utf-8")
    bad = tmp_path / "facts.toml"
    bad.write_text(source.replace("rent = 285_000", 'rent = "285,000"', 1), encoding="utf-8")
    with pytest.raises(ValueError, match=r"properties\[0\]\.rent: expected int"):
        generator.load_facts(bad)
    bad.write_text(source.replace('lr = "1160/88"\n', "", 1), encoding="utf-8")
    with pytest.raises(ValueError, match=r"properties\[0\]: fields differ from Property: \['lr'\]"):
        generator.load_facts(bad)
    assert generator.load_facts(ROOT / "scripts" / "demo_properties.toml")[0] == generator.PROPERTIES


def test_a_bad_template_is_refused_naming_its_file_and_field(tmp_path: Path) -> None:
    templates = load_script("demo_templates")
    for source in (ROOT / "scripts" / "demo_corpus").glob("*.toml"):
        (tmp_path / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    lease = tmp_path / "lease.toml"
    lease.write_text(lease.read_text(encoding="utf-8").replace('["h2", "Particulars"]', '["h3", "Particulars"]', 1))
    with pytest.raises(ValueError, match=r"lease\.toml: \[lease\]\.pages\[0\]\[3\]: expected \[kind, \.\.\.\]"):
        templates.load_templates(tmp_path)
    assert templates.load_templates(ROOT / "scripts" / "demo_corpus") == templates.TEMPLATES


def test_a_bad_question_file_is_refused_naming_its_file_and_field(tmp_path: Path) -> None:
    load_script("make_demo_traces")  # puts scripts/ on the import path its modules import each other by
    questions = load_script("demo_questions")
    source = ROOT / "scripts" / "demo_traces"
    topics = tmp_path / "topics.toml"
    topics.write_text(
        (source / "topics.toml").read_text(encoding="utf-8").replace('types = ["lease"]', 'types = ["leese"]', 1)
    )
    with pytest.raises(ValueError, match=r"topics\.toml: \[topics\.rent\]\.types: expected one of"):
        questions.load_topics(topics)
    wrong = tmp_path / "wrong_property.toml"
    text = (source / "wrong_property.toml").read_text(encoding="utf-8")
    wrong.write_text(text.replace('scope = "chip"', 'scope = "folder"', 1), encoding="utf-8")
    with pytest.raises(ValueError, match=r"wrong_property\.toml: traps\[0\]\.scope: expected one of"):
        questions.load_wrong_property(wrong)
    asks = tmp_path / "absent_in_scope.toml"
    asks.write_text(
        (source / "absent_in_scope.toml").read_text(encoding="utf-8").replace("markers = [", "marker = [", 1)
    )
    with pytest.raises(ValueError, match=r"absent_in_scope\.toml: asks\[0\]: expected fields"):
        questions.load_asks(asks)
    assert questions.load_asks(source / "absent_in_scope.toml") == questions.ABSENT_ASKS
