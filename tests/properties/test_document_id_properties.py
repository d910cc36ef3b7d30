"""Properties (hypothesis) of document ids (pipeline/ids.py, pipeline/guards/ids.py, pipeline/scope.py): only
canonical lower-case uuids pass, every look-alike and mutation is refused, only exact step references expand, and
the models and plans that carry ids keep exactly the in-scope ones.

Each property is one `check_*` function turned into two tests by `fast_and_slow` (tests/support/properties.py):
`test_*` runs 50 examples in the default run, `test_*_slow` 1,000 under `-m slow`; both derandomized, no
example database.

Not repeated here (already properties elsewhere): normaliser idempotence over Steps objects (test_scope.py) and
only in-scope ids reaching the store (test_executor.py).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence

from hypothesis import strategies as st
from pydantic import ValidationError

from pipeline.guards.ids import filter_document_ids, is_canonical_uuid, resolve_step_references, step_reference
from pipeline.intake.scope import NO_SCOPE, Scope
from pipeline.serving.schemas import QueryRequest
from tests.support.properties import ANY_TEXT, ZERO_WIDTH, fast_and_slow


def _uuid(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"fuzz-{name}"))


IN_SCOPE = tuple(_uuid(f"in-{i}") for i in range(3))
OUT_OF_SCOPE = tuple(_uuid(f"out-{i}") for i in range(3))
CATALOG = frozenset(IN_SCOPE + OUT_OF_SCOPE)
PROPERTY_A, PROPERTY_B = _uuid("property-a"), _uuid("property-b")
OWNED = {PROPERTY_A: [IN_SCOPE[0], IN_SCOPE[1]], PROPERTY_B: [OUT_OF_SCOPE[0], OUT_OF_SCOPE[1]]}
HEX_LETTERS, DIGITS = "abcdef", "0123456789"
WHITESPACE = (" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x85", "\u00a0", "\u2003", "\u2028", "\u3000")
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
