"""Every benchmark still starts: each script answers `--help` with its usage, and each helper module imports.

A benchmark runs rarely, so a setting or function renamed under it goes unnoticed until someone runs it; this
catches what breaks at import or argument parsing. The scripts are found by their `__main__` entry, so a new
one is covered without naming it here. `--help` must stay cheap: a script loads models and indexes in
`main()`, after its arguments are read, never at import.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.paths import ROOT

BENCHMARKS = ROOT / "benchmarks"
ENTRY = 'if __name__ == "__main__":'
FILES = sorted(BENCHMARKS.glob("*.py"))
SCRIPTS = [path for path in FILES if ENTRY in path.read_text()]
LIBRARIES = [path for path in FILES if ENTRY not in path.read_text()]


def test_the_benchmarks_folder_holds_both_scripts_and_the_helpers_they_share() -> None:
    assert {"models.py", "scoreboard.py"} <= {path.name for path in SCRIPTS}
    assert {"measure.py", "synthetic.py"} <= {path.name for path in LIBRARIES}


@pytest.fixture(scope="module")
def helped() -> dict[Path, subprocess.CompletedProcess[str]]:
    """Every script's `--help`, run a few at a time (each is mostly Python importing its modules)."""
    # this checkout's code, whichever checkout the virtual environment was installed from
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}

    def run(script: Path) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, str(script), "--help"]
        return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        return dict(zip(SCRIPTS, pool.map(run, SCRIPTS), strict=True))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_each_script_answers_help_with_its_usage(
    script: Path, helped: dict[Path, subprocess.CompletedProcess[str]]
) -> None:
    done = helped[script]
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(f"usage: {script.name}"), done.stdout[:500]


@pytest.mark.parametrize("library", LIBRARIES, ids=lambda path: path.name)
def test_each_helper_module_imports_and_says_what_it_holds(library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the scripts import their helpers by bare name
    spec = importlib.util.spec_from_file_location(f"benchmark_helper_{library.stem}", library)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    assert module.__doc__ and module.__doc__.strip()
