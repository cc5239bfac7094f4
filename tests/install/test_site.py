"""The course website (`make site`): README, the executed lessons and the API reference,
with every local link and image inside the site and present."""

from __future__ import annotations

import importlib.util
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from naivegraph import course
from naivegraph.lessons.exercises import ANSWERS

pytest.importorskip("jupyter_book", reason="the site needs the site extra (make site)")
pytest.importorskip("nbclient")

REPO = Path(__file__).resolve().parents[2]


def _builder():
    spec = importlib.util.spec_from_file_location("build_site", REPO / "docs/site/build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return _builder().build(tmp_path_factory.mktemp("site") / "site")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.found.append(value)


def broken_links(root: Path) -> list[str]:
    """Every link or image of the site's pages that leaves the site or points at a file
    that is not there: "page.html -> target"."""
    broken = []
    pages = [p for p in root.rglob("*.html") if "_static" not in p.relative_to(root).parts]
    for page in sorted(pages):  # (_static holds the theme's templates, not pages)
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for link in parser.found:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not parts.path:  # external, or an anchor
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if not target.is_relative_to(root.resolve()) or not target.exists():
                broken.append(f"{page.relative_to(root)} -> {link}")
    return broken


def test_the_link_check_finds_a_missing_page_and_a_link_out_of_the_site(tmp_path):
    (tmp_path / "a.html").write_text(
        '<a href="b.html#top">b</a><img src="img/x.png"><a href="https://example.org">x</a>'
        '<a href="#here">here</a><a href="../outside.html">out</a>'
    )
    (tmp_path / "b.html").write_text("")
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "macros.html").write_text("<a href=\"{{ pathto('x') }}\">")
    assert broken_links(tmp_path) == ["a.html -> img/x.png", "a.html -> ../outside.html"]


def test_the_site_opens_on_the_readme(site):
    assert 'url=README.html"' in (site / "index.html").read_text(encoding="utf-8")
    assert "A teaching lab for computational graphs" in (site / "README.html").read_text()


def test_the_site_has_no_broken_local_link_or_image(site):
    assert broken_links(site) == []


def test_the_site_has_every_lesson_linked_from_the_readme_as_a_page(site):
    readme = (site / "README.html").read_text(encoding="utf-8")
    for notebook in course.notebooks():
        page = f"naivegraph/course/{notebook.stem}.html"
        assert (site / page).is_file() and f'href="{page}"' in readme
    assert ".ipynb" not in "".join(re.findall(r'href="([^"]*)"', readme))


def test_lessons_are_executed_as_a_learner_sees_them(site):
    page = (site / "naivegraph/course/01_computational_graphs.html").read_text(encoding="utf-8")
    assert "○ not done yet [01-2]" in page  # run, exercises unsolved
    assert ANSWERS["01-2"] not in page and '"solution"' not in page
    assert "animation_dynamic_step.gif" in page  # the picture the lesson shows


def test_the_api_reference_documents_both_modes(site):
    api = (site / "api.html").read_text(encoding="utf-8")
    assert 'id="naivegraph.tensor"' in api and 'id="naivegraph.static.gradients"' in api
