"""Malformed output from any of the three learned calls of ScopedQA ends typed, within budget, and safe.

Each fixture replaces the raw completion of ONE call (decomposition, relevance scoring or the
answer lines; the others stay cooperative) with malformed text: empty, 1 MB, duplicate
keys, wrong types, impossible scores, disordered or duplicated sections, citations of pages,
files and paths that were never shown, broken JSON, control characters and lone surrogates.
Every run must end in a typed event with no exception escaping `stream()` - and since the LM
did answer every call, that event is `Completed`: malformed output is a fallback, not a failed
question. It must make no more counted LM calls than the budget (3, +1 for HyDE), drop no chunk
on a misread score, cite only in-scope documents and pages that exist, have sent only canonical
in-scope ids to the store, and serialise to JSON with its trace (as the SSE stream and the
history do).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import partial
from typing import Any

import pytest

from pipeline.guards.citations import citation_name
from pipeline.guards.ids import is_canonical_uuid
from pipeline.program.events import Completed, Failed, cite
from pipeline.program.trace import QuestionTrace
from pipeline.store import Store
from pipeline.store.catalog import document_id
from pipeline.store.embedders import Embedder
from tests.program.test_program_fallbacks import _run
from tests.support.fakes import cooperative, field

Output = str | Callable[[str], str]

QUESTION = "What is the rent at Banda Lane?"
CONCEPTUAL = "Why does a service charge exist and what is its purpose?"  # the planner adds a HyDE call
SUB_QUESTIONS = ["What is the rent?", "Who is the tenant?"]
MB = 1_000_000
# module -> (input field that identifies its prompt, output field it must write)
FIELDS = {
    "decompose": ("question", "sub_questions"),
    "score": ("groups", "scores"),
    "answer": ("sections_context", "answers"),
    "hyde": ("question", "passage"),
}
LEASE_ID = document_id("demo", "banda-lane/lease.pdf")
# Anything in a rendered answer that looks like an inline citation, whatever its page says.
LABEL = re.compile(r"\[[^\[\]]*?,\s*(?:page|p\.)\s*[^\[\]]*?\]", re.IGNORECASE)


@dataclass(frozen=True)
class Case:
    """One malformed completion for one module's call."""

    module: str
    category: str
    name: str
    output: Output
    question: str = QUESTION

    @property
    def id(self) -> str:
        return f"{self.module}-{self.category}-{self.name}"


def raw(name: str, value: str) -> str:
    """A ChatAdapter completion: the field header, the value as given, the end marker."""
    return f"[[ ## {name} ## ]]\n{value}\n\n[[ ## completed ## ]]"


def _cooperative_value(prompt: str, name: str) -> Any:
    return cooperative(SUB_QUESTIONS)(prompt)[name]


# ---- decomposition ---------------------------------------------------------------------------


def _decompose_cases() -> list[Case]:
    case = partial(Case, "decompose")
    value = partial(raw, "sub_questions")
    good = json.dumps(SUB_QUESTIONS)
    return [
        case("empty", "empty", ""),
        case("empty", "empty-with-hyde", "", question=CONCEPTUAL),
        case("empty", "whitespace", " \n\t  \n"),
        case("empty", "header-only", "[[ ## sub_questions ## ]]"),
        case("empty", "header-then-completed", value("")),
        case("huge", "junk-1mb", "[[ ## sub_questions ## ]]\n" + "x" * MB),
        case("huge", "junk-1mb-with-hyde", "[[ ## sub_questions ## ]]\n" + "x" * MB, question=CONCEPTUAL),
        case("huge", "list-padded-1mb", value(good[:-1] + " " * MB + "]")),
        case("huge", "string-1mb", value(json.dumps("w" * MB))),
        case("huge", "list-of-one-1mb-string", value(json.dumps(["rent " * (MB // 5)]))),
        case("huge", "list-of-100k-strings", value(json.dumps([f"q{i}" for i in range(100_000)]))),
        case(
            "duplicate_keys",
            "object-field-twice",
            value('{"sub_questions": ["What is the rent?"], "sub_questions": []}'),
        ),
        case(
            "duplicate_keys", "json-object-field-twice", '{"sub_questions": [], "sub_questions": ["What is the rent?"]}'
        ),
        case("wrong_type", "dict", value('{"0": "What is the rent?", "1": "Who is the tenant?"}')),
        case("wrong_type", "string", value('"What is the rent?"')),
        case("wrong_type", "bare-prose", value("What is the rent? Who is the tenant?")),
        case("wrong_type", "list-of-ints", value("[1, 2, 3]")),
        case("wrong_type", "list-of-lists", value('[["What is the rent?"], ["Who is the tenant?"]]')),
        case("wrong_type", "list-of-nulls", value("[null, null]")),
        case("wrong_type", "list-of-bools", value("[true, false]")),
        case("wrong_type", "mixed-list", value('[null, 7, {"q": "Who is the tenant?"}, "What is the rent?"]')),
        case("wrong_type", "null", value("null")),
        case("wrong_type", "number", value("42")),
        case("wrong_type", "blank-strings", value('["", "   ", "\\n\\t"]')),
        case("count", "case-variant-repeats", value(json.dumps(["What is the rent?", "WHAT IS THE RENT? ", "a"] * 17))),
        case("count", "twelve-distinct", value(json.dumps([f"What does clause {i} say?" for i in range(12)]))),
        case("count", "one-5000-char-sub-question", value(json.dumps(["What is the rent " * 300]))),
        case("broken_json", "truncated-mid-string", value('["What is the rent?", "Who is')),
        case("broken_json", "trailing-garbage", value('["What is the rent?"] and also the deposit }]')),
        case("broken_json", "markdown-fence", value(f"```json\n{good}\n```")),
        case("broken_json", "wrong-header", raw("subquestions", good)),
        case("broken_json", "header-twice", value('["What is the rent?"]') + "\n" + value('["Who is the tenant?"]')),
        case(
            "characters",
            "escaped-control-chars",
            value(json.dumps(["What is\x00 the rent?\x07", "\x1b[31mWho?\x1b[0m"])),
        ),
        case("characters", "raw-nul-bytes", '[[ ## sub_questions ## ]]\x00\n["What is\x00 the rent?"]\x00'),
        case("characters", "lone-surrogate-raw", value('["What is the rent?\ud800"]')),
        case("characters", "lone-surrogate-escaped", value('["What is the rent? \\ud800", "\\udfff"]')),
        case(
            "characters",
            "field-markers",
            value(json.dumps(["What is the rent? [[ ## completed ## ]]", "[[ ## scores ## ]]"])),
        ),
    ]


# ---- relevance scoring -----------------------------------------------------------------------


def _scores(entry: Callable[[int, int], str], transform: Callable[[str], str] | None = None) -> Output:
    """The scores field written entry by entry: `entry(sub_question_index, number of chunks)` is JSON text."""

    def output(prompt: str) -> str:
        groups = field(prompt, "groups")
        text = "[" + ", ".join(entry(g["sub_question_index"], len(g["chunks"])) for g in groups) + "]"
        return (transform or partial(raw, "scores"))(text)

    return output


def _each(score: str) -> Output:
    """Every score of every group is the JSON text `score`."""
    return _scores(lambda i, n: f'{{"sub_question_index": {i}, "scores": [{", ".join([score] * n)}]}}')


def _entry(i: int, n: int, score: Any = 8) -> str:
    return json.dumps({"sub_question_index": i, "scores": [score] * n})


def _score_cases() -> list[Case]:
    case = partial(Case, "score")
    value = partial(raw, "scores")
    good = _scores(_entry, transform=lambda text: text)
    return [
        case("empty", "empty", ""),
        case("empty", "empty-with-hyde", "", question=CONCEPTUAL),
        case("empty", "whitespace", "\n \t\n"),
        case("empty", "header-only", "[[ ## scores ## ]]"),
        case("empty", "header-then-completed", value("")),
        case("empty", "empty-list", value("[]")),
        case("huge", "junk-1mb", "[[ ## scores ## ]]\n" + "8 nine, " * (MB // 8)),
        # json_repair (under both DSPy parsers) needs ~0.1 ms per "{" and then gives up on the depth:
        # 1,600 of them (about the 400-token output cap) stay fast, 1 MB of them took minutes.
        case("huge", "open-braces-at-output-cap", "[[ ## scores ## ]]\n" + "{" * 1600),
        case("huge", "list-padded-1mb", lambda p: value(good(p)[:-1] + " " * MB + "]")),
        case("huge", "string-1mb", value(json.dumps("8" * MB))),
        case("huge", "333k-scores-in-a-group", _scores(lambda i, n: _entry(i, MB // 3))),
        case(
            "duplicate_keys",
            "index-twice",
            _scores(lambda i, n: _entry(i, n).replace(",", f', "sub_question_index": {i + 5},')),
        ),
        case(
            "duplicate_keys", "scores-twice", _scores(lambda i, n: _entry(i, n, "x")[:-1] + f', "scores": {[9] * n}}}')
        ),
        case("duplicate_keys", "group-twice", _scores(lambda i, n: f"{_entry(i, n)}, {_entry(i, n, 0)}")),
        case("duplicate_keys", "json-object-field-twice", lambda p: f'{{"scores": [], "scores": {good(p)}}}'),
        case("score_value", "string-8", _each('"8"')),
        case("score_value", "string-eight", _each('"eight"')),
        case("score_value", "string-8-of-10", _each('"8/10"')),
        case("score_value", "empty-string", _each('""')),
        case("score_value", "string-nan", _each('"NaN"')),
        case("score_value", "string-1e309", _each('"1e309"')),
        case("score_value", "number-1e309", _each("1e309")),
        case("score_value", "booleans", _each("true")),
        case("score_value", "nulls", _each("null")),
        case("score_value", "negative", _each("-1")),
        case("score_value", "above-ten", _each("11")),
        case("score_value", "nested-lists", _each("[8]")),
        case("score_value", "objects", _each('{"score": 8}')),
        case("wrong_type", "entry-as-list", _scores(lambda i, n: json.dumps([i, [8] * n]))),
        case(
            "wrong_type",
            "field-as-dict",
            _scores(lambda i, n: f'"{i}": {[8] * n}', lambda text: value(f"{{{text[1:-1]}}}")),
        ),
        case(
            "wrong_type",
            "scores-as-dict",
            _scores(lambda i, n: json.dumps({"sub_question_index": i, "scores": {"0": 8}})),
        ),
        case(
            "wrong_type", "scores-as-number", _scores(lambda i, n: json.dumps({"sub_question_index": i, "scores": 8}))
        ),
        case("wrong_type", "index-as-string", _scores(lambda i, n: _entry(i, n).replace(f": {i},", f': "{i}",'))),
        case("wrong_type", "index-as-bool", _scores(lambda i, n: _entry(i, n).replace(f": {i},", ": true,"))),
        case("index", "negative", _scores(lambda i, n: _entry(-1 - i, n))),
        case("index", "huge", _scores(lambda i, n: _entry(10**9 + i, n))),
        case("index", "unknown-extra-group", _scores(lambda i, n: f"{_entry(i, n)}, {_entry(i + 7, n, 0)}")),
        case("index", "reversed-order", _scores(_entry, lambda text: value(json.dumps(json.loads(text)[::-1])))),
        case("broken_json", "truncated-in-key", _scores(_entry, lambda text: value(text[:30]))),
        case("broken_json", "trailing-garbage", _scores(_entry, lambda text: value(text + " } ] oops, 10"))),
        case("broken_json", "markdown-fence", _scores(_entry, lambda text: value(f"```json\n{text}\n```"))),
        case("broken_json", "wrong-header", _scores(_entry, partial(raw, "score"))),
        case(
            "broken_json",
            "header-twice",
            _scores(_entry, lambda text: value(text.replace("8", '"eight"')) + value(text)),
        ),
        case("characters", "raw-nul-bytes", _scores(_entry, lambda text: value(text.replace(", ", ",\x00 ")))),
        case(
            "characters",
            "lone-surrogate-in-key",
            _scores(lambda i, n: _entry(i, n).replace('"scores"', '"scores\ud800"')),
        ),
        case("characters", "lone-surrogate-escaped-score", _each('"\\ud800"')),
    ]


# ---- answer lines ----------------------------------------------------------------------------


def _answers(change: Callable[[list[dict[str, Any]]], Any], text: Callable[[str], str] = lambda t: t) -> Output:
    """The cooperative answer lines changed by `change`, written as JSON, the JSON text changed by `text`."""

    def output(prompt: str) -> str:
        return raw("answers", text(json.dumps(change(_cooperative_value(prompt, "answers")), ensure_ascii=False)))

    return output


def _each_line(change: Callable[[dict[str, Any]], Any]) -> Output:
    """Every answer line replaced by `change(line)`."""
    return _answers(lambda lines: [change(line) for line in lines])


def _answer_cases() -> list[Case]:
    case = partial(Case, "answer")
    value = partial(raw, "answers")
    same = _answers(lambda s: s)
    return [
        case("empty", "empty", ""),
        case("empty", "empty-with-hyde", "", question=CONCEPTUAL),
        case("empty", "whitespace", "  \n\n\t"),
        case("empty", "header-only", "[[ ## answers ## ]]"),
        case("empty", "header-then-completed", value("")),
        case("empty", "empty-list", value("[]")),
        case("empty", "blank-answers", _each_line(lambda a: dict(a, answer="   ", sentence_ids=[]))),
        case("huge", "junk-1mb", "[[ ## answers ## ]]\n" + "]" * MB),
        case("huge", "list-padded-1mb", _answers(lambda s: s, lambda t: t[:-1] + " " * MB + "]")),
        case("huge", "string-1mb", value(json.dumps("a" * MB))),
        case("huge", "answer-text-1mb", _each_line(lambda a: dict(a, answer=a["answer"] + " rent" * (MB // 5)))),
        case("huge", "100k-sentence-ids", _each_line(lambda a: dict(a, sentence_ids=list(range(100_000))))),
        case(
            "duplicate_keys",
            "index-twice",
            _answers(
                lambda s: s,
                lambda t: t.replace('"sub_question_index": 0,', '"sub_question_index": 0, "sub_question_index": 5,'),
            ),
        ),
        case(
            "duplicate_keys",
            "answer-twice-bad-last",
            _answers(lambda s: s, lambda t: t.replace('"answer": ', '"answer": "KSH 999,999 a month", "answer": ')),
        ),
        case(
            "duplicate_keys",
            "ids-twice",
            _answers(lambda s: s, lambda t: t.replace('"sentence_ids": [', '"sentence_ids": [99], "sentence_ids": [')),
        ),
        case("wrong_type", "answers-as-dict", _answers(lambda s: {str(x["sub_question_index"]): x for x in s})),
        case("wrong_type", "answers-as-string", value(json.dumps("The rent is KSH 285,000 [lease.pdf, page 1]"))),
        case("wrong_type", "answers-null", value("null")),
        case("wrong_type", "answer-null", _each_line(lambda a: dict(a, answer=None))),
        case("wrong_type", "answer-list", _each_line(lambda a: dict(a, answer=[a["answer"]]))),
        case("wrong_type", "answer-number", _each_line(lambda a: dict(a, answer=285000))),
        case("wrong_type", "ids-as-string", _each_line(lambda a: dict(a, sentence_ids="0, 1"))),
        case("wrong_type", "ids-as-strings", _each_line(lambda a: dict(a, sentence_ids=["0", "one"]))),
        case("wrong_type", "ids-as-bools", _each_line(lambda a: dict(a, sentence_ids=[True]))),
        case(
            "wrong_type",
            "index-as-string",
            _each_line(lambda a: dict(a, sub_question_index=str(a["sub_question_index"]))),
        ),
        case("sentence_ids", "negative", _each_line(lambda a: dict(a, sentence_ids=[-1]))),
        case("sentence_ids", "billion", _each_line(lambda a: dict(a, sentence_ids=[10**9]))),
        case("sentence_ids", "float", _each_line(lambda a: dict(a, sentence_ids=[0.5]))),
        case("sentence_ids", "none-with-answer", _each_line(lambda a: dict(a, sentence_ids=[]))),
        case("grounding", "invented-figure", _each_line(lambda a: dict(a, answer="The rent is KSH 999,999 a month."))),
        case(
            "grounding", "invented-name", _each_line(lambda a: dict(a, answer="The tenant is Zebediah Quartermaine."))
        ),
        case("grounding", "invented-date", _each_line(lambda a: dict(a, answer="It was signed on 31 December 1999."))),
        case(
            "grounding",
            "citation-in-text",
            _each_line(lambda a: dict(a, answer=a["answer"] + " [../../etc/passwd, page 1]")),
        ),
        case(
            "grounding", "link-in-text", _each_line(lambda a: dict(a, answer=a["answer"] + " [x](http://evil.example)"))
        ),
        case("lines", "reversed", _answers(lambda s: s[::-1])),
        case("lines", "only-last", _answers(lambda s: s[-1:])),
        case("lines", "unknown-index", _answers(lambda s: [*s, dict(s[0], sub_question_index=7)])),
        case("lines", "negative-index", _answers(lambda s: [dict(x, sub_question_index=-1) for x in s])),
        case("lines", "duplicate-bad-first", _answers(lambda s: [dict(x, answer="x", sentence_ids=[]) for x in s] + s)),
        case("lines", "duplicate-good-first", _answers(lambda s: s + [dict(x, answer="") for x in s])),
        case("broken_json", "truncated", _answers(lambda s: s, lambda t: t[: len(t) // 2])),
        case("broken_json", "trailing-garbage", _answers(lambda s: s, lambda t: t + '\n]}] {"sub_question_index": 9')),
        case("broken_json", "markdown-fence", _answers(lambda s: s, lambda t: f"```json\n{t}\n```")),
        case("broken_json", "wrong-header", lambda p: same(p).replace("## answers ##", "## answer ##")),
        case("broken_json", "header-twice", lambda p: value("[]") + "\n" + same(p)),
        case(
            "characters", "control-chars-in-text", _each_line(lambda a: dict(a, answer=f"\x1b[2J{a['answer']}\x07\x08"))
        ),
        case(
            "characters", "raw-nul-bytes", _answers(lambda s: s, lambda t: t.replace('"answer": "', '"answer": "\x00'))
        ),
        case("characters", "lone-surrogate-in-text", _each_line(lambda a: dict(a, answer=a["answer"] + " \ud800"))),
        case(
            "characters",
            "escaped-lone-surrogate",
            _answers(lambda s: s, lambda t: t.replace('"answer": "', '"answer": "\\ud800')),
        ),
        case(
            "characters",
            "field-markers",
            _each_line(lambda a: dict(a, answer=a["answer"] + " [[ ## completed ## ]]")),
        ),
    ]


# ---- HyDE (the optional fourth call; not counted among the three modules) -----------------


def _hyde_cases() -> list[Case]:
    case = partial(Case, "hyde", question=CONCEPTUAL)
    value = partial(raw, "passage")
    return [
        case("empty", "empty", ""),
        case("empty", "header-only", "[[ ## passage ## ]]"),
        case("huge", "junk-1mb", value("upkeep " * (MB // 7))),
        case("wrong_type", "list", value('["A service charge pays for upkeep."]')),
        case("characters", "raw-nul-bytes", value("A service\x00 charge pays for upkeep.")),
        case("characters", "lone-surrogate", value("A service charge \ud800 pays for upkeep.")),
    ]


CASES = [*_decompose_cases(), *_score_cases(), *_answer_cases(), *_hyde_cases()]
LEARNED = ("decompose", "score", "answer")


# ---- the run and its checks ------------------------------------------------------------------


def _is_hyde(prompt: str) -> bool:
    """The HyDE call, whose prompt also has a `question` input: its closing request names `passage`."""
    return "passage" in prompt.rsplit("Respond with", 1)[-1]


def _targets(module: str, prompt: str) -> bool:
    """Whether `prompt` is a call of `module`: DSPy's ChatAdapter call or its JSONAdapter retry."""
    return f"[[ ## {FIELDS[module][0]} ## ]]" in prompt and _is_hyde(prompt) == (module == "hyde")


@dataclass
class Calls:
    """What the scripted LM saw: every prompt, and any exception a fixture's own code raised."""

    prompts: list[str] = dc_field(default_factory=list)
    fixture_errors: list[BaseException] = dc_field(default_factory=list)

    def of(self, module: str) -> int:
        return sum(1 for p in self.prompts if _targets(module, p))


def _respond(case: Case, calls: Calls) -> Callable[[str], Any]:
    """Cooperative, except that every call of `case.module` gets `case.output`."""
    others = cooperative(SUB_QUESTIONS)

    def respond(prompt: str) -> Any:
        calls.prompts.append(prompt)
        try:
            if not _targets(case.module, prompt):
                return others(prompt)
            return case.output(prompt) if callable(case.output) else case.output
        except Exception as exc:  # a broken fixture would otherwise pass as a typed `Failed`
            calls.fixture_errors.append(exc)
            raise

    return respond


class Utf8OnlyEmbedder:
    """The test's hash embedder, refusing text the production MiniLM tokenizer refuses (lone surrogates)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim

    def __call__(self, texts: Sequence[str]) -> Any:
        for text in texts:
            text.encode("utf-8")  # UnicodeEncodeError where the tokenizer raises TypeError
        return self.inner(texts)


def _budget(trace: QuestionTrace) -> int:
    """3 LM calls (decompose, score, answer), +1 when the first retrieval round uses HyDE."""
    rounds = trace.planner.get("retrieval_rounds") or []
    return 3 + int(bool(rounds) and bool(rounds[0]["use_hyde"]))


def _check_safe(store: Store, done: Completed, trace: QuestionTrace) -> None:
    """Scope, ids, pages and labels of a completed answer; it and its trace serialise to JSON."""
    allowed = set(store.entity_scope(store.resolve_entity("Banda Lane").entity_id))
    sent = [d for call in store.call_log or [] for d in (call.document_ids or ())]
    assert sent and all(is_canonical_uuid(d) and d in allowed for d in sent)
    assert all(is_canonical_uuid(d) for d in trace.store_document_ids)
    for section in done.sections:
        for ref in section.sources:
            document = store.catalog.documents[ref.document_id]
            assert ref.document_id in allowed, ref
            assert ref.filename == document.filename and 1 <= ref.page <= document.page_count, ref
            assert ref.title == citation_name(document, store.catalog.entities), ref
        labels = {cite(s) for s in section.sources}
        for line in (section.cited_answer, *section.cited_evidence):
            assert set(LABEL.findall(line)) <= labels, line
    done.model_dump_json()
    trace.model_dump_json()


def _check_module(case: Case, done: Completed, trace: QuestionTrace) -> None:
    """What the program promises about the output of the module that misbehaved."""
    assert [s.index for s in done.sections] == list(range(len(done.sections)))
    if case.module == "decompose":
        assert 1 <= len(done.sections) <= 5
        assert all(s.sub_question.strip() for s in done.sections)
    # No fixture writes a usable score below 8: a chunk is only ever dropped by a misread score.
    for chunk in (c for sq in trace.sub_questions for c in sq.chunks):
        assert chunk.kept and (chunk.relevance is None or 8 <= chunk.relevance <= 10), chunk
    for section in done.sections:
        if section.status == "answered":
            assert section.answer and 1 <= len(section.evidence) <= 3 and section.error is None
            assert len(section.answer.split()) <= 41  # at most 40 words and an ellipsis
            # a line the evidence does not state never reaches the reader
            assert not any(word in section.answer for word in ("999,999", "Quartermaine", "1999"))
        else:
            assert not section.sources and not section.evidence


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_malformed_output_ends_typed_within_budget_and_safe(demo_store: Store, case: Case) -> None:
    calls = Calls()
    store = dataclasses.replace(demo_store, embedder=Utf8OnlyEmbedder(demo_store.embedder), call_log=[])
    done, trace = _run(store, _respond(case, calls), question=case.question, property_ref="Banda Lane")
    assert not calls.fixture_errors
    assert isinstance(done, Completed | Failed), done
    # Stronger than typed: the LM answered every call, so malformed output is a fallback, never a failed question.
    assert isinstance(done, Completed), done
    assert calls.of(case.module) >= 1, "the malformed call was never made"
    assert trace.lm_calls <= _budget(trace)
    # the trace counts every call the LM saw: no adapter retry slips past the budget
    assert len(calls.prompts) == trace.lm_calls
    assert done.lm_calls == trace.lm_calls
    _check_safe(store, done, trace)
    _check_module(case, done, trace)


def test_fixture_count() -> None:
    """The fixture count is checked, not claimed: >= 80 over the three modules, >= 20 each, ids distinct."""
    per_module = Counter(c.module for c in CASES)
    assert sum(per_module[m] for m in LEARNED) >= 80, per_module
    assert all(per_module[m] >= 20 for m in LEARNED), per_module
    assert len({c.id for c in CASES}) == len(CASES)
