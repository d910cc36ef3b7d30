"""Yes/no questions judged by the LM, statement by statement (signatures.judge_claim), and what code makes of its
verdicts (pure functions: the LM call is passed in).

The floor this step stands beside is FLOOR (pipeline.answering.claims): a table row reporting the event, else a
sentence stating it as a fact, else the question's absent value. The judge reads the same evidence:

- Candidates: the table row the figure reader found for the question (if any), then up to MAX_SENTENCES sentences
  of the retrieved evidence, best-ranked first, holding at least MIN_SHARE of the question's event words
  (claims.claim_terms). One short call per candidate, in that order, stopping at the first "yes".
- Checks: a verdict counts only if it is one of VERDICTS and was given for a statement that was offered.
- Decision: the first "yes" decides. On a sentence it answers True, cited to that sentence through the usual
  guards; on a row it leaves the value to the row's figure (claims' reading: not zero, True). No "yes": the
  question's absent value, with the verdicts in the trace. A call that gives nothing usable (an LM error,
  unparseable output, a verdict that does not count): the floor answers, and the trace says why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pipeline.answering.sentences import OfferedSentence
from pipeline.answering.terms import held_terms

FLOOR = "claims"
VERDICTS = ("yes", "no", "not stated")
# Sentences judged after the row, and the share of the question's event words each must hold.
MAX_SENTENCES = 3
MIN_SHARE = 0.5
# Sentences looked through for candidates, best-ranked first (claims.READ reads as many).
READ = 24
# Characters of a statement shown to the LM: one sentence or one row, never a chunk.
MAX_STATEMENT_CHARS = 400
ROW = 0


@dataclass(frozen=True)
class Statement:
    """One candidate the LM judges: its number (ROW for the table row, 1, 2, ... for sentences), the text it is
    shown, and the sentence it is (None for the row)."""

    number: int
    text: str
    sentence: OfferedSentence | None = None

    @property
    def label(self) -> str:
        """How the trace names it."""
        return "row" if self.sentence is None else f"sentence {self.sentence.sentence_id}"


@dataclass(frozen=True)
class Verdict:
    """What the LM said of one statement (its number), as it said it."""

    statement: int
    word: str


@dataclass(frozen=True)
class Decision:
    """The statement judged "yes" (None: none was), the verdicts that counted, in order, and why the floor answers
    instead (None: the judge decided)."""

    yes: Statement | None = None
    verdicts: tuple[Verdict, ...] = ()
    floor: str | None = None

    def summary(self, offered: Sequence[Statement]) -> str:
        """The verdicts as the trace records them ("row: no; sentence 4: yes"); "no statement to judge" when none
        was offered."""
        labels = {s.number: s.label for s in offered}
        said = "; ".join(f"{labels.get(v.statement, v.statement)}: {v.word}" for v in self.verdicts)
        return said or ("no statement to judge" if not offered else "no verdict")


def row_statement(label: str, value: str, column: str | None) -> str:
    """A table row as the LM is shown it: "label: value (column)"."""
    shown = f"{label}: {value}" + (f" ({column})" if column else "")
    return shown[:MAX_STATEMENT_CHARS]


def candidates(row: str | None, sentences: Sequence[OfferedSentence], terms: Sequence[str]) -> list[Statement]:
    """What the LM judges, in order: the row (when the figure reader found one), then the first MAX_SENTENCES of
    the best-ranked READ sentences holding at least MIN_SHARE of the event's `terms` (none without terms)."""
    offered = [] if row is None else [Statement(ROW, row)]
    if not terms:
        return offered
    wanted = frozenset(terms)
    held = [s for s in sentences[:READ] if len(held_terms(s.text, wanted)) >= MIN_SHARE * len(wanted)]
    for number, sentence in enumerate(held[:MAX_SENTENCES], start=1):
        offered.append(Statement(number, sentence.text[:MAX_STATEMENT_CHARS], sentence))
    return offered


def decide(offered: Sequence[Statement], verdicts: Sequence[Verdict]) -> Decision:
    """The decision the verdicts given so far make (see the module docstring): the first counted "yes", else none;
    the floor's turn at the first verdict that does not count."""
    by_number = {s.number: s for s in offered}
    counted: list[Verdict] = []
    for verdict in verdicts:
        statement = by_number.get(verdict.statement)
        if statement is None:
            return Decision(None, tuple(counted), f"a verdict for statement {verdict.statement}, which was not offered")
        word = " ".join(verdict.word.split()).lower()
        if word not in VERDICTS:
            return Decision(None, tuple(counted), f"verdict {verdict.word[:40]!r} is none of {', '.join(VERDICTS)}")
        counted.append(Verdict(verdict.statement, word))
        if word == "yes":
            return Decision(statement, tuple(counted))
    return Decision(None, tuple(counted))


def judge(offered: Sequence[Statement], ask: Callable[[Statement], Verdict | None]) -> Decision:
    """The decision over `offered`, asking `ask` (one LM call) about each in turn until one is judged "yes" or a
    verdict does not count; `ask` gives None when the call gave nothing usable (the floor then answers)."""
    verdicts: list[Verdict] = []
    for statement in offered:
        verdict = ask(statement)
        if verdict is None:
            return Decision(None, decide(offered, verdicts).verdicts, f"no verdict for the {statement.label}")
        verdicts.append(verdict)
        decision = decide(offered, verdicts)
        if decision.yes is not None or decision.floor is not None:
            return decision
    return decide(offered, verdicts)
