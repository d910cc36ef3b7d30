"""The page as the optimisation loop uses it, in headless Chromium against real `scoperag serve` processes and the
fake LM server (tests/serving/conftest.py): questions that outlive their tab and can be cancelled, labels made
where the answer is read (and a stage job run on them), Compare showing what differs, profile files refused
before upload, and History searched."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from pipeline.evaluation.examples import load_examples
from tests.serving.conftest import TERSE_RUN
from tests.support.browser import skip_reason
from tests.support.page_driver import (
    TRACKING,
    Serve,
    add_chip,
    ask,
    choose_entity,
    entity_documents,
    label_answer,
    open_view,
    trace_of,
    until,
)
from tests.support.page_lm import HOLD, SLOW, TERSE_MARKER, PageLM

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


COLUMNS = ["when", "question", "scope", "status", "lm_calls", "tokens", "seconds"]


def history_row(page: Any, question: str, status: str | None = None) -> dict[str, str]:
    """The History table's row of `question` (refreshing until it is there, with `status` when given): its cells by
    column."""
    page.click("a[data-view='history']")
    deadline = time.monotonic() + 30
    while True:
        rows = page.locator("#history-table tbody tr", has_text=question)
        if rows.count():
            cells = rows.first.locator("td").all_text_contents()
            row = dict(zip(COLUMNS, cells, strict=False))
            if status is None or row["status"] == status:
                return row
        if time.monotonic() > deadline:
            raise AssertionError(f"{question!r} never reached History" + (f" as {status}" if status else ""))
        page.click("#history-refresh")
        time.sleep(0.3)


def running_job(page: Any) -> str:
    """The id of the job the Ask view follows, once its status line shows it running."""
    until(page, "() => document.querySelector('#ask-job-line').textContent.includes('elapsed')")
    job_id: str = page.get_attribute("#ask-job", "data-job-id")
    return job_id


# -- questions that survive the tab -------------------------------------------------------------------


def test_a_question_survives_its_tab_and_the_page_reattaches(context: Any, page: Any, serve: Serve) -> None:
    server = serve("main")
    question = f"What is the monthly rent at Banda Lane? ({SLOW} 1)"
    open_view(page, server)
    page.fill("#ask-question", question)
    page.click("#ask-button")
    job_id = running_job(page)
    assert page.is_visible("#ask-cancel")
    page.close()  # the tab goes; the question does not
    assert server.get(f"/v1/jobs/{job_id}").json()["status"] == "running"

    reopened = context.new_page()
    open_view(reopened, server)
    until(reopened, f"() => document.querySelector('#ask-job').dataset.jobId === '{job_id}'")
    assert reopened.input_value("#ask-question") == question
    reopened.wait_for_selector("#answer .answer-body", timeout=30_000)
    steps = reopened.eval_on_selector_all("#ask-progress .stepper li", "items => items.map(i => i.dataset.state)")
    assert steps == ["done"] * 5
    history_id = reopened.get_attribute("#answer .answer-body", "data-history-id")
    assert trace_of(server, history_id)["entry"]["status"] == "done"
    assert reopened.text_content("#ask-job-line").startswith("Answered in ")
    row = history_row(reopened, question)
    assert row["status"] == "answered" and row["scope"] == "Whole collection (the question names Banda Lane)"
    reopened.close()


def test_a_question_left_behind_lands_in_history_and_shows_while_it_runs(browser: Any, serve: Serve) -> None:
    server = serve("main")
    question = f"Who is the tenant at Banda Lane? ({SLOW} 2)"
    first = browser.new_context()
    asking = first.new_page()
    open_view(asking, server)
    page_id = None
    try:
        asking.fill("#ask-question", question)
        asking.click("#ask-button")
        page_id = running_job(asking)
    finally:
        first.close()  # the whole browser session goes
    other = browser.new_context()  # another browser: nothing remembered, so it finds the question in History
    try:
        page = other.new_page()
        open_view(page, server, "history")
        page.wait_for_selector(f"#running-list li[data-job-id='{page_id}']")
        assert question in page.text_content("#running-list")
        assert history_row(page, question)["status"] in ("running", "answered")  # in History from its start
        assert history_row(page, question, "answered")["status"] == "answered"
        until(page, f"() => !document.querySelector(\"#running-list li[data-job-id='{page_id}']\")", 10)
    finally:
        other.close()


def test_cancel_stops_the_question_and_no_lm_call_starts_after_it(page: Any, serve: Serve, page_lm: PageLM) -> None:
    server = serve("main")
    question = f"What does the lease say about the deposit? ({HOLD})"
    page_lm.held.clear()
    page_lm.release.clear()
    try:
        open_view(page, server)
        page.fill("#ask-question", question)
        page.click("#ask-button")
        assert page_lm.held.wait(30)  # its scoring call is under way
        made = page_lm.calls_about(HOLD)
        running_job(page)
        page.click("#ask-cancel")
        until(page, "() => document.querySelector('#ask-job-line').textContent.includes('stopping')")
    finally:
        page_lm.release.set()
    page.wait_for_selector("#answer .notice.cancelled")
    assert "no LM call started after the stop" in page.text_content("#answer .notice.cancelled")
    time.sleep(0.5)
    assert page_lm.calls_about(HOLD) == made  # the answer call never started
    assert page.text_content("#ask-job-line").startswith("Cancelled in ")
    assert not page.is_visible("#ask-cancel") and page.is_enabled("#ask-button")
    assert history_row(page, question)["status"] == "cancelled"


# -- labels -------------------------------------------------------------------------------------------


def test_a_label_made_on_the_page_is_appended_to_the_traces_file_and_loads(page: Any, serve: Serve) -> None:
    server = serve("main")
    open_view(page, server)
    choose_entity(page, "ask", "Banda Lane")
    answer = ask(page, "What is the deposit under the Banda Lane lease? (label)")
    [line] = [s["answer"] for s in trace_of(server, answer["historyId"])["trace"]["sections"]]
    page.click("#answer button.label-open")
    form = page.locator("#answer section.label-form")
    form.locator("input[value='right']").check()
    # the answer line is offered as the fact; its cited pages are the gold pages until told otherwise
    assert form.locator(".fact-lines input").is_checked()
    assert form.locator(".fact-lines span").text_content() == f"1. {line}"
    cited = page.locator("#answer .answer-line button.citation").first
    document_id, number = cited.get_attribute("data-document-id"), cited.get_attribute("data-page")
    assert form.locator(f".gold-pages li[data-document-id='{document_id}'][data-page='{number}']").count() == 1
    # a page opened in the viewer can be marked as gold
    cited.click()
    page.click("#viewer-mark-gold")
    assert "is a gold page of this label" in page.text_content("#viewer-gold")
    page.keyboard.press("Escape")
    assert form.locator(".gold-pages li.chip").count() == 1  # the same page, named once
    form.locator("button.label-preview-button").click()
    shown = json.loads(form.locator("pre.label-example").text_content())
    assert "A property example, appended to labels/train.jsonl" in form.locator(".label-preview p").text_content()
    assert not server.labels.exists() or shown["id"] not in server.labels.read_text()  # shown before it is saved
    form.locator("button.label-save").click()
    until(page, "() => document.querySelector('#answer section.label-form').dataset.saved === 'true'")
    assert re.fullmatch(r"Saved to labels/train\.jsonl, line \d+\.", form.locator(".label-status").text_content())
    loaded = {e.id: e for e in load_examples(server.labels)}
    example = loaded[shown["id"]]
    assert example.model_dump(mode="json", exclude_defaults=True) == shown
    relpath = server.store.catalog.documents[document_id].relpath
    assert example.case == "property" and example.scope.property == "banda-lane"
    assert example.answer_facts == (line,) and relpath in example.gold_documents
    assert {(p.document, p.page) for p in example.gold_pages} == {(relpath, int(number))}

    # from History: a wrong answer, the right fact typed and the page holding it picked from those the answer read
    other = ask(page, "How much is the Banda Lane deposit? (label, wrong)")
    trace = trace_of(server, other["historyId"])["trace"]
    kept = next(c for sub in trace["sub_questions"] for c in sub["chunks"] if c["kept"])
    page.click("a[data-view='history']")
    page.locator(f"#history-table tr[data-history-id='{other['historyId']}'] button").click()
    page.wait_for_selector("#trace .answer-body")
    wrong = label_answer(page, "#trace", "wrong", facts="KSH 570,000", pick=f"{kept['document_id']}/{kept['page']}")
    kept_path = server.store.catalog.documents[kept["document_id"]].relpath
    assert wrong["answer_facts"] == ["KSH 570,000"] and "judged_wrong" in wrong["tags"]
    assert wrong["gold_pages"] == [{"document": kept_path, "page": kept["page"]}]
    assert load_examples(server.labels)[-1].id == wrong["id"]
    # the first answer again: the same question and scope are labelled once
    page.locator(f"#history-table tr[data-history-id='{answer['historyId']}'] button").click()
    page.wait_for_selector(f"#trace .answer-body[data-history-id='{answer['historyId']}']")
    label_answer(page, "#trace", "right", saved=False)
    assert "already labelled" in page.text_content("#trace section.label-form .error")


def test_labels_from_the_page_feed_a_quick_stage_job_that_runs_lists(
    page: Any,
    serve: Serve,
    lm_url: str,
    index_dir: Path,
    corpus: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Ask, label three answers on the page (one per case a page can label), run a quick decompose stage job on a
    traces set holding them, and find the run in `scoperag runs`."""
    from pipeline.cli.main import main
    from tests.support.paths import ROOT

    server = serve("labels")  # a server of its own: its traces file holds these three labels only
    lane = sorted(entity_documents(server.store, "Banda Lane"))
    lease = next(d for d in lane if server.store.catalog.documents[d].filename == "lease.pdf")
    open_view(page, server)
    ask(page, "What is the monthly rent at Banda Lane? (job 1)")
    label_answer(page, "#answer", "right")
    add_chip(page, "ask", "lease Banda Lane", lease)
    ask(page, "What deposit does this lease ask for? (job 2)")
    label_answer(page, "#answer", "right")
    page.check("#ask-scope-entity")
    choose_entity(page, "ask", "Banda Lane")
    ask(page, "When does the Banda Lane lease end? (job 3)")
    label_answer(page, "#answer", "right")
    labelled = load_examples(server.labels)
    assert sorted(e.case for e in labelled) == ["chip", "no_scope", "property"]
    assert all(e.gold_documents and e.answer_facts and e.split == "train" for e in labelled)

    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "train.jsonl").write_bytes(server.labels.read_bytes())
    dev = [e for e in load_examples(ROOT / "datasets" / "demo-traces" / "dev.jsonl") if e.case != "wrong_property"]
    (traces / "dev.jsonl").write_text("".join(e.model_dump_json(exclude_defaults=True) + "\n" for e in dev))
    config = (ROOT / "experiments" / "quick_decompose.toml").read_text()
    for old, new in (
        ('traces_dir = "datasets/demo-traces"', f'traces_dir = "{traces}"\ncases = ["no_scope", "chip", "property"]'),
        ("train_size = 8", "train_size = 3"),
        ("val_size = 8", "val_size = 3"),
        ('corpus_dir = "datasets/demo"', f'corpus_dir = "{corpus}"'),
        ('index_dir = ".scoperag/index"', f'index_dir = "{index_dir}"'),
        ('task = "embedded"', f'task = "{lm_url}"'),
        ("max_lm_calls = 8", "max_lm_calls = 3"),
    ):
        assert old in config, old
        config = config.replace(old, new)
    (tmp_path / "quick.toml").write_text(config)
    mlruns = tmp_path / "mlruns"
    assert main(["optimize", str(tmp_path / "quick.toml"), "--mlruns", str(mlruns)]) == 0
    capsys.readouterr()
    assert main(["runs", "--mlruns", str(mlruns), "--json"]) == 0
    [run] = json.loads(capsys.readouterr().out)
    assert run["status"] == "FINISHED" and run["config"] == "quick-decompose" and run["experiment"] == "scoperag-quick"

    from experiments.store import open_tracker

    client = open_tracker(mlruns).client
    splits = json.loads(Path(client.download_artifacts(run["run_id"], "data/splits.json", str(tmp_path))).read_text())
    assert sorted(splits["train"]) == sorted(e.id for e in labelled)


# -- Compare ------------------------------------------------------------------------------------------


def test_compare_highlights_what_differs_and_links_each_sides_run_and_prompts(page: Any, serve: Serve) -> None:
    server = serve("main")
    open_view(page, server, "compare")
    page.wait_for_selector("#compare-right option[value='profile:terse']", state="attached")
    page.fill("#compare-question", "What does the Banda Lane lease say about the deposit? (compare)")
    choose_entity(page, "compare", "Banda Lane")
    page.select_option("#compare-left", "uncompiled")
    page.select_option("#compare-right", "profile:terse")
    page.click("#compare-button")
    page.wait_for_selector("#compare-result .ab-row:not(.ab-top)")
    row = page.locator("#compare-result .ab-row:not(.ab-top)").first
    assert row.get_attribute("data-differs") == "true"
    left, right = row.locator(".answer-line").all_text_contents()
    assert left != right and row.locator(".answer-line.diff").count() == 2
    # the quotes only one side gives are marked on that side
    only_left = row.locator(".card").nth(0).locator(".quote.only-here").all_text_contents()
    only_right = row.locator(".card").nth(1).locator(".quote.only-here").all_text_contents()
    assert only_left and only_right and not set(only_left) & set(only_right)
    assert "1 of 1 section differ" in page.text_content("#compare-result .diff-summary")
    # each side's cost, and the run and prompts behind it
    heads = page.locator("#compare-result .ab-top .ab-head")
    assert all("LM call" in text and "tokens" in text for text in heads.locator(".meta").all_text_contents())
    page.wait_for_selector("#compare-result .ab-top .provenance a.external")
    link = heads.nth(1).locator("a.external")
    assert link.get_attribute("href") == f"{TRACKING}/#/runs/{TERSE_RUN}"
    assert link.get_attribute("rel") == "noopener noreferrer"
    assert "Uncompiled: no run" in heads.nth(0).locator(".provenance").text_content()
    heads.nth(1).locator("button", has_text="Prompts").click()
    page.wait_for_selector("#compare-prompts pre.prompts-md")
    assert TERSE_MARKER in page.text_content("#compare-prompts pre.prompts-md")


def test_compare_runs_both_sides_as_jobs_that_cancel_stops(page: Any, serve: Serve, page_lm: PageLM) -> None:
    server = serve("main")
    question = f"What does the lease say about the rent? (compare, {HOLD})"
    page_lm.held.clear()
    page_lm.release.clear()
    try:
        open_view(page, server, "compare")
        page.fill("#compare-question", question)
        page.select_option("#compare-left", "uncompiled")
        page.select_option("#compare-right", "profile:terse")
        page.click("#compare-button")
        assert page_lm.held.wait(30)  # a scoring call is under way
        lines = "[...document.querySelectorAll('#compare-progress .job-line')].map((p) => p.textContent)"
        until(page, f"() => {lines}.length === 2 && {lines}.every((text) => text.includes('elapsed'))")
        running = server.get("/v1/jobs").json()["jobs"]
        assert sorted(j["program"] for j in running if j["question"] == question) == [
            "Profile terse",
            "Uncompiled program",
        ]
        page.click("#compare-cancel")
        until(page, f"() => {lines}.every((text) => text.includes('stopping'))")
    finally:
        page_lm.release.set()
    until(page, f"() => {lines}.every((text) => text.startsWith('Cancelled in '))")
    assert "no LM call started after the stop" in page.text_content("#compare-error")
    assert not page.is_visible("#compare-cancel") and page.is_enabled("#compare-button")
    time.sleep(0.5)
    assert "answer" not in page_lm.steps_about(f"compare, {HOLD}")  # no answer call started after the stop
    recorded = server.get(f"/v1/history?q={quote(f'compare, {HOLD}')}").json()["entries"]
    assert [e["status"] for e in recorded] == ["cancelled", "cancelled"]


def test_compare_sets_differently_worded_sub_questions_side_by_side(page: Any, serve: Serve) -> None:
    """The same sub-question first, then the most similar one left (by the words they share), else alone."""
    open_view(page, serve("main"), "compare")
    rows = page.evaluate(
        """async (sides) => {
            const { alignSections } = await import("/static/js/compare.js");
            const sections = (questions) => questions.map((q) => ({ sub_question: q }));
            return alignSections(sections(sides[0]), sections(sides[1]))
                .map((row) => row.map((section) => section && section.sub_question));
        }""",
        [
            ["What is the rent?", "What is the deposit?", "Who is the landlord?", "Who is the tenant?"],
            ["What deposit does the lease set?", "Who is the tenant?", "What is the monthly rent under the lease?"],
        ],
    )
    assert rows == [
        ["What is the rent?", "What is the monthly rent under the lease?"],
        ["What is the deposit?", "What deposit does the lease set?"],
        ["Who is the landlord?", None],
        ["Who is the tenant?", "Who is the tenant?"],
    ]


# -- Profiles -----------------------------------------------------------------------------------------


def test_a_malformed_profile_is_refused_before_upload(page: Any, serve: Serve, tmp_path: Path) -> None:
    server = serve("main")
    sent: list[str] = []
    page.on("request", lambda request: sent.append(f"{request.method} {request.url}"))
    open_view(page, server, "profiles")
    page.wait_for_selector("#profiles-table tr[data-profile='alpha']")
    malformed = tmp_path / "malformed.json"
    malformed.write_text(json.dumps({"format": "nope", "name": "gamma"}))
    page.set_input_files("#import-file", str(malformed))
    page.wait_for_selector("#import-error:not(:empty)")
    said = page.text_content("#import-error")
    assert said.startswith("This file is not a scoperag profile (its format is “nope”)"), said
    assert page.is_disabled("#import-button")
    assert not [r for r in sent if r.startswith("POST")]  # nothing was sent: refused before upload

    # the right shape, a broken program: the server's check refuses it, and nothing is imported
    payload = server.get("/v1/profiles/alpha/export").json()
    payload["export"]["program"]["decompose"]["demos"] = [{"question": 5}]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(payload))
    page.set_input_files("#import-file", str(broken))
    until(page, "() => document.querySelector('#import-error').textContent.startsWith('This profile cannot be')")
    said = page.text_content("#import-error")
    assert said.startswith("This profile cannot be imported: its program.json: does not match its entry"), said
    assert "The file changed after export" in said and "payload" not in said and not re.search(r"\w+_\w+\(", said)
    assert page.is_disabled("#import-button")
    posts = [r for r in sent if r.startswith("POST")]
    assert posts and all(r.endswith("/v1/profiles/check") for r in posts)
    assert server.get("/v1/profiles/gamma").status_code == 404


def test_profiles_show_prompts_a_diff_and_remove_after_confirming(page: Any, serve: Serve) -> None:
    server = serve("profile-removal")  # removes a profile: a server of its own
    open_view(page, server, "profiles")
    page.wait_for_selector("#profiles-table tr[data-profile='terse']")
    page.click("button[aria-label='Prompts of terse']")
    page.wait_for_selector("#profile-prompts pre.prompts-md")
    assert TERSE_MARKER in page.text_content("#profile-prompts pre.prompts-md")
    assert page.evaluate("document.activeElement.id") == "profile-prompts-title"
    page.select_option("#diff-a", "alpha")
    page.select_option("#diff-b", "terse")
    page.click("#diff-button")
    page.wait_for_selector("#diff-result pre.diff")
    changed = page.locator("#diff-result tr.changed td:first-child").all_text_contents()
    assert changed == ["decompose", "answer"]
    assert TERSE_MARKER in " ".join(page.locator("#diff-result .diff-line.kind-added").all_text_contents())

    page.click("button[aria-label='Remove terse']")
    page.wait_for_selector("#confirm[open]")
    assert page.text_content("#confirm-title") == "Remove profile?"
    page.click("#confirm-no")
    assert page.locator("#profiles-table tr[data-profile='terse']").count() == 1
    page.click("button[aria-label='Remove terse']")
    page.click("#confirm-yes")
    until(page, "() => document.querySelector('#profiles-status').textContent === 'Removed terse.'")
    assert [p["name"] for p in server.get("/v1/profiles").json()["profiles"]] == ["alpha"]


# -- History --------------------------------------------------------------------------------------------


def test_history_is_searched_and_shows_scope_status_and_a_readable_plan(page: Any, serve: Serve) -> None:
    server = serve("main")
    open_view(page, server)
    choose_entity(page, "ask", "Banda Lane")
    ask(page, "Which appliances does the Banda Lane inventory list? (searchable)")
    page.check("#ask-scope-none")
    ask(page, "Who signed the offer letter? (searchable too)")
    page.click("a[data-view='history']")
    page.wait_for_selector("#history-table tbody tr[data-history-id]")
    page.fill("#history-search", "appliances")
    until(page, "() => document.querySelectorAll('#history-table tbody tr').length === 1")
    row = history_row(page, "appliances")
    assert row["scope"] == "Banda Lane" and row["status"] == "answered"
    assert "T" not in row["when"] and "+00:00" not in row["when"]  # local time, not the stored ISO text
    assert re.fullmatch(r"\d+\.\d", row["seconds"])
    page.fill("#history-search", "searchable")
    until(page, "() => document.querySelectorAll('#history-table tbody tr').length === 2")
    page.fill("#history-search", "no question says this")
    until(page, "() => document.querySelector('#history-table tbody td.muted') !== null")
    assert page.text_content("#history-table tbody").startswith("No question holds")
    page.fill("#history-search", "appliances")
    until(page, "() => document.querySelectorAll('#history-table tbody tr[data-history-id]').length === 1")
    page.locator("#history-table tbody tr[data-history-id] button").click()
    page.wait_for_selector("#trace dl.plan-list")
    assert "Strategy" in page.text_content("#trace dl.plan-list") and page.locator("#trace .answer-body").count() == 1
