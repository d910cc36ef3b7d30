"""No module of the code, its benchmarks, tests or scripts passes MAX_LINES lines (STYLE.md: a module past ~400
lines is a sign to split; past MAX_LINES it must be). The files are those git tracks, so a scratch file never
counts."""

from __future__ import annotations

import subprocess

from tests.support.paths import ROOT

MAX_LINES = 500
CHECKED = ("pipeline", "signatures", "optimizers", "experiments", "benchmarks", "tests", "scripts")


def tracked_python_files() -> list[str]:
    """The .py files git tracks under CHECKED, as paths relative to the checkout."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *(f"{folder}/*.py" for folder in CHECKED)],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    return sorted(name for name in listed.stdout.decode("utf-8").split("\0") if name)


def test_no_module_is_longer_than_the_limit() -> None:
    files = tracked_python_files()
    assert any(name.startswith("pipeline/") for name in files)  # the listing found the code at all
    lines = {name: len((ROOT / name).read_bytes().splitlines()) for name in files if (ROOT / name).exists()}
    offenders = {name: count for name, count in lines.items() if count > MAX_LINES}
    listed = "\n".join(f"  {name}: {count} lines" for name, count in sorted(offenders.items(), key=lambda kv: -kv[1]))
    assert not offenders, f"modules over {MAX_LINES} lines (split them by what they do):\n{listed}"
