"""The legal forms that end organisations' names, which people leave out or write otherwise ("Inc.",
"LLC", "Co., Ltd.", "Corporation"): names are matched with and without them."""

from __future__ import annotations

from collections.abc import Sequence

# Legal forms that end an organisation's name and that people leave out when they write it ("Inc.",
# "LLC", "Co., Ltd.", "Corporation"): a name is also matched without them.
LEGAL_FORMS = frozenset(
    {"inc", "incorporated", "corp", "corporation", "co", "ltd", "limited", "llc", "plc", "lp", "llp", "gmbh", "ag"}
    | {"sa", "nv", "bv", "pty", "sarl", "srl"}
)
# Legal forms written with dots, as their letters ("L.L.C.", "S.A.", "N.V.").
_DOTTED_FORMS = (("l", "l", "c"), ("l", "l", "p"), ("l", "p"), ("s", "a"), ("n", "v"), ("b", "v"), ("p", "l", "c"))


def without_legal_form(words: Sequence[str]) -> tuple[str, ...]:
    """Skeleton words of a name without the legal forms that end it ("halcyon resorts inc" -> "halcyon
    resorts"); the words unchanged when nothing else would remain."""
    out = tuple(words)
    while out:
        dotted = next((f for f in _DOTTED_FORMS if out[-len(f) :] == f and len(out) > len(f)), None)
        if dotted is not None:
            out = out[: -len(dotted)]
        elif out[-1] in LEGAL_FORMS and len(out) > 1:
            out = out[:-1]
        else:
            break
    return out if any(not w.isdigit() for w in out) else tuple(words)
