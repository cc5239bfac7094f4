"""Browser tests: the interactive views in Debian's Chromium, driven by Playwright.

The system's browser is launched (``executable_path``), never one Playwright would
download.  Without /usr/bin/chromium or the ``playwright`` package every test here
skips, saying which is missing.  Screenshots go to tests/browser/screenshots/ (ignored
by git); a few chosen ones are committed under docs/.
"""

from __future__ import annotations

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


@pytest.fixture(scope="session")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium): browser tests skip")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright): browser tests skip")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


class Visit:
    """One page opened from a file, with every request it made and every script error."""

    def __init__(self, browser, tmp_path: Path, width: int = 1000) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.context.set_default_timeout(15_000)
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.tmp_path = tmp_path

    def open(self, html: str, name: str = "page.html"):
        path = self.tmp_path / name
        path.write_text(html, encoding="utf-8")
        self.url = path.as_uri()
        self.page.goto(self.url)
        return self.page

    def open_file(self, path: Path):
        self.url = path.as_uri()
        self.page.goto(self.url)
        return self.page

    def screenshot(self, name: str, locator=None) -> Path:
        """What the learner sees of ``locator``'s width in the window, as it is scrolled
        (the whole window without ``locator``)."""
        SCREENSHOTS.mkdir(exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        clip = None
        if locator is not None:
            box = locator.bounding_box()  # relative to the window
            top = max(0.0, box["y"])
            height = min(box["y"] + box["height"], self.page.viewport_size["height"]) - top
            clip = {"x": box["x"], "y": top, "width": box["width"], "height": height}
        self.page.screenshot(path=str(path), clip=clip)
        return path

    def outside_requests(self) -> list[str]:
        """Every request but the page's own file (and view.js beside the test page)."""
        return [
            url
            for url in self.requests
            if url != self.url and not (url.startswith("file:") and url.endswith("/view.js"))
        ]


@pytest.fixture
def visit(browser, tmp_path):
    opened = Visit(browser, tmp_path)
    yield opened
    opened.context.close()
    assert opened.errors == [], "script errors on the page"
