"""The interactive drawing and both walkthroughs of the reference example, in Chromium.

Each test opens the page as a learner's browser would (a saved .html file), checks that
no request leaves it, and uses it: clicks, keys, buttons, the sizes it is laid out at.

The system's browser is launched (``executable_path``), never one Playwright would
download.  Without /usr/bin/chromium or the ``playwright`` package every test here
skips, saying which is missing.  Screenshots go to tests/browser/screenshots/ (ignored
by git); a few chosen ones are committed under docs/.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from headless import SCREENSHOTS, launch

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.render import interactive


# -- the browser -------------------------------------------------------------------------
@pytest.fixture(scope="module")  # one Playwright at a time: each test module has its own
def browser():
    with launch() as opened:
        yield opened


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


# -- the pages ---------------------------------------------------------------------------
NOTEBOOK_WIDTH = 848  # JupyterLab's output area at a laptop's width, in CSS px
RENDER_DIR = Path(ng.__file__).resolve().parent / "render"


def reference(backward: bool) -> dict:
    env = {"input": ng.ones([2, 2], dtype=ng.float64)}
    for name, value in (("w1", 2.0), ("w2", 3.0), ("w3", 4.0)):
        env[name] = ng.tensor(value, requires_grad=True, dtype=ng.float64)
    env["l1"] = env["input"] * env["w1"]
    env["l2"] = env["l1"] + env["w2"]
    env["l3"] = env["l1"] * env["w3"]
    env["l4"] = env["l2"] * env["l3"]
    env["loss"] = env["l4"].mean()
    if backward:
        env["loss"].backward()
    return env


def static_reference():
    with ns.Graph(name="reference"):
        x = ns.placeholder("input", shape=(2, 2))
        w1 = ns.Variable(2.0, name="w1")
        w2 = ns.Variable(3.0, name="w2")
        w3 = ns.Variable(4.0, name="w3")
        l1 = x * w1
        loss = ns.mean((l1 + w2) * (l1 * w3))
    return ns.walkthrough(loss, {x: np.ones((2, 2))})


def in_notebook_output(*fragments: str) -> str:
    """A page whose views sit in an 848 px wide box, as in a notebook's output area."""
    boxes = "".join(
        f'<div class="output" style="width:{NOTEBOOK_WIDTH}px">{f}</div>' for f in fragments
    )
    return interactive.page(boxes)


def label_of(view) -> str:
    return view.locator(".ngv-label").inner_text()


def node_titled(view, title: str):
    """The SVG node groups whose first label line is ``title``."""
    return view.locator("g.node").filter(
        has=view.page.locator("text", has_text=re.compile(f"^{re.escape(title)}$"))
    )


def test_the_drawing_fits_a_notebook_and_clicking_w1_shows_its_gradient(visit):
    env = reference(backward=True)
    drawing = ng.render(env["loss"], kind="both", params=env)
    page = visit.open(in_notebook_output(drawing.html_fragment()))
    view = page.locator(".ngv")
    box = view.bounding_box()
    assert box["width"] <= NOTEBOOK_WIDTH
    svg = view.locator("svg").bounding_box()
    assert 500 < svg["width"] <= NOTEBOOK_WIDTH  # stacked halves, scaled to the box
    stage = view.locator(".ngv-stage")
    assert stage.evaluate("e => e.scrollWidth <= e.clientWidth")  # nothing cut at the right
    w1 = node_titled(view, "w1")
    assert w1.count() == 2  # in the forward and the backward half
    w1.first.click()
    panel = view.locator(".ngv-panel")
    assert panel.is_visible()
    text = panel.inner_text()
    assert "w1" in text and ".grad\t28." in text and "value\t2." in text
    visit.screenshot("drawing_details_w1", view)
    view.locator("[aria-label='close details']").click()
    assert not panel.is_visible()
    assert visit.outside_requests() == []


def test_zoom_buttons_wheel_and_drag_change_only_the_view(visit):
    env = reference(backward=True)
    page = visit.open(in_notebook_output(ng.render(env["loss"], params=env).html_fragment()))
    svg = page.locator(".ngv svg")
    home = svg.get_attribute("viewBox")
    page.locator("[aria-label='zoom in']").click()
    zoomed = [float(v) for v in svg.get_attribute("viewBox").split()]
    assert zoomed[2] < float(home.split()[2])
    box = svg.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 60, box["y"] + box["height"] / 2 + 30, steps=5)
    page.mouse.up()
    panned = [float(v) for v in svg.get_attribute("viewBox").split()]
    assert panned[0] < zoomed[0] and panned[2] == zoomed[2]  # moved, same zoom
    page.mouse.wheel(0, 200)  # wheel down on the focused view: zoom out
    assert float(svg.get_attribute("viewBox").split()[2]) > panned[2]
    page.mouse.click(3, 3)  # focus leaves the view: the wheel scrolls the page again
    before = svg.get_attribute("viewBox")
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 10)
    page.mouse.wheel(0, 200)
    assert svg.get_attribute("viewBox") == before
    page.locator("[aria-label='reset']").click()
    assert [float(v) for v in svg.get_attribute("viewBox").split()] == [
        float(v) for v in home.split()
    ]
    assert page.locator(".ngv-panel").is_hidden()  # a drag is not a click on a node
    assert visit.outside_requests() == []


def test_the_dynamic_walkthrough_pages_to_the_end_with_its_numbers(visit):
    env = reference(backward=False)
    walk = ng.walkthrough(env["loss"], params=env)
    page = visit.open(in_notebook_output(walk.html_fragment()))
    view = page.locator(".ngv")
    assert label_of(view) == "step 1 of 14"
    assert view.bounding_box()["width"] <= NOTEBOOK_WIDTH
    assert node_titled(view, "l4").count() == 0 or not node_titled(view, "l4").first.is_visible()
    l1_gradient = view.locator("text", has_text="∂loss/∂l1 = [[7, 7], [7, 7]]")
    assert not l1_gradient.is_visible()  # not computed yet
    view.locator("[aria-label='next step']").click()
    assert label_of(view) == "step 2 of 14"
    view.focus()
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    assert label_of(view) == "step 12 of 14"
    text = view.locator(".ngv-step-text").inner_text()
    assert "[[5, 5], [5, 5]]   from MulBackward0 (l3)" in text
    assert " + [[2, 2], [2, 2]]   from AddBackward0 (l2)" in text
    assert " = [[7, 7], [7, 7]]" in text
    assert l1_gradient.is_visible()  # reached now
    running = view.locator("g.node.ngv-active", has_text="MulBackward0").bounding_box()
    head = view.locator(".ngv-head").bounding_box()
    # the drawing scrolled to the step, under the buttons and the text, all in the window
    assert 0 <= head["y"] and head["y"] + head["height"] <= running["y"]
    assert running["y"] + running["height"] <= page.viewport_size["height"]
    visit.screenshot("walkthrough_dynamic_l1", view)
    page.keyboard.press("ArrowRight")
    assert "w1.grad = 28" in view.locator(".ngv-step-text").inner_text()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")  # past the end: stays on the last step
    assert label_of(view) == "step 14 of 14"
    assert view.locator("[aria-label='next step']").is_disabled()
    assert "retain_graph=True" in view.locator(".ngv-step-text").inner_text()
    assert view.locator(".ngv-freed").count() == 5  # the saved values backward frees
    page.keyboard.press("ArrowLeft")
    assert label_of(view) == "step 13 of 14"
    assert visit.outside_requests() == []


def test_the_static_walkthrough_runs_and_sweeps(visit):
    walk = static_reference()
    count = len(walk.steps)
    page = visit.open(in_notebook_output(walk.html_fragment()))
    view = page.locator(".ngv")
    view.focus()
    while "run step 5/5" not in view.locator(".ngv-step-title").inner_text():
        page.keyboard.press("ArrowRight")
    assert "loss = 40" in view.locator(".ngv-step-text").inner_text()
    assert view.locator("g.node.ngv-freed").count() == 1  # freed after its last use
    visit.screenshot("walkthrough_static_run", view)
    while "w1 collects" not in view.locator(".ngv-step-title").inner_text():
        page.keyboard.press("ArrowRight")
    assert "w1.grad = 28" in view.locator(".ngv-step-text").inner_text()
    assert view.locator("text", has_text="∂loss/∂w1 = 28").is_visible()
    visit.screenshot("walkthrough_static_w1", view)
    view.locator("[aria-label='next step']").click()
    assert label_of(view) == f"step {count} of {count}"
    assert "w1 is still 2" in view.locator(".ngv-step-text").inner_text()
    assert visit.outside_requests() == []


def test_keys_act_on_the_focused_view_only_and_two_views_do_not_interfere(visit):
    env = reference(backward=False)
    first = ng.walkthrough(env["loss"], params=env).html_fragment()
    second = ng.walkthrough(env["loss"], params=env).html_fragment()
    page = visit.open(in_notebook_output(first, second))
    one, two = page.locator(".ngv").nth(0), page.locator(".ngv").nth(1)
    one.focus()
    page.keyboard.press("ArrowRight")
    assert (label_of(one), label_of(two)) == ("step 2 of 14", "step 1 of 14")
    two.locator("[aria-label='next step']").click()  # focuses nothing else: buttons work
    two.focus()
    page.keyboard.press("ArrowRight")
    assert (label_of(one), label_of(two)) == ("step 2 of 14", "step 3 of 14")
    page.mouse.click(3, 3)  # in the page margin: focus leaves both views
    page.keyboard.press("ArrowRight")
    assert (label_of(one), label_of(two)) == ("step 2 of 14", "step 3 of 14")
    home = two.locator("svg").get_attribute("viewBox")
    one.locator("[aria-label='zoom in']").click()
    assert two.locator("svg").get_attribute("viewBox") == home
    assert one.locator("svg").get_attribute("viewBox") != home
    node_titled(two, "w1").last.click()
    assert two.locator(".ngv-panel").is_visible() and one.locator(".ngv-panel").is_hidden()
    visit.screenshot("two_views")
    assert visit.outside_requests() == []


def test_the_script_passes_its_own_test_page(visit):
    page = visit.open_file(RENDER_DIR / "view_test.html")
    page.wait_for_function("document.title !== 'view.js test page'")
    assert page.title().startswith("PASS"), page.locator("#result").inner_text()
    assert visit.outside_requests() == []


def test_a_freed_graphs_walkthrough_says_how_to_keep_it(visit):
    env = reference(backward=True)
    page = visit.open(in_notebook_output(ng.walkthrough(env["loss"], params=env).html_fragment()))
    view = page.locator(".ngv")
    view.focus()
    page.keyboard.press("End")  # not a key of the view: nothing happens
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    assert label_of(view) == "step 6 of 6"
    text = view.locator(".ngv-step-text").inner_text()
    assert "retain_graph=True" in text and "w1.grad = 28" in text
    assert visit.outside_requests() == []
