"""The options guard: a question that asks which of the names it quotes ("Which company had a higher inventories:
"A", "B" or "C"?") is answered by one of those names or not at all. A name read elsewhere on the page (a street
in an address, a heading) is no answer to it, whatever the floor that proposed it.
"""

from __future__ import annotations

import re

from pipeline.entities import contains_term
from pipeline.intake.comparison import QUOTED_NAME

# A question choosing among names: it opens with which or who.
_CHOOSES = re.compile(r"^\s*(?:which|who)\b", re.IGNORECASE)


def offered_names(question: str) -> tuple[str, ...]:
    """The names a question asks to choose among: two or more in quotes after a leading which or who; () else."""
    if not _CHOOSES.match(question):
        return ()
    names = tuple(dict.fromkeys(n.strip() for n in QUOTED_NAME.findall(question) if n.strip()))
    return names if len(names) >= 2 else ()


def outside_options(answer: str, names: tuple[str, ...]) -> str | None:
    """Why `answer` cannot stand for a question offering `names`: it holds none of them and is part of none
    ("QuidelOrtho" for "QUIDELORTHO CORPORATION"; whole words, case and accents folded); None when it names one,
    or when no names are offered."""
    if not names:
        return None
    if any(contains_term(answer, name) or contains_term(name, answer) for name in names):
        return None
    return f"the answer names none of the question's options ({', '.join(names)})"
