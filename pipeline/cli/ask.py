"""`scoperag ask` (a sectioned, cited answer), `history` (questions asked) and `label` (a question into an example)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cli.answer_view import section_lines, steps_line
from pipeline.cli.common import (
    CASES,
    SPLITS,
    Commands,
    asking_lm,
    configure_dspy,
    console,
    history_option,
    index_option,
    json_option,
    lm_option,
    lm_threads_option,
    load_program,
    output,
    program_option,
    scope_options,
    settings_option,
    styled,
)

if TYPE_CHECKING:
    from pipeline.evaluation.history import HistoryEntry


def register(commands: Commands) -> None:
    """Add `ask`, `history` and `label`."""
    p = commands.add_parser(
        "ask",
        parents=[
            index_option(),
            scope_options(),
            lm_option(),
            lm_threads_option(),
            program_option(),
            settings_option(),
            history_option(),
            json_option(),
        ],
        help="answer a question with sectioned, cited answers",
    )
    p.add_argument("question", nargs="?", help="the question (or --questions FILE for many)")
    p.add_argument(
        "--questions",
        metavar="FILE",
        help="answer every question of a JSONL or CSV file (question, optional id, property, document_ids) with one "
        "load; needs --out",
    )
    p.add_argument(
        "--out",
        metavar="ANSWERS.jsonl",
        help="with --questions: one JSON line per answer, written as each comes; a rerun resumes after those it holds",
    )
    p.add_argument(
        "--parallel", type=int, default=1, metavar="N", help="with --questions: questions answered at once (default 1)"
    )
    p.set_defaults(func=cmd_ask)

    p = commands.add_parser(
        "history",
        parents=[history_option(), index_option(), json_option()],
        help="list recent questions asked of an index (--all: of every index), or show one with its trace",
    )
    p.add_argument("id", nargs="?", help="history id (or a unique prefix)")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--all", action="store_true", help="questions asked of every index, each with its index")
    p.set_defaults(func=cmd_history)

    p = commands.add_parser(
        "label",
        parents=[index_option(), history_option()],
        help="turn a recorded question (scoperag history) into a labelled example",
    )
    p.add_argument("id", help="history id or unique prefix")
    p.add_argument("--case", required=True, choices=CASES)
    p.add_argument("--fact", action="append", default=[], help="a fact a correct answer must state (repeat)")
    p.add_argument(
        "--gold",
        action="append",
        default=[],
        help="a document holding the answer (relative path, file name or id; repeat); required unless --not-found",
    )
    p.add_argument("--forbidden", action="append", default=[], help="a document that must never be cited")
    p.add_argument("--not-found", action="store_true", help="the answer is not in scope")
    p.add_argument("--split", choices=SPLITS)
    p.add_argument("--traces", required=True, help="JSONL file to append to")
    p.add_argument("--yes", action="store_true", help="append without showing the example and asking first")
    p.set_defaults(func=cmd_label)


def cmd_ask(args: argparse.Namespace) -> int:
    from pipeline.errors import ScopeRagError

    if args.questions is not None or args.out is not None:
        if args.question is not None or args.questions is None or args.out is None:
            raise ScopeRagError(
                "ask takes a question, or --questions FILE with --out ANSWERS.jsonl (one JSON line per answer)"
            )
        from pipeline.cli.ask_many import cmd_ask_questions

        return cmd_ask_questions(args)
    if args.question is None:
        raise ScopeRagError("ask what? give a question, or --questions FILE --out ANSWERS.jsonl")
    return _ask_one(args)


def _ask_one(args: argparse.Namespace) -> int:
    """One question: its stages as they start, then the answer (or --json)."""
    import dspy

    from pipeline.cli.common import program_plan, read_settings
    from pipeline.cli.progress import StageLine
    from pipeline.errors import StorageError
    from pipeline.evaluation.history import History, final_status, index_key
    from pipeline.files import storage_errors
    from pipeline.intake.scope import resolve_scope
    from pipeline.program.events import Completed, Failed, value_text
    from pipeline.store import open_store

    notices = console()
    settings = read_settings(args.settings)
    plan = program_plan(args, settings)  # the first line: which program answers and which steps the LM runs
    notices.print(styled(plan.line()), soft_wrap=True)
    final: Completed | Failed | None = None
    with StageLine(notices) as progress:
        progress.stage("opening the index")
        store = open_store(Path(args.index))
        scope = resolve_scope(
            store, document_ids=store.document_ids_for(args.doc_id) or None, property_ref=args.property
        )
        progress.stage("loading the program")
        shown = ["loading the program"]

        def stage(text: str) -> None:
            shown.append(text)
            progress.stage(text)

        def on_load(starting: bool) -> None:  # the embedded model loads on the first LM call, if one is made
            progress.stage("loading the language model" if starting else shown[-1])

        try:
            program = load_program(store, plan)
            lm = asking_lm(args, settings, on_load)
            configure_dspy()
            with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
                for event in program.stream(args.question, scope):
                    stage(describe_event(event))
                    if isinstance(event, Completed | Failed):
                        final = event
        except KeyboardInterrupt:
            said = f"interrupted after {progress.elapsed:.0f} s: the question was not answered or recorded"
            notices.print(styled((said, "red")))
            return 130
    history_id = None
    if final is not None and final.trace is not None:
        status = final_status(final)
        try:
            with storage_errors("the question history", args.history):
                history = History(Path(args.history))
                history_id = history.record(final.trace, status=status, index=index_key(Path(args.index)))
                history.close()
        except StorageError as exc:  # the answer is shown all the same
            notices.print(styled(("warning: ", "yellow"), f"{exc}; this answer is not recorded"), soft_wrap=True)
    if isinstance(final, Failed) or final is None:
        notices.print(styled(("error: ", "red"), final.message if final else "no answer"))
        return 1
    if args.json:
        print(final.model_copy(update={"history_id": history_id}).model_dump_json(indent=2))
        return 0
    # Everything below is data: printed as Text, never as markup, Markdown or a link.
    out = output()
    if not final.sections:  # asked back, refused, answered directly or about another entity: the message
        out.print(styled(final.answer))
    elif final.scope_note is not None:
        out.print(styled((final.scope_note.message, "yellow")))
    if final.implicit_scope:
        out.print(styled((f"searched only the documents of {' and '.join(final.implicit_scope)}", "dim")))
    for section in final.sections:
        for line in section_lines(section, "  "):
            out.print(line)
        out.print()
    if final.value is not None and [final.value] != [s.value for s in final.sections]:
        out.print(styled(("value: ", "bold"), value_text(final.value)), soft_wrap=True)
    # Questions asked alongside an answer, and the tool loop's message when steps were given up.
    alongside = final.sections or final.scope_note is not None  # else the questions are the answer
    for note in filter(None, [*(final.clarifying_questions if alongside else ()), final.notice]):
        out.print(styled((note, "yellow")))
    if final.trace is not None and final.trace.steps:
        out.print(styled((steps_line(final.trace.steps), "dim")), soft_wrap=True)
    summary = cost_line(final.lm_calls, final.cached_calls, final.tokens, final.seconds)
    out.print(styled((f"{summary}; scope: {scope.kind}; history: {history_id}", "dim")), soft_wrap=True)
    return 0


def describe_event(event: object) -> str:
    """The stage line for one progress event (data in it is shown as text, never markup)."""
    from pipeline.program.events import Completed, Decomposed, Failed, GeneratingSubquestion

    lm = getattr(event, "lm", None)
    if lm is not None:
        phase = str(getattr(event, "phase", "working"))
        return STAGE_WORDS.get(phase, phase) + (" (LM)" if lm else " (no LM)")
    if isinstance(event, Decomposed):
        return f"decomposed into {len(event.sub_questions)} sub-question(s)"
    if isinstance(event, GeneratingSubquestion):
        return f"section {event.index + 1}: {event.sub_question}"
    if isinstance(event, Completed | Failed):
        return "done" if isinstance(event, Completed) else "failed"
    phase = getattr(event, "phase", "working")
    return STAGE_WORDS.get(phase, phase)


# What each stage event means while it lasts.
STAGE_WORDS = {
    "decomposing": "decomposing the question",
    "retrieving": "retrieving chunks for each sub-question",
    "filtering": "scoring the chunks",
    "generating": "answering",
}


def cost_line(lm_calls: int, cached: int, tokens: int, seconds: float) -> str:
    """LM calls (and how many DSPy's cache answered, which spent no tokens or model time), tokens, seconds."""
    calls = f"{lm_calls} LM calls" + (f" ({cached} from the cache, not measured)" if cached else "")
    return f"{calls}, {tokens} tokens, {seconds:.1f} s"


def cmd_history(args: argparse.Namespace) -> int:
    from pipeline.evaluation.history import History, index_key

    history = History(Path(args.history))
    if args.id:
        entry = history.get(args.id)
        if args.json:
            print(entry.trace.model_dump_json(indent=2))
        else:
            from pipeline.cli.trace_view import trace_lines

            out = output()
            for line in trace_lines(entry):
                out.print(line, soft_wrap=True)
        return 0
    index = None if args.all else index_key(Path(args.index))
    entries = history.recent(args.limit, index=index)
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": e.history_id,
                        "created_at": e.created_at,
                        "question": e.question,
                        "status": e.status,
                        "index": e.index,
                        "lm_calls": e.lm_calls,
                        "tokens": e.tokens,
                        "seconds": e.seconds,
                        "value": None if e.trace.value is None else e.trace.value.model_dump(mode="json"),
                    }
                    for e in entries
                ],
                indent=2,
            )
        )
        return 0
    out = output()
    for text in history_lines(entries, with_index=args.all):
        out.print(styled(text), soft_wrap=True)
    if index is not None:
        other, unknown = history.elsewhere(index)
        left_out = [f"{other} of other indexes"] if other else []
        left_out += [f"{unknown} recorded before indexes were"] if unknown else []
        if left_out:
            said = f"questions asked of {args.index}; not shown: {' and '.join(left_out)} (--all shows them)"
            console().print(styled((said, "dim")), soft_wrap=True)
    return 0


def history_lines(entries: list[HistoryEntry], *, with_index: bool = False, width: int = 80) -> list[str]:
    """Recent questions in `width` columns, two lines each and nothing cut: the id (8 digits, what `history ID`
    takes), the local time, the status, LM calls, tokens and seconds; then the question, wrapped (after its index's
    folder name, with `with_index`)."""
    import textwrap

    if not entries:
        return ["no questions recorded here yet"]
    lines = [f"{'id':<8}  {'local time':<11}  {'status':<11}  {'LM calls':>8}  {'tokens':>7}  {'seconds':>8}"]
    for e in entries:
        when = local_time(e.created_at)
        lines.append(
            f"{e.history_id[:8]:<8}  {when:<11}  {e.status:<11}  {e.lm_calls:>8}  {e.tokens:>7}  {e.seconds:>8.1f}"
        )
        place = f"[{Path(e.index).name if e.index else 'index not recorded'}] " if with_index else ""
        lines.extend(textwrap.wrap(place + e.question, width, initial_indent="  ", subsequent_indent="  "))
    return lines


def local_time(created_at: str) -> str:
    """ "11-28 14:05": a recorded UTC time as this machine's local month, day and minute."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(created_at).astimezone().strftime("%m-%d %H:%M")
    except ValueError:
        return created_at[:11]


def cmd_label(args: argparse.Namespace) -> int:
    import sys

    from pipeline.errors import LabellingError
    from pipeline.evaluation.history import History
    from pipeline.evaluation.labelling import append_example, example_from_history
    from pipeline.files import storage_errors
    from pipeline.store import open_store

    entry = History(Path(args.history)).get(args.id)
    store = open_store(Path(args.index))
    if not args.gold and not args.not_found:
        documents = store.catalog.documents
        sources = [source for section in entry.trace.sections for source in section.get("sources") or ()]
        cited = sorted({documents[d].relpath for d in (s.get("document_id") for s in sources) if d in documents})
        found = {c.document_id for sq in entry.trace.sub_questions for c in sq.chunks}
        retrieved = sorted({documents[d].relpath for d in found if d in documents} - set(cited))
        raise LabellingError(
            "name the documents that hold the answer with --gold (repeat it), or pass --not-found; the answer "
            f"cited {', '.join(cited) or 'nothing'}; retrieval also found {', '.join(retrieved) or 'nothing'} "
            "(citations can be wrong: check them with `scoperag history ID`)"
        )
    example = example_from_history(
        entry,
        store.catalog,
        case=args.case,
        answer_facts=args.fact,
        gold_documents=args.gold,
        forbidden_documents=args.forbidden,
        expect_not_found=args.not_found,
        split=args.split,
    )
    if not args.yes:
        notices = console()
        notices.print(styled((f"this example will be appended to {args.traces}:", "bold")), soft_wrap=True)
        notices.print(styled(example.model_dump_json(exclude_defaults=True, indent=2)), soft_wrap=True)
        if not sys.stdin.isatty():
            raise LabellingError("nothing was appended: confirm with --yes when not at a terminal")
        if input("append it? [y/N] ").strip().lower() not in ("y", "yes"):
            notices.print("nothing was appended")
            return 1
    with storage_errors("the label", args.traces, "the traces file is as it was"):
        line = append_example(Path(args.traces), example)
    print(f"labelled {entry.history_id[:8]} as {args.case} example {example.id} ({args.traces}, line {line})")
    return 0
