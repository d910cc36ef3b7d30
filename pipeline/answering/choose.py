"""An answer line chosen by the LM among the span floor's candidates (signatures.choose_answer), and what code
makes of its choice (pure functions: the LM call is passed in).

The floor this step stands beside is FLOOR (pipeline.answering.floors.span_line): the first of the span floor's
ranked candidates. The LM reads the same candidates and never writes a value:

- Candidates: up to MAX_CANDIDATES of `floors.span_choices` (each from another sentence, with another text), each
  shown as its answer and the sentence it was read from, cut to MAX_SENTENCE_CHARS. Fewer than two: no call.
- Checks: a choice counts only if it is the number of a candidate offered, or NONE.
- Decision: the chosen candidate is the answer line (cited to its sentence through the usual guards). NONE, or a
  choice that does not count, or no choice (an LM error, unparseable output): the floor's first candidate, and
  the trace says why. Abstaining stays the support floor's call: a small model's "none" is not evidence of
  absence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pipeline.answering.floors import Draft
from pipeline.answering.sentences import OfferedSentence

FLOOR = "span"
MAX_CANDIDATES = 4
# Characters of a candidate's sentence shown to the LM.
MAX_SENTENCE_CHARS = 240
NONE = 0


@dataclass(frozen=True)
class Choice:
    """The answer line (the floor's first candidate when the LM's choice does not count), and why the floor
    answers instead (None: the LM chose)."""

    draft: Draft
    floor: str | None = None


def shown(candidates: Sequence[Draft], sentences: Sequence[OfferedSentence]) -> str:
    """The candidates as the LM reads them: "1. <answer> | from: <sentence>", one per line."""
    by_id = {s.sentence_id: s for s in sentences}
    lines = []
    for number, draft in enumerate(candidates, start=1):
        source = by_id.get(draft.evidence[0]) if draft.evidence else None
        text = " ".join((source.text if source else draft.text).split())
        cut = text if len(text) <= MAX_SENTENCE_CHARS else text[:MAX_SENTENCE_CHARS].rsplit(" ", 1)[0] + " …"
        lines.append(f"{number}. {' '.join(draft.text.split())} | from: {cut}")
    return "\n".join(lines)


def decide(candidates: Sequence[Draft], choice: object) -> Choice:
    """The line `choice` (the LM's output) makes among `candidates` (at least one; the first is the floor's)."""
    floor = candidates[0]
    if isinstance(choice, bool) or not isinstance(choice, int):
        return Choice(floor, f"choice {str(choice)[:40]!r} is not a number")
    if choice == NONE:
        return Choice(floor, "the LM chose none; abstaining is the support floor's call")
    if not 1 <= choice <= len(candidates):
        return Choice(floor, f"choice {choice} was not offered (1-{len(candidates)})")
    return Choice(candidates[choice - 1])


def choose(
    candidates: Sequence[Draft], sentences: Sequence[OfferedSentence], ask: Callable[[str], object | None]
) -> Choice | None:
    """The line chosen among `candidates` by `ask` (one LM call given the shown candidates; None when the call
    gave nothing usable); None when there is nothing to choose (no candidate)."""
    if not candidates:
        return None
    if len(candidates) < 2:
        return Choice(candidates[0])
    given = ask(shown(candidates, sentences))
    if given is None:
        return Choice(candidates[0], "no choice from the LM")
    return decide(candidates, given)
