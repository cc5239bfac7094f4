"""The system's Chromium, launched headless by Playwright for the browser tests.

The system's browser is launched (``executable_path``), never one Playwright would
download.  Without /usr/bin/chromium or the ``playwright`` package the tests that use
:func:`launch` skip, saying which is missing.  Screenshots go to
tests/browser/screenshots/ (ignored by git); a few chosen ones are committed under docs/.
(A module, not a conftest.py: tests/render imports its own conftest by that name.)
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"


@contextlib.contextmanager
def launch():
    """The browser, closed on exit; skips the test when it cannot be launched."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium): browser tests skip")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright): browser tests skip")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
