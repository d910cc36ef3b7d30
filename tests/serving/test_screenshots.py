"""The README's pictures of the page, taken with the embedded model (`make screenshots`; pytest -m live_lm).

A real `scoperag serve` answers with the embedded model on an index of the demo corpus built as `make demo`
builds it, with no DSPy cache from earlier runs: the answers, times and tokens shown are what the model does on
this machine. A question takes minutes here, so this module runs only when asked for (`live_lm`); the page's
behaviour is tested against the fake LM server in test_web_page.py and test_web_loop.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dspy
import pytest

from pipeline.cli.main import main
from pipeline.export.profiles import ProfilePaths, add_profile
from pipeline.program.module import ScopedQA
from pipeline.settings import DEFAULT_PROFILES
from pipeline.store import open_store
from tests.conftest import DEMO_DIR
from tests.support.browser import chromium, skip_reason
from tests.support.exports import save_program_export
from tests.support.page_driver import VIEWPORT, Served, choose_entity, open_view, screenshot, until
from tests.support.serve_process import scoperag_serve

pytestmark = [pytest.mark.live_lm, pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")]

# Long enough for a question on a busy 2-core machine (one takes 1-5 minutes there).
QUESTION_MS = 20 * 60 * 1000
FIRST = "What is the monthly rent under the Banda Lane lease?"
SECOND = "Who is the tenant at Banda Lane and how much is the deposit?"
COMPARED = "What are the rent and the deposit under the Banda Lane lease?"
# A profile whose decomposition carries one demo splitting a two-part question: what Compare sets against the
# uncompiled program.
PROFILE = "split-demo"
SPLIT_DEMO = dspy.Example(
    question="What are the rent and the notice period under the Mvuli Road lease?",
    sub_questions=["What is the monthly rent under the lease?", "What notice period does the lease set?"],
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`scoperag serve` on the embedded model over the demo corpus (as `make demo` indexes it), with a history,
    a labels file and the profile PROFILE registered."""
    cwd = tmp_path_factory.mktemp("screenshots")
    index = cwd / "index"
    assert main(["index", str(DEMO_DIR), "--out", str(index)]) == 0
    store = open_store(index)
    profiles = cwd / DEFAULT_PROFILES
    paths = ProfilePaths(registry=profiles / "profiles.json", root=profiles / "programs")
    program = ScopedQA(store)
    program.decompose.demos = [SPLIT_DEMO]
    export = cwd / PROFILE
    save_program_export(program, export, lm_name=None)  # written by hand, not compiled
    add_profile(paths, PROFILE, export, note="one decomposition demo that splits a two-part question")
    options = ["--index", str(index), "--corpus", str(DEMO_DIR), "--history", "history.sqlite"]
    with scoperag_serve([*options, "--label-to", "labels.jsonl"], cwd, startup=300) as url:
        yield Served(url, cwd, store)


@pytest.fixture(scope="module")
def page(server: Served) -> Iterator[Any]:
    with chromium() as browser:
        context = browser.new_context(viewport=VIEWPORT)
        opened = context.new_page()
        opened.set_default_timeout(QUESTION_MS)
        errors: list[str] = []
        opened.on("pageerror", lambda error: errors.append(str(error)))
        yield opened
        context.close()
        assert errors == [], errors


def asked(page: Any, question: str) -> None:
    page.fill("#ask-question", question)
    page.click("#ask-button")
    page.wait_for_selector("#ask-job[data-job-id]")


def answered(page: Any, before: str | None = None) -> str:
    """The history id of the answer the Ask view shows, once it is there (another than `before`)."""
    page.wait_for_selector(f"#answer .answer-body:not([data-history-id='{before}'])")
    assert page.text_content("#ask-error") == ""
    history_id: str = page.get_attribute("#answer .answer-body", "data-history-id")
    return history_id


def test_the_answer_its_progress_a_cited_page_and_a_label(page: Any, server: Served, tmp_path: Path) -> None:
    open_view(page, server)
    choose_entity(page, "ask", "Banda Lane")
    asked(page, FIRST)
    first = answered(page)
    # the second question has an estimate: the first one was measured
    asked(page, SECOND)
    estimated = r"/left \(measured on|taking longer than/"
    until(page, f"() => {estimated}.test(document.querySelector('#ask-job-line').textContent)", 300)
    screenshot(page, "#view-ask", "progress.png", tmp_path)
    history_id = answered(page, first)
    assert page.text_content("#ask-job-line").startswith("Answered in ")
    trace = server.get(f"/v1/history/{history_id}").json()["trace"]
    assert trace["lm_calls"] >= 3 and trace["cached_calls"] == 0  # the model answered, no cache
    page.click("#answer details.sources-box summary")
    screenshot(page, "#view-ask", "answer-view.png", tmp_path)

    citation = page.locator("#answer .answer-line button.citation").first
    if citation.count():
        citation.click()
        page.wait_for_selector("#viewer-body .page-text")
        if page.locator("#viewer img.page-image").count():
            until(page, "() => document.querySelector('#viewer img.page-image').naturalWidth > 0")
        screenshot(page, "#viewer", "viewer.png", tmp_path)
        page.keyboard.press("Escape")

    page.click("#answer button.label-open")
    form = page.locator("#answer section.label-form")
    # the model's answer is judged by what the lease says, whatever it wrote this time
    form.locator("input[value='wrong']").check()
    for offered in form.locator(".fact-lines input").all():
        offered.uncheck()
    form.locator("textarea").fill("The tenant is Peter Otieno Ochieng.\nThe deposit is KSH 570,000.")
    form.locator("button.label-preview-button").click()
    form.locator("pre.label-example").wait_for()
    assert re.search(r"A property example, appended to labels\.jsonl", form.locator(".label-preview p").text_content())
    screenshot(page, "#answer section.label-form", "label.png", tmp_path)


def test_compare_on_the_embedded_model(page: Any, server: Served, tmp_path: Path) -> None:
    open_view(page, server, "compare")
    page.wait_for_selector(f"#compare-right option[value='profile:{PROFILE}']", state="attached")
    page.fill("#compare-question", COMPARED)
    choose_entity(page, "compare", "Banda Lane")
    page.select_option("#compare-left", "uncompiled")
    page.select_option("#compare-right", f"profile:{PROFILE}")
    page.click("#compare-button")
    page.wait_for_selector("#compare-result .ab-row:not(.ab-top)")
    page.wait_for_selector("#compare-result .diff-summary")
    screenshot(page, "#view-compare", "ab-view.png", tmp_path)
