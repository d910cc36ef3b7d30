"""Long commands report progress on a terminal and, as plain lines, everywhere else."""

from __future__ import annotations

import io

from rich.console import Console

from pipeline.cli.progress import StageProgress


def _lines(console: Console) -> list[str]:
    file = console.file
    assert isinstance(file, io.StringIO)
    return [" ".join(line.split()[1:]) for line in file.getvalue().splitlines()]  # without the time


def test_off_a_terminal_each_stage_prints_its_start_tenths_and_end() -> None:
    console = Console(file=io.StringIO(), force_terminal=False, width=100)
    with StageProgress(console, every=3600) as bar:
        for done in range(1, 101):
            bar.update("read", done, 100)
        bar.update("embed", 0, 3, "batches")
        bar.update("embed", 3, 3, "batches")
        bar.update("embed", 3, 3, "batches")  # the end once only
    lines = _lines(console)
    assert lines[:11] == [f"read: {n}/100" for n in (1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)]
    assert lines[11:] == ["embed: 0/3 batches", "embed: 3/3 batches"]


def test_off_a_terminal_a_slow_stage_prints_at_least_every_interval() -> None:
    console = Console(file=io.StringIO(), force_terminal=False, width=100)
    with StageProgress(console, every=0.0) as bar:
        for done in range(5):
            bar.update("compile", done, None, "LM calls")
    assert _lines(console) == [f"compile: {n} LM calls" for n in range(5)]


def test_on_a_terminal_a_live_bar_is_drawn() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    with StageProgress(console) as bar:
        bar.update("read", 5, 10)
        bar.update("read", 10, 10)
    output = console.file.getvalue()  # type: ignore[attr-defined]
    assert "read" in output and "10/10" in output and "\x1b[" in output
