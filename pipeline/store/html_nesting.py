"""Deep nesting taken out of HTML text before it is parsed: one pass over the tags, text kept.

The parser's cost grows faster than the square of the nesting (200,000 nested <div> took minutes), and the page
reader (pipeline.store.html) reads nothing below its MAX_DEPTH but text anyway, so tags nested deeper than a limit
are dropped from the text before the parser sees it.
"""

from __future__ import annotations

import re

# Elements that have no content (never nest), and those whose end tag a document may leave out (the parser
# closes them by itself, so they are not counted as nesting).
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
_OPTIONAL_END = frozenset(
    "p li dt dd tr td th option optgroup rb rt rtc rp colgroup caption thead tbody tfoot html head body".split()
)
_TAG_NAME = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:._-]*)")
_RAW_TEXT_END = {name: re.compile(rf"</{name}", re.IGNORECASE) for name in ("script", "style")}


def flatten_nesting(text: str, limit: int) -> tuple[str, int]:
    """(`text` with every tag nested deeper than `limit` taken out, their text kept; how many elements were),
    in one pass over the tags. Void elements and those whose end tag may be left out do not count as nesting;
    an end tag closes its element and any left open inside it; comments and script or style text are skipped."""
    kept: list[str] = []
    stack: list[str] = []
    dropped: dict[str, int] = {}
    flattened = 0
    position = copied = 0
    while True:
        start = text.find("<", position)
        if start < 0:
            break
        if text.startswith("<!--", start):
            close = text.find("-->", start + 4)
            position = len(text) if close < 0 else close + 3
            continue
        match = _TAG_NAME.match(text, start)
        if match is None:
            position = start + 1
            continue
        close = text.find(">", match.end())
        if close < 0:
            break
        closing, name = match.group(1) == "/", match.group(2).lower()
        end = close + 1
        drop = False
        if not closing and name not in _VOID and name not in _OPTIONAL_END and text[close - 1] != "/":
            if len(stack) >= limit:
                dropped[name] = dropped.get(name, 0) + 1
                drop = True
            else:
                stack.append(name)
                if name in ("script", "style"):
                    raw_end = _RAW_TEXT_END[name].search(text, end)
                    end = len(text) if raw_end is None else raw_end.start()
        elif closing and dropped.get(name):
            dropped[name] -= 1
            drop = True
        elif closing and name in stack:
            while stack.pop() != name:
                pass
        if drop:
            kept.append(text[copied:start])
            kept.append(" ")
            copied = end
            flattened += not closing
        position = end
    if not flattened:
        return text, 0
    kept.append(text[copied:])
    return "".join(kept), flattened
