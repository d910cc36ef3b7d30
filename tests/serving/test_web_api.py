"""What the web page stands on, without a browser: which pages an answer may open (one test per branch),
page text and PDF highlights, the page's files and headers, and the catalog, history and A/B endpoints."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import uuid
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

from pipeline.export.profiles import ProfilePaths, add_profile
from pipeline.guards.sanitise import sanitised_text
from pipeline.program.trace import QuestionTrace, RetrievedChunk, SubQuestionTrace
from pipeline.serving.access import cited_rows, page_refusal, shown_pages
from pipeline.serving.highlights import STRENGTH, pieces, quote_spans
from pipeline.serving.pages import (
    cited_spans,
    display_lines,
    page_chunks,
    page_content,
    page_words,
    pdf_boxes,
    render_pdf_page,
)
from pipeline.serving.schemas import QueryRequest
from pipeline.serving.web import CONTENT_SECURITY_POLICY, static_files
from pipeline.store import Store
from pipeline.store.reading import read_source
from tests.conftest import DEMO_DIR
from tests.support.app_server import Start, post, query
from tests.support.exports import DEMO_QUESTION, save_demo_export
from tests.support.fakes import cooperative_llama, embedded_lm
from tests.support.scopes import OwnersCatalog

DOC_A = "aaaaaaaa-1111-4111-8111-111111111111"
DOC_B = "22222222-2222-4222-8222-222222222222"
DOC_C = "33333333-3333-4333-8333-333333333333"
ENTITY = "44444444-4444-4444-8444-444444444444"
LEASE = "What does the lease say about the deposit?"


def trace(scope: dict[str, Any], cited: list[tuple[str, int]], kept: list[tuple[str, int, int]]) -> QuestionTrace:
    """A recorded question: its scope, one section citing `cited` pages, chunks (document, page, row) kept."""
    recorded = QuestionTrace(question="q", scope=scope)
    recorded.sections = [
        {
            "index": 0,
            "sub_question": "q",
            "answer": "b",
            "sources": [{"document_id": d, "filename": "f.pdf", "page": p} for d, p in cited],
        }
    ]
    chunks = [
        RetrievedChunk(document_id=d, filename="f", page=p, row=r, retrieval_score=0.5, kept=True) for d, p, r in kept
    ]
    chunks.append(RetrievedChunk(document_id=DOC_C, filename="f", page=1, row=99, retrieval_score=0.1, kept=False))
    recorded.sub_questions = [SubQuestionTrace(index=0, sub_question="q", chunks=chunks)]
    return recorded


def owns(documents: list[str]) -> OwnersCatalog:
    return OwnersCatalog({ENTITY: documents})


CHIP = {"kind": "chip", "document_ids": [DOC_A, DOC_B]}
PROPERTY = {"kind": "property", "entity_id": ENTITY}
NO_SCOPE = {"kind": "no_scope"}


# -- which pages an answer may open -----------------------------------------------------------------


def test_a_cited_page_inside_the_scope_opens() -> None:
    recorded = trace(CHIP, [(DOC_A, 2)], [(DOC_A, 2, 7)])
    assert page_refusal(recorded, DOC_A, 2, 4, owns([])) is None


def test_other_pages_of_a_document_the_answer_showed_are_refused() -> None:
    recorded = trace(CHIP, [(DOC_A, 2)], [(DOC_A, 3, 7)])
    assert page_refusal(recorded, DOC_A, 3, 4, owns([])) is None  # a kept chunk's page
    assert page_refusal(recorded, DOC_A, 1, 4, owns([])) == "not among the answer's cited or kept pages"
    assert page_refusal(recorded, DOC_A, 4, 4, owns([])) == "not among the answer's cited or kept pages"


def test_a_document_the_answer_kept_but_did_not_cite_opens() -> None:
    recorded = trace(PROPERTY, [(DOC_A, 1)], [(DOC_B, 3, 8)])
    assert page_refusal(recorded, DOC_B, 3, 5, owns([DOC_A, DOC_B])) is None


def test_no_scope_opens_only_what_the_answer_showed() -> None:
    recorded = trace(NO_SCOPE, [(DOC_A, 1)], [])
    assert page_refusal(recorded, DOC_A, 1, 1, owns([])) is None
    assert page_refusal(recorded, DOC_B, 1, 1, owns([])) == "not among the answer's cited or kept pages"


def test_a_document_outside_the_chip_is_refused_even_when_recorded_as_a_source() -> None:
    recorded = trace({"kind": "chip", "document_ids": [DOC_A]}, [(DOC_A, 1), (DOC_B, 1)], [])
    assert page_refusal(recorded, DOC_B, 1, 3, owns([])) == "outside the question's scope"


def test_a_document_of_another_property_is_refused() -> None:
    recorded = trace(PROPERTY, [(DOC_A, 1), (DOC_B, 1)], [])
    assert page_refusal(recorded, DOC_B, 1, 3, owns([DOC_A])) == "outside the question's scope"


def test_an_implicit_entity_scope_opens_only_the_named_entitys_documents() -> None:
    # no scope given, the question named ENTITY: only its documents were searched, and only they open
    recorded = trace(NO_SCOPE, [(DOC_A, 1), (DOC_B, 1)], [])
    recorded.implicit_scope = [ENTITY]
    assert page_refusal(recorded, DOC_A, 1, 3, owns([DOC_A])) is None
    assert page_refusal(recorded, DOC_B, 1, 3, owns([DOC_A])) == "outside the question's scope"
    recorded.implicit_scope = ["55555555-5555-4555-8555-555555555555"]  # an entity the catalog lost
    assert page_refusal(recorded, DOC_A, 1, 3, owns([DOC_A])) == "the question's recorded scope no longer resolves"


def test_a_document_in_scope_the_answer_never_showed_is_refused() -> None:
    recorded = trace(CHIP, [(DOC_A, 1)], [])
    assert page_refusal(recorded, DOC_B, 1, 3, owns([])) == "not among the answer's cited or kept pages"
    assert page_refusal(trace(NO_SCOPE, [], [(DOC_A, 1, 1)]), DOC_C, 1, 3, owns([])) == (
        "not among the answer's cited or kept pages"  # DOC_C's chunk was retrieved but dropped
    )


def test_a_page_beyond_the_document_is_refused() -> None:
    recorded = trace(CHIP, [(DOC_A, 1)], [])
    assert page_refusal(recorded, DOC_A, 5, 4, owns([])) == "the document has no page 5"
    assert page_refusal(recorded, DOC_A, 0, 4, owns([])) == "the document has no page 0"


def test_a_non_canonical_id_is_refused() -> None:
    recorded = trace(CHIP, [(DOC_A, 1)], [])
    assert page_refusal(recorded, DOC_A.upper(), 1, 4, owns([])) == "not a canonical document id"
    assert page_refusal(recorded, "../../etc/passwd", 1, 4, owns([])) == "not a canonical document id"


def test_a_recorded_scope_that_no_longer_resolves_is_refused() -> None:
    broken = trace({"kind": "chip", "document_ids": []}, [(DOC_A, 1)], [])
    assert page_refusal(broken, DOC_A, 1, 4, owns([])) == "the question's recorded scope no longer resolves"
    gone = trace({"kind": "property", "entity_id": DOC_C}, [(DOC_A, 1)], [])
    assert page_refusal(gone, DOC_A, 1, 4, owns([DOC_A])) == "the question's recorded scope no longer resolves"


def test_shown_pages_and_cited_rows() -> None:
    recorded = trace(NO_SCOPE, [(DOC_A, 1)], [(DOC_A, 1, 4), (DOC_A, 2, 5), (DOC_B, 1, 6)])
    assert shown_pages(recorded) == {(DOC_A, 1), (DOC_A, 2), (DOC_B, 1)}
    assert cited_rows(recorded, DOC_A, 1) == [4]
    assert cited_rows(recorded, DOC_A, 1, section=0) == [4]
    assert cited_rows(recorded, DOC_A, 1, section=1) == []
    assert cited_rows(recorded, DOC_C, 1) == []  # dropped chunks are never marked as cited


# -- page text ---------------------------------------------------------------------------------------


def test_every_page_rebuilt_from_its_chunks_is_the_page_the_index_read(demo_store: Store) -> None:
    overlap = int(demo_store.manifest.settings["chunk_overlap"])
    checked = 0
    for document in demo_store.catalog.documents.values():
        pages = read_source(DEMO_DIR / document.relpath, document.relpath).pages
        for number, text in enumerate(pages, start=1):
            assert page_words(page_chunks(demo_store, document, number), overlap) == text.split(), document.relpath
            checked += 1
    assert checked > 60


def test_cited_chunks_are_marked_and_lines_kept() -> None:
    text = "Title line\nfirst words of the chunk\nrun on here. Then other text\n# a heading"
    spans = cited_spans(text, [["chunk", "run", "on"], ["missing", "words"]])
    assert [text[a:b] for a, b in spans] == ["chunk\nrun on"]
    lines = [[(s.text, s.cited) for s in line] for line in display_lines(text, spans)]
    assert lines == [
        [("Title line", False)],
        [("first words of the", False), ("chunk", True)],
        [("run on", True), ("here. Then other text", False)],
        [("a heading", False)],  # every segment is sanitised: Markdown syntax is not shown
    ]


def test_page_text_is_sanitised() -> None:
    text = 'Rent `<img src=x onerror="alert(1)">` due <script>alert(2)</script> [pay](https://evil.example/x)'
    [line] = display_lines(text, [])
    assert [s.text for s in line] == [sanitised_text(text, 20_000)]
    assert "<script>" not in line[0].text and "evil.example" not in line[0].text


def test_the_original_page_is_used_only_while_it_still_matches_the_index(demo_store: Store, tmp_path: Path) -> None:
    document = next(d for d in demo_store.catalog.documents.values() if d.relpath == "banda-lane/inspection-report.md")
    cited = page_chunks(demo_store, document, 1)[:1]
    indexed = page_content(demo_store, None, document, 1, cited)
    assert indexed.original is None and "--corpus" in (indexed.note or "")
    assert len(indexed.lines) == 1  # the indexed words, one run
    original = page_content(demo_store, DEMO_DIR, document, 1, cited)
    assert original.original == (DEMO_DIR / document.relpath).resolve() and original.note is None
    assert len(original.lines) > 3 and any(s.cited for line in original.lines for s in line)
    changed = tmp_path / "demo"
    (changed / "banda-lane").mkdir(parents=True)
    (changed / document.relpath).write_text("Someone rewrote this file after it was indexed.\n")
    stale = page_content(demo_store, changed, document, 1, cited)
    assert stale.original is None and "changed after indexing" in (stale.note or "")
    missing = page_content(demo_store, tmp_path / "empty", document, 1, cited)
    assert missing.original is None and "not in the corpus folder" in (missing.note or "")


def test_a_relpath_leaving_the_corpus_folder_is_never_read(demo_store: Store, tmp_path: Path) -> None:
    document = next(iter(demo_store.catalog.documents.values()))
    outside = tmp_path / "secret.md"
    outside.write_text("secret")
    escaping = dataclasses.replace(document, relpath="../secret.md")
    (tmp_path / "corpus").mkdir()
    content = page_content(demo_store, tmp_path / "corpus", escaping, 1, [])
    assert content.original is None and "not in the corpus folder" in (content.note or "")


QUOTE = "On signing, the Tenant pays a deposit of KSH 570,000, equal to 2 months' rent."


def _pixel(image: Image.Image, box: Any) -> tuple[int, int, int]:
    """The colour just inside the left edge of `box`, half way down (between the letters' strokes)."""
    return image.getpixel((int((box.left + 0.002) * image.width), int((box.top + box.height / 2) * image.height)))


def test_a_kept_chunk_is_shaded_and_its_quote_and_answer_highlighted_on_the_drawn_page(demo_store: Store) -> None:
    lease = next(d for d in demo_store.catalog.documents.values() if d.relpath == "banda-lane/lease.pdf")
    chunks = page_chunks(demo_store, lease, 2)
    cited = [c for c in chunks if "deposit" in c.text.lower()][:1]
    path = DEMO_DIR / lease.relpath
    boxes = pdf_boxes(path, 2, cited, [QUOTE], ["KSH 570,000"])
    assert boxes and all(0 <= b.left < 1 and 0 <= b.top < 1 and b.width > 0 and b.height > 0 for b in boxes)
    assert {b.mark for b in boxes} == {"kept", "evidence", "answer"}
    image = Image.open(io.BytesIO(render_pdf_page(path, 2, cited, [QUOTE], ["KSH 570,000"]))).convert("RGB")
    assert image.width == 1000
    # over white paper: the kept chunk lightly shaded, the quote in a stronger yellow (HIGHLIGHT_FILL: no blue)
    kept = _pixel(image, min((b for b in boxes if b.mark == "kept"), key=lambda b: b.top))
    shade = _pixel(image, next(b for b in boxes if b.mark == "evidence" and b.width > 0.05))
    assert kept[0] > 240 and 200 < kept[2] < 250, kept
    assert shade[0] > 200 and shade[2] < 180 and shade[2] < kept[2], shade
    plain = Image.open(io.BytesIO(render_pdf_page(path, 2, []))).convert("RGB")
    assert pdf_boxes(path, 2, []) == [] and plain.getpixel((5, 5)) == (255, 255, 255)


def test_quoted_sentences_and_the_answer_span_are_marked_in_the_page_text(demo_store: Store) -> None:
    lease = next(d for d in demo_store.catalog.documents.values() if d.relpath == "banda-lane/lease.pdf")
    cited = [c for c in page_chunks(demo_store, lease, 2) if "deposit" in c.text.lower()][:1]
    # the quote as the answer shows it: sanitised, its spacing and quote marks changed
    shown = QUOTE.replace("months'", "months\u2019").replace(" of ", "  of ")
    content = page_content(demo_store, DEMO_DIR, lease, 2, cited, [shown], ["KSH 570,000", "nowhere said"])
    marked = {mark: " ".join(s.text for line in content.lines for s in line if s.mark == mark) for mark in STRENGTH}
    assert marked["answer"] == "KSH 570,000"
    assert (
        marked["evidence"].startswith("On signing, the Tenant pays a deposit of") and "2 months" in marked["evidence"]
    )
    assert "deposit bears no interest" in marked["kept"] and "KSH 570,000" not in marked["kept"]
    # an answer line is marked only inside a quote
    elsewhere = page_content(demo_store, DEMO_DIR, lease, 2, cited, [], ["KSH 570,000"])
    assert not any(s.mark == "answer" for line in elsewhere.lines for s in line)


def test_spans_of_quotes_are_found_by_their_words_and_overlaps_take_the_stronger_mark() -> None:
    text = "Rent is KSH 285,000 a month.\nThe deposit is KSH 570,000."
    [evidence] = quote_spans(text, ["the  Deposit is KSH 570 000"])
    assert text[evidence[0] : evidence[1]] == "The deposit is KSH 570,000"
    assert quote_spans(text, ["KSH"], [evidence]) == [(text.index("KSH 570"), text.index("KSH 570") + 3)]
    assert quote_spans(text, ["absent words", "a"]) == []
    marks = pieces(text, {"kept": [(0, len(text))], "evidence": [evidence], "answer": [(evidence[1] - 7, evidence[1])]})
    assert [m for _, m in marks] == ["kept", "evidence", "answer", "kept"]


# -- the page's files and headers ---------------------------------------------------------------------

# Ways a script can turn a string into markup or code; the page uses none of them.
SINKS = re.compile(
    r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setTimeout\(\s*['\"`]"
)


def test_the_page_inserts_nothing_as_markup_and_carries_no_inline_code() -> None:
    files = static_files()
    assert {"index.html", "style.css", "js/main.js", "js/dom.js"} <= set(files)
    for name, (body, media_type) in files.items():
        text = body.decode()
        if name.endswith(".js"):
            assert media_type.startswith("text/javascript")
            assert SINKS.search(text) is None, name
        if name.endswith(".html"):
            assert re.search(r"<script(?![^>]*\bsrc=)", text) is None  # every script is a file
            assert re.search(r"\son[a-z]+\s*=|\sstyle\s*=|<style", text) is None


def test_headers_and_cross_origin_refusal(start: Start) -> None:
    server = start()
    page = server.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert page.headers["x-frame-options"] == "DENY" and page.headers["referrer-policy"] == "no-referrer"
    assert server.get("/static/nothing.js").status_code == 404
    foreign = httpx.post(server.query_url, json={"question": LEASE}, headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403 and "cross-origin" in foreign.json()["detail"]
    assert foreign.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    same = httpx.post(server.query_url, json={"question": " "}, headers={"Origin": server.url})
    assert same.status_code == 422  # past the origin check, refused for its blank question
    too_big = httpx.post(server.query_url, content=b"x" * (2 * 1024 * 1024))
    assert too_big.status_code == 413 and too_big.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


# -- catalog -----------------------------------------------------------------------------------------


def test_entities_and_document_search(start: Start) -> None:
    server = start()
    listed = server.get("/v1/entities").json()
    assert listed["kind"] == "property"
    names = {e["name"] for e in listed["entities"]}
    assert {"Banda Lane", "Banda Road"} <= names and len(names) == len(server.store.catalog.entities)
    found = server.get("/v1/documents", params={"q": "lease", "entity": "Banda Lane", "k": 50}).json()["documents"]
    banda = set(server.store.entity_document_ids(server.store.resolve_entity("Banda Lane").entity_id))
    assert {d["document_id"] for d in found} == banda
    assert all(d["entities"] for d in found) and any(d["filename"] == "lease.pdf" for d in found)
    assert {d["folder"] for d in found} == {"banda-lane"}  # what tells two lease.pdf apart
    assert server.get("/v1/documents", params={"q": "lease", "entity": "Nowhere Street"}).status_code == 422
    assert server.get("/v1/documents").status_code == 422
    assert server.get("/v1/documents", params={"q": "x" * 201}).status_code == 422


# -- history, sources and pages ----------------------------------------------------------------------


def test_the_history_lists_the_questions_of_the_index_served_and_all_on_request(start: Start, tmp_path: Path) -> None:
    """Questions asked of another index (an SEC index, once shown here as about "an entity this index no longer
    holds") are left out unless `all` asks for them; each then names its index."""
    from pipeline.evaluation.history import History
    from pipeline.program.trace import QuestionTrace

    path = tmp_path / "history.sqlite"
    earlier = History(path)
    theirs = earlier.record(
        QuestionTrace(question="What is Apple's revenue?", scope={"kind": "no_scope"}), index="/x/sec"
    )
    unknown = earlier.record(QuestionTrace(question="Asked before indexes were kept?", scope={"kind": "no_scope"}))
    earlier.close()
    server = start(history=path, index="/x/demo")
    ours = query(server, question=LEASE, property="Banda Lane").last["history_id"]
    listed = server.get("/v1/history").json()["entries"]
    assert [(e["history_id"], e["index"]) for e in listed] == [(ours, None)]
    every = server.get("/v1/history", params={"all": "true"}).json()["entries"]
    assert [(e["history_id"], e["index"]) for e in every] == [(ours, None), (unknown, None), (theirs, "sec")]


def test_history_sources_and_pages(start: Start, tmp_path: Path) -> None:
    server = start(history=tmp_path / "history.sqlite", corpus=DEMO_DIR)
    done = query(server, question=LEASE, property="Banda Lane").last
    history_id = done["history_id"]
    listed = server.get("/v1/history").json()["entries"]
    assert [e["history_id"] for e in listed] == [history_id] and listed[0]["question"] == LEASE
    detail = server.get(f"/v1/history/{history_id}").json()
    assert detail["answer"] == done["answer"] and detail["trace"]["scope"]["kind"] == "property"
    sources = server.get(f"/v1/history/{history_id}/sources").json()["sections"]
    assert [[(s["document_id"], s["page"]) for s in section["sources"]] for section in sources] == [
        [(s["document_id"], s["page"]) for s in section["sources"]] for section in done["sections"]
    ]
    assert all(s["snippet"] for section in sources for s in section["sources"])

    source = done["sections"][0]["sources"][0]
    base = f"/v1/history/{history_id}/pages/{source['document_id']}/{source['page']}"
    view = server.get(f"{base}?section=0").json()
    assert view["filename"] == source["filename"] and view["page"] == source["page"]
    assert any(s["cited"] for line in view["lines"] for s in line)
    if view["kind"] == "pdf":
        assert view["image"] == f"{base}/image?section=0" and view["boxes"]
        png = server.get(view["image"])
        assert png.status_code == 200 and png.headers["content-type"] == "image/png"
        assert png.content.startswith(b"\x89PNG")

    for wrong in (history_id[:8], str(uuid.uuid4()), "not-an-id"):
        assert server.get(f"/v1/history/{wrong}").status_code == 404
        assert server.get(f"/v1/history/{wrong}/pages/{source['document_id']}/1").status_code == 404
    assert server.get("/v1/history", params={"limit": 101}).status_code == 422
    other = sorted(server.store.entity_document_ids(server.store.resolve_entity("Banda Road").entity_id))[0]
    refused = server.get(f"/v1/history/{history_id}/pages/{other}/1")
    assert refused.status_code == 404 and refused.json()["detail"] == "no such page among this answer's sources"
    assert server.get(f"/v1/history/{history_id}/pages/{uuid.uuid4()!s}/1").status_code == 404


def test_only_the_pages_an_answer_cited_or_kept_are_served(start: Start, tmp_path: Path) -> None:
    server = start(history=tmp_path / "history.sqlite", corpus=DEMO_DIR)
    done = query(server, question=LEASE, property="Banda Lane").last
    recorded = server.get(f"/v1/history/{done['history_id']}").json()["trace"]
    shown = {(s["document_id"], s["page"]) for section in done["sections"] for s in section["sources"]}
    shown |= {(c["document_id"], c["page"]) for sub in recorded["sub_questions"] for c in sub["chunks"] if c["kept"]}
    served, refused = set(), set()
    for document_id in {d for d, _ in shown}:
        for page in range(1, server.store.catalog.documents[document_id].page_count + 1):
            response = server.get(f"/v1/history/{done['history_id']}/pages/{document_id}/{page}")
            (served if response.status_code == 200 else refused).add((document_id, page))
            if response.status_code != 200:
                assert response.status_code == 404
                image = server.get(f"/v1/history/{done['history_id']}/pages/{document_id}/{page}/image")
                assert image.status_code == 404
    assert served == shown and refused  # the other pages of those very documents stay closed


def test_pages_need_the_history_and_images_need_the_corpus(start: Start, tmp_path: Path) -> None:
    without_history = start()
    done = query(without_history, question=LEASE, property="Banda Lane").last
    assert done["history_id"] is None
    assert without_history.get("/v1/history").status_code == 404
    text_only = start(history=tmp_path / "history.sqlite")
    done = query(text_only, question=LEASE, property="Banda Lane").last
    pdf = next(s for section in done["sections"] for s in section["sources"] if s["filename"].endswith(".pdf"))
    base = f"/v1/history/{done['history_id']}/pages/{pdf['document_id']}/{pdf['page']}"
    view = text_only.get(base).json()
    assert view["kind"] == "pdf" and view["image"] is None and "--corpus" in view["note"]
    assert text_only.get(f"{base}/image").status_code == 404


# -- one question, two programs (A/B) -----------------------------------------------------------------


def test_a_question_can_be_answered_by_a_named_profile_or_the_uncompiled_program(start: Start, tmp_path: Path) -> None:
    llama = cooperative_llama(delay=0.0)  # sees whole conversations: a profile's demo shows in them
    paths = ProfilePaths(registry=tmp_path / "profiles.json", root=tmp_path / "programs")
    server = start(lm=embedded_lm(llama), adapter=None, profiles=paths)
    add_profile(paths, "alpha", save_demo_export(server.store, tmp_path / "export"))

    def demo_shown(**body: Any) -> bool:
        before = len(llama.bodies)
        assert query(server, question=LEASE, property="Banda Lane", **body).phases[-1] == "completed"
        return any(DEMO_QUESTION in json.dumps(b["messages"]) for b in llama.bodies[before:])

    assert not demo_shown()  # the server started uncompiled
    assert demo_shown(profile="alpha")
    assert httpx.post(f"{server.url}/v1/profiles/alpha/activate").status_code == 200
    assert demo_shown()
    assert not demo_shown(uncompiled=True)
    assert post(server, {"question": LEASE, "profile": "nobody"}).status_code == 404
    assert post(server, {"question": LEASE, "profile": "alpha", "uncompiled": True}).status_code == 422
    assert post(server, {"question": LEASE, "profile": "../x"}).status_code == 422
    assert QueryRequest(question="q", uncompiled=True).uncompiled
