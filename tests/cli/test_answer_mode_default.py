"""The answer mode follows the LM: the embedded model chooses (measured best), others write, a settings file wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli.common import read_settings, settings_for_lm
from pipeline.program.lm import measured_answer_mode


@pytest.mark.parametrize(
    ("lm", "mode"),
    [
        (None, "select"),  # --lm not given: the embedded model
        ("embedded", "select"),
        ("http://127.0.0.1:8080/v1", None),
        ("openai/gpt-4o-mini", None),
    ],
)
def test_the_measured_mode_is_known_for_the_embedded_model_only(lm: str | None, mode: str | None) -> None:
    assert measured_answer_mode(lm) == mode


def test_the_embedded_model_chooses_its_answers_by_default() -> None:
    assert read_settings(None).program.answer_mode == "write"
    settings = settings_for_lm(read_settings(None), None)
    assert settings.program.answer_mode == "select"
    assert settings.program.max_tokens == read_settings(None).program.max_tokens  # nothing else changes


def test_a_remote_lm_keeps_writing() -> None:
    assert settings_for_lm(read_settings(None), "http://127.0.0.1:8080/v1").program.answer_mode == "write"


def test_a_settings_file_that_sets_the_mode_wins(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('[program]\nanswer_mode = "write"\n')
    assert settings_for_lm(read_settings(str(path)), "embedded").program.answer_mode == "write"
    path.write_text("[program]\nscore_chunk_chars = 500\n")
    settings = settings_for_lm(read_settings(str(path)), "embedded")
    assert settings.program.answer_mode == "select" and settings.program.score_chunk_chars == 500
