"""The answer step: for each sub-question, an answer line and the evidence it rests on.

Per section, in order: nothing kept -> not found; a sub-question asking for a computed figure is worked out by
code from operands the compute step names (the LM, or the "rows" floor), and rests on them; otherwise the
abstain floor ("support") may say not found before any answer call, and every other section gets its line
from ONE answer call (the LM copies the answer out of its best sentences) or from the floor ("span",
"sentence"). Every line then goes through
the guards (pipeline.guards.sections): quotes only from pages shown in scope, a line grounded in them.
Which way each step ran, and why a section is not found, goes into the trace.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import dspy

from pipeline.answering.choose import MAX_CANDIDATES, choose
from pipeline.answering.compute import Computation
from pipeline.answering.figure_answers import TableSource
from pipeline.answering.floors import Draft, draft_support, span_choices
from pipeline.answering.judge import Statement, Verdict
from pipeline.answering.lines import (
    SectionInputs,
    evidence_for,
    floor_computation,
    floor_draft,
    lists_periods,
    section_inputs,
    support_of,
)
from pipeline.answering.sentences import OfferedSentence, numbered
from pipeline.answering.titles import asks_titles
from pipeline.answering.typed_answers import states_figure
from pipeline.errors import LMFailure
from pipeline.guards.citations import CitedSource
from pipeline.guards.options import offered_names, outside_options
from pipeline.guards.periods import period_problem
from pipeline.guards.sections import GuardedSection, guard_section, not_found
from pipeline.intake.contract import Contract, section_kind
from pipeline.program.events import Evidence, Section
from pipeline.program.formatted_lines import formatted_line
from pipeline.program.lm_computations import lm_computation
from pipeline.program.trace import Intervention, LineTrace, record_line
from pipeline.program.typed_sections import TypedSections, line_typed_value
from pipeline.settings import ProgramSettings
from pipeline.text import normalise
from pipeline.types import ChunkHit, SourceRef
from pipeline.values.periods import find_periods
from pipeline.values.quantities import figures_outside_dates
from pipeline.values.typed import TypedValue
from signatures.models import AnswerLine, FigureComputation, LineSentences
from signatures.shapes import exact_computations_type, exact_lines_type

log = logging.getLogger(__name__)

Call = Callable[..., "dspy.Prediction | None"]
# Sentences (table rows) a compute call is shown per section: a statement's rows need more than prose.
COMPUTE_SENTENCES = 16


class AnswerStep:
    """One question's answer step over `settings`; `call(name, predictor, run, **inputs)` is the program's
    one guarded LM call (counted, budgeted)."""

    def __init__(
        self,
        settings: ProgramSettings,
        generic: AbstractSet[str],
        call: Call,
        answer: dspy.Predict,
        compute_predictor: dspy.Predict,
        tables: TableSource | None = None,
        judge: dspy.Predict | None = None,
        choose: dspy.Predict | None = None,
    ) -> None:
        self.settings = settings
        self.generic = generic
        self.call = call
        self.answer = answer
        self.compute_predictor = compute_predictor
        # the judge of yes/no questions (None: the claims floor answers them whatever the step says)
        self.judge = judge
        # the chooser among the span floor's candidates (None: the floor's first answers whatever the step says)
        self.chooser = choose
        # where figures are read from tables (None: only sentences answer)
        self.tables = tables

    def run(
        self,
        run: Any,
        sub_questions: Sequence[str],
        kept: Sequence[Sequence[ChunkHit]],
        queries: Sequence[str],
        asked: Sequence[str],
        allowed: Collection[str] | None,
        retrieved: Sequence[Sequence[ChunkHit]] | None = None,
        section_allowed: Sequence[Collection[str] | None] | None = None,
    ) -> list[Section]:
        """The sections of every sub-question, in order (see the module docstring); `queries` rank each one's
        sentences, `asked` is each without entity names (its key terms); `retrieved` are each one's chunks
        before scoring (whose documents' tables a figure is read from). Each section may cite only documents in
        `allowed`, or in its own entry of `section_allowed` when given (a sub-question naming one entity of the
        scope cites only that entity's documents)."""
        settings, steps = self.settings, self.settings.steps
        scopes = list(section_allowed) if section_allowed is not None else [allowed] * len(sub_questions)
        contract: Contract | None = getattr(run, "contract", None)
        # a name is a value one sentence holds anywhere retrieval found it: every retrieved chunk is read for it
        kept = [
            _with_retrieved(kept[i], retrieved[i]) if retrieved and section_kind(sq, contract) == "name" else kept[i]
            for i, sq in enumerate(sub_questions)
        ]
        items = [
            section_inputs(i, sq, kept[i], queries[i], settings.max_chunk_chars, self.generic, asked[i])
            for i, sq in enumerate(sub_questions)
        ]
        kinds = {i.index: section_kind(i.sub_question, contract) for i in items}
        lines = {i.index: LineTrace(index=i.index, kind=i.kind, step=steps.answer) for i in items}
        guarded: dict[int, GuardedSection] = {}
        values: dict[int, TypedValue] = {}
        typed = TypedSections(self.tables, self.generic, settings.max_chunk_chars)
        # a figure the question asks to be computed: from figures read from the tables where they are found
        for item in (i for i in items if i.request is not None and steps.compute != "lm"):
            hits = [*(retrieved[item.index] if retrieved else ()), *kept[item.index]]
            worked = typed.computed(item, contract, hits, kept[item.index], scopes[item.index])
            if worked is not None:
                guarded[item.index], values[item.index], traced = worked
                lines[item.index] = traced(lines[item.index])
        # a computed figure whose operands are found rests on them: it needs no other support
        pending = [i for i in items if not i.empty and i.request is not None and i.index not in guarded]
        computed = self._computations(run, pending)
        for item in items:
            kind = kinds[item.index]
            done = item.index in computed or item.index in guarded
            # the typed floors answer when the answer step runs its floor (the LM's way is its own, measured apart);
            # a yes/no question the judge step hands to the LM is judged either way
            judged = kind == "boolean" and steps.judge == "lm" and self.judge is not None
            typed_floor = judged or (steps.answer != "lm" and kind in ("number", "boolean", "names", "name", "text"))
            if not typed_floor or done or item.request is not None:
                continue
            hits = [*(retrieved[item.index] if retrieved else ()), *kept[item.index]]
            read: tuple[GuardedSection, TypedValue, Callable[[LineTrace], LineTrace]] | None
            if judged:
                query = queries[item.index]
                ask = self._judge_call(run, item)
                read, decision = typed.judged(
                    item, asked[item.index], contract, hits, kept[item.index], scopes[item.index], query, ask
                )
                if decision.floor is not None:
                    reason = f"{decision.floor}: the claims floor answered"
                    run.trace.fallbacks.append(
                        Intervention(guard="judge", target=f"section:{item.index}", reason=reason)
                    )
            elif kind == "boolean":
                query = queries[item.index]
                read = typed.claim(item, asked[item.index], contract, hits, kept[item.index], scopes[item.index], query)
            elif kind in ("names", "name", "text"):
                avoid = frozenset(re.findall(r"[0-9a-z]+", normalise(item.sub_question)))
                query = queries[item.index]
                if asks_titles(item.sub_question, contract.instructions if contract else ()):
                    read = typed.titles(item, contract, hits, kept[item.index], scopes[item.index])
                elif kind == "names":
                    read = typed.names(item, contract, hits, kept[item.index], scopes[item.index], query, avoid)
                else:
                    read = typed.one_name(
                        item, contract, hits, kept[item.index], scopes[item.index], query, avoid, kind
                    )
            else:
                read = None
                if item.over_time:
                    read = typed.trend(item, asked[item.index], contract, hits, kept[item.index], scopes[item.index])
                if read is None:
                    read = typed.figure(item, asked[item.index], contract, hits, kept[item.index], scopes[item.index])
            if read is not None:
                guarded[item.index], values[item.index], traced = read
                lines[item.index] = traced(lines[item.index])
        for item in items:
            if item.empty and item.index not in guarded:
                guarded[item.index] = not_found("no chunk was kept for it")
        for item in items:
            computation = computed.get(item.index)
            if computation is None:
                continue
            by_id = {o.sentence.sentence_id: o.sentence for o in computation.operands}
            operands = list(by_id.values())
            lines[item.index] = lines[item.index].model_copy(
                update={"step": f"compute:{steps.compute}", "formula": computation.formula}
            )
            guarded[item.index] = guard_section(
                item.index, None, operands, kept[item.index], scopes[item.index], computation, self.generic
            )
        rest: list[SectionInputs] = []
        for item in (i for i in items if i.index not in guarded):
            if steps.abstain == "support":
                held = support_of(item, run.deadline)
                lines[item.index] = lines[item.index].model_copy(update={"support": round(held, 3)})
                if held < settings.support_threshold:
                    reason = f"the best sentences hold {held:.2f} of its key terms, below {settings.support_threshold}"
                    guarded[item.index] = not_found(reason)
                    continue
            rest.append(item)
        drafts = self._drafts(run, rest)
        for item in rest:
            run.deadline.check("answering")
            draft = drafts.get(item.index)
            if draft is None:
                guarded[item.index] = not_found("the LM found no sentence that answers it")
                continue
            lines[item.index] = lines[item.index].model_copy(
                update={"proposed": draft.text, "evidence_ids": list(draft.evidence), "basis": draft.basis}
            )
            # the sentence a line is cited to must itself state what is asked: key terms spread over other
            # sentences (a notice clause, a duration of survival) support no line taken from this one
            cited = draft_support(draft, item.sentences, item.kind, frozenset(item.focus))
            if steps.abstain == "support" and cited is not None and cited < settings.support_threshold:
                threshold = settings.support_threshold
                reason = f"the sentence it rests on holds {cited:.2f} of its key terms, below {threshold}"
                guarded[item.index] = not_found(reason)
                continue
            evidence = evidence_for(draft, item, settings.max_evidence)
            section = guard_section(
                item.index, draft, evidence, kept[item.index], scopes[item.index], None, self.generic, item.sub_question
            )
            # the floor's pick for a figure asked must be one (the LM's line is its own claim, measured as such)
            if (
                kinds[item.index] == "number"
                and steps.answer != "lm"
                and section.status == "answered"
                and not states_figure(section.line, item.kind == "count")
            ):
                reason = f"the line states no figure of what is asked ({section.line[:80]!r})"
                section = not_found(reason)
            guarded[item.index] = formatted_line(section, run.format_request, item)
        for item in items:
            if kinds[item.index] == "number" and guarded[item.index].status == "answered":
                problem = self._period_problem(item.sub_question, guarded[item.index])
                if problem is not None:
                    guarded[item.index] = not_found(problem)
                    values.pop(item.index, None)
        offered = offered_names(run.trace.question)
        for item in items:
            if kinds[item.index] == "name" and guarded[item.index].status == "answered":
                problem = outside_options(guarded[item.index].line, offered)
                if problem is not None:
                    guarded[item.index] = not_found(problem)
                    values.pop(item.index, None)
        sections = []
        for item in items:
            section = guarded[item.index]
            record_line(run.trace, lines[item.index], section)
            value = values.get(item.index) or line_typed_value(kinds[item.index], item, section, contract)
            sections.append(_section(item.index, item.sub_question, section, value))
        return sections

    def _period_problem(self, sub_question: str, section: GuardedSection) -> str | None:
        """Why a figure answered for the periods the sub-question names rests on pages of other periods
        (pipeline.guards.periods); None when it may stand or no page can be read."""
        asked = find_periods(sub_question)
        if not asked.periods or self.tables is None:
            return None
        pages = [
            " ".join(hit.chunk.text for hit in self.tables.page_hits(source.document_id, source.page))
            for source in section.sources
        ]
        fiscal = bool(re.search(r"\b(?:fiscal|FY)", sub_question, re.IGNORECASE))
        return period_problem(asked, [page for page in pages if page], fiscal)

    # -- yes/no questions by the LM's judgement ---------------------------------------------------

    def _judge_call(self, run: Any, item: SectionInputs) -> Callable[[Statement], Verdict | None]:
        """One judge call per statement (pipeline.answering.judge): its verdict, or None when the LM failed or its
        output could not be parsed (recorded; the claims floor then answers)."""

        def ask(statement: Statement) -> Verdict | None:
            try:
                result = self.call("judge", self.judge, run, question=item.sub_question, statement=statement.text)
            except LMFailure as failure:
                reason = f"the LM failed on the {statement.label} ({failure.public})"
                run.trace.fallbacks.append(Intervention(guard="judge", target=f"section:{item.index}", reason=reason))
                return None
            verdict = getattr(result, "verdict", None)
            return Verdict(statement.number, verdict) if isinstance(verdict, str) else None

        return ask

    # -- answer lines ------------------------------------------------------------------------

    def _drafts(self, run: Any, items: Sequence[SectionInputs]) -> dict[int, Draft | None]:
        """Each section's proposed line: from ONE answer call, or from the answer floor."""
        steps = self.settings.steps
        if not items:
            return {}
        if steps.answer != "lm":
            return {i.index: self._floor_draft(run, i) for i in items}
        shown = {i.index: i.sentences[: self.settings.line_sentences] for i in items}
        contexts = _contexts(items, shown)
        shape = exact_lines_type([(i.index, len(shown[i.index])) for i in items])
        signature = self.answer.signature.with_updated_fields("answers", type_=shape)
        result = self.call("answer", self.answer, run, sections_context=contexts, signature=signature)
        answers = getattr(result, "answers", None)
        given: dict[int, AnswerLine] = {}
        for line in answers if isinstance(answers, list | tuple) else []:
            if isinstance(line, AnswerLine) and line.sub_question_index not in given:
                given[line.sub_question_index] = line
        out: dict[int, Draft | None] = {}
        for item in items:
            out[item.index] = self._draft(run, item, shown[item.index], given.get(item.index))
        return out

    def _floor_draft(self, run: Any, item: SectionInputs) -> Draft | None:
        """The answer floor's line; with the span floor and the choose step on the LM, the line the LM chooses
        among the floor's few best candidates (pipeline.answering.choose), the floor's first when its choice does
        not count (recorded)."""
        steps = self.settings.steps
        if steps.answer != "span" or steps.choose != "lm" or self.chooser is None or lists_periods(item):
            return floor_draft(item, steps.answer, run.deadline)
        offered = span_choices(
            item.sentences, item.kind, item.terms, item.sub_question, item.focus, run.deadline, MAX_CANDIDATES
        )
        target = f"section:{item.index}"

        def ask(candidates: str) -> object | None:
            try:
                result = self.call("choose", self.chooser, run, question=item.sub_question, candidates=candidates)
            except LMFailure as failure:
                reason = f"the LM failed ({failure.public})"
                run.trace.fallbacks.append(Intervention(guard="choose", target=target, reason=reason))
                return None
            return getattr(result, "choice", None)

        chosen = choose(offered, item.sentences, ask)
        if chosen is None:
            return floor_draft(item, steps.answer, run.deadline)
        if chosen.floor is not None:
            reason = f"{chosen.floor}: the span floor's first candidate answered"
            run.trace.fallbacks.append(Intervention(guard="choose", target=target, reason=reason))
        return chosen.draft

    def _draft(
        self, run: Any, item: SectionInputs, shown: Sequence[OfferedSentence], line: AnswerLine | None
    ) -> Draft | None:
        """The LM's line for one section as a Draft; the span floor's when the LM gave none it could use
        (recorded), or None (not found) when the LM found no answer and abstaining is its call."""
        target = f"section:{item.index}"
        if line is None:
            run.trace.fallbacks.append(
                Intervention(
                    guard="answer", target=target, reason="no answer line in the LM's output: the span floor answered"
                )
            )
            return floor_draft(item, "span", run.deadline)
        offered = {s.sentence_id: s for s in shown}
        unknown = [i for i in line.sentence_ids if i not in offered]
        if unknown:
            reason = f"sentence ids {unknown[:10]} were not offered: ignored"
            run.trace.interventions.append(Intervention(guard="answer", target=target, reason=reason))
        ids = tuple(dict.fromkeys(i for i in line.sentence_ids if i in offered))
        text = line.answer.strip()
        if not text:
            if self.settings.steps.abstain == "lm":
                return None
            reason = "the LM found no answer but abstaining is the support floor's call: the span floor answered"
            run.trace.fallbacks.append(Intervention(guard="answer", target=target, reason=reason))
            return floor_draft(item, "span", run.deadline)
        if not ids:
            ids = tuple(s.sentence_id for s in shown if normalise(text) in normalise(s.text))[:1]
        copied = any(normalise(text) in normalise(offered[i].text) for i in ids)
        return Draft(text, ids, "extracted" if copied else "written")

    # -- computed figures ---------------------------------------------------------------------

    def _computations(self, run: Any, items: Sequence[SectionInputs]) -> dict[int, Computation]:
        """The computed figure of each section that asks for one: from the compute call (its floor where the
        call gives nothing usable) or from the "rows" floor; sections with no usable computation are left out
        (they are answered as a figure as reported)."""
        if not items:
            return {}
        request = run.format_request
        if self.settings.steps.compute != "lm":
            found = {i.index: floor_computation(i, request, run.deadline) for i in items}
            return {k: v for k, v in found.items() if v is not None}
        shown = {i.index: i.sentences[:COMPUTE_SENTENCES] for i in items}
        figures = {
            index: [q.text for s in sentences for q in figures_outside_dates(s.text)]
            for index, sentences in shown.items()
        }
        contexts = _contexts(items, shown)
        shape = exact_computations_type([(i.index, len(shown[i.index]), figures[i.index]) for i in items])
        signature = self.compute_predictor.signature.with_updated_fields("computations", type_=shape)
        result = self.call("compute", self.compute_predictor, run, sections_context=contexts, signature=signature)
        given: dict[int, FigureComputation] = {}
        raw = getattr(result, "computations", None)
        for entry in raw if isinstance(raw, list | tuple) else []:
            if isinstance(entry, FigureComputation) and entry.sub_question_index not in given:
                given[entry.sub_question_index] = entry
        out: dict[int, Computation] = {}
        for item in items:
            computed = lm_computation(item, shown[item.index], given.get(item.index), request)
            if isinstance(computed, Computation):
                out[item.index] = computed
                continue
            floor = floor_computation(item, request, run.deadline)
            then = "the rows floor computed it" if floor else "the rows floor found no operands either"
            reason = f"the LM's computation could not be used ({computed}): {then}"
            run.trace.fallbacks.append(Intervention(guard="compute", target=f"section:{item.index}", reason=reason))
            if floor is not None:
                out[item.index] = floor
        return out


def _with_retrieved(kept: Sequence[ChunkHit], retrieved: Sequence[ChunkHit]) -> list[ChunkHit]:
    """The kept chunks, then the other retrieved ones, each once."""
    rows = {h.chunk.row for h in kept}
    return [*kept, *(h for h in retrieved if h.chunk.row not in rows)]


def _contexts(items: Sequence[SectionInputs], shown: Mapping[int, Sequence[OfferedSentence]]) -> list[LineSentences]:
    """What an answer or compute call is shown per section: its sub-question and its numbered sentences."""
    return [
        LineSentences(sub_question_index=i.index, sub_question=i.sub_question, sentences=numbered(shown[i.index]))
        for i in items
    ]


def _section(index: int, sub_question: str, guarded: GuardedSection, value: TypedValue | None = None) -> Section:
    """The section as shown: the line with its citations, each quote with its own, and its typed value."""
    if guarded.status != "answered":
        return Section(index=index, sub_question=sub_question, answer=guarded.line, status=guarded.status, value=value)

    def ref(source: CitedSource) -> SourceRef:
        return SourceRef(document_id=source.document_id, filename=source.filename, page=source.page)

    return Section(
        index=index,
        sub_question=sub_question,
        answer=guarded.line,
        answer_sources=tuple(ref(s) for s in guarded.line_sources),
        evidence=tuple(Evidence(text=q.text, source=ref(q.source)) for q in guarded.quotes),
        sources=tuple(ref(s) for s in guarded.sources),
        status="answered",
        basis=guarded.basis,
        formula=guarded.formula,
        value=value,
    )
