"""Property tests (hypothesis) of everything that parses or guards untrusted input.

Document ids (pipeline/ids.py, pipeline/guards/ids.py, pipeline/scope.py), entity names (pipeline/entities.py,
pipeline/guards/entity_gate.py), trace files (pipeline/traces.py), prompt profiles (pipeline/profiles.py), and
request bodies the HTTP app must refuse with JSON, not a 500 (pipeline/serving/app.py).

Each property is one `check_*` function turned into two tests by `fast_and_slow`: `test_*` runs FAST (50
examples) in the default run, `test_*_slow` runs SLOW (1,000 examples) under `-m slow`. Both are derandomized
and keep no example database, so every machine runs the same examples.

    .venv/bin/pytest -q tests/test_fuzz_properties.py            # the fast variants
    .venv/bin/pytest -q -m slow tests/test_fuzz_properties.py    # the slow variants

Not repeated here (already properties elsewhere): normaliser idempotence over Steps objects (test_scope.py),
the gate never keeping a summary that names only another property with a/o/e look-alikes
(test_entity_gate.py), and only in-scope ids reaching the store (test_executor.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import io
import itertools
import json
import re
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy
import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from pipeline.entities import find_entity_mentions, scan_addresses, skeleton, tokenize
from pipeline.errors import ExamplesError, ProfileError, ScopeRagError
from pipeline.evaluation.examples import (
    CASES,
    MAX_LINE_BYTES,
    LabelledExample,
    load_example_set,
    load_examples,
    make_example,
    write_examples,
)
from pipeline.export import MANIFEST, PROGRAM, PROMPTS, canonical_json, read_export, render_prompts
from pipeline.export.jsonio import sha256_hex
from pipeline.export.profiles import (
    NAME_PATTERN,
    REGISTRY_FORMAT,
    ProfilePaths,
    active_profile,
    add_profile,
    export_profile,
    import_profile,
    list_profiles,
    profile_json,
)
from pipeline.guards.entity_gate import chunk_backstop, gate, gate_inputs, judge_document
from pipeline.guards.ids import filter_document_ids, is_canonical_uuid, resolve_step_references, step_reference
from pipeline.intake.scope import NO_SCOPE, Scope
from pipeline.program.module import ScopedQA
from pipeline.serving import create_app
from pipeline.serving.schemas import QueryRequest
from pipeline.settings import EntityGateConfig
from pipeline.store import open_store
from pipeline.store.embedders import HashEmbedder
from pipeline.types import Chunk, ChunkHit, Document, Entity
from tests.support.fakes import cooperative, scripted_lm
from tests.support.properties import (
    JSON_VALUES,
    edit_a_predictor,
    mutated_bytes,
    mutated_json,
    save_sample_export,
)
from tests.support.vocabulary import demo_vocabulary_with

# -- one body, two runs ---------------------------------------------------------------------------

_COMMON = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
FAST = settings(_COMMON, max_examples=50)
SLOW = settings(_COMMON, max_examples=1000)

Check = Callable[..., None]


def fast_and_slow(check: Check, **strategies: st.SearchStrategy[Any]) -> tuple[Check, Check]:
    """`check` as a FAST test for the default run and a SLOW one marked `slow` (same body, same strategies)."""
    fast = FAST(given(**strategies)(check))
    slow = pytest.mark.slow(SLOW(given(**strategies)(check)))
    return fast, slow


# -- shared strategies ----------------------------------------------------------------------------

# Hand-made JSON that strict parsers must refuse and lenient ones accept.
RAW_JSON_TRAPS = (
    b'{"format": "a", "format": "b"}',
    b'{"note": NaN}',
    b'{"note": -Infinity}',
    b'{"note": 1e999}',
    b'{"note": "\\ud800"}',
    b'{"note": ' + b"9" * 5000 + b"}",
    b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 3000 + b"1" + b"}" * 3000,
    b"\xef\xbb\xbf{}",
    b"{}\x00",
    b"",
)
ANY_TEXT = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(["\ud800", "\udfff", "\u200b", "\ufeff"])))


# == 1. document ids ==============================================================================


def _uuid(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"fuzz-{name}"))


IN_SCOPE = tuple(_uuid(f"in-{i}") for i in range(3))
OUT_OF_SCOPE = tuple(_uuid(f"out-{i}") for i in range(3))
CATALOG = frozenset(IN_SCOPE + OUT_OF_SCOPE)
PROPERTY_A, PROPERTY_B = _uuid("property-a"), _uuid("property-b")
OWNED = {PROPERTY_A: [IN_SCOPE[0], IN_SCOPE[1]], PROPERTY_B: [OUT_OF_SCOPE[0], OUT_OF_SCOPE[1]]}
HEX_LETTERS, DIGITS = "abcdef", "0123456789"
WHITESPACE = (" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x85", "\u00a0", "\u2003", "\u2028", "\u3000")
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")
# The "0" of other scripts: int() and so uuid.UUID() read them as digits.
OTHER_ZEROS = ("\u0660", "\u06f0", "\u0966", "\u09e6", "\uff10", "\U0001d7ce")
DASHES = ("\u2010", "\u2011", "\u2012", "\u2013", "\u2212", "\ufe63", "\uff0d")
HEX_LOOKALIKES = {"a": "\u0430\u03b1", "c": "\u0441\u217d", "e": "\u0435", "d": "\u0501", "0": "Oo\u043e", "1": "lI"}


def resolver(entity_id: str) -> list[str]:
    return list(OWNED.get(entity_id, []))


def _canonical_form(value: object) -> bool:
    """Oracle independent of the project: a str that uuid.UUID() parses and prints back unchanged."""
    if not isinstance(value, str):
        return False
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        return False
    return str(parsed) == value


def _replace_at(draw: st.DrawFn, value: str, chars: str, make: Callable[[str], str]) -> str:
    at = draw(st.sampled_from([i for i, c in enumerate(value) if c in chars]))
    return value[:at] + make(value[at]) + value[at + 1 :]


def _insert_at(draw: st.DrawFn, value: str, piece: str) -> str:
    at = draw(st.integers(0, len(value)))
    return value[:at] + piece + value[at:]


ID_MUTATIONS: dict[str, Callable[[st.DrawFn, str], str]] = {
    "upper": lambda draw, v: v.upper(),
    "upper_one": lambda draw, v: _replace_at(draw, v, HEX_LETTERS, str.upper),
    "braces": lambda draw, v: "{" + v + "}",
    "urn": lambda draw, v: draw(st.sampled_from(["urn:uuid:", "URN:UUID:", "uuid:"])) + v,
    "no_hyphens": lambda draw, v: v.replace("-", ""),
    "one_hyphen_dropped": lambda draw, v: _replace_at(draw, v, "-", lambda c: ""),
    "padded": lambda draw, v: draw(st.sampled_from(WHITESPACE)) + v if draw(st.booleans()) else v + " ",
    "trailing_whitespace": lambda draw, v: v + draw(st.sampled_from(WHITESPACE)),
    "unicode_digit": lambda draw, v: _replace_at(
        draw, v, DIGITS, lambda c: chr(ord(draw(st.sampled_from(OTHER_ZEROS))) + int(c))
    ),
    "fullwidth": lambda draw, v: _replace_at(draw, v, HEX_LETTERS + DIGITS + "-", lambda c: chr(ord(c) + 0xFEE0)),
    "zero_width": lambda draw, v: _insert_at(draw, v, draw(st.sampled_from(ZERO_WIDTH))),
    "combining": lambda draw, v: _insert_at(draw, v, draw(st.sampled_from(["\u0301", "\u0308", "\u20dd"]))),
    "lookalike": lambda draw, v: _replace_at(
        draw, v, "".join(HEX_LOOKALIKES), lambda c: draw(st.sampled_from(HEX_LOOKALIKES[c]))
    ),
    "dash": lambda draw, v: _replace_at(draw, v, "-", lambda c: draw(st.sampled_from(DASHES))),
    "truncated": lambda draw, v: v[: draw(st.integers(0, len(v) - 1))],
    "extended": lambda draw, v: v + draw(st.sampled_from(["0", "a", "-", "}"])),
    "in_a_sentence": lambda draw, v: draw(st.sampled_from(["ids: ", "doc ", "[", '"'])) + v,
}


@st.composite
def mutated_ids(draw: st.DrawFn, ids: Sequence[str] = IN_SCOPE + OUT_OF_SCOPE) -> str:
    """A known id changed in one way a person, uuid.UUID() or NFKC might forgive; never canonical any more."""
    value = draw(st.sampled_from(ids))
    return ID_MUTATIONS[draw(st.sampled_from(sorted(ID_MUTATIONS)))](draw, value)


STEP_RESULTS = {"search_docs": (_uuid("step-1"), _uuid("step-2")), "s1": (_uuid("step-3"),), "s2": ()}
EXACT_REFERENCES = {step_reference(step): step for step in STEP_RESULTS}


@st.composite
def reference_lookalikes(draw: st.DrawFn) -> str:
    """A string written like a step reference that is not exactly `<from_step_ID>` for a step that ran."""
    ref = step_reference(draw(st.sampled_from(sorted(STEP_RESULTS))))
    kind = draw(st.integers(0, 11))
    return [
        ref.upper(),
        ref[:-1] + " >",
        draw(st.sampled_from(WHITESPACE)) + ref,
        ref + draw(st.sampled_from(WHITESPACE)),
        _insert_at(draw, ref, draw(st.sampled_from(ZERO_WIDTH))),
        "\uff1c" + ref[1:-1] + "\uff1e",
        ref[:-1],
        step_reference(draw(st.sampled_from(["nope", "search-docs", "", "s 1", "S1"]))),
        ref + ref,
        ref.replace("o", "\u043e"),
        ref.replace("_", "\uff3f"),
        "<from_step_search_docs>" + draw(st.sampled_from(IN_SCOPE)),
    ][kind]


def test_fixture_ids_are_canonical_and_distinct() -> None:
    """The id pools are what the mutations assume: canonical, distinct, each with a hex letter and a digit."""
    pools = [*IN_SCOPE, *OUT_OF_SCOPE, *(i for ids in STEP_RESULTS.values() for i in ids)]
    assert all(is_canonical_uuid(i) and re.search("[a-f]", i) and re.search("[0-9]", i) for i in pools)
    assert len(set(pools)) == len(pools)


NON_STRINGS = st.one_of(
    st.none(),
    st.integers(),
    st.floats(),
    st.sampled_from(IN_SCOPE).map(uuid.UUID),
    st.sampled_from(IN_SCOPE).map(str.encode),
    st.lists(st.sampled_from(IN_SCOPE), max_size=2),
)


def check_only_canonical_lowercase_uuid_strings_pass(value: object) -> None:
    """is_canonical_uuid agrees with the uuid-module oracle on every value: canonical uuids of any version
    pass; upper case, braces, urn:uuid:, missing or look-alike hyphens, whitespace, other scripts' digits,
    full-width, zero-width and combining characters, truncation and non-strings are all refused."""
    assert is_canonical_uuid(value) == _canonical_form(value)


test_only_canonical_lowercase_uuid_strings_pass, test_only_canonical_lowercase_uuid_strings_pass_slow = fast_and_slow(
    check_only_canonical_lowercase_uuid_strings_pass,
    value=st.one_of(
        st.uuids().map(str),
        st.uuids().map(lambda u: str(u).upper()),
        mutated_ids(),
        reference_lookalikes(),
        st.text(alphabet="0123456789abcdefABCDEF-{}:urn ", max_size=45),
        ANY_TEXT,
        NON_STRINGS,
    ),
)


def check_every_id_mutation_kind_is_refused(data: st.DataObject) -> None:
    """Each kind of mutation in the table, applied to a pool id, gives a value the id check refuses."""
    for name, mutate in ID_MUTATIONS.items():
        mutated = mutate(data.draw, data.draw(st.sampled_from(IN_SCOPE + OUT_OF_SCOPE)))
        assert not is_canonical_uuid(mutated), name


test_every_id_mutation_kind_is_refused, test_every_id_mutation_kind_is_refused_slow = fast_and_slow(
    check_every_id_mutation_kind_is_refused, data=st.data()
)


IdCase = tuple[object, str | None]
TAGGED_VALUES: st.SearchStrategy[IdCase] = st.one_of(
    st.sampled_from(IN_SCOPE).map(lambda v: (v, None)),
    st.sampled_from(OUT_OF_SCOPE).map(lambda v: (v, "out_of_scope")),
    st.uuids().map(str).filter(lambda v: v not in CATALOG).map(lambda v: (v, "unknown_document")),
    mutated_ids().map(lambda v: (v, "not_canonical_uuid")),
    reference_lookalikes().map(lambda v: (v, "reference")),
    ANY_TEXT.map(lambda v: (v, "text")),
    NON_STRINGS.map(lambda v: (v, "not_a_string")),
)


def _expected_reason(value: object, tag: str) -> str:
    if tag not in ("reference", "text"):
        return tag
    assert isinstance(value, str)
    if value.strip().startswith("<from_step"):
        return "unresolvable_step_reference"
    assert not _canonical_form(value)  # random text is never one of the catalog's ids
    return "not_canonical_uuid"


def check_id_guard_accepts_exactly_the_in_scope_ids(cases: list[IdCase]) -> None:
    """filter_document_ids accepts exactly the in-scope catalog ids (first-seen order, no repeats) and rejects
    every other value once, in order, shown by repr, with the right reason; its output is a fixed point."""
    values = [v for v, _ in cases]
    result = filter_document_ids(values, allowed=frozenset(IN_SCOPE), known=CATALOG)
    assert result.accepted == tuple(dict.fromkeys(v for v, tag in cases if tag is None))
    expected = [(repr(v), _expected_reason(v, tag)) for v, tag in cases if tag is not None]
    assert [(r.value, r.reason) for r in result.rejections] == expected
    again = filter_document_ids(result.accepted, allowed=frozenset(IN_SCOPE), known=CATALOG)
    assert (again.accepted, again.rejections) == (result.accepted, ())


test_id_guard_accepts_exactly_the_in_scope_ids, test_id_guard_accepts_exactly_the_in_scope_ids_slow = fast_and_slow(
    check_id_guard_accepts_exactly_the_in_scope_ids, cases=st.lists(TAGGED_VALUES, max_size=8)
)


def _looks_like_reference(value: object) -> bool:
    return isinstance(value, str) and value.strip().startswith("<from_step")


def check_only_exact_step_references_expand(values: list[object]) -> None:
    """resolve_step_references expands exactly `<from_step_ID>` of a step that ran, into that step's ids;
    every look-alike (case, spaces, zero-width, full-width brackets, unknown step) is rejected there or,
    not looking like a reference at all, refused by the id guard; nothing else is added or reordered."""
    out, rejections = resolve_step_references(values, STEP_RESULTS)
    step_ids = {i for ids in STEP_RESULTS.values() for i in ids}
    exact = [EXACT_REFERENCES[v] for v in values if isinstance(v, str) and v in EXACT_REFERENCES]
    expanded = sum(len(STEP_RESULTS[step]) for step in exact)
    assert sum(1 for v in out if isinstance(v, str) and v in step_ids) == expanded
    assert [v for v in out if not (isinstance(v, str) and v in step_ids)] == [
        v for v in values if not _looks_like_reference(v)
    ]
    unresolved = [v for v in values if _looks_like_reference(v) and v not in EXACT_REFERENCES]
    assert [r.value for r in rejections] == [repr(v) for v in unresolved]
    accepted = filter_document_ids(out, allowed=frozenset(IN_SCOPE) | step_ids).accepted
    assert set(accepted) <= set(IN_SCOPE) | step_ids


test_only_exact_step_references_expand, test_only_exact_step_references_expand_slow = fast_and_slow(
    check_only_exact_step_references_expand,
    values=st.lists(
        st.one_of(
            st.sampled_from(sorted(EXACT_REFERENCES)),
            reference_lookalikes(),
            st.sampled_from(IN_SCOPE),
            mutated_ids(),
            NON_STRINGS,
        ),
        max_size=8,
    ),
)


def check_models_carrying_document_ids_accept_exactly_canonical_ones(values: list[str]) -> None:
    """Scope (a chip) and the HTTP QueryRequest accept a list of document ids iff every one is canonical."""
    canonical = all(_canonical_form(v) for v in values)
    try:
        Scope(kind="chip", document_ids=tuple(values))
        chip_ok = True
    except ValidationError:
        chip_ok = False
    try:
        QueryRequest(question="rent?", document_ids=values)
        request_ok = True
    except ValidationError:
        request_ok = False
    assert chip_ok == (canonical and bool(values))
    assert request_ok == canonical


(
    test_models_carrying_document_ids_accept_exactly_canonical_ones,
    test_models_carrying_document_ids_accept_exactly_canonical_ones_slow,
) = fast_and_slow(
    check_models_carrying_document_ids_accept_exactly_canonical_ones,
    values=st.lists(st.one_of(st.uuids().map(str), mutated_ids(), ANY_TEXT), max_size=4),
)

STEP_IDS = ("search_docs", "search_chunks", "s1", "s2", "s3")
KNOWN_IDS = st.sampled_from(IN_SCOPE + OUT_OF_SCOPE)
PLAN_VALUES = st.one_of(
    st.sampled_from(IN_SCOPE + OUT_OF_SCOPE),
    mutated_ids(),
    reference_lookalikes(),
    st.sampled_from([step_reference(s) for s in STEP_IDS]),
    st.text(max_size=20),
)


SCOPES = st.one_of(
    st.just(NO_SCOPE),
    st.lists(st.sampled_from(IN_SCOPE + OUT_OF_SCOPE), min_size=1, max_size=3).map(
        lambda ids: Scope(kind="chip", document_ids=tuple(ids))
    ),
    st.sampled_from([PROPERTY_A, PROPERTY_B]).map(lambda e: Scope(kind="property", entity_id=e)),
)


# == 2. entity names ==============================================================================

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


# == 3. trace files ===============================================================================

DOCUMENT_PATHS = st.text(min_size=1, max_size=20)


@st.composite
def labelled_examples(draw: st.DrawFn) -> LabelledExample:
    """A LabelledExample that satisfies every consistency rule, with arbitrary text in every field."""
    case = draw(st.sampled_from(CASES))
    scope: dict[str, Any] = {}
    if case == "chip":
        scope["document_ids"] = draw(st.lists(DOCUMENT_PATHS, min_size=1, max_size=3))
    elif case in ("property", "wrong_property"):
        scope["property"] = draw(st.text(min_size=1, max_size=20))
    documents = draw(st.lists(DOCUMENT_PATHS, min_size=1, max_size=5, unique=True))
    cut = draw(st.integers(0, len(documents) - 1 if case == "wrong_property" else len(documents)))
    gold, forbidden = documents[:cut], documents[cut:]
    not_found = draw(st.booleans())
    return make_example(
        corpus=draw(st.text(max_size=10)),
        case=case,
        question=draw(st.text(min_size=1, max_size=80)),
        scope=scope,
        gold_documents=tuple(gold),
        gold_pages=tuple(
            draw(st.lists(st.builds(dict, document=DOCUMENT_PATHS, page=st.none() | st.integers(1, 10**6)), max_size=2))
        ),
        answer_facts=() if not_found else tuple(draw(st.lists(st.text(max_size=30), max_size=3))),
        forbidden_documents=tuple(forbidden),
        expect_not_found=not_found,
        expected_plan=draw(st.sampled_from([None, "two_step", "one_step"])),
        gold_sub_questions=tuple(draw(st.lists(st.text(max_size=30), max_size=2))),
        tags=tuple(draw(st.lists(st.text(max_size=10), max_size=2))),
        split=draw(st.sampled_from([None, "train", "dev", "test"])),
    )


EXAMPLE_LISTS = st.lists(labelled_examples(), max_size=5, unique_by=lambda e: e.id)


def _line(example: LabelledExample) -> bytes:
    return example.model_dump_json(exclude_defaults=True).encode()


@st.composite
def trace_lines(draw: st.DrawFn) -> bytes:
    """One JSONL line: valid, a valid one mutated, any JSON, any text, blank, binary, or over the size limit."""
    kind = draw(st.integers(0, 15))
    if kind <= 5:
        return _line(draw(labelled_examples()))
    if kind <= 8:
        value = draw(mutated_json(draw(labelled_examples()).model_dump(mode="json")))
        return json.dumps(value, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    return [
        lambda: json.dumps(draw(JSON_VALUES)).encode(),
        lambda: draw(ANY_TEXT).encode("utf-8", "surrogatepass"),
        lambda: draw(st.sampled_from([b"", b"   ", b"\t", b"\r", b"\x0c"])),
        lambda: draw(st.binary(max_size=40)),
        lambda: draw(st.sampled_from(RAW_JSON_TRAPS)),
        lambda: _line(draw(labelled_examples())).replace(b"{", b"[", 1),
        lambda: b'{"x": "' + b"y" * MAX_LINE_BYTES + b'"}',
    ][kind - 9]()


@st.composite
def trace_files(draw: st.DrawFn) -> bytes:
    """A JSONL file: lines joined by \\n or \\r\\n, maybe a repeated line, maybe no final newline; or any bytes."""
    if draw(st.integers(0, 9)) == 9:
        return draw(st.binary(max_size=200))
    lines = draw(st.lists(trace_lines(), max_size=6))
    if lines and draw(st.integers(0, 4)) == 4:
        lines.append(draw(st.sampled_from(lines)))
    data = draw(st.sampled_from([b"\n", b"\r\n"])).join(lines)
    return data + b"\n" if draw(st.booleans()) else data


def _expected_load(data: bytes) -> tuple[list[LabelledExample], int | None]:
    """What a trace file holds, read line by line (io.BytesIO splits as a binary file does): the examples,
    and the number of the first bad line (too long, invalid, or a repeated id), or None."""
    examples: list[LabelledExample] = []
    seen: set[str] = set()
    for number, raw in enumerate(io.BytesIO(data).readlines(), start=1):
        if len(raw) > MAX_LINE_BYTES:
            return examples, number
        if not raw.strip():
            continue
        try:
            example = LabelledExample.model_validate_json(raw)
        except ValidationError:
            return examples, number
        if example.id in seen:
            return examples, number
        seen.add(example.id)
        examples.append(example)
    return examples, None


def check_trace_files_load_or_name_the_bad_line(data: bytes) -> None:
    """load_examples on any bytes returns exactly the file's examples or raises ExamplesError (no other exception)
    whose message starts with the file path and the number of the first bad line."""
    expected, bad_line = _expected_load(data)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "traces.jsonl"
        path.write_bytes(data)
        try:
            loaded = load_examples(path)
        except ExamplesError as exc:
            event("trace file: ExamplesError")
            assert bad_line is not None and str(exc).startswith(f"{path}:{bad_line}: "), (bad_line, str(exc)[:300])
            return
    event(f"trace file: loaded {min(len(loaded), 3)}+ examples")
    assert bad_line is None
    assert loaded == expected


test_trace_files_load_or_name_the_bad_line, test_trace_files_load_or_name_the_bad_line_slow = fast_and_slow(
    check_trace_files_load_or_name_the_bad_line, data=trace_files()
)


def check_trace_set_directories_load_each_split_file(files: dict[str, bytes | None], split: str | None) -> None:
    """load_example_set on a directory names every missing split file, and otherwise returns what load_examples
    returns for each needed file in train/dev/test order (or the same ExamplesError)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, data in files.items():
            if data is not None:
                (root / f"{name}.jsonl").write_bytes(data)
        needed = [root / f"{name}.jsonl" for name in ("train", "dev", "test") if split in (None, name)]
        missing = [p for p in needed if not p.is_file()]
        try:
            loaded = load_example_set(root, split=split)  # type: ignore[arg-type]
        except ExamplesError as exc:
            if missing:
                assert all(str(p) in str(exc) for p in missing)
                return
            with pytest.raises(ExamplesError) as again:
                for path in needed:
                    load_examples(path, split)  # type: ignore[arg-type]
            assert str(again.value) == str(exc)
            return
        assert not missing
        assert loaded == [e for path in needed for e in load_examples(path, split)]  # type: ignore[arg-type]


test_trace_set_directories_load_each_split_file, test_trace_set_directories_load_each_split_file_slow = fast_and_slow(
    check_trace_set_directories_load_each_split_file,
    files=st.fixed_dictionaries(
        {
            name: st.none() | EXAMPLE_LISTS.map(lambda es: b"".join(_line(e) + b"\n" for e in es)) | trace_files()
            for name in ("train", "dev", "test")
        }
    ),
    split=st.sampled_from([None, "train", "dev", "test"]),
)


def check_written_traces_round_trip(examples: list[LabelledExample]) -> None:
    """write_examples then load_examples gives back the same examples; writing them again gives the same bytes;
    the split and case filters select exactly the matching examples."""
    with tempfile.TemporaryDirectory() as tmp:
        first, second = Path(tmp) / "a" / "t.jsonl", Path(tmp) / "b" / "t.jsonl"
        assert write_examples(first, examples) == len(examples)
        loaded = load_examples(first)
        assert loaded == examples
        write_examples(second, loaded)
        assert second.read_bytes() == first.read_bytes()
        assert load_examples(first, split="dev") == [e for e in examples if e.split == "dev"]
        assert load_examples(first, cases=["chip", "no_scope"]) == [
            e for e in examples if e.case in ("chip", "no_scope")
        ]


test_written_traces_round_trip, test_written_traces_round_trip_slow = fast_and_slow(
    check_written_traces_round_trip, examples=EXAMPLE_LISTS
)


# == 4. prompt profiles ===========================================================================


@dataclass(frozen=True)
class ProfileBase:
    """A real export (written by save_export from a ScopedQA) and its inlined profile document."""

    export_dir: Path
    payload: dict[str, Any]


@pytest.fixture(scope="module")
def profile_base(demo_index_dir: Path, embedder: HashEmbedder, tmp_path_factory: pytest.TempPathFactory) -> ProfileBase:
    root = tmp_path_factory.mktemp("fuzz-profiles")
    save_sample_export(open_store(demo_index_dir, embedder), root / "export")
    paths = _paths(root)
    add_profile(paths, "base", root / "export", note="the base profile")
    return ProfileBase(root / "export", json.loads(profile_json(export_profile(paths, "base"))))


def _paths(root: Path) -> ProfilePaths:
    return ProfilePaths(registry=root / ".scoperag" / "profiles.json", root=root / ".scoperag" / "profiles")


def _registered(root: Path, base: ProfileBase) -> ProfilePaths:
    """A fresh registry under `root` with the base export registered as "base"."""
    paths = _paths(root)
    add_profile(paths, "base", base.export_dir, note="the base profile")
    return paths


def _vouch(payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` with prompts.md regenerated and the manifest vouching for its (edited) program."""
    inline = payload["export"]
    # A state too broken to render keeps the old text (a demo mutated into a list of numbers: IndexError).
    with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError, IndexError):
        inline["prompts_md"] = render_prompts(inline["program"])
    files = inline["manifest"].get("files") if isinstance(inline["manifest"], dict) else None
    if isinstance(files, dict):
        program = canonical_json(inline["program"])
        prompts = inline["prompts_md"].encode("utf-8") if isinstance(inline["prompts_md"], str) else b""
        files[PROGRAM] = {"sha256": sha256_hex(program), "size": len(program)}
        files[PROMPTS] = {"sha256": sha256_hex(prompts), "size": len(prompts)}
    return payload


NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
VALID_NAMES = st.builds(str.__add__, st.sampled_from(NAME_CHARS), st.text(alphabet=NAME_CHARS + "_.-", max_size=63))


@st.composite
def valid_edits(draw: st.DrawFn, payload: dict[str, Any]) -> dict[str, Any]:
    """A copy of `payload` with any note, and one predictor's instructions and demos replaced by any text and
    JSON (no LM keys), prompts.md and the manifest's hashes updated to match: still a valid profile."""
    payload = copy.deepcopy(payload)
    payload["note"] = draw(st.text(max_size=300))
    edit_a_predictor(draw, payload["export"]["program"])
    return _vouch(payload)


@st.composite
def profile_documents(draw: st.DrawFn, payload: dict[str, Any]) -> bytes:
    """Bytes offered to import_profile: the real document or a valid edit of it, the document mutated as JSON
    (with or without the manifest vouching for the change) or as bytes, other JSON, strict-JSON traps, any bytes."""
    kind = draw(st.integers(0, 9))
    if kind <= 1:
        return profile_json(draw(valid_edits(payload)))
    if kind <= 3:
        return profile_json(draw(mutated_json(payload)))
    if kind <= 6:
        edited = copy.deepcopy(payload)
        edited["export"]["program"] = draw(mutated_json(edited["export"]["program"]))
        return profile_json(_vouch(edited))
    if kind == 7:
        return draw(mutated_bytes(profile_json(payload)))
    return draw(
        st.one_of(
            JSON_VALUES.map(lambda v: json.dumps(v).encode()),
            st.sampled_from(RAW_JSON_TRAPS),
            st.binary(max_size=100),
        )
    )


PROFILE_NAMES = st.one_of(st.sampled_from(["gamma", "base"]), VALID_NAMES, st.text(max_size=70))


def check_profile_import_accepts_or_fails_typed(profile_base: ProfileBase, data: st.DataObject) -> None:
    """import_profile on any bytes and name either imports a profile that exports back to the same document
    byte for byte (under its new name), or raises a ScopeRagError and leaves the registry and the profiles
    directory untouched; never another exception."""
    document = data.draw(profile_documents(profile_base.payload), label="document")
    name = data.draw(PROFILE_NAMES, label="name")
    confirm = data.draw(st.booleans(), label="confirm_overwrite")
    with tempfile.TemporaryDirectory() as tmp:
        paths = _registered(Path(tmp), profile_base)
        before = paths.registry.read_bytes()
        try:
            info = import_profile(paths, document, name, confirm_overwrite=confirm)
        except ScopeRagError as exc:
            event(f"import: {type(exc).__name__}")
            assert paths.registry.read_bytes() == before
            assert not paths.root.exists()
            return
        event("import: accepted")
        value = json.loads(document)
        assert info.name == name and info.program == paths.root / name
        assert profile_json(export_profile(paths, name)) == profile_json({**value, "name": name})


test_profile_import_accepts_or_fails_typed, test_profile_import_accepts_or_fails_typed_slow = fast_and_slow(
    check_profile_import_accepts_or_fails_typed, data=st.data()
)


def check_profile_round_trip_is_byte_identical(profile_base: ProfileBase, data: st.DataObject) -> None:
    """A profile with any note, instructions and demo values (valid JSON) survives export -> import -> export
    byte for byte but for its name, and its files on disk hold the same program state."""
    payload = data.draw(valid_edits(profile_base.payload), label="payload")
    document = profile_json(payload)
    first, second = data.draw(st.lists(VALID_NAMES, min_size=2, max_size=2, unique=True), label="names")
    with tempfile.TemporaryDirectory() as tmp:
        paths = _paths(Path(tmp))
        info = import_profile(paths, document, first, confirm_overwrite=False)
        exported = profile_json(export_profile(paths, first))
        assert exported == profile_json({**payload, "name": first})
        assert read_export(info.program).program_state == payload["export"]["program"]
        import_profile(paths, exported, second, confirm_overwrite=False)
        assert profile_json(export_profile(paths, second)) == profile_json({**payload, "name": second})
        for file in (MANIFEST, PROGRAM, PROMPTS):
            assert (paths.root / first / file).read_bytes() == (paths.root / second / file).read_bytes()


test_profile_round_trip_is_byte_identical, test_profile_round_trip_is_byte_identical_slow = fast_and_slow(
    check_profile_round_trip_is_byte_identical, data=st.data()
)


@st.composite
def registries(draw: st.DrawFn) -> dict[str, Any]:
    """A valid profiles.json value with arbitrary names, paths, times and notes."""
    names = draw(st.lists(VALID_NAMES.filter(lambda n: n != "zz-new"), max_size=3, unique=True))
    entry = st.fixed_dictionaries(
        {
            "program": st.text(min_size=1, max_size=40),
            "created_at": st.text(min_size=1, max_size=30),
            "note": st.text(max_size=40),
        }
    )
    return {
        "format": REGISTRY_FORMAT,
        "active": draw(st.sampled_from([None, *names])),
        "profiles": {name: draw(entry) for name in names},
    }


@st.composite
def registry_documents(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(0, 5))
    if kind <= 1:
        return canonical_json(draw(registries()))
    if kind <= 3:
        return json.dumps(draw(mutated_json(draw(registries())))).encode()
    return draw(st.one_of(st.binary(max_size=80), st.sampled_from(RAW_JSON_TRAPS), JSON_VALUES.map(canonical_json)))


def check_registry_files_load_or_fail_typed(profile_base: ProfileBase, data: st.DataObject) -> None:
    """list_profiles/active_profile on any profiles.json either list valid names (the active one among them)
    or raise ProfileError; a registry that loads keeps every entry and the active profile unchanged when
    add_profile rewrites it."""
    document = data.draw(registry_documents(), label="registry")
    with tempfile.TemporaryDirectory() as tmp:
        paths = _paths(Path(tmp))
        paths.registry.parent.mkdir(parents=True)
        paths.registry.write_bytes(document)
        try:
            infos = list_profiles(paths)
            active = active_profile(paths)
        except ProfileError:
            event("registry: ProfileError")
            return
        event("registry: loaded")
        names = [i.name for i in infos]
        assert names == sorted(names) and all(NAME_PATTERN.fullmatch(n) for n in names)
        assert active is None or active.name in names
        add_profile(paths, "zz-new", profile_base.export_dir)
        after = {i.name: i for i in list_profiles(paths)}
        assert [after[i.name] for i in infos] == infos and "zz-new" in after
        assert active_profile(paths) == active


test_registry_files_load_or_fail_typed, test_registry_files_load_or_fail_typed_slow = fast_and_slow(
    check_registry_files_load_or_fail_typed, data=st.data()
)


# == 5. HTTP request bodies (the 500 benchmarks/fuzz.py found) ================================

Post = Callable[[bytes, "str | None"], httpx.Response]


@pytest.fixture(scope="module")
def post_query(demo_index_dir: Path, embedder: HashEmbedder) -> Iterator[Post]:
    """POST /v1/query on the real app (ASGI, in process, scripted LM); a server error comes back as a 500."""
    store = open_store(demo_index_dir, embedder)
    app = create_app(store=store, program=ScopedQA(store), lm=scripted_lm(cooperative()), adapter=dspy.ChatAdapter())
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    client = httpx.AsyncClient(transport=transport, base_url="http://scoperag")
    with asyncio.Runner() as runner:

        def post(body: bytes, content_type: str | None) -> httpx.Response:
            headers = {"content-type": content_type} if content_type else {}
            return runner.run(client.post("/v1/query", content=body, headers=headers))

        yield post
        runner.run(client.aclose())


# Values Python's json module reads but JSON cannot carry back out: echoing them in a 422 once made it a 500.
UNWRITABLE = st.one_of(
    st.sampled_from([float("nan"), float("inf"), float("-inf")]),
    st.tuples(ANY_TEXT, st.sampled_from(["\ud800", "\udfff"])).map("".join),
    st.lists(st.sampled_from([float("nan"), "\udc80"]), min_size=1, max_size=3),
)


@st.composite
def rejected_requests(draw: st.DrawFn) -> tuple[bytes, str | None]:
    """A body the server must refuse: a field holding NaN, Infinity or a lone surrogate, or raw bytes (any
    content type, none included) that are not UTF-8."""
    if draw(st.booleans()):
        field = draw(st.sampled_from(["question", "property", "document_ids"]))
        body = {"question": "What is the rent?", field: draw(UNWRITABLE)}
        text = json.dumps(body, allow_nan=True)  # ensure_ascii writes a lone surrogate as its \u escape
        return text.encode(), draw(st.sampled_from(["application/json", "application/json; charset=utf-8"]))
    raw = draw(st.binary(min_size=1, max_size=40).filter(lambda b: not _utf8(b)))
    return raw, draw(st.sampled_from([None, "", "text/plain", "application/octet-stream", "application/json"]))


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def check_rejected_requests_get_a_json_error(post_query: Post, request: tuple[bytes, str | None]) -> None:
    """POST /v1/query with a body holding NaN/Infinity/lone surrogates, or with non-UTF-8 bytes, gets a 400 or
    422 whose body is JSON naming each problem (the bad value shown by repr when JSON cannot carry it): no 500."""
    body, content_type = request
    response = post_query(body, content_type)
    assert response.status_code in (400, 422), (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/json")
    detail = response.json()["detail"]
    if response.status_code == 422:
        assert detail and all(item["loc"][0] == "body" and item["msg"] for item in detail), detail
    else:
        assert isinstance(detail, str) and detail


(
    test_rejected_requests_get_a_json_error,
    test_rejected_requests_get_a_json_error_slow,
) = fast_and_slow(check_rejected_requests_get_a_json_error, request=rejected_requests())
