"""The contract corpus's data files (scripts/contract_corpus/) are checked when loaded: a bad party, document
or question stops the build with an error naming the file, the table and the field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.scripts import load_script

DATA = ROOT / "scripts" / "contract_corpus"
# The builder first: it puts scripts/ on the import path its modules import each other by.
contracts = load_script("make_contract_corpus")
documents = load_script("contract_documents")


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(DATA, tmp_path / "data")
    return tmp_path / "data"


def _edit(path: Path, old: str, new: str) -> None:
    source = path.read_text(encoding="utf-8")
    assert old in source
    path.write_text(source.replace(old, new, 1), encoding="utf-8")


def test_an_agreement_naming_an_unknown_party_is_refused(tmp_path: Path) -> None:
    data = _copy(tmp_path)
    _edit(data / "agreements.toml", 'second = "helix"', 'second = "helixx"')
    with pytest.raises(ValueError, match=r"agreements\.toml: agreements\[0\]\.second: unknown party 'helixx'"):
        documents.load_documents(data)


def test_an_agreement_with_a_misspelt_term_is_refused(tmp_path: Path) -> None:
    data = _copy(tmp_path)
    _edit(data / "agreements.toml", 'return_days = "fifteen (15)"', 'return_day = "fifteen (15)"')
    with pytest.raises(ValueError, match=r"agreements\.toml: agreements\[0\]\.terms: expected fields"):
        documents.load_documents(data)


def test_the_committed_data_loads_as_the_corpus_uses_it() -> None:
    assert documents.load_documents(DATA) == documents.DOCUMENTS


def test_a_question_with_a_bad_field_is_refused_naming_it(tmp_path: Path) -> None:
    data = _copy(tmp_path)
    _edit(data / "dev.toml", 'case = "no_scope"', 'case = "no-scope"')
    with pytest.raises(ValueError, match=r"dev\.toml: examples\[0\]\.case: expected one of"):
        contracts.load_questions(data / "dev.toml", "dev")
    _copy(tmp_path / "again")
    dev = tmp_path / "again" / "data" / "dev.toml"
    _edit(dev, '"agreements/northwind-helix-nda.txt", 3]]', '"agreements/northwind-helix.txt", 3]]')
    with pytest.raises(ValueError, match=r"dev\.toml: examples\[0\]\.gold\[0\]: expected one of"):
        contracts.load_questions(dev, "dev")
    _copy(tmp_path / "third")
    dev = tmp_path / "third" / "data" / "dev.toml"
    _edit(dev, 'topic = "liability_cap"', 'topik = "liability_cap"')
    with pytest.raises(ValueError, match=r"dev\.toml: absent_terms\[0\]: expected fields"):
        contracts.load_questions(dev, "dev")
    assert contracts.load_questions(DATA / "dev.toml", "dev")[1] == contracts.ABSENT_TERMS
