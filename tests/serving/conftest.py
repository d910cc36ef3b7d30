"""Fixtures of the serving tests: in-process apps over the demo index (`start`), and for the web page's browser
tests a real `scoperag serve` process per name over a demo corpus copy, its fake LM, and headless Chromium.

The browser fixtures are module-scoped: each browser test module gets its own index, servers and browser."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from pipeline.export.profiles import ProfilePaths, add_profile
from pipeline.program.module import ScopedQA
from pipeline.settings import DEFAULT_PROFILES
from pipeline.store import Store, open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder
from tests.conftest import DEMO_DIR
from tests.support.app_server import Start, app_servers
from tests.support.browser import chromium
from tests.support.compromised_server import openai_compatible_server
from tests.support.exports import save_demo_export, save_program_export
from tests.support.page_driver import (
    HOSTILE_DOCUMENT,
    HOSTILE_RELPATH,
    LABELS_FILE,
    TRACKING,
    VIEWPORT,
    Serve,
    Served,
)
from tests.support.page_lm import TERSE_MARKER, PageLM
from tests.support.serve_process import scoperag_serve

# The MLflow run the `terse` profile's export names.
TERSE_RUN = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def start(demo_index_dir: Path, embedder: Any) -> Iterator[Start]:
    """Starts an app on 127.0.0.1:<free port> with a scripted LM; every server stops after the test."""
    with app_servers(demo_index_dir, embedder) as starter:
        yield starter


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo corpus and one hostile document (no entity owns it)."""
    root = tmp_path_factory.mktemp("web-corpus") / "demo"
    shutil.copytree(DEMO_DIR, root)
    (root / HOSTILE_RELPATH).parent.mkdir()
    (root / HOSTILE_RELPATH).write_text(HOSTILE_DOCUMENT)
    return root


@pytest.fixture(scope="module")
def index_dir(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("web-index")
    build_index(corpus, out, HashEmbedder(64))
    return out


@pytest.fixture(scope="module")
def store(index_dir: Path) -> Store:
    """The served index, opened by the test to know what the page should show."""
    return open_store(index_dir, HashEmbedder(64))


@pytest.fixture(scope="module")
def page_lm() -> PageLM:
    return PageLM()


@pytest.fixture(scope="module")
def lm_url(page_lm: PageLM) -> Iterator[str]:
    with openai_compatible_server(page_lm, "web-page-lm") as url:
        yield url


@pytest.fixture(scope="module")
def compiled_export(store: Store, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export whose decomposition demo makes the fake LM ask a second sub-question."""
    return save_demo_export(store, tmp_path_factory.mktemp("web-export") / "export")


@pytest.fixture(scope="module")
def terse_export(store: Store, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export whose answer instructions make the fake LM answer from the second sentence, from run TERSE_RUN."""
    program = ScopedQA(store)
    program.answer.signature = program.answer.signature.with_instructions(
        f"{program.answer.signature.instructions}\n\n{TERSE_MARKER}"
    )
    out = tmp_path_factory.mktemp("web-terse") / "export"
    return save_program_export(program, out, trainset_hash="sha256:" + "4" * 64, run_id=TERSE_RUN)


@pytest.fixture(scope="module")
def serve(
    index_dir: Path,
    store: Store,
    corpus: Path,
    lm_url: str,
    compiled_export: Path,
    terse_export: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Serve]:
    """`serve(name)`: a `scoperag serve` process of its own per name (profiles `alpha` and `terse` registered, none
    active), its history, labels to LABELS_FILE and runs linked to TRACKING."""
    servers: dict[str, Served] = {}
    with ExitStack() as stack:

        def start(name: str) -> Served:
            if name not in servers:
                cwd = tmp_path_factory.mktemp(f"web-serve-{name}")
                profiles = cwd / DEFAULT_PROFILES
                paths = ProfilePaths(registry=profiles / "profiles.json", root=profiles / "programs")
                add_profile(paths, "alpha", compiled_export, note="compiled with one demo")
                add_profile(paths, "terse", terse_export, note="answers from the second sentence")
                options = ["--index", str(index_dir), "--lm", lm_url, "--history", "history.sqlite"]
                options += ["--corpus", str(corpus), "--label-to", LABELS_FILE, "--tracking-uri", TRACKING]
                url = stack.enter_context(scoperag_serve(options, cwd))
                servers[name] = Served(url, cwd, store)
            return servers[name]

        yield start


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as opened:
        yield opened


@pytest.fixture
def context(browser: Any, serve: Serve) -> Iterator[Any]:
    """A fresh browser context (its own storage) allowed to use the clipboard on the main server's page."""
    opened = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    opened.grant_permissions(["clipboard-read", "clipboard-write"], origin=serve("main").url)
    yield opened
    opened.close()


@pytest.fixture
def page(context: Any) -> Iterator[Any]:
    """A page in a fresh context; fails the test on any uncaught script error or dialog."""
    opened = context.new_page()
    errors: list[str] = []
    dialogs: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    yield opened
    assert errors == [], errors
    assert dialogs == [], dialogs
