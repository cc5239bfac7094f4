"""`naivegraph lessons --nbgrader DIR`: the course as nbgrader assignments, which
nbgrader's own ``generate_assignment`` releases and ``autograde`` grades."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from naivegraph import course
from naivegraph.cli import main
from naivegraph.course import build
from naivegraph.lessons.teacher import BEGIN, END

REPO = Path(__file__).resolve().parents[2]
LESSON = "01_computational_graphs.ipynb"


@pytest.fixture(scope="module")
def teacher(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("class")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["lessons", "--nbgrader", str(folder)]) == 0
    return folder


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _graded(cells: list[dict], kind: str) -> dict[str, dict]:
    return {
        c["metadata"]["nbgrader"]["grade_id"]: c
        for c in cells
        if c["metadata"].get("nbgrader", {}).get(kind)
    }


def test_every_lesson_is_an_assignment_with_its_pictures(teacher):
    for notebook in course.notebooks():
        assignment = teacher / "source" / f"lesson_{notebook.name[:2]}"
        assert (assignment / notebook.name).is_file()
    assert (teacher / "source/lesson_01/figures/animation_dynamic_step.gif").is_file()


def test_each_exercise_is_a_marked_solution_and_an_autograded_check(teacher):
    cells = _cells(teacher / "source" / "lesson_01" / LESSON)
    answers, checks = _graded(cells, "solution"), _graded(cells, "grade")
    assert sorted(answers) == ["answer-01-1", "answer-01-2", "answer-01-3"]
    assert sorted(checks) == ["check-01-1", "check-01-2", "check-01-3"]
    answer = "".join(answers["answer-01-2"]["source"]).splitlines()
    assert answer[1] == BEGIN and answer[-1] == END and "w1_grad = 28.0" in answer
    check = "".join(checks["check-01-2"]["source"])
    assert check == (
        'assert ex.check_leaf_grads(w1_grad, w2_grad, w3_grad), "exercise 01-2 is not right yet"'
    )
    assert checks["check-01-2"]["metadata"]["nbgrader"]["points"] == 1
    assert not any("solution" in c["metadata"].get("naivegraph", {}) for c in cells)


def test_each_answer_cell_is_the_lessons_source_with_its_markers(teacher):
    # grade ids are "answer-01-2" and "check-01-2"
    pytest.importorskip("jupytext", reason="the sources are read with jupytext")
    for notebook in course.notebooks():
        cells = _cells(teacher / "source" / f"lesson_{notebook.name[:2]}" / notebook.name)
        answers = {k[7:]: "".join(c["source"]) for k, c in _graded(cells, "solution").items()}
        checks = {k[6:]: "".join(c["source"]) for k, c in _graded(cells, "grade").items()}
        for exercise, source in build.exercise_sources(course.source(notebook)).items():
            *answer, check = source.rstrip().split("\n")
            assert answers[exercise] == "\n".join(answer), exercise
            assert checks[exercise] == f'assert {check}, "exercise {exercise} is not right yet"'


@pytest.mark.skipif(sys.version_info < (3, 11), reason="nbgrader needs Python 3.11")
def test_every_answer_cell_is_python_as_written_and_as_nbgrader_releases_it(teacher):
    pytest.importorskip("nbgrader", reason="nbgrader comes with the teacher extra")
    import nbformat
    from nbgrader.preprocessors import ClearSolutions

    for notebook in course.notebooks():
        path = teacher / "source" / f"lesson_{notebook.name[:2]}" / notebook.name
        nb = nbformat.read(str(path), as_version=4)
        released, _ = ClearSolutions().preprocess(copy.deepcopy(nb), {})
        for ours, theirs in zip(nb.cells, released.cells):
            if not ours.metadata.get("nbgrader", {}).get("solution"):
                continue
            grade_id = ours.metadata["nbgrader"]["grade_id"]
            assert "raise NotImplementedError()" in theirs.source, grade_id
            for source in (ours.source, theirs.source):
                compile(source, grade_id, "exec")  # a stub inside an expression would not


def _nbgrader(folder: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }  # nbgrader runs its `alembic` script, which sits beside this Python
    config = [
        f"--CourseDirectory.root={folder}",
        f"--CourseDirectory.db_url=sqlite:///{folder}/gb.db",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", *argv, *config],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _submission(release: dict, answers: dict[str, str], wrong: tuple | None = None) -> dict:
    """The released notebook with every answer cell filled in, one of them wrongly."""
    nb = copy.deepcopy(release)
    for cell in nb["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        if cell["metadata"].get("nbgrader", {}).get("solution"):
            lines = [line for line in answers[grade_id].splitlines() if "SOLUTION" not in line]
            text = "\n".join(lines)
            if wrong and wrong[0] == grade_id:
                text = text.replace(*wrong[1])
            cell["source"] = text
    return nb


@pytest.mark.skipif(sys.version_info < (3, 11), reason="nbgrader needs Python 3.11")
def test_nbgrader_releases_the_lesson_and_grades_a_right_and_a_wrong_submission(teacher):
    pytest.importorskip("nbgrader", reason="nbgrader comes with the teacher extra")
    from nbgrader.api import Gradebook

    _nbgrader(teacher, "generate_assignment", "lesson_01")
    released = teacher / "release" / "lesson_01" / LESSON
    release = json.loads(released.read_text(encoding="utf-8"))
    text = json.dumps(release)
    assert "w1_grad = 28.0" not in text and "BEGIN SOLUTION" not in text
    assert "raise NotImplementedError()" in text

    source = _cells(teacher / "source" / "lesson_01" / LESSON)
    answers = {k: "".join(c["source"]) for k, c in _graded(source, "solution").items()}
    students = {
        "right": _submission(release, answers),
        "wrong": _submission(
            release, answers, ("answer-01-2", ("w1_grad = 28.0", "w1_grad = 27.0"))
        ),
    }
    for student, notebook in students.items():
        folder = teacher / "submitted" / student / "lesson_01"
        folder.mkdir(parents=True)
        (folder / LESSON).write_text(json.dumps(notebook), encoding="utf-8")
    _nbgrader(teacher, "autograde", "lesson_01")

    with Gradebook(f"sqlite:///{teacher}/gb.db") as gradebook:
        scores = {
            student: (gradebook.find_submission("lesson_01", student).score) for student in students
        }
        wrong = gradebook.find_grade("check-01-2", LESSON[:-6], "lesson_01", "wrong")
        assert wrong.auto_score == 0
    assert scores == {"right": 3.0, "wrong": 2.0}


def test_without_jupytext_nbgrader_says_to_install_the_teacher_extra(tmp_path, monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "jupytext" else real(name, *a)
    )
    assert main(["lessons", "--nbgrader", str(tmp_path / "class")]) == 2
    err = capsys.readouterr().err
    assert "reads the lessons' sources with jupytext, which is not installed" in err
    assert "pip install 'naivegraph[teacher]'" in err
    assert not (tmp_path / "class").exists()
