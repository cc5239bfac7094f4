"""What the ``naivegraph`` command says: its version, its help, and one clear line for
each mistake a user makes."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

import naivegraph
from naivegraph import cli, course
from naivegraph.cli import main

REPO = Path(__file__).resolve().parents[2]


def _out(argv: list[str]) -> tuple[int, str]:
    """Exit status and stdout of a command that may end through argparse (SystemExit)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        try:
            status = main(argv)
        except SystemExit as done:
            status = done.code
    return status, printed.getvalue()


def test_version_prints_the_package_version():
    assert _out(["--version"]) == (0, f"naivegraph {naivegraph.__version__}\n")


def test_help_lists_every_command_without_markup():
    status, text = _out(["--help"])
    assert status == 0
    commands = cli.build_parser()._subparsers._group_actions[0].choices
    assert set(commands) == {"tour", "figures", "render", "export", "check", "lessons"}
    for command in commands:
        assert f"\n    {command} " in text, command
        _, sub_help = _out([command, "--help"])
        assert "``" not in sub_help and "`" not in sub_help.replace("`naivegraph", ""), command
    assert "``" not in text and ":func:" not in text


def test_render_of_a_missing_file_says_file_not_found(tmp_path, capsys):
    missing = tmp_path / "missing.ngraph"
    assert main(["render", str(missing), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"naivegraph: error: file not found: {missing}")


def test_render_of_an_unknown_name_lists_the_examples(tmp_path, capsys):
    assert main(["render", "nonsense", "--out", str(tmp_path)]) == 2
    assert "unknown example 'nonsense'; choose from reference" in capsys.readouterr().err


@pytest.fixture
def saved_training_graph(tmp_path):
    import naivegraph.static as ns

    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 2), dtype=np.float64)
        w = ns.Variable(np.ones((2, 3)), name="w1")
        loss = ns.sum(ns.tanh(x @ w))
        (grad,) = ns.gradients(loss, [w])
        w.assign(w - 0.5 * grad)
    g.rename(loss, "loss")
    g.save(tmp_path / "train.ngraph")
    return tmp_path / "train.ngraph", grad.name


def test_export_outputs_that_do_not_exist_lists_the_valid_names(saved_training_graph, capsys):
    path, _ = saved_training_graph
    argv = ["export", str(path), "--onnx", str(path.with_suffix(".onnx"))]
    assert main([*argv, "--outputs", "loss,nosuch"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--outputs: graph_" in err and "has no node named 'nosuch'; its names: w1, " in err
    assert "loss" in err.split("its names:")[1] and len(err.splitlines()) == 1
    assert main([*argv, "--inputs", "y"]) == 2
    assert "has no placeholder named 'y'; its names: x" in capsys.readouterr().err
    assert not path.with_suffix(".onnx").exists()


def test_export_names_gradient_outputs_after_their_variable(saved_training_graph, capsys):
    ort = pytest.importorskip("onnxruntime")
    path, internal = saved_training_graph
    onnx_path = path.with_suffix(".onnx")
    argv = ["export", str(path), "--onnx", str(onnx_path), "--outputs", f"loss,{internal}"]
    assert main(argv) == 0
    assert capsys.readouterr().out == f"{onnx_path}: inputs x; outputs loss, grad_w1\n"
    session = ort.InferenceSession(str(onnx_path))
    assert [o.name for o in session.get_outputs()] == ["loss", "grad_w1"]
    loss, grad = session.run(None, {"x": np.array([[0.0, 0.0]])})
    assert loss == 0.0 and grad.tolist() == [[0.0] * 3] * 2


def _working_copy(folder: Path) -> Path:
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["lessons", "--copy", str(folder)]) == 0
    return folder


def test_check_of_a_damaged_notebook_is_one_line_saying_how_to_get_it_back(tmp_path, capsys):
    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "01_computational_graphs.ipynb").write_text('{"cells": [', encoding="utf-8")
    for extra in ([], ["--reveal"], ["--json"]):
        assert main(["check", "1", "--dir", str(folder), *extra]) == 2
        captured = capsys.readouterr()
        (line,) = captured.err.splitlines()
        assert line.startswith(
            f"naivegraph: error: {folder / '01_computational_graphs.ipynb'} is not a readable "
            "notebook ("
        )
        assert f"naivegraph lessons --dir {folder} --reset 01" in line
        assert captured.out == ""


def test_lessons_says_which_extra_brings_jupyterlab(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "_jupyterlab", lambda: None)
    assert main(["lessons", "--dir", str(tmp_path / "mine")]) == 1
    err = capsys.readouterr().err
    assert "install '.[notebook]'" in err
    if cli._extra("notebook"):  # naivegraph's metadata is installed: it names the packages
        assert "'jupyterlab>=4'" in err


def test_check_starts_the_kernel_without_its_tcp_warning(tmp_path):
    folder = _working_copy(tmp_path / "mine")
    done = subprocess.run(
        [sys.executable, "-m", "naivegraph", "check", "2", "--dir", str(folder)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert "without encryption" not in done.stderr
    assert "WARNING" not in done.stderr


# ----------------------------------------------------------------- check --json
def _lesson_with(folder: Path, sources: dict[str, str]) -> Path:
    """A working copy holding lesson 1 with the named exercise cells replaced."""
    nb = nbformat.read(str(course.FOLDER / "01_computational_graphs.ipynb"), as_version=4)
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("naivegraph", {})
        if meta.get("exercise") in sources:
            cell.source = sources[meta["exercise"]]
    folder.mkdir()
    nbformat.write(nb, str(folder / "01_computational_graphs.ipynb"))
    return folder


def _solution(exercise: str) -> str:
    nb = nbformat.read(str(course.FOLDER / "01_computational_graphs.ipynb"), as_version=4)
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("naivegraph", {})
        if meta.get("exercise") == exercise:
            return meta["solution"]
    raise KeyError(exercise)


def _json(argv: list[str]) -> tuple[int, dict]:
    status, text = _out(argv)
    (line,) = text.splitlines()
    return status, json.loads(line)


def test_check_json_reports_each_exercise_status_message_and_line(tmp_path):
    folder = _lesson_with(
        tmp_path / "mine",
        {
            "01-1": _solution("01-1"),
            "01-2": "ex.check_leaf_grads(1, 2, 3)",
            "01-3": "x = 1\ny = = 2\n",
        },
    )
    status, report = _json(["check", "1", "--dir", str(folder), "--json"])
    assert status == 1
    assert report["lesson"] == 1 and set(report) == {"lesson", "exercises"}
    by_id = {e["id"]: e for e in report["exercises"]}
    assert [e["id"] for e in report["exercises"]] == ["01-1", "01-2", "01-3"]
    assert set(by_id["01-1"]) == {"id", "status", "message", "line"}
    assert by_id["01-1"]["status"] == "correct" and by_id["01-1"]["line"] is None
    assert by_id["01-2"]["status"] == "wrong" and "you gave" in by_id["01-2"]["message"]
    assert by_id["01-3"] == {
        "id": "01-3",
        "status": "error",
        "message": "your cell raised SyntaxError at line 2: invalid syntax; "
        "fix the cell and run it again.",
        "line": 2,
    }


def test_check_json_of_an_untouched_lesson_is_all_not_done_and_exits_0(tmp_path):
    folder = _working_copy(tmp_path / "mine")
    status, report = _json(["check", "2", "--dir", str(folder), "--json"])
    assert status == 0 and report["lesson"] == 2
    assert {e["status"] for e in report["exercises"]} == {"not-done"}


def test_check_json_exits_1_when_a_cell_raised_even_if_nothing_is_wrong(tmp_path):
    folder = _lesson_with(tmp_path / "mine", {"01-2": "raise RuntimeError('boom')"})
    status, report = _json(["check", "1", "--dir", str(folder), "--json"])
    assert status == 1
    assert [e["status"] for e in report["exercises"]] == ["not-done", "error", "not-done"]


def test_check_json_usage_errors_exit_2(tmp_path, capsys):
    assert _out(["check", "1", "--json", "--reveal"])[0] == 2
    assert "not allowed with argument" in capsys.readouterr().err
    assert main(["check", "99", "--json", "--dir", str(_working_copy(tmp_path / "c"))]) == 2
