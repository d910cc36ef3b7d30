"""Driving the web page in a browser for the tests: a server's URL, choosing a scope, asking, and reading back
what the page shows (Playwright's sync API; its wait_for_function is not used: it evaluates strings in the
page, which the page's Content-Security-Policy forbids)."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

from pipeline.store import Store
from tests.conftest import ROOT

HOSTILE_DOCUMENT = """# Tenant notes `<img src=x onerror="window.__pwned=1">`

<script>window.__pwned = 2</script>

The tenant notes say the rent is paid monthly `<b onmouseover="window.__pwned=3">hover</b>` and
[open the ledger](javascript:window.__pwned=4) <iframe src="/v1/health"></iframe> before the fifth day.
"""
HOSTILE_RELPATH = "notes/tenant-notes.md"
VIEWPORT = {"width": 1100, "height": 900}
# Where every page server's labels go (relative to its folder), and the MLflow address it links runs to.
LABELS_FILE = "labels/train.jsonl"
TRACKING = "http://127.0.0.1:5999"


@dataclass
class Served:
    url: str
    cwd: Path
    store: Store

    @property
    def labels(self) -> Path:
        return self.cwd / LABELS_FILE

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.url + path, timeout=30)


# `serve(name)`: the `scoperag serve` process of that name (tests/serving/conftest.py).
Serve = Callable[[str], Served]


def open_view(page: Any, server: Served, view: str = "ask") -> None:
    page.goto(f"{server.url}/#{view}")
    page.wait_for_selector("body[data-ready]")


def choose_entity(page: Any, prefix: str, name: str) -> None:
    page.check(f"#{prefix}-scope-entity")
    page.wait_for_selector(f"#{prefix}-entity option", state="attached")
    page.select_option(f"#{prefix}-entity", label=name)


def add_chip(page: Any, prefix: str, query: str, document_id: str) -> None:
    page.check(f"#{prefix}-scope-documents")
    page.fill(f"#{prefix}-doc-search", query)
    page.press(f"#{prefix}-doc-search", "Enter")
    page.click(f"#{prefix}-doc-results button[data-document-id='{document_id}']")
    page.wait_for_selector(f"#{prefix}-chips li[data-document-id='{document_id}']")


def ask(page: Any, question: str) -> dict[str, Any]:
    """Ask `question` with the scope chosen on the page; the answer as the page shows it."""
    page.fill("#ask-question", question)
    page.click("#ask-button")
    page.wait_for_selector(".answer-body, #ask-error:not(:empty)")
    assert page.text_content("#ask-error") == ""
    return shown(page, "#answer")


def shown(page: Any, root: str) -> dict[str, Any]:
    """What an answer under `root` shows: events, sections with answer line, evidence and sources, its history id."""
    result: dict[str, Any] = page.evaluate(
        """root => {
            const box = document.querySelector(root);
            const cards = [...box.querySelectorAll("article.card")];
            return {
              historyId: box.querySelector(".answer-body") ? box.querySelector(".answer-body").dataset.historyId : null,
              phases: [...document.querySelectorAll("#ask-progress .progress-log li")].map(li => li.dataset.phase),
              steps: [...document.querySelectorAll("#ask-progress .stepper li")].map(li => li.dataset.state),
              anchors: [...box.querySelectorAll("nav.sub-questions a")].map(a => a.textContent),
              sections: cards.map(card => ({
                subQuestion: card.dataset.subQuestion,
                status: card.className,
                answer: card.querySelector(".answer-line, .not-found, .error")?.textContent ?? null,
                evidence: [...card.querySelectorAll(".evidence .quote")].map(q => q.textContent),
                sources: [...card.querySelectorAll(".sources li")].map(li => li.dataset.documentId),
              })),
            };
        }""",
        root,
    )
    return result


def until(page: Any, condition: str, timeout: float = 15.0) -> None:
    """Until the page function `condition` returns true. (Playwright's wait_for_function evaluates strings
    inside the page, which its Content-Security-Policy rightly forbids.)"""
    deadline = time.monotonic() + timeout
    while not page.evaluate(condition):
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached: {condition}")
        time.sleep(0.05)


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def contains(haystack: list[str], needle: list[str]) -> bool:
    """True when `needle` occurs in `haystack` as one contiguous run."""
    return any(haystack[i : i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))


def entity_documents(store: Store, name: str) -> set[str]:
    return set(store.entity_document_ids(store.resolve_entity(name).entity_id))


def trace_of(server: Served, history_id: str) -> dict[str, Any]:
    response = server.get(f"/v1/history/{history_id}")
    assert response.status_code == 200, response.text
    detail: dict[str, Any] = response.json()
    return detail


def screenshot(page: Any, selector: str, name: str, tmp_path: Path) -> Path:
    """A PNG of `selector`, in tmp_path and, when $SCOPERAG_SCREENSHOTS names a folder, there too."""
    path = tmp_path / name
    page.locator(selector).screenshot(path=str(path))
    assert path.read_bytes().startswith(b"\x89PNG") and path.stat().st_size > 5_000
    folder = os.environ.get("SCOPERAG_SCREENSHOTS")
    if folder:
        target = ROOT / folder
        target.mkdir(parents=True, exist_ok=True)
        # 64 colours keep the committed copies small; text and highlights stay crisp
        Image.open(path).convert("RGB").quantize(colors=64).save(target / name, optimize=True)
    return path


def label_answer(
    page: Any, root: str, verdict: str, facts: str = "", pick: str | None = None, saved: bool = True
) -> dict[str, Any]:
    """Label the answer under `root` on the page: `verdict`, `facts` typed (one per line), the page `pick`
    ("document id/page") added from the pages it read; previewed, then saved (or, `saved` false, refused). The
    example the preview showed."""
    page.click(f"{root} button.label-open")
    form = page.locator(f"{root} section.label-form")
    form.locator(f"input[name$='-verdict'][value='{verdict}']").check()
    if facts:
        form.locator("textarea").fill(facts)
    if pick is not None:
        until(page, f"() => !!document.querySelector(\"{root} section.label-form option[value='{pick}']\")")
        form.locator("select[id$='-pick']").select_option(pick)
        form.locator("button", has_text="Add page").click()
    form.locator("button.label-preview-button").click()
    form.locator("pre.label-example").wait_for()
    shown: dict[str, Any] = json.loads(form.locator("pre.label-example").text_content())
    form.locator("button.label-save").click()
    if saved:
        until(page, f"() => document.querySelector('{root} section.label-form').dataset.saved === 'true'")
    else:
        form.locator(".error:not(:empty)").wait_for()
    return shown
