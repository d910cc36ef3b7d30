"""The one sanitising step and the hard caps, one test per way a compromised LM or a hostile user
tried to break the screen, a page or the record (inputs as they were seen), and its properties."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.answering.floors import MAX_LINE_WORDS, Draft
from pipeline.answering.sentences import offered_sentences
from pipeline.escapes import strip_controls
from pipeline.guards.sanitise import (
    MAX_ANSWER_BYTES,
    MAX_QUESTION_CHARS,
    MAX_SUB_QUESTION_CHARS,
    MAX_SUB_QUESTIONS,
    MAX_TRACE_BYTES,
    clean_sub_questions,
    sanitise,
    sanitise_question,
)
from pipeline.guards.sections import MAX_LINE_CHARS, GuardedSection, guard_section
from pipeline.program.events import Evidence, Section, cap_answer, render_markdown
from pipeline.program.trace import Intervention, QuestionTrace, fit_trace
from pipeline.types import Chunk, ChunkHit, SourceRef
from tests.support.compromised_server import (
    ESCAPES,
    FIELD_MARKERS,
    HUGE_BULLET_BYTES,
    NESTED_LINKS,
    RICH_MARKUP,
    SUB_QUESTION_HTML,
    SUB_QUESTION_LINKS,
)
from tests.support.harmless import assert_data_safe, assert_markdown_safe

LEASE = "Tenant: Peter Otieno Ochieng. Term: 3 years. Monthly rent: KSH 285,000 payable in advance."
CLAIM = "Monthly rent: KSH 285,000 payable in advance."


def _guarded(text: str) -> GuardedSection:
    """The section the guards let through when the LM answers `text` from the one shown chunk of lease.md."""
    chunks = [ChunkHit(Chunk(0, "doc-a", 1, 0, LEASE), "lease.md", 1.0)]
    evidence = offered_sentences(chunks, 2000)
    return guard_section(0, Draft(text, (2,), "written"), evidence, chunks, None)


def _bullets(*texts: str) -> tuple[str, ...]:
    """The answer line shown for each text the LM answered."""
    return tuple(_guarded(text).line for text in texts)


# ---- 1. sub-questions ------------------------------------------------------------------------------


def test_sub_questions_lose_links_images_and_html() -> None:
    cleaned, fell_back, removed, _ = clean_sub_questions([SUB_QUESTION_LINKS, SUB_QUESTION_HTML], "q")
    assert cleaned == ["What is the rent? pixel click me"] and not fell_back  # the script-only one is empty
    assert [r.split(":")[0] for r in removed] == ["image", "link", "html"]
    sections = [Section(index=0, sub_question=cleaned[0], answer="KSH 285,000")]
    assert_markdown_safe(render_markdown(sections))
    assert_data_safe(cleaned)


# ---- 2. links the old pattern missed -----------------------------------------------------------------


@pytest.mark.parametrize("link", NESTED_LINKS)
def test_nested_and_escaped_brackets_do_not_smuggle_a_link(link: str) -> None:
    (bullet,) = _bullets(f"{CLAIM} {link}")
    assert bullet.startswith(CLAIM) and "evil" not in bullet and "](" not in bullet
    assert_markdown_safe(f"- {bullet}")


@pytest.mark.parametrize(
    "link",
    ["[click](javascript:alert(1))", "[x](data:text/html,hi)", "![a](vbscript:msgbox)", "[f](file:///etc/passwd)"],
)
def test_links_with_targets_commonmark_refuses_lose_their_target_too(link: str) -> None:
    (bullet,) = _bullets(f"{CLAIM} {link}")
    assert bullet.startswith(CLAIM) and "](" not in bullet and ":" not in bullet.removeprefix(CLAIM)
    assert_markdown_safe(f"- {bullet}")


# ---- 3. Rich markup is text ---------------------------------------------------------------------------


def test_rich_markup_is_kept_as_text_and_never_interpreted() -> None:
    from rich.console import Console

    from pipeline.cli.common import plain, styled

    question = "What is the monthly rent under clause [/2]?"
    assert sanitise_question(question).text == question
    console = Console(record=True, width=200, color_system="truecolor", force_terminal=True)
    for text in (question, *RICH_MARKUP):
        console.print(styled(text))
        console.print(f"[dim]{plain(text)}[/]")  # escaped inside markup of the program's own
    printed = console.export_text()
    assert all(printed.count(text) == 2 for text in (question, *RICH_MARKUP))
    assert "\x1b]8" not in console.export_text(styles=True)


# ---- 4. terminal escape codes -------------------------------------------------------------------------


def test_escape_codes_and_invisible_characters_are_removed() -> None:
    (bullet,) = _bullets(f"{ESCAPES[0]}{CLAIM}{''.join(ESCAPES)}")
    assert bullet.startswith(CLAIM) and "open" in bullet  # an OSC 8 link keeps its text only
    assert_data_safe([bullet])
    assert strip_controls("a\x1b[31mb\x07c\r\nd\te\x9b2Jf\u202eg") == "abc\nd\tefg"


# ---- 5. field markers in every output field -----------------------------------------------------------


def test_field_markers_are_defused_in_bullets_and_sub_questions() -> None:
    bullets = _bullets(*(f"{CLAIM} {marker}" for marker in FIELD_MARKERS))
    assert bullets == (f"{CLAIM} ( # answer # )", f"{CLAIM} ( # completed # )")
    cleaned, *_ = clean_sub_questions([f"What is the rent? {FIELD_MARKERS[0]}"], "q")
    assert cleaned == ["What is the rent? ( # answer # )"]


def test_half_a_field_marker_is_defused_too_since_text_joined_to_it_could_complete_it() -> None:
    for text, expected in (("[[ ##", "( #"), ("note [[##", "note ( #"), ("x ## ]] end", "x # ) end")):
        clean = sanitise(text, 40)
        assert clean.text == expected and "field_marker: 1 defused" in clean.removed
    assert sanitise("Gross ## 5", 40).text == "Gross ## 5"  # two hashes alone mark nothing


# ---- 6. sizes are capped in code ----------------------------------------------------------------------


def test_a_huge_answer_line_is_cut_and_the_cut_recorded() -> None:
    guarded = _guarded((CLAIM + " ") * (HUGE_BULLET_BYTES // len(CLAIM)))
    assert len(guarded.line) <= MAX_LINE_CHARS and len(guarded.line.split()) <= MAX_LINE_WORDS + 1
    assert guarded.line.startswith(CLAIM)
    assert any(guard == "cap" and "cut to 40" in reason for guard, reason in guarded.interventions)
    assert _bullets(CLAIM) == (CLAIM,)


def test_sub_questions_are_capped_in_length_and_number() -> None:
    many = [f"What is the rent, part {i}? " + "x" * 20_000 for i in range(50)]
    cleaned, _, _, cut = clean_sub_questions(many, "q")
    assert len(cleaned) == MAX_SUB_QUESTIONS and all(len(s) <= MAX_SUB_QUESTION_CHARS for s in cleaned)
    assert len(cut) == MAX_SUB_QUESTIONS + 1 and cut[-1] == "50 sub-questions given: reading stopped at item 6"
    long_question = sanitise_question("What is the rent? " * 500)
    assert len(long_question.text) <= MAX_QUESTION_CHARS and long_question.cut_from == len("What is the rent? ") * 500


def test_the_answer_is_capped_in_bytes() -> None:
    quote = Evidence(text="😀" * 1000, source=SourceRef(document_id="d", filename="a.md", page=1))  # 4 bytes each
    sections = [Section(index=i, sub_question=f"q{i}", answer="x", evidence=(quote,) * 5) for i in range(5)]
    kept, dropped = cap_answer(sections, MAX_ANSWER_BYTES)
    assert len(render_markdown(kept).encode()) <= MAX_ANSWER_BYTES < len(render_markdown(sections).encode())
    assert dropped == 25 - sum(len(s.evidence) for s in kept) > 0 and kept[0].evidence == sections[0].evidence


def test_the_trace_is_capped_in_bytes() -> None:
    trace = QuestionTrace(question="q", scope={}, answer="a")
    trace.interventions = [Intervention(guard="grounding", target="x" * 400, reason="y" * 400) for _ in range(5000)]
    fit_trace(trace)
    assert len(trace.model_dump_json().encode()) <= MAX_TRACE_BYTES
    assert trace.interventions[-1].guard == "cap" and "guard records past 50" in trace.interventions[-1].reason


def test_trace_records_are_display_safe() -> None:
    item = Intervention(guard="lm", target="call", reason=f"{SUB_QUESTION_LINKS} {''.join(ESCAPES)} " + "z" * 9000)
    assert_data_safe([item.target, item.reason]) and len(item.reason) <= 500


# ---- properties ---------------------------------------------------------------------------------------

MARKDOWN_BITS = st.sampled_from(
    ["[", "]", "(", ")", "!", "<", ">", "\\", "&", "#", ";", "`", "*", "_", "-", "1.", ":", "/", " ", "\n",
     "http://e.x/y", "www.e.x", "<a href=x>", "&lt;", "&#x1b;", "&#x202e;", "\x1b", "]8;;", "[[ ## a ## ]]",
     "a", "b", "img", "script", "\u202e", "\x9b", "\x00"]
)  # fmt: skip
HOSTILE_TEXT = st.one_of(st.text(max_size=120), st.lists(MARKDOWN_BITS, max_size=40).map("".join))


@given(HOSTILE_TEXT, st.integers(min_value=20, max_value=400))
@settings(max_examples=400, deadline=None)
def test_sanitised_text_is_a_fixed_point_without_links_html_or_controls(text: str, cap: int) -> None:
    clean = sanitise(text, cap)
    assert sanitise(clean.text, cap).text == clean.text
    assert len(clean.text) <= cap and "\n" not in clean.text
    assert_markdown_safe(clean.text)
    assert_markdown_safe(f"## Sub-question 1: {clean.text}\n- {clean.text}")
    assert strip_controls(clean.text) == clean.text
    assert "[[ ##" not in clean.text and not re.search(r"(?i)\b[a-z][a-z0-9+.-]*://\S|\bwww\.\S", clean.text)
    json.dumps(clean.text, ensure_ascii=False).encode("utf-8")  # always writable


def test_a_question_is_kept_as_asked_only_when_nothing_needs_removing() -> None:
    asked = "What is   the rent\n at Banda Lane?"
    assert sanitise_question(asked).text == asked
    padded = "What is the rent?" + " " * 3000
    assert sanitise_question(padded).text == "What is the rent?"
    linked = "What is [the rent](https://evil.example)?\n"
    assert sanitise_question(linked).text == "What is the rent?"
