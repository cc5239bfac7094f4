"""The ``naivegraph`` command: tour, figures, render, export, check, lessons."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import numpy as np
import pytest

from naivegraph import cli
from naivegraph.cli import _jupyterlab, main

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "figures"
COURSE = REPO / "naivegraph" / "course"


@pytest.fixture(scope="module")
def lessons(tmp_path_factory):
    """A learner's working copy of the course, as `naivegraph lessons --copy` writes it."""
    folder = tmp_path_factory.mktemp("work")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["lessons", "--copy", str(folder)]) == 0
    return folder


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    """Run `naivegraph tour` once: (output folder, exit status, printed text)."""
    out = tmp_path_factory.mktemp("tour")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main(["tour", "--out", str(out)])
    return out, status, printed.getvalue()


def test_tour_prints_the_reference_numbers_for_both_modes(tour):
    _, status, text = tour
    assert status == 0
    for quantity, number in [
        ("loss", "40"),
        ("dloss/dw1", "28"),
        ("dloss/dw2", "8"),
        ("dloss/dw3", "10"),
    ]:
        assert re.search(rf"^{re.escape(quantity)}\s+{number}\s+{number}$", text, re.M), text
    assert "[4/4]" in text  # progress is shown step by step


def test_tour_writes_every_drawing_plot_and_animation(tour):
    out, _, _ = tour
    written = _files(out)
    for name in [
        "reference_forward.svg",
        "reference_backward.png",
        "reference_after_backward.svg",
        "static_reference_gradients.svg",
        "static_reference_optimized.png",
        "gradient_descent.png",
        "jacobian.png",
        "static_vs_dynamic.png",
        "capstone_decision_boundary.png",
        "animation_dynamic_step.gif",
        "animation_static_runs.gif",
    ]:
        assert name in written
    frames = [f for f in written if f.startswith("animation_dynamic_step/")]
    assert len(frames) >= 5


def test_tour_draws_the_committed_figures_and_the_course_animations(tour):
    out, _, _ = tour
    course = REPO / "naivegraph" / "course" / "figures"
    assert _files(out) == _files(COMMITTED) | _files(course)


def test_tour_writes_into_the_working_copy_by_default(monkeypatch, tmp_path):
    monkeypatch.setattr(cli.workcopy, "default_folder", lambda: tmp_path / "work")
    monkeypatch.setattr(cli, "_write_figures", lambda out, **_: [out / "drawn.svg"])
    monkeypatch.setattr(cli, "tour_table", lambda x: ([("loss", "40", "40")], {}))
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(["tour"]) == 0
    assert (tmp_path / "work" / "tour").is_dir()
    assert str(tmp_path / "work" / "tour" / "drawn.svg") in printed.getvalue()


def test_render_draws_only_the_named_example(tmp_path, capsys):
    assert main(["render", "exp", "--out", str(tmp_path)]) == 0
    assert _files(tmp_path) == {
        f"exp_{view}.{fmt}"
        for view in ("forward", "backward", "after_backward")
        for fmt in ("svg", "png")
    }


def test_render_draws_a_graph_file_saved_with_g_save(tmp_path, capsys):
    import naivegraph.static as ns

    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None,))
        ns.cond(ns.sum(x) > 0, lambda: x * 2.0, lambda: -x)
    g.save(tmp_path / "model.ngraph")
    out = tmp_path / "figs"
    assert main(["render", str(tmp_path / "model.ngraph"), "--out", str(out)]) == 0
    assert _files(out) == {"model.svg"}
    svg = (out / "model.svg").read_text()
    assert "true branch of cond_1" in svg and "false branch of cond_1" in svg


def test_render_of_a_file_that_is_no_graph_is_one_line_of_error(tmp_path, capsys):
    bad = tmp_path / "bad.ngraph"
    bad.write_text("not a graph")
    assert main(["render", str(bad), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"naivegraph: error: {bad} is not a naivegraph graph file (not an npz archive of arrays)"
    )


def test_export_writes_a_saved_training_graph_to_onnx_with_updates_as_outputs(tmp_path, capsys):
    ort = pytest.importorskip("onnxruntime")
    import naivegraph.static as ns

    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 2))
        w = ns.Variable(np.ones((2, 3), np.float32), name="w")  # float32, as the placeholder
        loss = ns.sum(ns.tanh(x @ w))
        (grad,) = ns.gradients(loss, [w])
        new_w = w - 0.5 * grad
        w.assign(new_w)
    g.save(tmp_path / "mlp.ngraph")
    out = tmp_path / "mlp.onnx"
    assert main(["export", str(tmp_path / "mlp.ngraph"), "--onnx", str(out)]) == 0
    session = ort.InferenceSession(str(out))
    assert [o.name for o in session.get_outputs()] == [loss.name, new_w.name]
    data = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
    got = session.run(None, {"x": data})
    want = g.compile([x], [loss, new_w])(data)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-6)  # tanh in float32: a few ulps


def test_check_reports_unfinished_exercises_as_not_done_yet(lessons, capsys):
    assert main(["check", "1", "--dir", str(lessons)]) == 0
    out = capsys.readouterr().out
    assert "not done yet" in out and "0 correct, 0 not yet right" in out


def test_check_with_solutions_reports_every_exercise_correct(lessons, capsys):
    assert main(["check", "1", "--solutions", "--lessons", str(lessons)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"(\d+) correct, 0 not yet right, 0 not done yet", out), out


def test_check_names_the_lessons_when_none_matches(lessons, capsys):
    assert main(["check", "nonsense", "--dir", str(lessons)]) == 2
    assert re.match(
        "naivegraph: error: no lesson matches 'nonsense'.*01_computational_graphs",
        capsys.readouterr().err,
    )


def test_lessons_without_jupyterlab_names_the_notebook_extra_and_this_venvs_pip(
    lessons, capsys, monkeypatch
):
    monkeypatch.setattr(cli, "_jupyterlab", lambda: None)
    assert main(["lessons", "--dir", str(lessons)]) == 1
    err = capsys.readouterr().err
    assert f"{Path(sys.executable).with_name('pip')} install '.[notebook]'" in err
    assert f"open the notebooks in {lessons}" in err


@pytest.mark.skipif(_jupyterlab() is None, reason="JupyterLab is not installed (make lab does it)")
def test_lessons_starts_jupyterlab_on_the_working_copy(lessons, tmp_path):
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "naivegraph",
            "lessons",
            "--dir",
            str(lessons),
            "--",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            "--IdentityProvider.token=lab-test",
        ],
        env={
            **os.environ,
            "JUPYTER_RUNTIME_DIR": str(tmp_path),
            "JUPYTER_CONFIG_DIR": str(tmp_path),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        listing = _get_json(f"http://127.0.0.1:{port}/api/contents?token=lab-test", server)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    names = {item["name"] for item in listing["content"]}
    assert "01_computational_graphs.ipynb" in names


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get_json(url: str, server: subprocess.Popen, attempts: int = 240) -> dict:
    """Poll ``url`` until the server answers (it takes a few seconds to start)."""
    for _ in range(attempts):
        if server.poll() is not None:
            raise AssertionError(f"jupyter-lab exited with status {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return json.load(response)
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"JupyterLab did not answer at {url}")


def _lesson_with_cells(folder: Path, sources: dict[str, str]) -> Path:
    """A copy of lesson 1 whose exercise cells ``sources`` names are replaced."""
    nb = nbformat.read(str(COURSE / "01_computational_graphs.ipynb"), as_version=4)
    for cell in nb.cells:
        exercise = cell.get("metadata", {}).get("naivegraph", {}).get("exercise")
        if exercise in sources:
            cell.source = sources[exercise]
    folder.mkdir()
    nbformat.write(nb, str(folder / "01_computational_graphs.ipynb"))
    return folder


def test_check_reports_a_cell_that_raised_and_still_reports_the_others(tmp_path, capsys):
    folder = _lesson_with_cells(tmp_path / "lessons", {"01-1": "x = 1\ny = = 2\n"})
    assert main(["check", "1", "--lessons", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "✗ [01-1] your cell raised SyntaxError at line 2" in out
    assert "\x1b[" not in out  # no terminal colour codes
    assert "○ [01-2]" in out  # the exercise after it is still reported


def test_check_reveal_prints_each_answer_without_running_the_notebook(lessons, capsys):
    assert main(["check", "4", "--reveal", "--dir", str(lessons)]) == 0
    out = capsys.readouterr().out
    assert "[04-1]" in out and "versions = [0, 1, 2, 2, 3]" in out
