"""Headless Chromium (the Debian `chromium` package) driven by Playwright, for the web page's tests.

Playwright's own browser download does not work offline, so it is pointed at the system's Chromium. Each
launch gets a fresh profile directory from Playwright (its --user-data-dir); networking beyond the page's
own server, GPU, sync and updates are off.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",  # the tests may run as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
MISSING = (
    "Chromium is not installed: the web page's browser tests need the Debian package `chromium` "
    "(`make setup` installs it when run as root; otherwise `sudo apt-get install chromium`)"
)


def chromium_path() -> Path | None:
    """The system's Chromium: $SCOPERAG_CHROMIUM, else `chromium` on PATH; None when there is none."""
    named = os.environ.get("SCOPERAG_CHROMIUM")
    if named:
        return Path(named) if Path(named).is_file() else None
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return Path(found)
    return None


def skip_reason() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed: run `make setup` (it is a dev dependency)"
    return MISSING if chromium_path() is None else None


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (a Playwright Browser), closed on exit."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise RuntimeError(MISSING)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(path), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
