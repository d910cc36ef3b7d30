"""The web page in headless Chromium against a real `scoperag serve` process.

The server runs as a user starts it (`scoperag serve --index ... --lm http://... --corpus ...`), over a
demo corpus copy that also holds one hostile document, indexed with the hash embedder; its LM is a fake
OpenAI-compatible server on a real socket that answers like a cooperative model (and, for marked
questions, decomposes differently, finds nothing, or writes hostile text). The README's pictures are taken
with the embedded model instead (test_screenshots.py, `make screenshots`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.guards.sanitise import sanitised_text
from pipeline.guards.sections import NOT_FOUND
from pipeline.serving.web import CONTENT_SECURITY_POLICY
from tests.support.browser import skip_reason
from tests.support.fakes import ONE_SECTION_PHASES
from tests.support.page_driver import (
    HOSTILE_RELPATH,
    Serve,
    add_chip,
    ask,
    choose_entity,
    contains,
    entity_documents,
    open_view,
    trace_of,
    until,
    words,
)
from tests.support.page_lm import HOSTILE, HOSTILE_SUB_QUESTION, NOTHING, SECOND_SUB_QUESTION

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")

RENT = "What is the monthly rent at Banda Lane?"
LEASE = "What does the lease say about the deposit?"
PHASES_ONE_SECTION = ONE_SECTION_PHASES


# -- the page ---------------------------------------------------------------------------------------


def test_page_is_served_with_a_strict_content_security_policy(serve: Serve) -> None:
    server = serve("main")
    for path in ("/", "/static/js/main.js", "/static/style.css", "/v1/health"):
        response = server.get(path)
        assert response.status_code == 200, path
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY and "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert server.get("/static/../../pyproject.toml").status_code == 404


def test_no_scope_question_shows_progress_sections_and_copies_the_answer(page: Any, serve: Serve) -> None:
    server = serve("main")
    open_view(page, server)
    answer = ask(page, RENT)
    assert answer["phases"] == PHASES_ONE_SECTION
    assert answer["steps"] == ["done"] * 5
    assert answer["anchors"] == [RENT]
    assert page.eval_on_selector_all("#answer aside.typed", "a => a.map(x => x.dataset.field)") == []  # job fields
    [section] = answer["sections"]
    assert section["subQuestion"] == RENT and section["answer"] and section["evidence"] and section["sources"]
    # the sub-question anchor moves focus to its section
    page.click("nav.sub-questions a")
    assert page.evaluate("document.activeElement.id") == "answer-section-0"
    # sources carry snippets of the chunks kept for them
    page.click("#answer details.sources-box summary")
    page.wait_for_selector("#answer .sources blockquote.snippet")
    page.click("#answer button.copy")
    until(page, "() => document.querySelector('#answer .answer-head [role=status]').textContent === 'Copied.'")
    recorded = trace_of(server, answer["historyId"])
    assert page.evaluate("navigator.clipboard.readText()") == recorded["answer"]


def test_property_question_cites_only_that_property(page: Any, serve: Serve, tmp_path: Path) -> None:
    server = serve("main")
    open_view(page, server)
    choose_entity(page, "ask", "Banda Lane")
    answer = ask(page, LEASE)
    assert answer["phases"] == PHASES_ONE_SECTION
    sources = {s for section in answer["sections"] for s in section["sources"]}
    assert sources and sources <= entity_documents(server.store, "Banda Lane")
    assert trace_of(server, answer["historyId"])["trace"]["scope"]["kind"] == "property"
    page.click("#answer details.sources-box summary")
    page.wait_for_selector("#answer .sources blockquote.snippet")


def test_selected_documents_are_chips_and_bound_the_sources(page: Any, serve: Serve) -> None:
    server = serve("main")
    hits = server.store.search_documents("lease", k=20)
    leases = [hit.document.document_id for hit in hits if hit.document.filename == "lease.pdf"]
    chosen, dropped = leases[0], leases[1]
    open_view(page, server)
    add_chip(page, "ask", "lease", chosen)
    add_chip(page, "ask", "lease", dropped)
    # two lease.pdf are told apart by their owner, and by their folder in the list and the remove button
    owners = page.locator("#ask-chips li .chip-owner").all_text_contents()
    assert len(set(owners)) == 2 and all(owners), owners
    banda = next(d for d in server.store.catalog.documents.values() if d.relpath == "banda-lane/lease.pdf")
    page.fill("#ask-doc-search", "lease")
    page.wait_for_selector(f"#ask-doc-results button[data-document-id='{banda.document_id}']")
    assert "banda-lane/" in page.text_content(f"#ask-doc-results button[data-document-id='{banda.document_id}']")
    dropped_path = server.store.catalog.documents[dropped].relpath
    assert page.get_attribute(f"#ask-chips li[data-document-id='{dropped}'] button", "aria-label") == (
        f"Remove {dropped_path}"
    )
    page.click(f"#ask-chips li[data-document-id='{dropped}'] button")
    assert page.eval_on_selector_all("#ask-chips li", "items => items.map(i => i.dataset.documentId)") == [chosen]
    answer = ask(page, LEASE)
    sources = {s for section in answer["sections"] for s in section["sources"]}
    assert sources == {chosen}
    assert trace_of(server, answer["historyId"])["trace"]["scope"] == {
        "kind": "chip",
        "document_ids": [chosen],
        "entity_id": None,
    }


def test_a_section_without_relevant_chunks_says_so(page: Any, serve: Serve) -> None:
    open_view(page, serve("main"))
    answer = ask(page, f"What is the rent, and which {NOTHING} lives there?")
    assert answer["phases"][-1] == "completed" and answer["phases"].count("generating_subquestion") == 2
    found, nothing = answer["sections"]
    assert found["answer"] and found["evidence"] and "status-answered" in found["status"]
    assert nothing["answer"] == NOT_FOUND and "status-not_found" in nothing["status"] and not nothing["evidence"]
    assert nothing["sources"] == []


def test_a_citation_opens_the_cited_pdf_page_with_its_chunk_highlighted(page: Any, serve: Serve) -> None:
    server = serve("main")
    open_view(page, server)
    choose_entity(page, "ask", "Banda Lane")
    answer = ask(page, LEASE)
    citation = page.locator("#answer .answer-line button.citation").first
    document_id, number = citation.get_attribute("data-document-id"), int(citation.get_attribute("data-page"))
    document = server.store.catalog.documents[document_id]
    citation.click()
    page.wait_for_selector("#viewer-body .page-text")
    assert page.text_content("#viewer-title") == f"{document.filename}, page {number} of {document.page_count}"
    # the highlighted text is the text of the chunks kept for this section on that page
    trace = trace_of(server, answer["historyId"])["trace"]
    rows = [c["row"] for c in trace["sub_questions"][0]["chunks"] if c["kept"] and c["document_id"] == document_id]
    kept = [c for c in server.store.catalog.chunks(rows) if c.page == number]
    marked = words(" ".join(page.eval_on_selector_all("#viewer mark.cited", "marks => marks.map(m => m.textContent)")))
    assert kept and all(contains(marked, words(sanitised_text(c.text, 20_000))) for c in kept)
    if document.relpath.endswith(".pdf"):
        until(page, "() => document.querySelector('#viewer img.page-image').naturalWidth > 0")
        view = server.get(f"/v1/history/{answer['historyId']}/pages/{document_id}/{number}?section=0").json()
        assert view["kind"] == "pdf" and view["boxes"], view["note"]
    # Escape closes the viewer and gives focus back to the citation
    page.keyboard.press("Escape")
    assert not page.locator("#viewer").is_visible()
    assert page.evaluate("document.activeElement.dataset.documentId") == document_id


def test_a_citation_of_a_markdown_page_keeps_its_lines(page: Any, serve: Serve) -> None:
    server = serve("main")
    inspection = next(
        d.document_id for d in server.store.catalog.documents.values() if d.relpath == "banda-lane/inspection-report.md"
    )
    open_view(page, server)
    add_chip(page, "ask", "inspection report Banda Lane", inspection)
    ask(page, "What did the inspection find?")
    page.locator("#answer .answer-line button.citation").first.click()
    page.wait_for_selector("#viewer-body .page-text mark.cited")
    assert page.locator("#viewer img").count() == 0
    assert page.locator("#viewer .page-line").count() > 3  # the file's own lines, not one run of words
    assert page.text_content("#viewer-title").startswith("inspection-report.md, page ")


def test_a_document_outside_the_question_scope_is_refused(page: Any, serve: Serve) -> None:
    server = serve("main")
    open_view(page, server)
    choose_entity(page, "ask", "Banda Lane")
    answer = ask(page, LEASE)
    history_id = answer["historyId"]
    cited = {s for section in answer["sections"] for s in section["sources"]}
    trace = trace_of(server, history_id)["trace"]
    shown = cited | {c["document_id"] for sub in trace["sub_questions"] for c in sub["chunks"] if c["kept"]}
    elsewhere = sorted(entity_documents(server.store, "Banda Road"))[0]
    inside_not_shown = sorted(entity_documents(server.store, "Banda Lane") - shown)[0]
    fetch = "url => fetch(url).then(r => r.status)"
    base = f"/v1/history/{history_id}/pages"
    for document_id in (elsewhere, inside_not_shown):
        assert page.evaluate(fetch, f"{base}/{document_id}/1") == 404
        assert page.evaluate(fetch, f"{base}/{document_id}/1/image") == 404
    one = sorted(cited)[0]
    assert page.evaluate(fetch, f"{base}/{one}/1") == 200
    assert page.evaluate(fetch, f"{base}/{one}/999") == 404
    assert page.evaluate(fetch, f"/v1/history/{history_id[:8]}/pages/{one}/1") == 404  # no id prefixes
    # the viewer says so instead of showing anything
    page.evaluate(
        "([h, d]) => import('/static/js/viewer.js').then(m => m.openPage({historyId: h, documentId: d, page: 1}))",
        [history_id, elsewhere],
    )
    page.wait_for_selector("#viewer-body .error")
    assert page.text_content("#viewer-body .error") == "This page is not among this answer's sources."
    assert page.locator("#viewer-body .page-text").count() == 0


def test_history_lists_questions_and_shows_a_trace(page: Any, serve: Serve) -> None:
    server = serve("main")
    open_view(page, server)
    choose_entity(page, "ask", "Banda Lane")
    answer = ask(page, f"{LEASE} (history)")
    page.click("a[data-view='history']")
    row = page.locator(f"#history-table tr[data-history-id='{answer['historyId']}']")
    row.wait_for()
    assert row.locator("td").nth(1).text_content() == f"{LEASE} (history)"
    row.locator("button").click()
    page.wait_for_selector("#trace h3")
    trace = trace_of(server, answer["historyId"])["trace"]
    text = page.text_content("#trace")
    assert f"{trace['lm_calls']} LM calls" in text
    assert f"{trace['prompt_tokens']} prompt + {trace['completion_tokens']} completion tokens" in text
    chunks = trace["sub_questions"][0]["chunks"]
    kept = sum(c["kept"] for c in chunks)
    assert f"Chunks retrieved ({len(chunks)}) and kept ({kept})" in text
    assert page.locator("#trace .trace-sub tbody tr").count() >= len(chunks)
    assert json.loads(page.text_content("#trace pre.plan")) == trace["planner"]
    assert page.evaluate("document.activeElement.id") == "trace-title"


def test_profile_export_and_import_round_trip(page: Any, serve: Serve, tmp_path: Path) -> None:
    server = serve("profiles")  # activation changes the program: a server of its own
    open_view(page, server, "profiles")
    page.wait_for_selector("#profiles-table tr[data-profile='alpha']")
    with page.expect_download() as download:
        page.click("a[aria-label='Export alpha']")
    exported = tmp_path / "alpha.json"
    download.value.save_as(exported)
    assert download.value.suggested_filename == "alpha.scoperag-profile.json"
    original = json.loads(exported.read_text())
    assert original == server.get("/v1/profiles/alpha/export").json()

    page.set_input_files("#import-file", str(exported))
    page.wait_for_selector("#import-preview dl")
    preview = page.eval_on_selector_all(
        "#import-preview dd", "items => Object.fromEntries(items.map(i => [i.dataset.field, i.textContent]))"
    )
    assert preview["Source name"] == "alpha"
    assert preview["Exported"] == original["export"]["manifest"]["created_at"]
    assert "decompose (1 demo)" in preview["Modules"] and "answer (0 demos)" in preview["Modules"]
    assert page.input_value("#import-name") == "alpha"
    page.fill("#import-name", "beta")
    page.click("#import-button")
    page.wait_for_selector("#profiles-table tr[data-profile='beta']")
    copied = server.get("/v1/profiles/beta/export").json()
    assert copied["export"] == original["export"] and copied["note"] == original["note"]

    # importing over an existing profile asks first; cancelling changes nothing
    page.click("#import-button")
    page.wait_for_selector("#confirm[open]")
    assert "beta" in page.text_content("#confirm-text")
    page.click("#confirm-no")
    assert page.text_content("#profiles-status") == "Import cancelled; nothing changed."
    page.click("#import-button")
    page.click("#confirm-yes")
    until(page, "() => document.querySelector('#profiles-status').textContent === 'Imported beta.'")

    page.click("button[aria-label='Activate beta']")
    page.wait_for_selector("#profiles-table tr[data-profile='beta'] button[disabled]")
    assert server.get("/v1/health").json()["program"]["profile"] == "beta"


def test_ab_view_aligns_sections_by_sub_question(page: Any, serve: Serve, tmp_path: Path) -> None:
    server = serve("main")
    open_view(page, server, "compare")
    page.wait_for_selector("#compare-right option[value='profile:alpha']", state="attached")
    page.fill("#compare-question", LEASE)
    choose_entity(page, "compare", "Banda Lane")
    page.select_option("#compare-left", "uncompiled")
    page.select_option("#compare-right", "profile:alpha")
    page.click("#compare-button")
    page.wait_for_selector("#compare-result .ab-row:not(.ab-top)")
    rows = page.eval_on_selector_all(
        "#compare-result .ab-row:not(.ab-top)",
        """rows => rows.map(row => [...row.children].map(cell =>
            cell.classList.contains('empty') ? null : cell.dataset.subQuestion))""",
    )
    # the uncompiled program asks the question itself; the profile also asks a second sub-question
    assert rows == [[LEASE, LEASE], [None, SECOND_SUB_QUESTION]]
    heads = page.eval_on_selector_all("#compare-result .ab-top h3", "hs => hs.map(h => h.textContent)")
    assert heads == ["Uncompiled program", "Profile alpha"]
    # each side says which steps its program ran by the LM and which by their floors
    steps = page.eval_on_selector_all("#compare-result .ab-top .steps", "ps => ps.map(p => p.textContent)")
    assert len(steps) == 2 and steps[0].startswith("Steps: every step by the LM (decompose, score, answer")
    assert all(step.startswith("Steps: ") and "LM" in step for step in steps)
    allowed = entity_documents(server.store, "Banda Lane")
    sources = page.eval_on_selector_all("#compare-result .sources li", "items => items.map(i => i.dataset.documentId)")
    assert sources and set(sources) <= allowed


def test_hostile_document_and_lm_output_stay_inert_text(page: Any, serve: Serve) -> None:
    server = serve("main")
    hostile = next(d.document_id for d in server.store.catalog.documents.values() if d.relpath == HOSTILE_RELPATH)
    open_view(page, server)
    add_chip(page, "ask", "tenant notes", hostile)
    # the hostile sub-question's figures are the question's own, so the sub-question guard lets it through
    answer = ask(page, f"What do the {HOSTILE} tenant notes say? {HOSTILE_SUB_QUESTION}")
    heading = page.text_content("#answer article.card:nth-of-type(2) h4")
    # HTML goes even inside a code span (an API client may insert the text raw); the words stay
    assert "What does" in heading and "<img" not in heading and "onerror" not in heading
    assert answer["sections"][1]["sources"] == [hostile]
    page.click("#answer details.sources-box summary")
    page.wait_for_selector("#answer blockquote.snippet")
    page.locator("#answer .answer-line button.citation").first.click()
    page.wait_for_selector("#viewer-body .page-text mark.cited")
    viewed = page.text_content("#viewer-body")
    assert "Tenant notes" in viewed and "<img" not in viewed and "onerror" not in viewed
    page.hover("#viewer-body .page-text")
    # nothing the document or the LM wrote became an element or ran
    injected = page.evaluate(
        """() => [...document.querySelectorAll('img, script, iframe, object, embed, b, a[href^="javascript"]')]
            .filter(e => !(e.tagName === 'SCRIPT' && e.src.endsWith('/static/js/main.js')))
            .map(e => e.outerHTML)"""
    )
    assert injected == []
    assert page.evaluate("window.__pwned") is None
    # a javascript: link keeps its text and loses its target: shown, never a link
    assert "log in" in heading
    assert "javascript:" not in heading


def test_every_control_has_a_label_and_the_page_works_from_the_keyboard(page: Any, serve: Serve) -> None:
    open_view(page, serve("main"))
    unlabelled = page.evaluate(
        """() => [...document.querySelectorAll('input, select, textarea, button')]
            .filter(c => !(c.labels && c.labels.length) && !c.getAttribute('aria-label') && !c.textContent.trim())
            .map(c => c.outerHTML)"""
    )
    assert unlabelled == []
    page.focus("#ask-question")
    page.keyboard.type(RENT)
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".answer-body")
    citation = page.locator("#answer .answer-line button.citation").first
    citation.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#viewer[open] .page-text")
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.classList.contains('citation')")


def test_notice_clarifying_questions_and_any_typed_answer_are_shown_as_text(page: Any, serve: Serve) -> None:
    open_view(page, serve("main"))
    done = {
        "phase": "completed",
        "answer": "",
        "sections": [],
        "strategy": "clarify_first",
        "clarifying_questions": ["Which <b>property</b> do you mean?"],
        "notice": "retrieve_docs was given up after 3 failures",
        "other_entity": {"asked": "Banda Lane", "documents_are_about": ["<i>Banda Road</i>"]},
        "lm_calls": 1,
        "tokens": 10,
        "seconds": 0.1,
        "history_id": None,
    }
    page.evaluate(
        """done => import('/static/js/answer.js').then(m => {
            document.querySelector('#answer').replaceChildren(m.renderAnswer(done));
        })""",
        done,
    )
    assert page.text_content("#answer .clarify li") == "Which <b>property</b> do you mean?"
    assert page.text_content("#answer .notice[role=note]") == "Note: retrieve_docs was given up after 3 failures"
    typed = page.locator("#answer aside.typed[data-field='other_entity']")
    assert typed.locator("h4").text_content() == "Other entity"
    assert typed.locator("dt").all_text_contents() == ["Asked", "Documents are about"]
    assert typed.locator("dd").first.text_content() == "Banda Lane"
    assert typed.locator("li").text_content() == "<i>Banda Road</i>"
    assert page.locator("#answer b, #answer i").count() == 0


def test_typed_values_and_titled_citations_are_shown_as_text(page: Any, serve: Serve) -> None:
    from pipeline.program.events import value_text
    from pipeline.types import SourceRef
    from pipeline.values.typed import TypedValue

    open_view(page, serve("main"))
    hostile = "<img src=x onerror=window.__pwned=9> Acme"
    cover = SourceRef(document_id="d-1", filename="primary-document.html", page=4, title=f"{hostile} 10-Q")
    statement = SourceRef(document_id="d-1", filename="primary-document.html", page=12, title=f"{hostile} 10-Q")
    other = SourceRef(document_id="d-2", filename="primary-document.html", page=7, title="Beta Corp. 10-K")
    sales = TypedValue(kind="number", value=406100000, currency="USD", period="2023-07-01", pages=(cover, statement))
    beta = TypedValue(kind="number", value=12.5, unit="%", pages=(other,))
    absent = TypedValue(
        kind="number", absent=True, absent_value="N/A", note="<b>reported in GBP</b>, not the EUR asked for"
    )
    winner = TypedValue(kind="name", value=f"{hostile} Inc.", pages=(cover, other))

    def section(index: int, value: TypedValue, status: str = "answered") -> dict[str, Any]:
        sources = [s.model_dump() for s in value.pages]
        return {
            "index": index,
            "sub_question": f"question {index}",
            "answer": "" if status != "answered" else "406.1",
            "answer_sources": sources[:1],
            "evidence": [],
            "sources": sources,
            "status": status,
            "basis": None,
            "formula": None,
            "error": None,
            "value": value.model_dump(mode="json"),
        }

    done = {
        "phase": "completed",
        "answer": "",
        "strategy": "retrieve_then_answer",
        "lm_calls": 0,
        "tokens": 0,
        "seconds": 0.1,
        "history_id": "0e5c3f4e-0000-4000-8000-000000000000",
        "value": winner.model_dump(mode="json"),
        "sections": [section(0, sales), section(1, beta), section(2, absent, "not_found")],
    }
    page.evaluate(
        """done => import('/static/js/answer.js').then(m => {
            document.querySelector('#answer').replaceChildren(m.renderAnswer(done));
        })""",
        done,
    )
    shown = page.eval_on_selector_all("#answer .value-text", "nodes => nodes.map(n => n.textContent)")
    # the page says what the command line says, word for word
    assert shown == [value_text(v) for v in (winner, sales, beta, absent)]
    assert shown[1] == "406,100,000 USD (number; period 2023-07-01; pages 4, 12)"
    assert shown[2] == "12.5% (number; page 7)"
    citation = page.locator("#answer-section-0 .answer-line .citation")
    assert citation.text_content() == f"[{hostile} 10-Q, page 4]"
    assert citation.get_attribute("title") == "primary-document.html"  # the file name stays a hover away
    assert citation.get_attribute("aria-label") == f"Open {hostile} 10-Q, page 4"
    assert page.locator("#answer img, #answer b").count() == 0
    assert page.evaluate("window.__pwned === undefined")
