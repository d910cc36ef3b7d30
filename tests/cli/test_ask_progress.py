"""`scoperag ask` tells the truth while it works and after: its stages as they start, and which LM calls the
cache answered; DSPy's cache lives in the project's cache directory."""

from __future__ import annotations

import re
from pathlib import Path

import dspy
import pytest

from pipeline.cli.main import main
from tests.conftest import DEMO_DIR
from tests.support.fakes import cooperative, lm_steps_settings, scripted_lm


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ask-index")
    assert main(["index", str(DEMO_DIR), "--out", str(out), "--embedder", "hash", "--json"]) == 0
    return out


def test_ask_prints_its_stages_off_a_terminal_and_counts_cache_hits(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.program import lm

    monkeypatch.chdir(tmp_path)  # no active profile
    monkeypatch.delenv("DSPY_CACHEDIR", raising=False)
    monkeypatch.setenv("SCOPERAG_CACHE_DIR", str(tmp_path / "cache"))
    scripted = scripted_lm(cooperative())
    scripted.adapter = dspy.JSONAdapter()
    scripted._cache_responses = True  # DummyLM opts out of DSPy's cache; a real LM does not
    monkeypatch.setattr(lm, "make_lm", lambda *args, **kwargs: scripted)
    previous = dspy.cache
    try:
        command = ["ask", "What is the monthly rent?", "--property", "Banda Lane", "--uncompiled"]
        command += ["--settings", lm_steps_settings(tmp_path)]
        command += ["--index", str(index_dir), "--history", str(tmp_path / "h.sqlite")]
        capsys.readouterr()
        assert main(command) == 0
        first = capsys.readouterr()
        stages = [
            re.sub(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[\+\d+ s\] ", "", line)
            for line in first.err.splitlines()
            if re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[\+\d+ s\] ", line)
        ]
        stages = [stage for stage in stages if not stage.startswith("still ")]  # repeats of a slow stage
        assert stages == [
            "opening the index",
            "loading the program",
            "decomposing the question (LM)",
            "decomposed into 1 sub-question(s)",
            "retrieving chunks for each sub-question",
            "scoring the chunks (LM)",
            "answering (LM)",
            "section 1: What is the monthly rent?",
            "done",
        ]
        assert re.search(r"3 LM calls, [1-9]\d* tokens", first.out) and "from the cache" not in first.out
        # DSPy's cache is in the project's cache directory, not in the home directory.
        assert any((tmp_path / "cache" / "dspy").iterdir())

        assert main(command) == 0
        again = " ".join(capsys.readouterr().out.split())
        assert "3 LM calls (3 from the cache, not measured), 0 tokens" in again
    finally:
        dspy.cache = previous


def test_ctrl_c_during_ask_says_how_long_it_ran_and_that_nothing_was_recorded(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.evaluation.history import History
    from pipeline.program import lm

    def interrupted(prompt: str) -> object:
        raise KeyboardInterrupt  # Ctrl-C while the first LM call is under way

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy"))
    scripted = scripted_lm(interrupted)
    scripted.adapter = dspy.JSONAdapter()
    monkeypatch.setattr(lm, "make_lm", lambda *args, **kwargs: scripted)
    history = tmp_path / "h.sqlite"
    capsys.readouterr()
    command = ["ask", "What is the monthly rent?", "--property", "Banda Lane", "--uncompiled"]
    command += ["--settings", lm_steps_settings(tmp_path)]
    assert main([*command, "--index", str(index_dir), "--history", str(history)]) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert "decomposing the question (LM)" in err
    assert re.search(r"interrupted after \d+ s: the question was not answered or recorded", err)
    assert History(history).recent(5) == []


def test_the_embedded_model_loads_on_the_first_lm_call_and_the_stage_line_says_so(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.program.lm import LocalModel, factory
    from tests.support.fakes import cooperative_llama

    loads: list[Path] = []

    def load(path: Path, name: str, options: object) -> LocalModel:
        loads.append(path)
        return LocalModel(cooperative_llama(0.0), name)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCOPERAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(factory, "ensure_model_file", lambda cache_dir, model=None: cache_dir / "model.gguf")
    monkeypatch.setattr(factory, "load_local_model", load)
    command = ["ask", "What is the monthly rent?", "--property", "Banda Lane", "--uncompiled"]
    command += ["--settings", lm_steps_settings(tmp_path), "--index", str(index_dir)]
    command += ["--history", str(tmp_path / "h.sqlite")]
    capsys.readouterr()
    assert main(command) == 0
    stages = re.findall(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[\+\d+ s\] (.*)$", capsys.readouterr().err, re.M)
    assert stages[:5] == [
        "opening the index",
        "loading the program",
        "decomposing the question (LM)",
        "loading the language model",
        "decomposing the question (LM)",  # given back once the model is loaded
    ]
    assert len(loads) == 1


def test_an_ask_whose_steps_run_their_floors_neither_loads_nor_imports_a_language_model(
    index_dir: Path, tmp_path: Path
) -> None:
    import json
    import os
    import subprocess
    import sys

    heavy = ("xllamacpp", "litellm", "mlflow", "pandas", "torch", "onnxruntime")
    ask = ["ask", "What is the monthly rent?", "--property", "Banda Lane", "--index", str(index_dir)]
    code = (
        "import json, sys\n"
        "from pipeline.cli.main import main\n"
        f"code = main({ask!r})\n"
        f"print(json.dumps({{'code': code, 'loaded': [m for m in {heavy!r} if m in sys.modules]}}))\n"
    )
    env = {**os.environ, "SCOPERAG_CACHE_DIR": str(tmp_path / "cache"), "DSPY_CACHEDIR": str(tmp_path / "dspy")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"code": 0, "loaded": []}, done.stderr
    assert not (tmp_path / "cache" / "models").exists()  # nothing assembled either
