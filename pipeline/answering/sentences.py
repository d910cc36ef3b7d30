"""What an answer may quote: the kept chunks split into sentences, a table's flattened text split into its
rows, ranked best match to the sub-question first and numbered for the LM (pure functions). A section's heading
("6. Governing law.") is no sentence of its own: each sentence of its body carries it
(pipeline.answering.headings)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.answering.headings import is_heading, section_bodies
from pipeline.escapes import citation_label, defuse_field_markers
from pipeline.retrieval.bm25 import BM25Index
from pipeline.text import split_sentences, tokens
from pipeline.types import ChunkHit
from pipeline.values.quantities import find_days
from signatures.models import NumberedSentence

# Sentences offered per section: enough for six kept chunks, bounded so the prompt stays small.
MAX_SENTENCES = 48
# A cell of a table: an amount or a percentage; a dash for nil or a currency sign or percent sign
# standing alone is a cell beside another cell.
_CELL = re.compile(r"^[$€£¥]?\(?[-−–]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)\)?%?,?$")
_SIGN = re.compile(r"^[-−–—$€£¥%]$")
# A sentence reads as a table once it holds this many rows of at least two cells (columns): a list of
# "Label: value" pairs or a clause with a few amounts is prose.
MIN_TABLE_RUNS = 2


@dataclass(frozen=True)
class OfferedSentence:
    """One sentence offered for a section, the chunk it comes from, and the heading of the section it is in
    ("" before any heading)."""

    sentence_id: int
    text: str
    hit: ChunkHit
    heading: str = ""

    @property
    def with_heading(self) -> str:
        """The sentence read with its section's heading: what it is about ("Governing law This Agreement is
        governed by ..."); a value is taken from its own text only."""
        return f"{self.heading} {self.text}" if self.heading else self.text


def table_rows(sentence: str) -> list[str]:
    """`sentence` split into table rows ("Total net sales 117,154 123,945") when it is a table's flattened text:
    each row is a label followed by its run of cells; dates stay in labels. Prose is returned whole."""
    words = sentence.split()
    in_date = [False] * len(words)
    offsets, position = [], 0
    for word in words:
        position = sentence.index(word, position)
        offsets.append(position)
        position += len(word)
    for start, end, _ in find_days(sentence):
        for i, offset in enumerate(offsets):
            if start <= offset < end:
                in_date[i] = True
    cell = [bool(_CELL.match(w)) and not in_date[i] for i, w in enumerate(words)]
    for i, word in enumerate(words):
        beside = (i > 0 and cell[i - 1]) or (i + 1 < len(words) and cell[i + 1])
        cell[i] = cell[i] or (bool(_SIGN.match(word)) and beside)
    runs = sum(
        1
        for i, c in enumerate(cell)
        if c and (i == 0 or not cell[i - 1]) and i + 1 < len(cell) and cell[i + 1] and _CELL.match(words[i + 1])
    )
    if runs < MIN_TABLE_RUNS:
        return [sentence]
    rows: list[list[int]] = [[]]
    for i in range(len(words)):
        if not cell[i] and i > 0 and cell[i - 1]:
            rows.append([])
        rows[-1].append(i)
    out: list[str] = []
    for row in rows:
        # column headings (dates) before a row's label are a piece of their own
        dated = [i for i in row if in_date[i] and not any(cell[j] for j in row if j < i)]
        cut = dated[-1] + 1 if dated else row[0]
        if cut > row[0] and cut < row[-1] and not cell[cut]:
            out.append(" ".join(words[i] for i in row if i < cut))
        out.append(" ".join(words[i] for i in row if i >= cut))
    return [row for row in out if row]


# Markdown structure flattened into one line: a heading, a table row boundary, a list item.
_HEADING = re.compile(r"(?:^|\s)#{1,6}\s+")
_ROW_BOUNDARY = re.compile(r"\|\s+\|")
_SEPARATOR_ROW = re.compile(r"^[\s|:-]*$")
_LIST_ITEM = re.compile(r"\s+[-*•]\s+(?=[A-Z0-9])")


def structure_pieces(text: str) -> list[str]:
    """`text` cut where its Markdown structure was: at headings, list items and table rows (a row becomes
    "cell | cell", a separator row goes), so a table of "Item | Detail" pairs reads as one pair per piece."""
    pieces: list[str] = []
    for block in _HEADING.split(text):
        for item in _LIST_ITEM.split(block):
            if item.count("|") < 2:
                pieces.append(item)
                continue
            for row in _ROW_BOUNDARY.split(item):
                cells = [c.strip() for c in row.strip().strip("|").split("|")]
                if not _SEPARATOR_ROW.match("|".join(cells)):
                    pieces.append(" | ".join(c for c in cells if c))
    return [p.strip() for p in pieces if p.strip()]


def offered_sentences(chunks: Sequence[ChunkHit], max_chars: int, question: str | None = None) -> list[OfferedSentence]:
    """The sentences (a table's rows one by one) of each chunk's first `max_chars` characters (a sentence
    repeated word for word, or held inside a longer offered one, is offered once), numbered from 0: in chunk
    order, or, given the section's `question`, best BM25 match to it first (ties keep chunk order).
    At most MAX_SENTENCES."""
    found: list[tuple[str, ChunkHit, str]] = []
    seen: set[tuple[str, str]] = set()
    for hit in chunks:
        sentences = [s for piece in structure_pieces(hit.chunk.text[:max_chars]) for s in split_sentences(piece)]
        for sentence, heading in zip(sentences, section_bodies(sentences), strict=True):
            if is_heading(sentence):
                continue  # a heading states nothing: its words go with its body
            for row in table_rows(sentence):
                if (hit.chunk.document_id, row) not in seen:
                    seen.add((hit.chunk.document_id, row))
                    found.append((row, hit, heading))
    # A sentence cut by a chunk boundary ("Deposit 2.1 ..." after "2. Deposit 2.1 ...") is offered once,
    # whole: one held inside another offered sentence of the same document is left out (another document
    # stating the same is offered too: it may be the one to cite).
    folded = [(hit.chunk.document_id, f" {' '.join(tokens(text))} ") for text, hit, _ in found]
    found = [
        entry
        for i, entry in enumerate(found)
        if not any(
            i != j and doc == folded[i][0] and len(other) > len(folded[i][1]) and folded[i][1] in other
            for j, (doc, other) in enumerate(folded)
        )
    ]
    if question is not None and len(found) > 1:
        # a body sentence matches a question naming its heading ("Which law governs ...": "Governing law")
        scores = BM25Index.build([f"{heading} {text}" for text, _, heading in found]).scores(question)
        order = sorted(range(len(found)), key=lambda i: -float(scores[i]))
        found = [found[i] for i in order]
    return [OfferedSentence(i, text, hit, heading) for i, (text, hit, heading) in enumerate(found[:MAX_SENTENCES])]


def numbered(sentences: Sequence[OfferedSentence]) -> list[NumberedSentence]:
    """The sentences as the LM is shown them: id, source label, text (field markers defused)."""
    return [
        NumberedSentence(
            sentence_id=s.sentence_id,
            source=citation_label(s.hit.filename, s.hit.chunk.page),
            text=defuse_field_markers(s.text),
        )
        for s in sentences
    ]
