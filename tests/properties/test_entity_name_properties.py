"""Properties (hypothesis) of entity names (pipeline/entities.py, pipeline/guards/entity_gate.py): the skeleton
and the mentions found are the same under disguise (look-alike letters, accents, spacing), the gate neither hides
nor lets in a property by a disguise, and no random text crashes the matcher.

Each property is one `check_*` function turned into two tests by `fast_and_slow` (tests/support/properties.py):
`test_*` runs 50 examples in the default run, `test_*_slow` 1,000 under `-m slow`; both derandomized, no
example database.

Not repeated here: the gate never keeping a summary that names only another property with a/o/e look-alikes
(test_entity_gate.py).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from pipeline.entities import find_entity_mentions, scan_addresses, skeleton, tokenize
from pipeline.guards.entity_gate import chunk_backstop, gate, gate_inputs, judge_document
from pipeline.settings import EntityGateConfig
from pipeline.types import Chunk, ChunkHit, Document, Entity
from tests.support.properties import ANY_TEXT, ZERO_WIDTH, fast_and_slow
from tests.support.vocabulary import demo_vocabulary_with

BANDA_LANE = Entity("e-bl", "banda-lane", "Banda Lane", ("14 Banda Lane", "Hardy Banda Lane", "L.R. NO: 1160/88"))
BANDA_ROAD = Entity("e-br", "banda-road", "Banda Road", ("7 Banda Road", "L.R. NO: 1160/880"))
DIK_DIK = Entity("e-dd", "dik-dik-lane", "Dik Dik Lane", ("3 Dik Dik Lane", "Nzohe Gardens", "L.R. NO: 2327/30"))
KAREN_RIDGE = Entity("e-kr", "karen-ridge", "Karen Ridge", ("22 Karen Ridge",))
KAREN_COURT = Entity("e-krc", "karen-ridges-court", "Karen Ridges Court", ("Townhouse 5, Karen Ridges Court",))
MELLIFERA = Entity("e-mg", "mellifera-gardens", "Mellifera Gardens", ("House 9, Mellifera Gardens",))
ENTITIES = {e.entity_id: e for e in (BANDA_LANE, BANDA_ROAD, DIK_DIK, KAREN_RIDGE, KAREN_COURT, MELLIFERA)}
GATE_CONFIG = EntityGateConfig()
VOCABULARY = demo_vocabulary_with("langata")
# Lower-case words that name no entity and cannot start a "<Word> Lane" address.
FILLER = st.lists(
    st.sampled_from(["lease", "of", "the", "valuation", "tenant", "ksh", "120,000", "dated", "report", "by", "per"]),
    max_size=6,
).map(" ".join)
SEPARATORS = st.sampled_from([" ", ", ", "; ", "\n", " (", ") ", ". "])
# Well-known confusables, each in the case of the Latin letter it imitates.
LOOKALIKES = {
    "a": "\u0430\u0251\u03b1",
    "c": "\u0441",
    "d": "\u0501",
    "e": "\u0435",
    "g": "\u0261",
    "h": "\u04bb",
    "i": "\u0456\u0131\u03b9",
    "j": "\u0458",
    "k": "\u03ba",
    "l": "\u04cf",
    "o": "\u043e\u03bf",
    "p": "\u0440\u03c1",
    "s": "\u0455",
    "u": "\u03c5",
    "x": "\u0445\u03c7",
    "y": "\u0443",
    "A": "\u0410\u0391",
    "B": "\u0412\u0392",
    "C": "\u0421",
    "E": "\u0415\u0395",
    "H": "\u041d\u0397",
    "I": "\u0406\u0399",
    "J": "\u0408",
    "K": "\u041a\u039a",
    "M": "\u041c\u039c",
    "N": "\u039d",
    "O": "\u041e\u039f",
    "P": "\u0420\u03a1",
    "S": "\u0405",
    "T": "\u0422\u03a4",
    "X": "\u0425\u03a7",
    "Y": "\u0423\u03a5",
    "Z": "\u0396",
}
ACCENTS = ("\u0300", "\u0301", "\u0302", "\u0303", "\u0308", "\u030a", "\u030c", "\u0327")
ASCII_TEXT = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=60)


@st.composite
def disguised(draw: st.DrawFn, text: str) -> str:
    """`text` as typed or pasted to dodge a filter: per character maybe a case change, then one of full-width
    form, look-alike letter or accent, and sometimes an invisible character before it."""
    out = []
    ops = draw(st.lists(st.integers(0, 7), min_size=len(text), max_size=len(text)))
    for char, op in zip(text, ops, strict=True):
        if char.isascii() and char.isalpha() and op & 1:
            char = char.swapcase()
        kind = op >> 1
        if kind == 1 and "!" <= char <= "~":
            char = chr(ord(char) + 0xFEE0)
        elif kind == 2 and char in LOOKALIKES:
            char = draw(st.sampled_from(LOOKALIKES[char]))
        elif kind == 3 and char.isalpha():
            char += draw(st.sampled_from(ACCENTS))
        if draw(st.integers(0, 5)) == 5:
            char = draw(st.sampled_from(ZERO_WIDTH)) + char
        out.append(char)
    return "".join(out)


@st.composite
def plain_and_disguised(draw: st.DrawFn, texts: st.SearchStrategy[str]) -> tuple[str, str]:
    text = draw(texts)
    return text, draw(disguised(text))


def check_skeleton_is_invariant_under_disguise(pair: tuple[str, str]) -> None:
    """skeleton() of ASCII text is unchanged by case changes, full-width forms, Cyrillic/Greek look-alikes,
    accents and zero-width characters, alone or mixed."""
    text, disguise = pair
    assert skeleton(disguise) == skeleton(text)


test_skeleton_is_invariant_under_disguise, test_skeleton_is_invariant_under_disguise_slow = fast_and_slow(
    check_skeleton_is_invariant_under_disguise, pair=plain_and_disguised(ASCII_TEXT)
)


@st.composite
def texts_naming(draw: st.DrawFn, entities: Sequence[Entity], min_names: int = 0) -> tuple[str, list[str]]:
    """Filler text with names and aliases of `entities` between the words, and the ids of those named."""
    parts, named = [draw(FILLER)], []
    for _ in range(draw(st.integers(min_names, 3))):
        entity = draw(st.sampled_from(list(entities)))
        parts += [draw(SEPARATORS), draw(st.sampled_from(entity.names)), draw(SEPARATORS), draw(FILLER)]
        named.append(entity.entity_id)
    return "".join(parts), named


@st.composite
def named_and_disguised(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    text, named = draw(texts_naming(list(ENTITIES.values())))
    return text, draw(disguised(text)), named


def _mentions(text: str) -> list[tuple[str | None, int, int]]:
    return [(m.entity_id, m.start, m.end) for m in find_entity_mentions(text, list(ENTITIES.values()), VOCABULARY)]


def check_entity_mentions_are_invariant_under_disguise(case: tuple[str, str, list[str]]) -> None:
    """find_entity_mentions finds every property named in a text, and finds the same properties at the same
    word positions once the text is disguised (case, full-width, look-alikes, accents, invisibles)."""
    text, disguise, named = case
    found = _mentions(text)
    assert set(named) <= {entity_id for entity_id, _, _ in found}
    assert _mentions(disguise) == found


test_entity_mentions_are_invariant_under_disguise, test_entity_mentions_are_invariant_under_disguise_slow = (
    fast_and_slow(check_entity_mentions_are_invariant_under_disguise, case=named_and_disguised())
)


@st.composite
def gate_cases(draw: st.DrawFn) -> tuple[Entity, str, bool]:
    """(asked entity, disguised summary, whether the summary names the asked entity) where the summary names
    either only the asked entity or only other properties."""
    asked = draw(st.sampled_from(list(ENTITIES.values())))
    names_asked = draw(st.booleans())
    pool = [asked] if names_asked else [e for e in ENTITIES.values() if e is not asked]
    text, _ = draw(texts_naming(pool, min_names=1))
    return asked, draw(disguised(text)), names_asked


def check_disguise_neither_hides_nor_smuggles_a_property(case: tuple[Entity, str, bool]) -> None:
    """A summary naming only other properties is excluded (hard, never relaxed back) however its names are
    disguised, and a summary naming only the asked property is kept however that name is disguised."""
    asked_entity, summary, names_asked = case
    asked, others = gate_inputs([asked_entity.entity_id], ENTITIES)
    document = Document("d1", "doc.pdf", "x/doc.pdf", "doc.pdf", summary, "lease", 1)
    verdict = judge_document(document, asked, others, GATE_CONFIG, VOCABULARY)
    kept = gate([document], asked, others, GATE_CONFIG, VOCABULARY).kept_ids
    if names_asked:
        assert verdict.keep and verdict.entity_in_summary and kept == ("d1",), verdict
    else:
        assert verdict.hard and "entity_not_in_summary" in verdict.reasons and kept == (), verdict


test_disguise_neither_hides_nor_smuggles_a_property, test_disguise_neither_hides_nor_smuggles_a_property_slow = (
    fast_and_slow(check_disguise_neither_hides_nor_smuggles_a_property, case=gate_cases())
)


def _assert_spans(mentions: Sequence[Any], words: int) -> None:
    spans = [(m.start, m.end) for m in mentions]
    assert spans == sorted(spans)
    assert all(0 <= start < end <= words for start, end in spans)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def check_entity_matching_never_crashes_on_random_text(text: str, asked_id: str) -> None:
    """Any text (any code point, lone surrogates, look-alikes, names) goes through the matcher, the gate and
    the chunk backstop without an exception; mentions are ordered, non-overlapping word spans; and text
    around the asked property's name never hides it."""
    asked, others = gate_inputs([asked_id], ENTITIES)
    words = len(tokenize(text))
    scan = scan_addresses(text, asked, others, VOCABULARY)
    _assert_spans(sorted((*scan.asked, *scan.others), key=lambda m: (m.start, m.end)), words)
    _assert_spans(find_entity_mentions(text, list(ENTITIES.values()), VOCABULARY), words)
    document = Document("d1", text[:50], "x", text[:80], text, "lease", 1, (asked_id,))
    gate([document], asked, others, GATE_CONFIG, VOCABULARY)
    chunk_backstop([ChunkHit(Chunk(0, "d1", 1, 0, text), "doc.pdf", 1.0)], asked, others, VOCABULARY)
    assert scan_addresses(f"{text}\n. {asked[0].name}", asked, others, VOCABULARY).asked


RANDOM_TEXT = st.one_of(
    ANY_TEXT,
    st.lists(st.one_of(ANY_TEXT, st.sampled_from([n for e in ENTITIES.values() for n in e.names])), max_size=5).map(
        " ".join
    ),
    st.builds(lambda pair: pair[1], plain_and_disguised(ASCII_TEXT)),
)
test_entity_matching_never_crashes_on_random_text, test_entity_matching_never_crashes_on_random_text_slow = (
    fast_and_slow(
        check_entity_matching_never_crashes_on_random_text, text=RANDOM_TEXT, asked_id=st.sampled_from(sorted(ENTITIES))
    )
)
