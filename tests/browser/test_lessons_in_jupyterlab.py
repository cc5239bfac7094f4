"""The lessons open cleanly in JupyterLab, in a learner's working copy.

One ``naivegraph lessons`` server (headless, on a free localhost port, with a token) serves
a working copy made by ``naivegraph lessons --copy`` in a temporary folder; Chromium opens
every notebook in turn, waits until its cells and pictures are rendered, and saves it.
Nothing may fail to load (no 4xx/5xx response, no failed request, no broken picture),
and every save lands in the working copy: the checkout's ``git status`` and the course's
notebooks (bytes and modification times) are the same after as before.

Then lesson 1 runs in that JupyterLab (a few seconds): a click on ``w1`` in a drawing
shows its gradient, and the walkthrough pages to the 7 arriving at ``l1``.  Without
JupyterLab or ipykernel beside this Python the tests skip, as they do without Chromium.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from headless import SCREENSHOTS, launch

from naivegraph import course
from naivegraph.lessons.exercises import solutions_notebook

pytest.importorskip("jupyterlab", reason="JupyterLab is not installed: its browser test skips")
pytest.importorskip("ipykernel", reason="ipykernel is not installed: its browser test skips")

ROOT = Path(__file__).resolve().parents[2]

#: JupyterLab's settings for the test: every cell in the page (not only those scrolled
#: into view, so every picture is requested) and no update or news checks.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "checkForUpdates": False,
        "fetchNews": "false",
    },
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def tracked_state() -> tuple[str, dict[str, tuple[int, bytes]]]:
    """The checkout's ``git status`` (empty when installed) and the course's notebooks."""
    status = ""
    if (ROOT / ".git").exists():
        status = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=all"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    notebooks = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in course.notebooks()}
    return status, notebooks


class LessonsServer:
    """``naivegraph lessons --dir FOLDER -- --no-browser ...`` with its own Jupyter dirs."""

    def __init__(self, folder: Path, home: Path) -> None:
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        settings = home / "lab-settings"
        for name, values in LAB_SETTINGS.items():
            (settings / name).parent.mkdir(parents=True, exist_ok=True)
            (settings / name).write_text(json.dumps(values), encoding="utf-8")
        env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            JUPYTER_CONFIG_DIR=str(home / "config"),
            JUPYTER_RUNTIME_DIR=str(home / "runtime"),
            JUPYTERLAB_SETTINGS_DIR=str(settings),
            JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
            IPYTHONDIR=str(home / "ipython"),
        )
        command = [sys.executable, "-m", "naivegraph", "lessons", "--dir", str(folder), "--"]
        command += [
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            "--LabApp.expose_app_in_browser=True",  # window.jupyterapp opens the notebooks
        ]
        self.log = open(home / "server.log", "w+b")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            command, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def url(self, path: str) -> str:
        return f"{self.base}{path}?token={self.token}"

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"the lessons server stopped:\n{self.output()}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(self.url("/api/status"), timeout=2):
                    return
            time.sleep(0.3)
        pytest.fail(f"the lessons server did not answer in {timeout:.0f} s:\n{self.output()}")

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-3000:]

    def stop(self) -> None:
        """Shut the server down (its kernels with it), then end what is left of it."""
        request = urllib.request.Request(self.url("/api/shutdown"), method="POST")
        with contextlib.suppress(OSError, urllib.error.HTTPError):
            urllib.request.urlopen(request, timeout=5).close()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        self.log.close()


class Lab:
    """The server, the JupyterLab page, what failed to load, and the state to keep."""

    def __init__(self, server: LessonsServer, page, folder: Path, before) -> None:
        self.server, self.page, self.folder, self.before = server, page, folder, before
        self.failures: list[str] = []
        page.on("response", self._response)
        page.on("requestfailed", lambda r: self.failures.append(f"failed {r.url}: {r.failure}"))

    def _response(self, response) -> None:
        if response.status >= 400:
            self.failures.append(f"{response.status} {response.url}")

    def open(self, name: str) -> str:
        """Open a notebook of the working copy; returns its panel's element id."""
        return self.page.evaluate(OPEN, name)

    def panel(self, widget: str):
        return self.page.locator(f"#{widget}")

    def assert_nothing_tracked_changed(self) -> None:
        status, notebooks = tracked_state()
        assert status == self.before[0], "git status changed while JupyterLab ran"
        changed = [name for name in notebooks if notebooks[name] != self.before[1][name]]
        assert changed == [], "the course's notebooks were written"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab in Chromium, served from a fresh working copy in a temporary folder."""
    before = tracked_state()
    home = tmp_path_factory.mktemp("lab")
    folder = home / "lessons"
    subprocess.run(
        [sys.executable, "-m", "naivegraph", "lessons", "--copy", str(folder)],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        check=True,
        capture_output=True,
    )
    with launch() as browser:
        server = LessonsServer(folder, home)
        try:
            server.wait_ready()
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            context.set_default_timeout(30_000)
            opened = Lab(server, context.new_page(), folder, before)
            opened.page.goto(server.url("/lab"))
            opened.page.wait_for_function("window.jupyterapp && window.jupyterapp.started")
            opened.page.evaluate("window.jupyterapp.started")
            yield opened
            context.close()
        finally:
            server.stop()


OPEN = """async (name) => {
    const widget = await window.jupyterapp.commands.execute('docmanager:open', {path: name});
    await widget.context.ready;
    await widget.revealed;
    return widget.id;
}"""

#: Every markdown cell of the notebook is rendered, and each of its pictures has loaded.
RENDERED = """([id, markdown]) => {
    const panel = document.getElementById(id);
    if (!panel) return false;
    const rendered = Array.from(panel.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown'));
    if (rendered.length < markdown || rendered.some(cell => !cell.textContent.trim())) {
        return false;
    }
    return Array.from(panel.querySelectorAll('img')).every(img => img.complete);
}"""

BROKEN_PICTURES = """(id) => Array.from(document.getElementById(id).querySelectorAll('img'))
    .filter(img => img.naturalWidth === 0).map(img => img.getAttribute('src'))"""

SAVE_AND_CLOSE = """async (id) => {
    const widget = Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.id === id);
    await widget.context.save();
    await widget.sessionContext.shutdown();
    widget.dispose();
}"""

#: Every code cell has run: its prompt shows a number, not "*" or nothing.
ALL_RUN = """(id) => Array.from(document.getElementById(id).querySelectorAll(
    '.jp-CodeCell .jp-InputArea-prompt')).every(p => /\\[\\d+\\]/.test(p.textContent))"""


def markdown_cells(path: Path) -> int:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return sum(cell["cell_type"] == "markdown" for cell in cells)


def test_every_lesson_opens_without_a_failed_request_and_saves_into_the_working_copy(lab):
    lessons = course.notebooks(lab.folder)
    assert [p.name for p in lessons] == [p.name for p in course.notebooks()]
    for lesson in lessons:
        saved_before = lesson.stat().st_mtime_ns
        widget = lab.open(lesson.name)
        lab.page.wait_for_function(RENDERED, arg=[widget, markdown_cells(lesson)])
        assert lab.page.evaluate(BROKEN_PICTURES, widget) == [], lesson.name
        lab.page.evaluate(SAVE_AND_CLOSE, widget)
        assert lesson.stat().st_mtime_ns != saved_before, f"{lesson.name} was not saved"
    assert lab.failures == []
    lab.assert_nothing_tracked_changed()


def code_cell(panel, fragment: str):
    """The code cell whose source contains ``fragment``."""
    return panel.locator(".jp-CodeCell").filter(
        has=panel.page.locator(".jp-InputArea", has_text=fragment)
    )


def node_titled(view, title: str):
    """The SVG node groups whose first label line is ``title``."""
    return view.locator("g.node").filter(
        has=view.page.locator("text", has_text=re.compile(f"^{re.escape(title)}$"))
    )


def in_sight(panel, locator, below) -> bool:
    """``locator`` and ``below`` are inside the notebook's panel, ``locator`` under ``below``."""
    box, head, window = locator.bounding_box(), below.bounding_box(), panel.bounding_box()
    return (
        window["y"] <= head["y"]
        and head["y"] + head["height"] <= box["y"]
        and box["y"] + box["height"] <= window["y"] + window["height"]
    )


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def _solved_in_the_copy(lab, name: str) -> None:
    """The learner has done the lesson's exercises: the drawings that show their answers
    wait for the checks to pass."""
    nbformat = pytest.importorskip("nbformat")
    path = lab.folder / name
    nbformat.write(solutions_notebook(path), path)


def test_lesson_1_runs_and_its_views_answer_in_jupyterlab(lab):
    page = lab.page
    _solved_in_the_copy(lab, "01_computational_graphs.ipynb")
    widget = lab.open("01_computational_graphs.ipynb")
    page.evaluate(
        """async (id) => {
        const widget = Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.id === id);
        await widget.sessionContext.ready;
        await window.jupyterapp.commands.execute('notebook:run-all-cells');
    }""",
        widget,
    )
    page.wait_for_function(ALL_RUN, arg=widget, timeout=180_000)
    panel = lab.panel(widget)
    assert (
        panel.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
        ).count()
        == 0
    )

    # the drawing after backward: click w1, read its gradient
    drawing = code_cell(panel, "autograd: w1.grad").locator(".ngv")
    assert drawing.count() == 1
    node_titled(drawing, "w1").first.click()
    details = drawing.locator(".ngv-panel")
    assert details.is_visible()
    assert re.search(r"\.grad\s+28\b", details.inner_text()), details.inner_text()
    align = details.locator("td").first.evaluate("cell => getComputedStyle(cell).textAlign")
    assert align == "left"  # beside its name, not pushed right by JupyterLab's table style
    drawing.scroll_into_view_if_needed()
    screenshot(page, "jupyterlab_drawing_w1")

    # the walkthrough: page to the step where the 7 reaches l1, then to w1.grad
    walk = code_cell(panel, "ng.walkthrough(loss").locator(".ngv")
    assert walk.locator(".ngv-label").inner_text() == "step 1 of 14"
    walk.evaluate("view => view.scrollIntoView({block: 'start'})")  # as a learner scrolls to it
    for _ in range(11):
        walk.locator("[aria-label='next step']").click()
    assert walk.locator(".ngv-label").inner_text() == "step 12 of 14"
    assert " = [[7, 7], [7, 7]]" in walk.locator(".ngv-step-text").inner_text()
    running = walk.locator("g.node.ngv-active", has_text="MulBackward0")
    assert in_sight(panel, running, below=walk.locator(".ngv-head")), "step off screen"
    screenshot(page, "jupyterlab_walkthrough_l1")
    walk.focus()
    page.keyboard.press("ArrowRight")
    assert "w1.grad = 28" in walk.locator(".ngv-step-text").inner_text()
    assert lab.failures == []
    lab.assert_nothing_tracked_changed()
