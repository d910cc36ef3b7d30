"""The one settings object, read from TOML."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import SettingsError
from pipeline.settings import Settings, load_settings


def test_settings_load_from_toml_with_any_section_left_out(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(
        "lm_threads = 2\n[program]\nrelevance_threshold = 6.5\n[build]\nchunk_words = 200\n"
        "[core.tool_loop]\nmax_retries = 3\n",
        encoding="utf-8",
    )
    settings = load_settings(path)
    assert settings.lm_threads == 2
    assert settings.program.relevance_threshold == 6.5
    assert settings.program.max_chunk_chars == Settings().program.max_chunk_chars
    assert settings.build.chunk_words == 200 and settings.build.chunk_overlap == 30
    assert settings.core.tool_loop.max_retries == 3


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[program]\nrelevance_threshold = 11\n", "program.relevance_threshold"),
        ("[build]\nchunk_wrds = 10\n", "build.chunk_wrds"),
        ("lm_threads = [\n", "cannot read settings"),
    ],
)
def test_bad_settings_are_refused_naming_the_file_and_the_field(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        load_settings(path)
    assert str(path) in str(caught.value) and problem in str(caught.value)
