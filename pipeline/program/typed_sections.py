"""The sections the answer step makes for a typed question without an LM: a figure read from a table
(pipeline.answering.figure_answers), a yes/no decided by a row or a sentence stating the event
(pipeline.answering.claims), and the typed value of a line made from sentences. Each goes through the same
guards as any other section."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace

from pipeline.answering.claims import READ, claim_terms, event_nouns, event_verbs, plain_terms, stated_claim
from pipeline.answering.compute import MARGIN_FROM_COSTS, computed_figure, expression_for, margin_from_costs
from pipeline.answering.figure_answers import (
    FIRST_ID,
    TableSource,
    figure_evidence,
    figure_for,
    figure_operands,
    figures_over_time,
    metric_ask,
    operand_figures,
)
from pipeline.answering.figures import Figure, reports_event
from pipeline.answering.floors import Draft, first_words
from pipeline.answering.judge import Decision, Statement, Verdict, candidates, judge, row_statement
from pipeline.answering.lines import SectionInputs
from pipeline.answering.metric_labels import alternatives
from pipeline.answering.name_lists import READ as NAMES_READ
from pipeline.answering.name_lists import (
    FoundName,
    asks_cover,
    asks_organisation,
    field_names,
    head_terms,
    listed_names,
    organisation_name,
)
from pipeline.answering.sentences import OfferedSentence, offered_sentences
from pipeline.answering.spans import scale_note
from pipeline.answering.titles import changed_titles
from pipeline.answering.typed_answers import absent, figure_value, line_value, plain_number
from pipeline.errors import ArithmeticRefused
from pipeline.guards.sections import GuardedSection, guard_section, not_found
from pipeline.guards.yes_answers import asked_event, yes_refused
from pipeline.intake.contract import Contract
from pipeline.program.trace import LineTrace
from pipeline.types import ChunkHit, SourceRef
from pipeline.values.typed import Plain, TypedValue, ValueKind

# What a search for statements of a change of office looks for, and how many chunks it reads.
TITLES_QUERY = (
    "appointed named elected promoted joined resigned retired stepped down succeeded as Chief Executive Officer "
    "Chief Financial Officer President Chairman Director"
)
TITLES_CHUNKS = 12
# Sentences a list of changed offices rests on, best first.
TITLES_EVIDENCE = 3

Read = tuple[GuardedSection, TypedValue, Callable[[LineTrace], LineTrace]]
# How well a row's label must name a yes/no question's event (its verb held): "Dividends declared" for "were
# common stock dividends declared".
CLAIM_ROW_SCORE = 0.5
# Documents whose cover (first page) a question pointing at it reads.
MAX_COVER_DOCUMENTS = 3
# A scope this small has every document read for a figure asked per period.
MAX_SCOPE_DOCUMENTS = 8


class TypedSections:
    """Figure and yes/no sections over `tables` (None: no table is read); `generic` are the corpus's generic
    words, `max_chunk_chars` how much of a chunk sentences are read from."""

    def __init__(self, tables: TableSource | None, generic: AbstractSet[str], max_chunk_chars: int) -> None:
        self.tables = tables
        self.generic = generic
        self.max_chunk_chars = max_chunk_chars

    def figure(
        self,
        item: SectionInputs,
        asked: str,
        contract: Contract | None,
        hits: Sequence[ChunkHit],
        kept: Sequence[ChunkHit],
        allowed: Collection[str] | None,
    ) -> Read | None:
        """A section answered by a figure read from the tables of the retrieved documents, its value and how
        its line trace reads; None when no row names what is asked (the sentences then answer)."""
        if self.tables is None or not hits:
            return None
        figure = figure_for(metric_ask(item.sub_question, asked, contract, self.generic), hits, self.tables)
        found = None if figure is None else self._guarded(figure, item, hits, kept, allowed)
        if figure is None or found is None:
            return None
        section, filename = found
        proposed = f"{figure.row.label} = {figure.cell.text} (label score {figure.label_score:.2f})"
        return section, figure_value(figure, filename, contract), _traced("figure:rows", proposed)

    def trend(
        self,
        item: SectionInputs,
        asked: str,
        contract: Contract | None,
        hits: Sequence[ChunkHit],
        kept: Sequence[ChunkHit],
        allowed: Collection[str] | None,
    ) -> Read | None:
        """A figure asked over time: the figure of each period (document) retrieval found, listed in period
        order, each quoted from its row; None when fewer than two are found."""
        if self.tables is None or not hits:
            return None
        ask = metric_ask(item.sub_question, asked, contract, self.generic)
        hits = self._with_scope(hits, allowed)
        figures = figures_over_time(ask, hits, self.tables)
        if not figures:
            return None
        names = {h.chunk.document_id: h.filename for h in hits}
        evidence, shown, parts = [], [], []
        for figure in figures:
            draft, quoted, page_hits = figure_evidence(figure, self.tables, names.get(figure.document_id, ""))
            evidence.extend(quoted[:1])
            shown.extend(page_hits)
            parts.append(draft.text)
        draft = Draft("; ".join(parts), tuple(e.sentence_id for e in evidence), "extracted")
        evidence = [replace(e, sentence_id=FIRST_ID + 20 + i) for i, e in enumerate(evidence)]
        draft = Draft(draft.text, tuple(e.sentence_id for e in evidence), "extracted")
        section = guard_section(item.index, draft, evidence, [*kept, *shown], allowed, None, self.generic)
        if section.status != "answered":
            return None
        value = TypedValue(kind="text", value=section.line, as_written=section.line[:600], pages=_refs(section))
        return section, value, _traced("figure:periods", f"{len(figures)} periods")

    def claim(
        self,
        item: SectionInputs,
        asked: str,
        contract: Contract | None,
        hits: Sequence[ChunkHit],
        kept: Sequence[ChunkHit],
        allowed: Collection[str] | None,
        query: str,
    ) -> Read:
        """A yes/no section (pipeline.answering.claims): a table row reporting the event (its figure not zero:
        true; zero: false), else a sentence stating it (true), else the question's absent value (false)."""
        terms = claim_terms(asked, self.generic)
        row = self._event_row(item, asked, contract, hits, kept, allowed)
        if row is not None:
            figure, section = row
            return _row_read(figure, section, _traced("claim:rows", f"{figure.row.label} = {figure.cell.text}"))
        sentences = offered_sentences(hits, self.max_chunk_chars, query)
        permission = asked_event(item.sub_question).possible
        claim = stated_claim(sentences, terms, event_verbs(asked), permission)
        # a yes stands only on a sentence stating the event (pipeline.guards.yes_answers): one that does not is
        # set aside, and the floor reads the others
        while claim is not None and claim.happened and yes_refused(item.sub_question, claim.sentence.text):
            sentences = [s for s in sentences if s is not claim.sentence]
            claim = stated_claim(sentences, terms, event_verbs(asked), permission)
        if claim is not None:
            draft = Draft(first_words(claim.sentence.text), (claim.sentence.sentence_id,), "sentence")
            step = "claim:sentence" if claim.happened else "claim:denied"
            read = self._read(item, draft, [claim.sentence], [*kept, *hits], allowed, "boolean", claim.happened, step)
            if read is not None:
                return read
        reason = f"none of the {min(len(sentences), READ)} sentences read states it ({', '.join(terms)})"
        return not_found(reason), absent("boolean", contract, reason), _traced("claim:none", None)

    def judged(
        self,
        item: SectionInputs,
        asked: str,
        contract: Contract | None,
        hits: Sequence[ChunkHit],
        kept: Sequence[ChunkHit],
        allowed: Collection[str] | None,
        query: str,
        ask: Callable[[Statement], Verdict | None],
    ) -> tuple[Read, Decision]:
        """A yes/no section decided by the LM's verdicts on the event's row and sentences (pipeline.answering.judge,
        each asked of `ask`), and the decision; the claims floor's section when the judge decided nothing (the
        decision says why) or the guards refuse the sentence it judged "yes"."""
        row = self._event_row(item, asked, contract, hits, kept, allowed)
        shown = None if row is None else row_statement(row[0].row.label, row[0].cell.text, row[0].cell.header)
        sentences = offered_sentences(hits, self.max_chunk_chars, query)
        offered = candidates(shown, sentences, plain_terms(claim_terms(asked, self.generic)))
        decision = judge(offered, ask)
        traced = _traced("judge:lm", decision.summary(offered))
        if decision.floor is not None:
            return self.claim(item, asked, contract, hits, kept, allowed, query), decision
        chosen = decision.yes
        if chosen is None:
            reason = f"no statement judged to state it ({decision.summary(offered)})"
            return (not_found(reason), absent("boolean", contract, reason), traced), decision
        if chosen.sentence is None and row is not None:
            return _row_read(row[0], row[1], traced), decision
        why = "the guards refused"
        if chosen.sentence is not None:
            # the LM's yes stands only on a sentence stating the event (pipeline.guards.yes_answers)
            refusal = yes_refused(item.sub_question, chosen.sentence.text)
            draft = Draft(first_words(chosen.sentence.text), (chosen.sentence.sentence_id,), "sentence")
            read = None
            if refusal is None:
                read = self._read(item, draft, [chosen.sentence], [*kept, *hits], allowed, "boolean", True, "judge:lm")
            if read is not None:
                return (read[0], read[1], traced), decision
            why = f"a yes does not stand on it: {refusal}" if refusal else why
        refused = Decision(None, decision.verdicts, f"{why} ({chosen.label} judged to state it)")
        return self.claim(item, asked, contract, hits, kept, allowed, query), refused

    def _event_row(
        self,
        item: SectionInputs,
        asked: str,
        contract: Contract | None,
        hits: Sequence[ChunkHit],
        kept: Sequence[ChunkHit],
        allowed: Collection[str] | None,
    ) -> tuple[Figure, GuardedSection] | None:
        """The table row whose label names a yes/no question's event (its verb held), with its section as the
        guards let it through; None when no row names it or the guards refuse it."""
        terms = tuple(plain_terms(claim_terms(asked, self.generic)))
        if self.tables is None or not terms or not hits:
            return None
        ask = replace(
            metric_ask(item.sub_question, asked, contract, self.generic),
            terms=terms,
            alternatives=alternatives(terms),
            any_kind=True,
            min_score=CLAIM_ROW_SCORE,
            required=event_verbs(asked),
            nouns=event_nouns(asked),
        )
        figure = figure_for(ask, hits, self.tables)
        found = None if figure is None else self._guarded(figure, item, hits, kept, allowed)
        return None if figure is None or found is None else (figure, found[0])

    def names(
        self,
        item: SectionInputs,
        contract: Contract | None,
        hits: Sequence[ChunkHit],
        kept: Sequence[ChunkHit],
        allowed: Collection[str] | None,
        query: str,
        avoid: AbstractSet[str],
    ) -> Read:
        """A section listing names (pipeline.answering.name_lists), each resting on its sentence; the question's
        absent value when none is found. A question pointing at the cover reads each document's first page too,
        and values found under a caption naming what is asked have the rest of their page read."""
        hits, sentences, _ = self._fields(item, hits, query)
        found = listed_names(item.sub_question, sentences, item.terms, item.focus, avoid)
        reason = f"no name found in the {min(len(sentences), NAMES_READ)} sentences read"
        listed = [(f.name, f.sentence) for f in found]
        return self._listed(item, contract, listed, [*kept, *hits], allowed, "names", reason)

    def titles(
        self,
        item: SectionInputs,
        contract: Contract | None,
        hits: Sequence[ChunkHit],
        kept: Sequence[ChunkHit],
        allowed: Collection[str] | None,
    ) -> Read:
        """Which positions changed (pipeline.answering.titles): the titles of the statements of appointment and
        departure in scope, each resting on its sentence; the question's absent value when none is found."""
        searched = list(hits)
        if self.tables is not None and hasattr(self.tables, "search_chunks"):
            documents = sorted(allowed) if allowed is not None else None
            searched += self.tables.search_chunks(TITLES_QUERY, k=TITLES_CHUNKS, document_ids=documents)
        sentences = offered_sentences(searched, self.max_chunk_chars, TITLES_QUERY)
        owners = [
            n for h in searched[:1] for n in (self.tables.owner_names(h.chunk.document_id) if self.tables else ())
        ]
        listed = [(f.title, f.sentence) for f in changed_titles(sentences, owners)]
        reason = "no statement of an appointment or a departure names a title"
        return self._listed(item, contract, listed, [*kept, *searched], allowed, "titles", reason, TITLES_EVIDENCE)

    def _listed(
        self,
        item: SectionInputs,
        contract: Contract | None,
        listed: Sequence[tuple[str, OfferedSentence]],
        hits: Sequence[ChunkHit],
        allowed: Collection[str] | None,
        step: str,
        reason: str,
        max_evidence: int | None = None,
    ) -> Read:
        """A section listing names, each resting on its sentence (the names of the first `max_evidence` sentences
        when given), through the guards; not found for `reason`, with the question's absent value, when none is
        listed or the guards refuse them."""
        evidence = list({id(sentence): sentence for _, sentence in listed}.values())[:max_evidence]
        names = [name for name, sentence in listed if sentence in evidence]
        if names:
            draft = Draft("; ".join(names), tuple(s.sentence_id for s in evidence), "extracted")
            read = self._read(item, draft, evidence, hits, allowed, "names", names, f"{step}:sentences")
            if read is not None:
                return read
        return not_found(reason), absent("names", contract, reason), _traced(f"{step}:none", None)

    def computed(
        self,
        item: SectionInputs,
        contract: Contract | None,
        hits: Sequence[ChunkHit],
        kept: Sequence[ChunkHit],
        allowed: Collection[str] | None,
    ) -> Read | None:
        """A computed figure whose operands are read from the tables as figures (each row naming its operand,
        its column the period asked), worked out by code; None when an operand is not found."""
        request = item.request
        if self.tables is None or request is None or not hits:
            return None
        hits = self._with_scope(hits, allowed)
        percent = request.percent or bool(contract and contract.unit == "%")
        figures = operand_figures(request, item.sub_question, contract, self.generic, hits, self.tables)
        expression = expression_for(request.operation, len(figures), percent)
        if not figures and (costs := margin_from_costs(request, item.sub_question)) is not None:
            # a gross margin the statement prints no row of: its revenue less the cost of that revenue
            figures = operand_figures(costs, item.sub_question, contract, self.generic, hits, self.tables)
            expression = MARGIN_FROM_COSTS
        names = {h.chunk.document_id: h.filename for h in hits}
        operands = figure_operands(figures, lambda d: names.get(d, ""), self.tables)
        if not operands:
            return None
        try:
            request_format = contract.format if contract else None
            computation = computed_figure(request.operation, expression, operands, percent, request_format)
        except ArithmeticRefused:
            return None
        shown = [o.sentence.hit for o in operands]
        evidence = [o.sentence for o in operands]
        section = guard_section(item.index, None, evidence, [*kept, *shown], allowed, computation, self.generic)
        if section.status != "answered":
            return None
        value = TypedValue(
            kind="number",
            value=plain_number(computation.value),
            unit="%" if percent else None,
            currency=None if percent else figures[0].currency,
            as_written=section.line[:600],
            pages=_refs(section),
        )
        return section, value, _traced("compute:figures", computation.formula)

    def _read(
        self,
        item: SectionInputs,
        draft: Draft,
        evidence: Sequence[OfferedSentence],
        shown: Sequence[ChunkHit],
        allowed: Collection[str] | None,
        kind: ValueKind,
        value: Plain,
        step: str,
    ) -> Read | None:
        """A section a typed floor proposes from sentences, as the guards let it through, with its typed value;
        None when the guards do not let its line stand as proposed."""
        section = guard_section(item.index, draft, evidence, shown, allowed, None, self.generic)
        if section.status != "answered" or section.basis != draft.basis:
            return None
        typed = TypedValue(kind=kind, value=value, as_written=section.line[:600], pages=_refs(section))
        return section, typed, _traced(step, section.line[:200])

    def _with_cover(self, question: str, hits: Sequence[ChunkHit], always: bool = False) -> list[ChunkHit]:
        """`hits`, with the chunks of the first page of each of their documents first when the question points at
        a report's cover (or `always`)."""
        if self.tables is None or not (always or asks_cover(question)):
            return list(hits)
        documents = list(dict.fromkeys(h.chunk.document_id for h in hits))[:MAX_COVER_DOCUMENTS]
        cover = [h for d in documents for h in self.tables.page_hits(d, 1)]
        rows = {h.chunk.row for h in cover}
        return [*cover, *(h for h in hits if h.chunk.row not in rows)]

    def _with_scope(self, hits: Sequence[ChunkHit], allowed: Collection[str] | None) -> list[ChunkHit]:
        """`hits`, then a first chunk of each document of a small scope retrieval did not reach (a figure asked
        for each period reads every filing in scope, not only those retrieval ranked)."""
        if self.tables is None or allowed is None or len(allowed) > MAX_SCOPE_DOCUMENTS:
            return list(hits)
        seen = {h.chunk.document_id for h in hits}
        extra = [h for d in sorted(set(allowed) - seen) if (h := self.tables.first_hit(d)) is not None]
        return [*hits, *extra]

    def one_name(
        self,
        item: SectionInputs,
        contract: Contract | None,
        hits: Sequence[ChunkHit],
        kept: Sequence[ChunkHit],
        allowed: Collection[str] | None,
        query: str,
        avoid: AbstractSet[str],
        kind: ValueKind = "name",
    ) -> Read | None:
        """A question asking which firm or company: the first organisation's name (ending in its legal form) in
        the best sentences holding what is asked; another question asking for one name or a text (`kind`): the
        value a table gives under a caption naming what is asked ("Delaware (State or other jurisdiction of
        incorporation)"; `_fields`). None when there is none (the span floor then answers)."""
        if kind == "name" and asks_organisation(item.sub_question):
            sentences = offered_sentences(hits, self.max_chunk_chars, query)
            found = organisation_name(sentences, item.focus, avoid)
            step = "name:organisation"
        else:
            hits, _, fields = self._fields(item, hits, query)
            found = next(iter(fields), None)
            step = "name:field"
        if found is None:
            return None
        draft = Draft(found.name, (found.sentence.sentence_id,), "extracted")
        return self._read(item, draft, [found.sentence], [*kept, *hits], allowed, kind, found.name, step)

    def _fields(
        self, item: SectionInputs, hits: Sequence[ChunkHit], query: str
    ) -> tuple[list[ChunkHit], list[OfferedSentence], list[FoundName]]:
        """The hits and sentences a question asking for names or a field reads, and the values found under a
        caption naming what is asked (pipeline.answering.name_lists.field_names). The cover (each document's first
        page, where a report's form gives its fields) is read first when the question points at it, or when the
        retrieved sentences hold no such caption; the rest of the page a caption is found on is read too (a form's
        column goes on down its page, past the chunk retrieval found it in)."""
        head = head_terms(item.sub_question, item.terms, item.focus)
        hits = self._with_cover(item.sub_question, hits)
        sentences = offered_sentences(hits, self.max_chunk_chars, query)
        fields = field_names(sentences, item.terms, head)
        if self.tables is None:
            return hits, sentences, fields
        if not fields:
            covered = self._with_cover(item.sub_question, hits, always=True)
            found = field_names(offered_sentences(covered, self.max_chunk_chars, query), item.terms, head)
            if not found:
                return hits, sentences, fields
            hits, fields = covered, found
        chunk = fields[0].sentence.hit.chunk
        page = self.tables.page_hits(chunk.document_id, chunk.page)
        rows = {h.chunk.row for h in page}
        hits = [*page, *(h for h in hits if h.chunk.row not in rows)]
        sentences = offered_sentences(hits, self.max_chunk_chars, query)
        return hits, sentences, field_names(sentences, item.terms, head)

    def _guarded(
        self,
        figure: Figure,
        item: SectionInputs,
        hits: Sequence[ChunkHit],
        kept: Sequence[ChunkHit],
        allowed: Collection[str] | None,
    ) -> tuple[GuardedSection, str] | None:
        """The figure's section as the guards let it through (its page shown to the section), and its document's
        file name; None when the guards do not let it answer."""
        if self.tables is None:
            return None
        filename = next((h.filename for h in hits if h.chunk.document_id == figure.document_id), "")
        draft, evidence, page_hits = figure_evidence(figure, self.tables, filename)
        section = guard_section(
            item.index, draft, evidence, [*kept, *page_hits], allowed, None, self.generic, item.sub_question
        )
        return (section, filename) if section.status == "answered" else None


def line_typed_value(
    kind: ValueKind, item: SectionInputs, section: GuardedSection, contract: Contract | None
) -> TypedValue:
    """The typed value of a section answered from sentences (or not found)."""
    if section.status != "answered":
        return absent(kind, contract, section.reason)
    pages = _refs(section)
    if kind == "boolean":  # an answered line says yes: only where its sentence states the event
        stated = section.quotes[0].text if section.quotes else section.line
        refusal = yes_refused(item.sub_question, stated)
        if refusal is not None:
            return absent(kind, contract, f"a yes does not stand on its sentence: {refusal}")
    quoted = next((s for s in item.sentences if s.text and section.line in s.text), None)
    scale = scale_note(quoted.hit.chunk.text) if quoted else None
    # a line that fell back to its evidence sentence is read for the figure asked, never its first number
    whole = section.basis == "sentence"
    return line_value(kind, section.line, pages, contract, scale, sentence=whole, asked=item.kind)


def _row_read(figure: Figure, section: GuardedSection, traced: Callable[[LineTrace], LineTrace]) -> Read:
    """A yes/no section answered by a row: true when its figure for the period is not zero."""
    value = TypedValue(kind="boolean", value=reports_event(figure), as_written=section.line, pages=_refs(section))
    return section, value, traced


def _traced(step: str, proposed: str | None) -> Callable[[LineTrace], LineTrace]:
    """How a section's line trace reads when a typed step answered it."""

    def traced(line: LineTrace) -> LineTrace:
        return line.model_copy(update={"step": step, "proposed": proposed})

    return traced


def _refs(section: GuardedSection) -> tuple[SourceRef, ...]:
    """The pages a section's line is cited to, as a typed value's pages."""
    return tuple(SourceRef(document_id=s.document_id, filename=s.filename, page=s.page) for s in section.line_sources)
