"""`scoperag ask --questions FILE --out ANSWERS.jsonl`: many questions with one load of the index and the program,
each answer written as one JSON line as soon as it comes (pipeline.program.batch), a progress bar with the time
left, a rerun resuming after the answers the file holds, and Ctrl-C stopping cleanly."""

from __future__ import annotations

import argparse
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cli.common import (
    asking_lm,
    configure_dspy,
    console,
    load_program,
    output,
    program_plan,
    read_settings,
    styled,
)
from pipeline.cli.progress import clock_time
from pipeline.errors import ScopeRagError, WorkStopped

if TYPE_CHECKING:
    from rich.console import Console

    from pipeline.program.answer_file import Resumed
    from pipeline.program.events import Completed, Failed
    from pipeline.program.question_file import Asked

log = logging.getLogger(__name__)

# What the first Ctrl-C says; the answers written stay, and a rerun resumes after them.
STOPPING = "stopping: no new question starts; the answers written are kept (Ctrl-C again to quit now)"


def cmd_ask_questions(args: argparse.Namespace) -> int:
    """Answer every question of `args.questions` not yet answered in `args.out`; 0 when all are answered, 1 when
    some failed, 130 when stopped."""
    started = time.monotonic()  # loading counts the imports below
    import dspy

    from pipeline.cli.interrupt import stopping_on_interrupt
    from pipeline.cli.progress import StageLine, StageProgress
    from pipeline.evaluation.history import History, final_status, index_key
    from pipeline.evaluation.parallel import map_in_context
    from pipeline.program.answer_file import AnswerFile
    from pipeline.program.batch import answer_record, ask_each
    from pipeline.program.calls import LMCallCounter, StopSignal, counting
    from pipeline.program.events import Failed
    from pipeline.program.question_file import read_question_file, resolve_lines
    from pipeline.store import open_store

    notices = console()
    source, out = Path(args.questions), Path(args.out)
    if source.resolve() == out.resolve():
        raise ScopeRagError(f"--out {out} is the question file itself: name another file for the answers")
    questions = read_question_file(source)  # a bad file stops here, before anything is loaded
    if questions.ignored_fields:
        ignored = ", ".join(repr(name) for name in questions.ignored_fields)
        notices.print(styled((f"not read from {source}: {ignored} (only id, question, property, document_ids)", "dim")))
    with AnswerFile(out) as answers:  # locked until the run ends: a second run on the same file is refused
        resumed = answers.read()
        settings = read_settings(args.settings)
        plan = program_plan(args, settings)  # said first: which program answers and which steps the LM runs
        notices.print(styled(plan.line()), soft_wrap=True)
        with StageLine(notices) as stages:
            stages.stage("opening the index")
            store = open_store(Path(args.index))
            asked = resolve_lines(store, source, questions)
            _check_resumed(out, asked, resumed)
            pending = [a for a in asked if a.id not in resumed.answered]
            _say_resumed(notices, out, len(asked), len(asked) - len(pending), resumed.cut_line)
            if not pending:
                return 0
            stages.stage("loading the program")
            program = load_program(store, plan)
        loaded = time.monotonic()
        parallel = max(1, args.parallel)
        loading = threading.Event()

        def on_load(starting: bool) -> None:
            (loading.set if starting else loading.clear)()

        lm = asking_lm(args, settings, on_load, parallel)
        configure_dspy()
        history = History(Path(args.history))
        index = index_key(Path(args.index))  # the history lists each question under the index it was asked of
        history_lock = threading.Lock()
        writer = answers.writer(resumed)
        stop = StopSignal()
        counts = {"done": 0, "failed": 0}
        total = len(pending)
        stopped = False
        with StageProgress(notices) as bar, stopping_on_interrupt(stop, notices, STOPPING):

            def show() -> None:
                note = "loading the language model" if loading.is_set() else ""
                if counts["failed"]:
                    note = " ".join(filter(None, (note, f"{counts['failed']} failed")))
                bar.update("questions", counts["done"], total, note, rate_of=(counts["done"], "questions"))

            def on_answer(question: Asked, final: Completed | Failed) -> None:
                if writer.closed:  # stopped meanwhile: asked again by the next run
                    return
                failed = isinstance(final, Failed)
                history_id = None
                if final.trace is not None:
                    with history_lock:
                        try:
                            history_id = history.record(final.trace, status=final_status(final), index=index)
                        except sqlite3.Error:  # losing the history entry must not lose the answer
                            log.exception("question %s: the history could not be written", question.id)
                if writer.write(answer_record(question, final, history_id)):
                    counts["done"] += 1
                    counts["failed"] += failed
                    show()

            counter = LMCallCounter(on_call=lambda calls: show(), stop=stop)
            show()
            with dspy.context(lm=lm, adapter=dspy.JSONAdapter()), counting(counter):
                try:
                    map_in_context(ask_each(program, on_answer), pending, parallel, None, stop)
                except (WorkStopped, KeyboardInterrupt):
                    stopped = True
                finally:
                    writer.close()
    with history_lock:
        history.close()
    return _report(args, out, counts, total, len(asked), stopped, loaded - started, time.monotonic() - loaded)


def _check_resumed(out: Path, asked: Sequence[Asked], resumed: Resumed) -> None:
    """AnswerFileError when the answer file holds, under an id of this question file, the answer to another
    question: it answers another file's questions (or was edited), and resuming from it would skip them."""
    from pipeline.program.answer_file import AnswerFileError

    for question in asked:
        held = resumed.questions.get(question.id)
        if held is not None and " ".join(held.split()) != " ".join(question.question.split()):
            raise AnswerFileError(
                f"{out} holds another question under id {question.id!r} than line {question.line} asks: it answers "
                "another file's questions; give another --out (the file was left as it is)"
            )


def _say_resumed(notices: Console, out: Path, asked: int, answered: int, cut_line: int | None) -> None:
    """What a rerun found in the answer file (nothing when it starts a new one)."""
    if cut_line is not None:
        notices.print(styled((f"{out} line {cut_line} was cut short by a stop: it is written again", "yellow")))
    if answered == asked:
        notices.print(styled(f"all {asked} questions are answered in {out} already: nothing to ask"))
    elif answered:
        said = f"resuming: {answered} of {asked} questions are answered in {out} already; asking the other "
        notices.print(styled(said + str(asked - answered)), soft_wrap=True)


def _report(
    args: argparse.Namespace,
    out: Path,
    counts: dict[str, int],
    total: int,
    asked: int,
    stopped: bool,
    load_seconds: float,
    answer_seconds: float,
) -> int:
    """The run's last line (or JSON summary) and its exit code."""
    done, failed = counts["done"], counts["failed"]
    per_question = answer_seconds / done if done else None
    if args.json:
        summary = {
            "out": str(out),
            "questions": asked,
            "asked": total,
            "answered": done,
            "failed": failed,
            "stopped": stopped,
            "load_seconds": round(load_seconds, 3),
            "answer_seconds": round(answer_seconds, 3),
            "seconds_per_question": None if per_question is None else round(per_question, 3),
        }
        print(json.dumps(summary, indent=2))
    pace = f" ({per_question:.2f} s per question)" if per_question is not None else ""
    if stopped:
        left = total - done
        said = f"stopped: {done} of {total} answers written to {out} in {clock_time(answer_seconds)}{pace}; "
        said += f"{left} left: run the same command again to resume"
        console().print(styled((said, "yellow")), soft_wrap=True)
        return 130
    said = f"{done} questions answered in {clock_time(answer_seconds)}{pace}, after {load_seconds:.1f} s loading; "
    said += f"answers in {out}"
    if failed:
        said += f'; {failed} failed (phase "error"): run the same command again to ask them again'
    # With --json, stdout holds the summary alone.
    (console() if args.json else output()).print(styled(said), soft_wrap=True)
    return 1 if failed else 0
