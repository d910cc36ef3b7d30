"""Long commands report progress on a terminal and, as plain lines, everywhere else."""

from __future__ import annotations

import io

from rich.console import Console

from pipeline.cli.progress import StageProgress
from tests.support.clock import Ticks


def _lines(console: Console) -> list[str]:
    file = console.file
    assert isinstance(file, io.StringIO)
    return [" ".join(line.split()[1:]) for line in file.getvalue().splitlines()]  # without the time


def test_off_a_terminal_a_quick_command_prints_no_progress_line() -> None:
    """A one-second build went through 114 updates of five stages: none of it is worth a line."""
    console = Console(file=io.StringIO(), force_terminal=False, width=100)
    ticks = Ticks()
    with StageProgress(console, clock=ticks) as bar:
        for stage in ("read", "chunk", "embed", "index", "publish"):
            for done in range(23):
                ticks.now += 0.007
                bar.update(stage, done, 22)
    assert _lines(console) == []


def test_off_a_terminal_at_most_one_line_per_interval_for_starts_tenths_heartbeats_and_the_end() -> None:
    console = Console(file=io.StringIO(), force_terminal=False, width=100)
    ticks = Ticks()
    with StageProgress(console, every=5.0, clock=ticks) as bar:
        for done in range(1, 101):  # 100 s of reading, an update a second
            ticks.now += 1.0
            bar.update("read", done, 100)
        bar.update("read", 99, 100)  # a late update from another thread never goes back
        ticks.now += 6.0
        bar.update("embed", 0, 3, "batches")
        for _ in range(10):  # a long batch: a line every 30 s while the tenth does not move
            ticks.now += 6.0
            bar.update("embed", 0, 3, "batches")
        ticks.now += 1.0
        bar.update("embed", 3, 3, "batches")  # too soon after the last line: printed when the work ends
    lines = _lines(console)
    assert lines[:11] == [f"read: {n}/100" for n in (5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)]
    assert lines[11:] == ["embed: 0/3 batches"] * 3  # its start, then a heartbeat every 30 s
    ticks.now += 10.0
    with StageProgress(console, every=5.0, clock=ticks) as bar:
        ticks.now += 6.0
        bar.update("score", 1, 4, "examples")
        ticks.now += 1.0
        bar.update("score", 2, 4, "examples")
        ticks.now += 5.0
    assert _lines(console)[14:] == ["score: 1/4 examples", "score: 2/4 examples"]  # the last state, at the end


def test_on_a_terminal_a_live_bar_is_drawn() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    with StageProgress(console) as bar:
        bar.update("read", 5, 10)
        bar.update("read", 10, 10)
    output = console.file.getvalue()  # type: ignore[attr-defined]
    assert "read" in output and "10/10" in output and "\x1b[" in output


def test_a_stage_that_names_its_unit_shows_its_rate_and_time_left() -> None:
    from pipeline.cli.progress import rate_line

    assert rate_line((300, "pages"), 2, 8, 2.0) == "(150 pages/s, ETA 0:06)"
    assert rate_line((12, "chunks"), 12, 12, 4.0) == "(3.0 chunks/s)"  # finished: no time left
    assert rate_line((2, "examples"), 2, 6, 80.0) == "(40 s per example, ETA 2:40)"  # an LM-backed evaluation
    assert rate_line((0, "pages"), 0, 8, 0.0) == ""
    console = Console(file=io.StringIO(), force_terminal=False, width=100)
    ticks = Ticks()
    ticks.now = -10.0
    with StageProgress(console, every=0.0, clock=ticks) as bar:
        ticks.now = 0.0
        bar.update("read", 0, 4, "0 pages", rate_of=(0, "pages"))
        ticks.now = 2.0
        bar.update("read", 4, 4, "40 pages", rate_of=(40, "pages"))
    first, last = _lines(console)
    assert first == "read: 0/4 0 pages"
    assert last.startswith("read: 4/4 40 pages (") and last.endswith(" pages/s)")


def test_a_stage_line_off_a_terminal_prints_one_dated_line_per_stage_with_the_time_since_the_start() -> None:
    import re

    from pipeline.cli.progress import StageLine

    now = [100.0]
    console = Console(file=io.StringIO(), force_terminal=False, width=40)
    with StageLine(console, clock=lambda: now[0]) as line:
        line.stage("decomposing the question (LM)")
        now[0] += 31.6
        line.stage("answering (LM) for a long while past the console's width")
    file = console.file
    assert isinstance(file, io.StringIO)
    lines = file.getvalue().splitlines()
    dated = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
    assert re.fullmatch(rf"{dated} \[\+0 s\] decomposing the question \(LM\)", lines[0])
    assert re.fullmatch(rf"{dated} \[\+32 s\] answering \(LM\) for a long while past the console's width", lines[1])
    assert len(lines) == 2


def test_a_stage_line_on_a_terminal_shows_the_stage_and_the_elapsed_time() -> None:
    from pipeline.cli.progress import StageLine

    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    with StageLine(console) as line:
        line.stage("scoring the chunks (LM)")
    file = console.file
    assert isinstance(file, io.StringIO)
    drawn = file.getvalue()
    assert "scoring the chunks (LM)" in drawn and "0:00:00" in drawn


def test_a_long_stage_off_a_terminal_is_repeated_while_it_lasts() -> None:
    import threading

    from pipeline.cli.progress import StageLine

    console = Console(file=io.StringIO(), force_terminal=False, width=100)
    with StageLine(console, every=0.02) as line:
        line.stage("answering (LM)")
        threading.Event().wait(0.2)  # a long LM call
        line.stage("done")
    file = console.file
    assert isinstance(file, io.StringIO)
    stages = [text.split("] ", 1)[1] for text in file.getvalue().splitlines()]
    assert stages[0] == "answering (LM)" and stages[-1] == "done"
    assert set(stages[1:-1]) == {"still answering (LM)"} and len(stages) >= 3


def test_work_of_several_stages_shows_one_eta_the_whole_works_never_one_per_stage() -> None:
    """Off a terminal each line ends with the job's ETA as it stands; a stage shows its rate, not its own ETA."""
    console = Console(file=io.StringIO(), force_terminal=False, width=200)
    ticks = Ticks()
    with StageProgress(console, every=0.0, clock=ticks) as bar:
        bar.job_eta("job ETA 9:00")
        bar.update("baseline", 0, 4, "examples")
        ticks.now = 40.0
        bar.job_eta("job ETA 8:20")
        bar.update("baseline", 1, 4, "examples", rate_of=(1, "examples"))
    lines = _lines(console)
    assert lines == ["baseline: 0/4 examples; job ETA 9:00", "baseline: 1/4 examples (40 s per example); job ETA 8:20"]


def test_on_a_terminal_the_jobs_eta_has_a_row_of_its_own_and_the_stages_none() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=160)
    ticks = Ticks()
    with StageProgress(console, clock=ticks) as bar:
        bar.job_eta("job ETA 9:00")
        bar.update("floor", 4, 4, "examples", rate_of=(4, "examples"))
        ticks.now = 40.0
        bar.update("baseline", 1, 4, "examples", rate_of=(1, "examples"))
        bar.job_eta("job ETA 8:20")
    file = console.file
    assert isinstance(file, io.StringIO)
    last = file.getvalue().rsplit("\x1b[?25h", 1)[0].rsplit("job ", 1)[-1]  # the final frame, from the job row
    assert last.count("ETA") == 1 and "ETA 8:20" in last and "9:00" not in last
